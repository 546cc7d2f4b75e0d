-- Work items: one Bot's work on a job (mode 'work', a thread per Bot × job in the job's folder)
-- or its desk in a conversation (mode 'desk', the Bot's thread there). Segments name the work
-- item they ran for; a bound segment that ended must say why (I5).

CREATE TABLE work_items (
    id                  INTEGER PRIMARY KEY,
    bot_id              INTEGER NOT NULL REFERENCES bots(id),
    mode                TEXT    NOT NULL CHECK (mode IN ('desk', 'work')),
    plan_id             INTEGER REFERENCES plans(id),
    ticket_id           INTEGER,
    -- A desk's conversation.
    session_id          INTEGER REFERENCES sessions(id),
    thread_id           INTEGER NOT NULL REFERENCES threads(id),
    state               TEXT    NOT NULL DEFAULT 'idle' CHECK (state IN
        ('running', 'queued', 'idle', 'waiting', 'blocked', 'needs_attention', 'closed')),
    -- JSON: {"kind":"user"} | {"kind":"delegation","delegation_id":N}
    waiting_on          TEXT,
    no_progress_endings INTEGER NOT NULL DEFAULT 0,
    -- The conversation its next segment speaks in: where the work it was last given came from.
    speaks_in           INTEGER REFERENCES sessions(id),
    -- Dispatch order of queued work: priority (1 user … 4 check-back), then since when.
    priority            INTEGER NOT NULL DEFAULT 1,
    queued_at           INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    CHECK ((mode = 'desk' AND session_id IS NOT NULL AND plan_id IS NULL)
        OR (mode = 'work' AND plan_id IS NOT NULL AND session_id IS NULL))
);
CREATE UNIQUE INDEX work_items_desk ON work_items(bot_id, session_id) WHERE mode = 'desk';
CREATE UNIQUE INDEX work_items_job ON work_items(bot_id, plan_id)
    WHERE mode = 'work' AND ticket_id IS NULL;
CREATE INDEX work_items_thread ON work_items(thread_id);
CREATE INDEX work_items_queue ON work_items(bot_id, state, priority, queued_at);

-- Work segments a Bot may run at once (WI-3); none or not positive means 2. No API sets it.
ALTER TABLE bots ADD COLUMN parallel_limit INTEGER;

ALTER TABLE segments ADD COLUMN work_item_id INTEGER REFERENCES work_items(id);
ALTER TABLE segments ADD COLUMN mode TEXT CHECK (mode IN ('desk', 'work', 'readonly'));
-- A desk's candidate jobs, frozen at admission (DS-3): JSON array of plan ids.
ALTER TABLE segments ADD COLUMN candidates TEXT;
ALTER TABLE segments ADD COLUMN reading_verdict TEXT;
-- The ending contract's and the desk's shared budget (2), and the other counters a segment keeps.
ALTER TABLE segments ADD COLUMN bounces INTEGER NOT NULL DEFAULT 0;
ALTER TABLE segments ADD COLUMN progress_messages INTEGER NOT NULL DEFAULT 0;
ALTER TABLE segments ADD COLUMN dir_changes INTEGER NOT NULL DEFAULT 0;
CREATE INDEX segments_work_item ON segments(work_item_id, run_id);

-- I5 (END-23): a run bound to a work item that ended says why, on insert and on every update.
CREATE TRIGGER runs_bound_end_reason_insert BEFORE INSERT ON runs
WHEN NEW.status <> 'running' AND trim(coalesce(NEW.end_reason, '')) = ''
    AND EXISTS (SELECT 1 FROM segments WHERE run_id = NEW.id AND work_item_id IS NOT NULL)
BEGIN
    SELECT RAISE(ABORT, 'blank_end_reason: a bound segment that ended must say why');
END;
CREATE TRIGGER runs_bound_end_reason_update BEFORE UPDATE ON runs
WHEN NEW.status <> 'running' AND trim(coalesce(NEW.end_reason, '')) = ''
    AND EXISTS (SELECT 1 FROM segments WHERE run_id = NEW.id AND work_item_id IS NOT NULL)
BEGIN
    SELECT RAISE(ABORT, 'blank_end_reason: a bound segment that ended must say why');
END;
