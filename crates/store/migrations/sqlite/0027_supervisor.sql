-- The supervisor and the scheduler tick (issue 16 items 1–3, C §12). Every deadline is a stored
-- time: `supervise_at` on a work item or a job says when the tick should look at it next, so a
-- tick reads only what is due (indexed) and a restart loses no deadline. Triggers arm them on
-- activity; the supervisor clears or moves them once it has looked. Rows that existed before
-- this migration are never armed until something happens in them (SV-17).

-- The job's work log: each row is also an event (`Tx::log_work`), listed per job.
CREATE TABLE work_log (
    id           INTEGER PRIMARY KEY,
    at           INTEGER NOT NULL,
    plan_id      INTEGER NOT NULL REFERENCES plans(id),
    ticket_id    INTEGER,
    work_item_id INTEGER,
    kind         TEXT    NOT NULL,
    payload      TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX work_log_plan ON work_log(plan_id, id);

-- One row per daemon process start; the drain writes `clean_stop_at`. Work a run of this
-- process cut is judged by it: a clean stop's pick-ups spend no budget, a crash's do.
CREATE TABLE daemon_runs (
    id            INTEGER PRIMARY KEY,
    node_id       TEXT    NOT NULL,
    started_at    INTEGER NOT NULL,
    clean_stop_at INTEGER
);
CREATE INDEX daemon_runs_started ON daemon_runs(started_at);

-- Small stored settings (`supervisor.enabled`, the engine steps).
CREATE TABLE app_settings (
    key        TEXT    PRIMARY KEY NOT NULL,
    value      TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
);
INSERT INTO app_settings (key, value, updated_at)
SELECT 'supervisor.enabled', CAST(COALESCE(MAX(at), 0) AS TEXT), COALESCE(MAX(at), 0) FROM events;

-- A check-back the supervisor fired is a row too (SV-2): kind and why.
ALTER TABLE check_backs ADD COLUMN kind TEXT NOT NULL DEFAULT 'self'
    CHECK (kind IN ('self', 'supervisor'));
ALTER TABLE check_backs ADD COLUMN ticket_id INTEGER;
-- JSON {reason, attempt, cycle|restart} for kind 'supervisor'.
ALTER TABLE check_backs ADD COLUMN wait_spec TEXT;
CREATE INDEX check_backs_supervisor ON check_backs(work_item_id, kind, fired_at);

-- When the supervisor should look at a work item / a job's tickets next.
ALTER TABLE work_items ADD COLUMN supervise_at INTEGER;
CREATE INDEX work_items_supervise ON work_items(supervise_at) WHERE supervise_at IS NOT NULL;
-- The person's last word on the work (Continue, a line to it): the pick-up budget counts from it.
ALTER TABLE work_items ADD COLUMN user_word_at INTEGER;
ALTER TABLE plans ADD COLUMN supervise_at INTEGER;
ALTER TABLE plans ADD COLUMN activity_at INTEGER;
CREATE INDEX plans_supervise ON plans(supervise_at) WHERE supervise_at IS NOT NULL;

-- A stalled ticket's call-backs in its current progress cycle (SV-14); progress deletes it.
CREATE TABLE ticket_callbacks (
    ticket_id        INTEGER PRIMARY KEY NOT NULL,
    callbacks        INTEGER NOT NULL DEFAULT 0,
    last_callback_at INTEGER,
    noticed_at       INTEGER
);

-- Arming. A work item that changes state is looked at once.
CREATE TRIGGER work_items_arm_supervisor AFTER UPDATE OF state ON work_items
WHEN NEW.state <> OLD.state AND NEW.state IN ('needs_attention', 'waiting', 'idle', 'running')
BEGIN
    UPDATE work_items SET supervise_at = NEW.updated_at WHERE id = NEW.id;
END;
-- Mail for an idle work item (SV-5).
CREATE TRIGGER inbox_arms_idle_work AFTER INSERT ON inbox_items
WHEN NEW.mode <> 'context'
BEGIN
    UPDATE work_items SET supervise_at = NEW.created_at
    WHERE thread_id = NEW.thread_id AND state = 'idle';
END;
-- A delegation answered or cancelled: its sender's wait is looked at (SV-4).
CREATE TRIGGER delegations_arm_sender AFTER UPDATE OF state ON delegations
WHEN NEW.state <> OLD.state
BEGIN
    UPDATE work_items SET supervise_at = NEW.updated_at
    WHERE id = NEW.sender_work_item AND state = 'waiting';
END;
-- A job's activity (its work log, lines filed to it, its work changing state) restarts its
-- quiet clock: look at its tickets once the shortest threshold (2 min) has passed (SV-13).
CREATE TRIGGER work_log_arms_plan AFTER INSERT ON work_log
BEGIN
    UPDATE plans SET supervise_at = NEW.at + 120000, activity_at = NEW.at
    WHERE id = NEW.plan_id;
END;
CREATE TRIGGER filings_arm_plan AFTER INSERT ON message_filings
BEGIN
    UPDATE plans SET supervise_at = NEW.at + 120000, activity_at = NEW.at
    WHERE id = NEW.plan_id;
END;
CREATE TRIGGER work_items_arm_plan AFTER UPDATE OF state ON work_items
WHEN NEW.state <> OLD.state AND NEW.plan_id IS NOT NULL
BEGIN
    UPDATE plans SET supervise_at = NEW.updated_at + 120000, activity_at = NEW.updated_at
    WHERE id = NEW.plan_id;
END;
-- Progress (SV-16: a stage change, a hand-over, a review) starts a new cycle.
CREATE TRIGGER stage_change_new_cycle AFTER INSERT ON ticket_stage_changes
BEGIN
    DELETE FROM ticket_callbacks WHERE ticket_id = NEW.ticket_id;
END;
CREATE TRIGGER submission_new_cycle AFTER INSERT ON submissions
BEGIN
    DELETE FROM ticket_callbacks WHERE ticket_id = NEW.ticket_id;
END;
CREATE TRIGGER review_new_cycle AFTER INSERT ON reviews
BEGIN
    DELETE FROM ticket_callbacks
    WHERE ticket_id = (SELECT ticket_id FROM submissions WHERE id = NEW.submission_id);
END;
-- A lifted hold: the work it may have kept from moving — needing attention, or idle with mail
-- waiting — is looked at again at the next tick (not every idle item: most have nothing to do).
CREATE TRIGGER holds_lift_arms_work AFTER UPDATE OF status ON holds
WHEN NEW.status = 'lifted' AND OLD.status <> 'lifted'
BEGIN
    UPDATE work_items SET supervise_at = NEW.lifted_at
    WHERE supervise_at IS NULL AND (state = 'needs_attention' OR (state = 'idle'
        AND EXISTS (SELECT 1 FROM inbox_items i
                    WHERE i.thread_id = work_items.thread_id AND i.mode <> 'context')));
END;
CREATE INDEX segments_bot ON segments(bot_id, run_id);

-- SV-20: hand-overs the tick settles, read by age.
CREATE INDEX submissions_waiting ON submissions(created_at) WHERE state IN ('checking', 'submitted');
