-- Holds (digest A §14): a person's stop, kept as its own row. A hold is in force until the
-- person lifts it, then lifted for good; it is never deleted, and its scope, its source, when it
-- was made and the targets it gained at creation never change (HOLD-2, HOLD-6). While it is in
-- force no live turn it covers may be written, except a read-only one (HOLD-D1).

CREATE TABLE holds (
    id                        INTEGER PRIMARY KEY,
    created_at                INTEGER NOT NULL,
    status                    TEXT    NOT NULL DEFAULT 'in_force'
                              CHECK (status IN ('in_force', 'lifted')),
    lifted_at                 INTEGER,
    lifted_by                 TEXT    CHECK (lifted_by IN ('user_text', 'user_button')),
    -- The line that lifted it, when a line did.
    lift_message_id           INTEGER REFERENCES session_messages(id),
    scope_kind                TEXT    NOT NULL CHECK (scope_kind IN
        ('everything', 'bot', 'session', 'plan', 'ticket', 'bot_plan', 'turn')),
    bot_id                    INTEGER REFERENCES bots(id),
    -- A session scope's conversation (a turn scope's is turn_session_id).
    session_id                INTEGER REFERENCES sessions(id),
    plan_id                   INTEGER REFERENCES plans(id),
    ticket_id                 INTEGER,
    run_id                    INTEGER REFERENCES runs(id),
    thread_id                 INTEGER REFERENCES threads(id),
    turn_session_id           INTEGER REFERENCES sessions(id),
    source                    TEXT    NOT NULL
                              CHECK (source IN ('user_text', 'user_button', 'migration')),
    source_message_id         INTEGER REFERENCES session_messages(id),
    -- The conversation whose menu or composer made it.
    menu_session_id           INTEGER REFERENCES sessions(id),
    lift_on_next_user_message INTEGER NOT NULL DEFAULT 1 CHECK (lift_on_next_user_message IN (0, 1)),
    cancel                    INTEGER NOT NULL DEFAULT 0 CHECK (cancel IN (0, 1)),
    composer_stop             INTEGER NOT NULL DEFAULT 0 CHECK (composer_stop IN (0, 1)),
    -- How many hold_targets rows it has: they are written with it, and no more ever.
    target_count              INTEGER NOT NULL DEFAULT 0 CHECK (target_count >= 0),
    -- JSON: what making (and lifting) it did (troupe_core::hold::HoldEffect).
    effect                    TEXT    NOT NULL,
    CHECK ((status = 'in_force' AND lifted_at IS NULL AND lifted_by IS NULL
            AND lift_message_id IS NULL)
        OR (status = 'lifted' AND lifted_at IS NOT NULL AND lifted_by IS NOT NULL)),
    -- Each scope kind has exactly its refs (a turn's job is optional).
    CHECK ((scope_kind = 'everything' AND bot_id IS NULL AND session_id IS NULL
            AND plan_id IS NULL AND ticket_id IS NULL AND run_id IS NULL AND thread_id IS NULL
            AND turn_session_id IS NULL)
        OR (scope_kind = 'bot' AND bot_id IS NOT NULL AND session_id IS NULL
            AND plan_id IS NULL AND ticket_id IS NULL AND run_id IS NULL AND thread_id IS NULL
            AND turn_session_id IS NULL)
        OR (scope_kind = 'session' AND bot_id IS NULL AND session_id IS NOT NULL
            AND plan_id IS NULL AND ticket_id IS NULL AND run_id IS NULL AND thread_id IS NULL
            AND turn_session_id IS NULL)
        OR (scope_kind = 'plan' AND bot_id IS NULL AND session_id IS NULL
            AND plan_id IS NOT NULL AND ticket_id IS NULL AND run_id IS NULL AND thread_id IS NULL
            AND turn_session_id IS NULL)
        OR (scope_kind = 'ticket' AND bot_id IS NULL AND session_id IS NULL
            AND plan_id IS NULL AND ticket_id IS NOT NULL AND run_id IS NULL AND thread_id IS NULL
            AND turn_session_id IS NULL)
        OR (scope_kind = 'bot_plan' AND bot_id IS NOT NULL AND session_id IS NULL
            AND plan_id IS NOT NULL AND ticket_id IS NULL AND run_id IS NULL AND thread_id IS NULL
            AND turn_session_id IS NULL)
        OR (scope_kind = 'turn' AND bot_id IS NOT NULL AND session_id IS NULL
            AND ticket_id IS NULL AND run_id IS NOT NULL AND thread_id IS NOT NULL
            AND turn_session_id IS NOT NULL))
);
CREATE INDEX holds_in_force ON holds(status, id);

