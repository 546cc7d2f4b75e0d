-- closing_check: issue 16 (Deliverables II).
-- CC-4: a segment's closing check sends a note back once and never again; this row says it
-- did, how the message was going out and which rules it broke (a JSON array of codes).
CREATE TABLE closing_checks (
    run_id     BIGINT  PRIMARY KEY REFERENCES segments(run_id),
    session_id BIGINT  NOT NULL REFERENCES sessions(id),
    via        TEXT    NOT NULL CHECK (via IN ('reply', 'send_message')),
    rules      TEXT    NOT NULL,
    created_at BIGINT  NOT NULL
);
