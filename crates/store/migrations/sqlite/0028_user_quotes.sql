-- User quotes (C §5): the person's own words, kept apart from the transcript and filed under
-- every job they concern. A clear keeps them (message_id nulled, UQ-1); only erasing empties
-- them (UQ-2). An edit's quote of the changed clauses points at the line's first quote (UQ-9).
CREATE TABLE user_quotes (
    id             INTEGER PRIMARY KEY,
    body           TEXT    NOT NULL CHECK (length(body) <= 2000),
    message_id     INTEGER REFERENCES session_messages(id),
    -- Null for the flow board's words and after a group is deleted.
    session_id     INTEGER REFERENCES sessions(id),
    source_kind    TEXT    NOT NULL
                   CHECK (source_kind IN ('line', 'answer', 'annotation_batch_line',
                          'annotation', 'board_goal_clause', 'board_ticket_description_clause',
                          'board_done_when_line', 'board_rule')),
    first_quote_id INTEGER REFERENCES user_quotes(id),
    erased         INTEGER NOT NULL DEFAULT 0 CHECK (erased IN (0, 1)),
    created_at     INTEGER NOT NULL,
    -- Erased words are gone: the row stays, empty.
    CHECK (erased = 0 OR body = '')
);
CREATE INDEX user_quotes_message ON user_quotes(message_id);
CREATE INDEX user_quotes_session ON user_quotes(session_id);

-- The jobs (and tickets) a quote is filed under; a filing without a ticket is ticket 0 here.
CREATE TABLE user_quote_filings (
    quote_id  INTEGER NOT NULL REFERENCES user_quotes(id),
    plan_id   INTEGER NOT NULL REFERENCES plans(id),
    ticket_id INTEGER,
    at        INTEGER NOT NULL
);
CREATE UNIQUE INDEX user_quote_filings_target
    ON user_quote_filings(quote_id, plan_id, COALESCE(ticket_id, 0));
CREATE INDEX user_quote_filings_plan ON user_quote_filings(plan_id, quote_id);

-- A deleted plan takes its quote filings with it; the quotes stay.
CREATE TRIGGER user_quote_filings_plan_gone BEFORE DELETE ON plans
BEGIN
    DELETE FROM user_quote_filings WHERE plan_id = OLD.id;
END;

-- UQ-3, once, at this upgrade: the person's lines and answers' own words still in the
-- transcripts are each kept once, filed as their lines are. Nothing is back-filled later.
INSERT INTO user_quotes (body, message_id, session_id, source_kind, created_at)
SELECT CASE WHEN length(words) <= 2000 THEN words
            ELSE substr(words, 1, 980) || char(10) || '…[' || (length(words) - 1960)
                 || ' characters cut]…' || char(10) || substr(words, length(words) - 979)
       END,
       id, session_id, source_kind, created_at
FROM (SELECT id, session_id, created_at, body AS words, 'line' AS source_kind
      FROM session_messages
      WHERE author = 'user' AND kind = 'line' AND body <> ''
          AND (routing IS NULL OR routing <> 'withdrawn')
      UNION ALL
      SELECT id, session_id, COALESCE(answered_at, created_at),
             json_extract(ask_answer, '$.text'), 'answer'
      FROM session_messages
      WHERE kind = 'ask' AND ask_answer IS NOT NULL
          AND COALESCE(json_extract(ask_answer, '$.text'), '') <> '')
ORDER BY created_at, id;
INSERT INTO user_quote_filings (quote_id, plan_id, ticket_id, at)
SELECT q.id, f.plan_id, f.ticket_id, f.at
FROM user_quotes q JOIN message_filings f ON f.message_id = q.message_id;

-- A line's earlier words, one row per edit (the words it had before it); shown behind
-- "Edited", deleted with the transcript.
CREATE TABLE line_versions (
    message_id INTEGER NOT NULL REFERENCES session_messages(id),
    version    INTEGER NOT NULL CHECK (version >= 1),
    body       TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    PRIMARY KEY (message_id, version)
);
ALTER TABLE session_messages ADD COLUMN edited_at INTEGER;
