-- requirements: issue 16 (Deliverables II).
-- The requirements ledger (digest 003-C §6) and the scribe's queue (§7). An entry stands on a
-- verbatim piece of the user's words; it is only added or raised, leaves force only by the
-- user's word (or an erased quote), and is deleted only inside a purge. The database keeps
-- the words honest: `fold()` (registered on every connection, the same definition as
-- troupe_core::requirement::db_fold) must find the quote in its source line (RL-2).

-- Which engine a conversation runs (video | general | coding): the switchable steps read it.
ALTER TABLE sessions ADD COLUMN engine TEXT NOT NULL DEFAULT 'general'
    CHECK (engine IN ('video', 'general', 'coding'));

-- Switchable engine steps (ADR 0085): the scribe is on in the video engine only by default.
CREATE TABLE engine_steps (
    engine     TEXT    NOT NULL CHECK (engine IN ('video', 'general', 'coding')),
    step       TEXT    NOT NULL CHECK (step IN ('scribe')),
    enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (engine, step)
);
INSERT INTO engine_steps (engine, step, enabled, updated_at) VALUES
    ('video', 'scribe', 1, 0), ('general', 'scribe', 0, 0), ('coding', 'scribe', 0, 0);

CREATE TABLE requirements (
    id                INTEGER PRIMARY KEY,
    -- The job that first recorded it; session and standing entries hold beyond it.
    plan_id           INTEGER NOT NULL REFERENCES plans(id),
    ticket_id         INTEGER REFERENCES tickets(id),
    -- The conversation a session entry holds for; nulled when a group is deleted (RL-20).
    session_id        INTEGER REFERENCES sessions(id),
    scope             TEXT    NOT NULL CHECK (scope IN ('ticket', 'job', 'session', 'standing')),
    -- The user's own words (≤300 code points); emptied only when they are erased.
    quote             TEXT    NOT NULL CHECK (length(quote) <= 300),
    source_kind       TEXT    NOT NULL CHECK (source_kind IN
        ('you_said', 'your_answer', 'your_annotation', 'board', 'old_rule', 'complaint_whole')),
    source_message_id INTEGER REFERENCES session_messages(id),
    -- The user quote it stands on, when there is one (a board line has no transcript line).
    source_quote_id   INTEGER,
    restatement       TEXT    NOT NULL DEFAULT '',
    category          TEXT,
    nature            TEXT    CHECK (nature IN ('craft', 'choice_of_look', 'series_constant', 'other')),
    polarity          TEXT    NOT NULL DEFAULT 'must' CHECK (polarity IN ('must', 'must_not')),
    -- troupe_core::words_check::Number as JSON, only when the quote reads exactly one (RL-5).
    number            TEXT,
    state             TEXT    NOT NULL CHECK (state IN ('in_force', 'to_confirm', 'replaced',
        'no_longer_applies', 'not_a_requirement', 'old_rule_unverified')),
    replaces_id       INTEGER REFERENCES requirements(id),
    said_count        INTEGER NOT NULL DEFAULT 1 CHECK (said_count >= 1),
    -- When its words were said: a replacement must stand on later words (RL-3).
    said_at           INTEGER NOT NULL,
    -- "Words you took out" (UQ-12): shown first until the user presses.
    taken_out_at      INTEGER,
    -- Bumped by every step; the API refuses an action on an older one (RL-21).
    version           INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    CONSTRAINT requirement_ticket_scope CHECK (scope <> 'ticket' OR ticket_id IS NOT NULL),
    CONSTRAINT requirement_has_source CHECK
        (source_message_id IS NOT NULL OR source_kind IN ('board', 'old_rule')),
    CONSTRAINT requirement_replaces_other CHECK (replaces_id IS NULL OR replaces_id <> id)
);
CREATE INDEX requirements_plan ON requirements(plan_id, id);
CREATE INDEX requirements_session ON requirements(session_id, id) WHERE session_id IS NOT NULL;
CREATE INDEX requirements_line ON requirements(source_message_id)
    WHERE source_message_id IS NOT NULL;
CREATE INDEX requirements_replaces ON requirements(replaces_id) WHERE replaces_id IS NOT NULL;

-- Every time the user said it (the first included): which line, in which job.
CREATE TABLE requirement_sayings (
    id             INTEGER PRIMARY KEY,
    requirement_id INTEGER NOT NULL REFERENCES requirements(id),
    plan_id        INTEGER NOT NULL REFERENCES plans(id),
    message_id     INTEGER REFERENCES session_messages(id),
    said_at        INTEGER NOT NULL
);
CREATE INDEX requirement_sayings_requirement ON requirement_sayings(requirement_id, id);
CREATE UNIQUE INDEX requirement_sayings_once
    ON requirement_sayings(requirement_id, message_id) WHERE message_id IS NOT NULL;

