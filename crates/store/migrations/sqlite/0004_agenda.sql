-- The Agenda: scheduled deliveries into the thread that created them. The deadline is stored
-- (next_run_at), so a timer only reads it; a due time missed while the daemon was down is
-- still here at start and fires once.

CREATE TABLE agenda_items (
    id           INTEGER PRIMARY KEY,
    -- The origin: the thread deliveries go to, and its session when it has one.
    thread_id    INTEGER NOT NULL REFERENCES threads(id),
    session_id   INTEGER REFERENCES sessions(id),
    title        TEXT    NOT NULL DEFAULT '',
    trigger_kind TEXT    NOT NULL CHECK (trigger_kind IN ('at', 'delay', 'every', 'cron')),
    -- The trigger as JSON (its kind's fields).
    trigger_spec TEXT    NOT NULL,
    -- When it is next due (ms since the epoch); null once it has nothing left to fire.
    next_run_at  INTEGER,
    last_run_at  INTEGER,
    run_count    INTEGER NOT NULL DEFAULT 0 CHECK (run_count >= 0),
    status       TEXT    NOT NULL CHECK (status IN ('active', 'paused', 'done', 'cancelled')),
    -- A one-shot watch: done once delivered.
    auto_done    INTEGER NOT NULL DEFAULT 0 CHECK (auto_done IN (0, 1)),
    wake         INTEGER NOT NULL DEFAULT 1 CHECK (wake IN (0, 1)),
    silent       INTEGER NOT NULL DEFAULT 0 CHECK (silent IN (0, 1)),
    payload      TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX agenda_items_due ON agenda_items(status, next_run_at);
CREATE INDEX agenda_items_thread ON agenda_items(thread_id, status);
