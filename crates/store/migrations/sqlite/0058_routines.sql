-- Routines (seed 003: the morning brief): work a Bot does on a schedule in one conversation.
-- Each due time adds a ticket to the routine's standing job (PLAN-D11), recorded once in
-- routine_runs; a due time a hold kept back is owed and runs once after the lift (HOLD-W6).

CREATE TABLE routines (
    id          INTEGER PRIMARY KEY,
    bot_id      INTEGER NOT NULL REFERENCES bots(id),
    -- The conversation its runs speak in (the Bot is a member).
    session_id  INTEGER NOT NULL REFERENCES sessions(id),
    -- Its standing job: one per routine, never dormant, only closed.
    plan_id     INTEGER NOT NULL UNIQUE REFERENCES plans(id),
    name        TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 80),
    instruction TEXT    NOT NULL CHECK (length(instruction) BETWEEN 1 AND 4000),
    -- The schedule as JSON: {"kind":"every",...} or {"kind":"cron",...}.
    schedule    TEXT    NOT NULL,
    status      TEXT    NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    next_due_at INTEGER,
    -- A due time a hold kept from running; it runs once the hold lifts.
    owed_due_at INTEGER,
    last_run_at INTEGER,
    created_by  TEXT    NOT NULL CHECK (created_by IN ('user', 'bot')),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX routines_name ON routines(bot_id, lower(name));
CREATE INDEX routines_due ON routines(next_due_at) WHERE status = 'active';

-- A Bot has at most 20 routines.
CREATE TRIGGER routines_cap BEFORE INSERT ON routines
WHEN (SELECT count(*) FROM routines WHERE bot_id = NEW.bot_id) >= 20
BEGIN
    SELECT RAISE(ABORT, 'routines_full');
END;

-- One run per routine and due time: a tick repeated after a crash, or by a second node,
-- opens no second ticket.
CREATE TABLE routine_runs (
    routine_id INTEGER NOT NULL REFERENCES routines(id),
    due_at     INTEGER NOT NULL,
    ticket_id  INTEGER REFERENCES tickets(id),
    ran_at     INTEGER NOT NULL,
    PRIMARY KEY (routine_id, due_at)
);
CREATE INDEX routine_runs_ticket ON routine_runs(ticket_id);
