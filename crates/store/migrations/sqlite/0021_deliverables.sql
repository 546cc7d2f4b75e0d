-- Deliverables (digest 003-B §1–5, 003-C §15–16): tickets with their parts and dependencies,
-- the large-job fields of a plan, submissions (hand-overs) with their files, reviews with
-- their verdicts, acceptance checks (and checks from the user's words) with their last runs.
-- The database keeps the stage rules: a user's status edit moves the stage
-- (`tickets_stage_follows_status`), every stage write names its source, every stage move is
-- logged in `ticket_stage_changes`, and (stage, status) is always a row of the mapping.
-- Events are appended by the store's methods, never here (on PostgreSQL they are numbered at
-- commit).

CREATE TABLE tickets (
    id                 INTEGER PRIMARY KEY,
    plan_id            INTEGER NOT NULL REFERENCES plans(id),
    -- Shown #NN and used in the folder name; one per plan.
    number             INTEGER NOT NULL CHECK (number >= 1),
    -- The lead's layout key, to name the item again in a later layout.
    key                TEXT,
    title              TEXT    NOT NULL CHECK (trim(title) <> ''),
    description        TEXT    NOT NULL DEFAULT '',
    done_when          TEXT    NOT NULL DEFAULT '',
    stage              TEXT    NOT NULL DEFAULT 'to_do' CHECK (stage IN
        ('to_do', 'in_progress', 'submitted', 'in_review', 'rework', 'approved', 'dropped')),
    status             TEXT    NOT NULL DEFAULT 'to_do' CHECK (status IN
        ('to_do', 'in_progress', 'in_review', 'done', 'parked')),
    -- Who wrote the stage last (T3); none until the first move.
    stage_source       TEXT    CHECK (stage_source IN
        ('check', 'review', 'supervisor', 'user', 'lead_drop', 'app_started')),
    owner_bot_id       INTEGER REFERENCES bots(id),
    reviewer_bot_id    INTEGER REFERENCES bots(id),
    is_sample          INTEGER NOT NULL DEFAULT 0 CHECK (is_sample IN (0, 1)),
    -- The lead's reason for a drop; none when the user set it aside (Q4).
    drop_reason        TEXT,
    -- Fixed at creation (T24): a rename does not move it.
    folder             TEXT    NOT NULL,
    -- Through (T17): handed over at least once.
    handed_over_once   INTEGER NOT NULL DEFAULT 0 CHECK (handed_over_once IN (0, 1)),
    -- Who made the approved version ("approved, by X").
    approved_by_bot_id INTEGER REFERENCES bots(id),
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    UNIQUE (plan_id, number),
    CONSTRAINT ticket_stage_status CHECK (
           (stage = 'to_do' AND status = 'to_do')
        OR (stage = 'in_progress' AND status = 'in_progress')
        OR (stage = 'submitted' AND status = 'in_review')
        OR (stage = 'in_review' AND status = 'in_review')
        OR (stage = 'rework' AND status = 'in_progress')
        OR (stage = 'approved' AND status = 'done')
        OR (stage = 'dropped' AND status = 'parked')),
    CONSTRAINT reviewer_is_owner CHECK (reviewer_bot_id <> owner_bot_id),
    CONSTRAINT drop_reason_only_dropped CHECK (drop_reason IS NULL OR stage = 'dropped')
);
CREATE UNIQUE INDEX tickets_key ON tickets(plan_id, key) WHERE key IS NOT NULL;
-- SA1: at most one sample per job.
CREATE UNIQUE INDEX tickets_one_sample ON tickets(plan_id) WHERE is_sample = 1;

-- T17: what a ticket waits for.
CREATE TABLE ticket_dependencies (
    ticket_id     INTEGER NOT NULL REFERENCES tickets(id),
    depends_on_id INTEGER NOT NULL REFERENCES tickets(id),
    PRIMARY KEY (ticket_id, depends_on_id),
    CONSTRAINT depends_on_self CHECK (ticket_id <> depends_on_id)
);
CREATE INDEX ticket_dependencies_on ON ticket_dependencies(depends_on_id);

-- Parts (T15, T16): laid out by the lead or the user only; each hand-over counts an attempt
-- and records the part's current file.
CREATE TABLE ticket_parts (
    id           INTEGER PRIMARY KEY,
    ticket_id    INTEGER NOT NULL REFERENCES tickets(id),
    number       INTEGER NOT NULL CHECK (number >= 1),
    label        TEXT    NOT NULL CHECK (trim(label) <> ''),
    stage        TEXT    NOT NULL DEFAULT 'in_progress'
                 CHECK (stage IN ('in_progress', 'submitted', 'approved', 'rework')),
    attempts     INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    current_file TEXT,
    blocked      INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1)),
    UNIQUE (ticket_id, number)
);