-- "Not for this job" on an inherited entry (RL-13); "Restore" removes the row.
CREATE TABLE requirement_exclusions (
    requirement_id INTEGER NOT NULL REFERENCES requirements(id),
    plan_id        INTEGER NOT NULL REFERENCES plans(id),
    at             INTEGER NOT NULL,
    PRIMARY KEY (requirement_id, plan_id)
);
CREATE INDEX requirement_exclusions_plan ON requirement_exclusions(plan_id);

-- Every step, with the plan version it stood at (RL-9).
CREATE TABLE requirement_steps (
    id             INTEGER PRIMARY KEY,
    requirement_id INTEGER NOT NULL REFERENCES requirements(id),
    plan_id        INTEGER NOT NULL REFERENCES plans(id),
    step           TEXT    NOT NULL,
    state          TEXT    NOT NULL,
    plan_version   INTEGER NOT NULL,
    at             INTEGER NOT NULL
);
CREATE INDEX requirement_steps_requirement ON requirement_steps(requirement_id, id);

-- A purge in progress: while its row exists the job's entries may be deleted (RL-1).
CREATE TABLE requirement_purges (
    plan_id INTEGER PRIMARY KEY REFERENCES plans(id)
);

-- The scribe's queue (SC-1, SC-2): a line (or an answer, or an edit's version) once, in
-- order per job.
CREATE TABLE scribe_queue (
    id         INTEGER PRIMARY KEY,
    plan_id    INTEGER NOT NULL REFERENCES plans(id),
    message_id INTEGER NOT NULL REFERENCES session_messages(id),
    kind       TEXT    NOT NULL CHECK (kind IN ('line', 'answer', 'edit')),
    -- Which edit of the line (0: as sent).
    revision   INTEGER NOT NULL DEFAULT 0 CHECK (revision >= 0),
    state      TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'done', 'dropped')),
    outcome    TEXT,
    queued_at  INTEGER NOT NULL,
    done_at    INTEGER,
    CHECK ((state = 'queued') = (done_at IS NULL))
);
CREATE UNIQUE INDEX scribe_queue_once ON scribe_queue(message_id, revision);
CREATE INDEX scribe_queue_waiting ON scribe_queue(plan_id, id) WHERE state = 'queued';

-- RL-2: a quote is a folded substring of its line, and an erased (blanked) line gives none.
-- Words are checked as they stand when the entry is written: an entry written before its line
-- was edited or its conversation cleared (one `troupe db copy` carries over) is not re-read.
CREATE TRIGGER requirements_quote_in_line BEFORE INSERT ON requirements
WHEN NEW.source_message_id IS NOT NULL
    AND NEW.created_at >= (SELECT MAX(COALESCE(m.edited_at, 0), COALESCE(s.cleared_at, 0))
                           FROM session_messages m JOIN sessions s ON s.id = m.session_id
                           WHERE m.id = NEW.source_message_id)
BEGIN
    SELECT RAISE(ABORT, 'erased_line: the line the quote stands on was erased')
    WHERE (SELECT body FROM session_messages WHERE id = NEW.source_message_id) = '';
    SELECT RAISE(ABORT, 'quote_not_in_line: the quote is not the user''s words in its line')
    WHERE fold(NEW.quote) = ''
       OR instr(fold((SELECT body FROM session_messages WHERE id = NEW.source_message_id)),
                fold(NEW.quote)) = 0;
END;

-- A board entry's words are on the board when it is written (not re-read for one written
-- before the board's last change).
CREATE TRIGGER requirements_board_quote BEFORE INSERT ON requirements
WHEN NEW.source_message_id IS NULL AND NEW.source_kind = 'board'
    AND NEW.created_at >= (SELECT updated_at FROM plans WHERE id = NEW.plan_id)
BEGIN
    SELECT RAISE(ABORT, 'quote_not_in_line: a board entry''s words are not on the board')
    WHERE fold(NEW.quote) = ''
       OR instr(fold((SELECT rules || char(10) || done_when FROM plans WHERE id = NEW.plan_id)),
                fold(NEW.quote)) = 0;
END;

-- Where it came from, whose job and when said are fixed; the words only ever empty (an
-- erased quote, RL-20).
CREATE TRIGGER requirements_fixed BEFORE UPDATE ON requirements
WHEN NEW.plan_id IS NOT OLD.plan_id OR NEW.source_kind IS NOT OLD.source_kind
    OR NEW.source_message_id IS NOT OLD.source_message_id OR NEW.said_at IS NOT OLD.said_at
    OR NEW.created_at IS NOT OLD.created_at
    OR (NEW.quote IS NOT OLD.quote AND NEW.quote <> '')
BEGIN
    SELECT RAISE(ABORT, 'requirement_fixed: an entry''s words, source and job are fixed');
END;

-- RL-1: deleted only inside a purge.
CREATE TRIGGER requirements_purge_only BEFORE DELETE ON requirements
WHEN NOT EXISTS (SELECT 1 FROM requirement_purges WHERE plan_id = OLD.plan_id)
BEGIN
    SELECT RAISE(ABORT, 'delete_outside_purge: a requirement is deleted only by a purge');
END;
