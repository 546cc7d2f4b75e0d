-- The reader's "where a line belongs" (C §3, §8): the jobs it was shown and what it said, or
-- why there is no reading (the line then goes to the Bot's desk unplaced: no word lists).

CREATE TABLE filing_readings (
    line_id    INTEGER PRIMARY KEY REFERENCES session_messages(id),
    -- JSON array of the plan ids shown.
    candidates TEXT    NOT NULL,
    -- JSON {"belongs": …}; null when unread.
    filing     TEXT,
    model      TEXT,
    failure    TEXT,
    raw        TEXT,
    created_at INTEGER NOT NULL,
    CHECK ((filing IS NULL) = (failure IS NOT NULL))
);