-- Every stage move of a ticket (or, with part_id, of one of its parts), with its source.
CREATE TABLE ticket_stage_changes (
    id         INTEGER PRIMARY KEY,
    ticket_id  INTEGER NOT NULL REFERENCES tickets(id),
    part_id    INTEGER REFERENCES ticket_parts(id),
    from_stage TEXT    NOT NULL,
    to_stage   TEXT    NOT NULL,
    source     TEXT    NOT NULL,
    at         INTEGER NOT NULL
);
CREATE INDEX ticket_stage_changes_ticket ON ticket_stage_changes(ticket_id, id);

-- T7: a status edit that leaves the stage alone is the user's board edit, and the stage
-- follows it. SQLite cannot change NEW in a BEFORE trigger, so the row is written here with
-- the stage the status maps to, and the statement's own write of it is skipped.
CREATE TRIGGER tickets_stage_follows_status BEFORE UPDATE ON tickets
WHEN NEW.status IS NOT OLD.status AND NEW.stage IS OLD.stage
BEGIN
    UPDATE tickets SET
        plan_id = NEW.plan_id, number = NEW.number, key = NEW.key, title = NEW.title,
        description = NEW.description, done_when = NEW.done_when,
        status = NEW.status,
        stage = CASE NEW.status
            WHEN 'to_do' THEN 'to_do' WHEN 'in_progress' THEN 'in_progress'
            WHEN 'in_review' THEN 'in_review' WHEN 'done' THEN 'approved'
            WHEN 'parked' THEN 'dropped' END,
        stage_source = 'user',
        owner_bot_id = NEW.owner_bot_id, reviewer_bot_id = NEW.reviewer_bot_id,
        is_sample = NEW.is_sample,
        drop_reason = CASE WHEN NEW.status = 'parked' THEN NEW.drop_reason END,
        folder = NEW.folder, handed_over_once = NEW.handed_over_once,
        approved_by_bot_id = NEW.approved_by_bot_id, created_at = NEW.created_at,
        updated_at = NEW.updated_at
    WHERE id = OLD.id;
    SELECT RAISE(IGNORE);
END;

-- T3: a stage write names its source.
CREATE TRIGGER tickets_stage_needs_source BEFORE UPDATE ON tickets
WHEN NEW.stage IS NOT OLD.stage AND NEW.stage_source IS NULL
BEGIN
    SELECT RAISE(ABORT, 'stage_needs_source: a ticket''s stage write must name its source');
END;

-- T3: every stage move is logged with its source.
CREATE TRIGGER tickets_stage_logged AFTER UPDATE ON tickets
WHEN NEW.stage IS NOT OLD.stage
BEGIN
    INSERT INTO ticket_stage_changes (ticket_id, part_id, from_stage, to_stage, source, at)
    VALUES (NEW.id, NULL, OLD.stage, NEW.stage, NEW.stage_source, NEW.updated_at);
END;

-- Which job, which number and which folder are fixed at creation.
CREATE TRIGGER tickets_fixed BEFORE UPDATE ON tickets
WHEN NEW.plan_id IS NOT OLD.plan_id OR NEW.number IS NOT OLD.number
    OR NEW.folder IS NOT OLD.folder
BEGIN
    SELECT RAISE(ABORT, 'ticket_fixed: a ticket''s job, number and folder are fixed');
END;

-- Large job and sample (B §2.1, T9): the reading, the user's sticky "No need", the layout,
-- the sample, and delivery (every ticket not dropped approved and the plan-wide gates passed).
ALTER TABLE plans ADD COLUMN large_state TEXT NOT NULL DEFAULT 'unread'
    CHECK (large_state IN ('unread', 'large', 'not_large'));
ALTER TABLE plans ADD COLUMN large_source TEXT
    CHECK (large_source IN ('reader', 'supervisor', 'user'));
ALTER TABLE plans ADD COLUMN large_evidence TEXT;
ALTER TABLE plans ADD COLUMN user_said_no_need INTEGER NOT NULL DEFAULT 0
    CHECK (user_said_no_need IN (0, 1));
