-- The picture judge's calls for the sample's standard check (digest 003-B §3.3 SC3–SC7): each
-- answer kept with what it cost, so the day's picture budget (Q7: $5) is the sum of today's.
CREATE TABLE picture_judgements (
    id            INTEGER PRIMARY KEY,
    check_id      INTEGER NOT NULL REFERENCES checks(id),
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    model         TEXT    NOT NULL,
    pictures      INTEGER NOT NULL CHECK (pictures >= 0),
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    -- Null when the model has no price set (it then counts nothing against the budget).
    cost_usd      REAL,
    verdict       TEXT    NOT NULL CHECK (verdict IN ('holds', 'unsure', 'short', 'unreadable', 'failed')),
    raw           TEXT,
    at            INTEGER NOT NULL
);
CREATE INDEX picture_judgements_at ON picture_judgements(at);
