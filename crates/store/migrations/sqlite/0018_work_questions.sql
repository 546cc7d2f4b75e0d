-- Work question cards (WQ): a segment that ended blocked asks the person for what only they can
-- give, as an ask line; their answer is taken once, idempotently by the client's request id.

CREATE TABLE work_questions (
    message_id   INTEGER PRIMARY KEY REFERENCES session_messages(id),
    work_item_id INTEGER NOT NULL REFERENCES work_items(id),
    needs        TEXT    NOT NULL,
    request_id   TEXT,
    answer       TEXT,
    answered_at  INTEGER,
    created_at   INTEGER NOT NULL,
    CHECK ((answer IS NULL) = (request_id IS NULL) AND (answer IS NULL) = (answered_at IS NULL))
);
CREATE INDEX work_questions_item ON work_questions(work_item_id);