ALTER TABLE plans ADD COLUMN laid_out INTEGER NOT NULL DEFAULT 0 CHECK (laid_out IN (0, 1));
-- No foreign key: plans and tickets would point at each other, and `troupe db copy` inserts
-- tables after those they point at.
ALTER TABLE plans ADD COLUMN sample_ticket_id INTEGER;
ALTER TABLE plans ADD COLUMN delivered INTEGER NOT NULL DEFAULT 0 CHECK (delivered IN (0, 1));

-- Submissions (B §4): one hand-over of a ticket's work. Decided ones keep their state; a
-- failed one stays on record (SP3).
CREATE TABLE submissions (
    id                  INTEGER PRIMARY KEY,
    ticket_id           INTEGER NOT NULL REFERENCES tickets(id),
    plan_id             INTEGER NOT NULL REFERENCES plans(id),
    origin              TEXT    NOT NULL
                        CHECK (origin IN ('explicit', 'implicit', 'answer', 'organizer')),
    producer_bot_id     INTEGER REFERENCES bots(id),
    -- The segment (its run) and the work item it was handed over from.
    run_id              INTEGER REFERENCES runs(id),
    work_item_id        INTEGER REFERENCES work_items(id),
    -- The words of a words hand-over (origin answer).
    content             TEXT,
    note                TEXT    NOT NULL DEFAULT '',
    -- JSON array of the Bot's claims.
    claims              TEXT    NOT NULL DEFAULT '[]',
    state               TEXT    NOT NULL DEFAULT 'checking' CHECK (state IN
        ('checking', 'failed_checks', 'submitted', 'in_review', 'awaiting_user', 'approved',
         'rework', 'superseded')),
    approved_by         TEXT    CHECK (approved_by IN
        ('user', 'no_reviewer', 'routine', 'one_go', 'reviewer')),
    approved_by_bot_id  INTEGER REFERENCES bots(id),
    -- The user's line that let it through.
    approved_message_id INTEGER REFERENCES session_messages(id),
    -- Deferred: a copy inserts older rows first, and they name newer ones.
    superseded_by       INTEGER REFERENCES submissions(id) DEFERRABLE INITIALLY DEFERRED,
    created_at          INTEGER NOT NULL,
    decided_at          INTEGER,
    CONSTRAINT submission_producer CHECK (origin = 'organizer' OR producer_bot_id IS NOT NULL),
    CONSTRAINT submission_words CHECK ((origin = 'answer') = (content IS NOT NULL)),
    CONSTRAINT submission_approval CHECK (state <> 'approved' OR approved_by IS NOT NULL),
    CONSTRAINT submission_reviewer CHECK (approved_by IS NULL OR approved_by <> 'reviewer'
        OR approved_by_bot_id IS NOT NULL),
    CONSTRAINT submission_user_word CHECK (approved_message_id IS NULL OR approved_by = 'user'),
    CONSTRAINT submission_superseded CHECK (superseded_by IS NULL OR state = 'superseded')
);
CREATE INDEX submissions_plan ON submissions(plan_id, id);
CREATE INDEX submissions_ticket ON submissions(ticket_id, id);

-- The parts a hand-over covers (none: the whole ticket, T15).
CREATE TABLE submission_parts (
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    part_id       INTEGER NOT NULL REFERENCES ticket_parts(id),
    PRIMARY KEY (submission_id, part_id)
);

-- The files handed over, with their content hash: never changed or removed. Stored in key
-- order, so a job's hand-overs read their files in one pass.
CREATE TABLE submission_files (
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    path          TEXT    NOT NULL CHECK (path <> ''),
    sha256        TEXT    NOT NULL CHECK (length(sha256) = 64),
    size          INTEGER NOT NULL CHECK (size >= 0),
    PRIMARY KEY (submission_id, path)
) WITHOUT ROWID;
CREATE TRIGGER submission_files_no_update BEFORE UPDATE ON submission_files
BEGIN
    SELECT RAISE(ABORT, 'submission_files_immutable: a hand-over''s files never change');
END;
CREATE TRIGGER submission_files_no_delete BEFORE DELETE ON submission_files
BEGIN
    SELECT RAISE(ABORT, 'submission_files_immutable: a hand-over''s files never change');
END;

-- Files posted on or named by a Bot's line, first cited when (CW-12, CW-14, §4.3 step 2).
CREATE TABLE line_files (
    line_id        INTEGER NOT NULL REFERENCES session_messages(id),
    path           TEXT    NOT NULL CHECK (path <> ''),
    sha256         TEXT    CHECK (sha256 IS NULL OR length(sha256) = 64),
    first_cited_at INTEGER NOT NULL,
    PRIMARY KEY (line_id, path)
);
CREATE INDEX line_files_path ON line_files(path, first_cited_at);