-- Coverage a hold gained at creation beyond its scope: another Bot's turn opened by a covered
-- turn's line, a helper's work on a job along an open delegation, a Bot↔Bot direct.
CREATE TABLE hold_targets (
    id         INTEGER PRIMARY KEY,
    hold_id    INTEGER NOT NULL REFERENCES holds(id),
    kind       TEXT    NOT NULL CHECK (kind IN ('turn', 'bot_plan', 'direct')),
    run_id     INTEGER REFERENCES runs(id),
    thread_id  INTEGER REFERENCES threads(id),
    bot_id     INTEGER REFERENCES bots(id),
    plan_id    INTEGER REFERENCES plans(id),
    session_id INTEGER REFERENCES sessions(id),
    CHECK ((kind = 'turn' AND run_id IS NOT NULL AND thread_id IS NOT NULL
            AND bot_id IS NOT NULL AND plan_id IS NULL AND session_id IS NULL)
        OR (kind = 'bot_plan' AND run_id IS NULL AND thread_id IS NULL
            AND bot_id IS NOT NULL AND plan_id IS NOT NULL AND session_id IS NULL)
        OR (kind = 'direct' AND run_id IS NULL AND thread_id IS NULL
            AND bot_id IS NULL AND plan_id IS NULL AND session_id IS NOT NULL))
);
CREATE INDEX hold_targets_hold ON hold_targets(hold_id, id);

-- What the holds in force cover, one row per scope and per target: kind is a scope kind, or a
-- target's ('turn' and 'bot_plan' read as the scope kinds of those names, 'direct' as its
-- conversation). A turn of Bot B speaking in conversation S on thread X, for job P (home H)
-- and ticket T, is covered by a row when:
--     kind = 'everything'
--  OR (kind = 'bot' AND bot_id = B)
--  OR (kind = 'session' AND (session_id = S OR session_id = H))
--  OR (kind = 'plan' AND plan_id = P)
--  OR (kind = 'ticket' AND ticket_id = T)
--  OR (kind = 'bot_plan' AND bot_id = B AND plan_id = P)
--  OR (kind = 'turn' AND thread_id = X)
--  OR (kind = 'direct' AND session_id = S)
-- (the same predicate as the triggers below and `Tx::covering_holds`).
CREATE VIEW held_cover AS
SELECT h.id AS hold_id, h.scope_kind AS kind, h.bot_id AS bot_id,
       COALESCE(h.session_id, h.turn_session_id) AS session_id, h.plan_id AS plan_id,
       h.ticket_id AS ticket_id, h.thread_id AS thread_id
FROM holds h WHERE h.status = 'in_force'
UNION ALL
SELECT t.hold_id, t.kind, t.bot_id, t.session_id, t.plan_id, CAST(NULL AS INTEGER), t.thread_id
FROM hold_targets t JOIN holds h ON h.id = t.hold_id WHERE h.status = 'in_force';

-- HOLD-D1: a live turn (its run running) that a hold covers is neither written nor moved into
-- cover nor given another mode; only a read-only one passes. A segment's job and ticket are
-- its work item's; its thread its work item's, or its run's when it has none.
CREATE TRIGGER segments_held_insert BEFORE INSERT ON segments
WHEN NEW.mode IS NOT 'readonly'
    AND EXISTS (
        SELECT 1 FROM runs r
        LEFT JOIN work_items w ON w.id = NEW.work_item_id
        LEFT JOIN plans p ON p.id = w.plan_id
        JOIN held_cover c ON c.kind = 'everything'
            OR (c.kind = 'bot' AND c.bot_id = NEW.bot_id)
            OR (c.kind = 'session'
                AND (c.session_id = NEW.session_id OR c.session_id = p.home_session_id))
            OR (c.kind = 'plan' AND c.plan_id = w.plan_id)
            OR (c.kind = 'ticket' AND c.ticket_id = w.ticket_id)
            OR (c.kind = 'bot_plan' AND c.bot_id = NEW.bot_id AND c.plan_id = w.plan_id)
            OR (c.kind = 'turn' AND c.thread_id = COALESCE(w.thread_id, r.thread_id))
            OR (c.kind = 'direct' AND c.session_id = NEW.session_id)
        WHERE r.id = NEW.run_id AND r.status = 'running')
BEGIN
    SELECT RAISE(ABORT, 'held');
