-- What became of a person's line a Bot's turn read (digest 003-A END-3, END-6): the disposition
-- its ending gave (adopted, answered, declined with why, deferred), or answered by a prose
-- ending. One per line and turn; clearing a conversation blanks the why.
CREATE TABLE line_dispositions (
    message_id  INTEGER NOT NULL REFERENCES session_messages(id),
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    bot_id      INTEGER NOT NULL REFERENCES bots(id),
    disposition TEXT    NOT NULL
                CHECK (disposition IN ('adopted', 'answered', 'declined', 'deferred')),
    why         TEXT,
    by_prose    INTEGER NOT NULL DEFAULT 0 CHECK (by_prose IN (0, 1)),
    at          INTEGER NOT NULL,
    PRIMARY KEY (message_id, run_id),
    -- A prose ending only ever answers.
    CHECK (by_prose = 0 OR disposition = 'answered')
);
CREATE INDEX line_dispositions_run ON line_dispositions(run_id);