-- Reviews (B §5): every call recorded, with what became of it.
CREATE TABLE reviews (
    id              INTEGER PRIMARY KEY,
    submission_id   INTEGER NOT NULL REFERENCES submissions(id),
    reviewer_bot_id INTEGER NOT NULL REFERENCES bots(id),
    run_id          INTEGER REFERENCES runs(id),
    outcome         TEXT    NOT NULL CHECK (outcome IN ('approve', 'reject')),
    note            TEXT    NOT NULL DEFAULT '',
    result          TEXT    NOT NULL CHECK (result IN ('recorded', 'refused', 'awaiting_user')),
    -- JSON array of the reasons a refusal or a wait gave.
    reasons         TEXT    NOT NULL DEFAULT '[]',
    same_model      INTEGER NOT NULL CHECK (same_model IN (0, 1)),
    reviewer_model  TEXT,
    producer_model  TEXT,
    created_at      INTEGER NOT NULL
);
CREATE INDEX reviews_submission ON reviews(submission_id, id);

-- T8: never the producer's own review.
CREATE TRIGGER reviews_not_by_producer BEFORE INSERT ON reviews
WHEN NEW.reviewer_bot_id = (SELECT producer_bot_id FROM submissions WHERE id = NEW.submission_id)
BEGIN
    SELECT RAISE(ABORT, 'own_submission: a producer never reviews its own hand-over');
END;

CREATE TABLE review_verdicts (
    review_id      INTEGER NOT NULL REFERENCES reviews(id),
    requirement_id TEXT    NOT NULL CHECK (requirement_id <> ''),
    verdict        TEXT    NOT NULL CHECK (verdict IN ('pass', 'fail', 'unknown', 'n/a')),
    evidence       TEXT,
    PRIMARY KEY (review_id, requirement_id)
);

-- An image a segment read from the job's folder, once per path and segment (§5.3 1c).
CREATE TABLE artifact_views (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    path   TEXT    NOT NULL CHECK (path <> ''),
    at     INTEGER NOT NULL,
    PRIMARY KEY (run_id, path)
);

-- Acceptance checks (C §15) and checks from the user's words (C §16, kind 'words').
CREATE TABLE checks (
    id              INTEGER PRIMARY KEY,
    plan_id         INTEGER NOT NULL REFERENCES plans(id),
    ticket_id       INTEGER REFERENCES tickets(id),
    -- The Done when line it is attached to, matched by text (AC-8).
    done_when_line  TEXT,
    -- 'standard': "holds to the standard of sample #NN" (B §3.3), on a ticket waiting for it.
    kind            TEXT    NOT NULL CHECK (kind IN
        ('file_exists', 'file_contains', 'file_matches_regex', 'command', 'words', 'standard')),
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
        OR (kind = 'standard' AND ticket_id IS NOT NULL AND sample_ticket_id IS NOT NULL)),
    -- Only words make a words check, only a sample a standard check; an offer never gates
    -- (CW-15).
    CONSTRAINT check_words CHECK ((kind = 'words') = (source = 'words')
        AND (kind = 'standard') = (source = 'sample')
        AND (status IS NULL OR kind = 'words')
        AND (status IS NULL OR status <> 'offer' OR (gate = 0 AND confirmed = 0)))
);
CREATE INDEX checks_plan ON checks(plan_id, id);

-- A check's runs: the last five are kept (AC-4).
CREATE TABLE check_runs (
    id            INTEGER PRIMARY KEY,
    check_id      INTEGER NOT NULL REFERENCES checks(id),
    submission_id INTEGER REFERENCES submissions(id),
    outcome       TEXT    NOT NULL CHECK (outcome IN ('passed', 'failed', 'blocked', 'error')),
    detail        TEXT    NOT NULL DEFAULT '',
    output_tail   TEXT    NOT NULL DEFAULT '' CHECK (length(output_tail) <= 4000),
    measured      REAL,
    started_at    INTEGER NOT NULL,
    ended_at      INTEGER NOT NULL
);
CREATE INDEX check_runs_check ON check_runs(check_id, id);
CREATE INDEX check_runs_submission ON check_runs(submission_id);
CREATE TRIGGER check_runs_keep_five AFTER INSERT ON check_runs
BEGIN
    DELETE FROM check_runs WHERE check_id = NEW.check_id AND id NOT IN
        (SELECT id FROM check_runs WHERE check_id = NEW.check_id ORDER BY id DESC LIMIT 5);
END;