END;
CREATE TRIGGER segments_held_update BEFORE UPDATE ON segments
WHEN (NEW.mode IS NOT 'readonly' OR NEW.mode IS NOT OLD.mode)
    AND EXISTS (
        SELECT 1 FROM runs r
        LEFT JOIN work_items w ON w.id = NEW.work_item_id
        LEFT JOIN plans p ON p.id = w.plan_id
        JOIN held_cover c ON c.kind = 'everything'
            OR (c.kind = 'bot' AND c.bot_id = NEW.bot_id)
            OR (c.kind = 'session'
                AND (c.session_id = NEW.session_id OR c.session_id = p.home_session_id))
            OR (c.kind = 'plan' AND c.plan_id = w.plan_id)
            OR (c.kind = 'ticket' AND c.ticket_id = w.ticket_id)
            OR (c.kind = 'bot_plan' AND c.bot_id = NEW.bot_id AND c.plan_id = w.plan_id)
            OR (c.kind = 'turn' AND c.thread_id = COALESCE(w.thread_id, r.thread_id))
            OR (c.kind = 'direct' AND c.session_id = NEW.session_id)
        WHERE r.id = NEW.run_id AND r.status = 'running')
BEGIN
    SELECT RAISE(ABORT, 'held');
END;

-- HOLD-2: never deleted.
CREATE TRIGGER holds_not_deleted BEFORE DELETE ON holds
BEGIN
    SELECT RAISE(ABORT, 'hold_not_deleted: a hold and its targets are never deleted');
END;
CREATE TRIGGER hold_targets_not_deleted BEFORE DELETE ON hold_targets
BEGIN
    SELECT RAISE(ABORT, 'hold_not_deleted: a hold and its targets are never deleted');
END;

-- What it covers, who made it and when are fixed; lifted is lifted for good, as it was lifted.
CREATE TRIGGER holds_fixed BEFORE UPDATE ON holds
WHEN NEW.id IS NOT OLD.id OR NEW.created_at IS NOT OLD.created_at
    OR NEW.scope_kind IS NOT OLD.scope_kind OR NEW.bot_id IS NOT OLD.bot_id
    OR NEW.session_id IS NOT OLD.session_id OR NEW.plan_id IS NOT OLD.plan_id
    OR NEW.ticket_id IS NOT OLD.ticket_id OR NEW.run_id IS NOT OLD.run_id
    OR NEW.thread_id IS NOT OLD.thread_id OR NEW.turn_session_id IS NOT OLD.turn_session_id
    OR NEW.source IS NOT OLD.source OR NEW.target_count IS NOT OLD.target_count
BEGIN
    SELECT RAISE(ABORT, 'hold_immutable: a hold''s scope, source, creation time and targets are fixed');
END;
CREATE TRIGGER holds_stay_lifted BEFORE UPDATE ON holds
WHEN OLD.status = 'lifted' AND (NEW.status IS NOT 'lifted'
    OR NEW.lifted_at IS NOT OLD.lifted_at OR NEW.lifted_by IS NOT OLD.lifted_by)
BEGIN
    SELECT RAISE(ABORT, 'hold_immutable: a lifted hold stays lifted, as it was lifted');
END;

-- Targets are written with their hold (up to its target_count) and never changed after.
CREATE TRIGGER hold_targets_at_creation BEFORE INSERT ON hold_targets
WHEN (SELECT count(*) FROM hold_targets WHERE hold_id = NEW.hold_id)
    >= COALESCE((SELECT target_count FROM holds WHERE id = NEW.hold_id), 0)
BEGIN
    SELECT RAISE(ABORT, 'hold_immutable: a hold''s targets are fixed at creation');
END;
CREATE TRIGGER hold_targets_fixed BEFORE UPDATE ON hold_targets
BEGIN
    SELECT RAISE(ABORT, 'hold_immutable: a hold''s targets are fixed at creation');
END;

-- I5 generalised (END-23): every run that ended says why, not only a bound segment's, on
-- insert and on every update.
DROP TRIGGER runs_bound_end_reason_insert;
DROP TRIGGER runs_bound_end_reason_update;
CREATE TRIGGER runs_end_reason_insert BEFORE INSERT ON runs
WHEN NEW.status <> 'running' AND trim(coalesce(NEW.end_reason, '')) = ''
BEGIN
    SELECT RAISE(ABORT, 'blank_end_reason: a run that ended must say why');
END;
CREATE TRIGGER runs_end_reason_update BEFORE UPDATE ON runs
WHEN NEW.status <> 'running' AND trim(coalesce(NEW.end_reason, '')) = ''
BEGIN
    SELECT RAISE(ABORT, 'blank_end_reason: a run that ended must say why');
END;
