-- quality: issue 16 (Deliverables II) — quality events (digest 003-B §9), timeout lessons
-- (§10.1) and review misses (§6). No foreign keys on the refs: an event outlives the plan,
-- ticket, turn or line it names (QE1), and no delete elsewhere may fail because of one.

CREATE TABLE quality_events (
    id          INTEGER PRIMARY KEY,
    type        TEXT    NOT NULL CHECK (type IN
        ('execution', 'unclear', 'model', 'pipeline', 'review_miss', 'orchestration')),
    -- What happened, within the type: checks_failed, review_rejected, command_timed_out, …
    cause       TEXT    NOT NULL CHECK (trim(cause) <> ''),
    bot_id      INTEGER,
    model       TEXT,
    plan_id     INTEGER,
    ticket_id   INTEGER,
    run_id      INTEGER,
    -- The record the cause wrote (review, submission, check, line, command, run); a line's
    -- link is dropped when its conversation is cleared, the event stays (QE1).
    source_kind TEXT,
    source_id   INTEGER,
    at          INTEGER NOT NULL,
    detail      TEXT    NOT NULL DEFAULT '{}',
    CHECK ((source_kind IS NULL) = (source_id IS NULL))
);
CREATE INDEX quality_events_at ON quality_events(at);
CREATE INDEX quality_events_bot ON quality_events(bot_id, at);
-- QE3: "the model's problem" is one mark per turn.
CREATE UNIQUE INDEX quality_events_model_mark ON quality_events(run_id) WHERE cause = 'marked';
-- RM1: one miss per (hand-over, reviewer).
CREATE UNIQUE INDEX quality_events_one_miss ON quality_events(source_id, bot_id)
    WHERE type = 'review_miss';

-- A timeout lesson per kind of call (program, place), workspace-wide and for every Bot.
CREATE TABLE lessons (
    id              INTEGER PRIMARY KEY,
    program         TEXT    NOT NULL CHECK (trim(program) <> ''),
    place           TEXT    NOT NULL CHECK (trim(place) <> ''),
    state           TEXT    NOT NULL DEFAULT 'warn' CHECK (state IN ('warn', 'block', 'off')),
    -- How many calls of this kind the timeout killed.
    timeouts        INTEGER NOT NULL DEFAULT 1 CHECK (timeouts >= 1),
    -- The command that timed out last, as the Bot wrote it.
    command         TEXT    NOT NULL,
    timeout_secs    INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    last_timeout_at INTEGER NOT NULL,
    UNIQUE (program, place)
);

-- A review whose approve a complaint overturned (RM1): the reviewer's calibration record.
CREATE TABLE review_misses (
    id              INTEGER PRIMARY KEY,
    submission_id   INTEGER NOT NULL,
    reviewer_bot_id INTEGER NOT NULL,
    review_id       INTEGER NOT NULL,
    plan_id         INTEGER NOT NULL,
    ticket_id       INTEGER NOT NULL,
    -- Where the user said it; the line itself, until its conversation is cleared.
    session_id      INTEGER,
    line_id         INTEGER,
    words           TEXT    NOT NULL,
    at              INTEGER NOT NULL,
    UNIQUE (submission_id, reviewer_bot_id)
);
CREATE INDEX review_misses_reviewer ON review_misses(reviewer_bot_id, at);

-- What a model costs, in US dollars per million tokens, where someone priced it: the quality
-- report's spend (QE5). An unpriced model's spend is unknown, never zero.
CREATE TABLE model_prices (
    model              TEXT    PRIMARY KEY CHECK (trim(model) <> ''),
    input_per_mtok     REAL NOT NULL CHECK (input_per_mtok >= 0),
    output_per_mtok    REAL NOT NULL CHECK (output_per_mtok >= 0),
    updated_at         INTEGER NOT NULL
);

-- Clearing a conversation blanks its lines: what pointed at one keeps everything but the link.
CREATE TRIGGER quality_line_cleared AFTER UPDATE OF body ON session_messages
WHEN NEW.body = '' AND OLD.body <> ''
BEGIN
    UPDATE quality_events SET source_kind = NULL, source_id = NULL
        WHERE source_kind = 'line' AND source_id = NEW.id;
    UPDATE review_misses SET line_id = NULL WHERE line_id = NEW.id;
END;
