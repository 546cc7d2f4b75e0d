-- Seams (continuity) checks (digest 003-C §15 AC-13…AC-17): a fifth kind, whose parts come from
-- a list command or from a path. SQLite rebuilds `checks` to change its CHECKs.
CREATE TABLE checks_new (
    id              INTEGER PRIMARY KEY,
    plan_id         INTEGER NOT NULL REFERENCES plans(id),
    ticket_id       INTEGER REFERENCES tickets(id),
    -- The Done when line it is attached to, matched by text (AC-8).
    done_when_line  TEXT,
    -- 'standard': "holds to the standard of sample #NN" (B §3.3), on a ticket waiting for it.
    kind            TEXT    NOT NULL CHECK (kind IN
        ('file_exists', 'file_contains', 'file_matches_regex', 'command', 'words', 'standard',
         'seams')),
    path            TEXT,
    pattern         TEXT,
    negate          INTEGER NOT NULL DEFAULT 0 CHECK (negate IN (0, 1)),
    command         TEXT,
    cwd             TEXT,
    expected_exit   INTEGER NOT NULL DEFAULT 0,
    expected_output TEXT,
    timeout_secs    INTEGER NOT NULL DEFAULT 120,
    source          TEXT    NOT NULL CHECK (source IN ('user', 'organizer', 'words', 'sample')),
    -- Whether it holds a hand-over back when it fails (CK3).
    gate            INTEGER NOT NULL DEFAULT 1 CHECK (gate IN (0, 1)),
    confirmed       INTEGER NOT NULL DEFAULT 0 CHECK (confirmed IN (0, 1)),
    dimension       TEXT    CHECK (dimension IN
        ('running_time', 'resolution', 'aspect', 'frame_rate')),
    -- The number said, as JSON (troupe_core::words_check::Value); min/max its range.
    value           TEXT,
    bound           TEXT    CHECK (bound IN ('about', 'at_least', 'at_most', 'exact')),
    min             REAL,
    max             REAL,
    quote_id        INTEGER,
    -- A standard check's sample: removed with it when the sample moves (SA4).
    sample_ticket_id INTEGER REFERENCES tickets(id),
    status          TEXT    CHECK (status IN ('offer', 'in_force')),
    said_count      INTEGER NOT NULL DEFAULT 0 CHECK (said_count >= 0),
    removed_at      INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    CONSTRAINT check_timeout CHECK (timeout_secs BETWEEN 1 AND 600),
    CONSTRAINT check_shape CHECK (
           (kind = 'file_exists' AND path IS NOT NULL)
        OR (kind IN ('file_contains', 'file_matches_regex') AND path IS NOT NULL
            AND pattern IS NOT NULL)
        OR (kind = 'command' AND trim(coalesce(command, '')) <> '')
        OR (kind = 'words' AND dimension IS NOT NULL AND status IS NOT NULL)
        OR (kind = 'standard' AND ticket_id IS NOT NULL AND sample_ticket_id IS NOT NULL)
        -- Parts from a list command or from a path (a glob, or one file to cut), not both.
        OR (kind = 'seams' AND (path IS NOT NULL) <> (trim(coalesce(command, '')) <> ''))),
    -- Only words make a words check, only a sample a standard check; an offer never gates
    -- (CW-15).
    CONSTRAINT check_words CHECK ((kind = 'words') = (source = 'words')
        AND (kind = 'standard') = (source = 'sample')
        AND (status IS NULL OR kind = 'words')
        AND (status IS NULL OR status <> 'offer' OR (gate = 0 AND confirmed = 0)))
);
INSERT INTO checks_new SELECT * FROM checks;
DROP TABLE checks;
ALTER TABLE checks_new RENAME TO checks;
CREATE INDEX checks_plan ON checks(plan_id, id);

-- A run whose judge looked at pictures is for reference only: it neither holds a hand-over back
-- nor backs its approval, and a job-wide one does not hold the job's delivery back.
ALTER TABLE check_runs ADD COLUMN for_reference INTEGER NOT NULL DEFAULT 0
    CHECK (for_reference IN (0, 1));

-- The seams judge's calls (AC-16), billed as their own spend kind, acceptance checks; those
-- that sent pictures count against the day's picture budget with the standard check's.
CREATE TABLE acceptance_check_calls (
    id            INTEGER PRIMARY KEY,
    check_id      INTEGER NOT NULL REFERENCES checks(id),
    model         TEXT    NOT NULL,
    pictures      INTEGER NOT NULL CHECK (pictures >= 0),
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    -- Null when the model has no price set.
    cost_usd      REAL,
    -- Whether the answer read: 'read', 'unreadable' (asked again once), or 'failed' (no answer).
    answer        TEXT    NOT NULL CHECK (answer IN ('read', 'unreadable', 'failed')),
    raw           TEXT,
    at            INTEGER NOT NULL
);
CREATE INDEX acceptance_check_calls_at ON acceptance_check_calls(at);
