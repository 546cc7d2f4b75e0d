-- Kernel schema. Portable SQL: integer ids, text enums checked by CHECK constraints,
-- timestamps as integer epoch milliseconds, JSON kept in TEXT columns.

CREATE TABLE threads (
    id                 INTEGER PRIMARY KEY,
    parent_id          INTEGER REFERENCES threads(id),
    title              TEXT    NOT NULL DEFAULT '',
    agent              TEXT    NOT NULL,
    workspace          TEXT    NOT NULL,
    interaction        TEXT    NOT NULL DEFAULT 'interactive'
                       CHECK (interaction IN ('interactive', 'unattended')),
    workflow           TEXT,
    paused_reason      TEXT CHECK (paused_reason IN ('aborted', 'failed', 'interrupted', 'workflow')),
    paused_description TEXT,
    paused_since       INTEGER,
    archived_at        INTEGER,
    lease_generation   INTEGER NOT NULL DEFAULT 0,
    lease_run_id       INTEGER,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    thread_id       INTEGER NOT NULL REFERENCES threads(id),
    generation      INTEGER NOT NULL,
    trigger_reason  TEXT    NOT NULL,
    root_id         INTEGER,
    status          TEXT    NOT NULL
                    CHECK (status IN ('running', 'completed', 'failed', 'stopped', 'interrupted')),
    end_reason      TEXT,
    end_detail      TEXT,
    hops            INTEGER NOT NULL DEFAULT 0,
    tool_calls      INTEGER NOT NULL DEFAULT 0,
    ending_bounces  INTEGER NOT NULL DEFAULT 0,
    failure_notes   TEXT    NOT NULL DEFAULT '[]',
    owner_pid       INTEGER NOT NULL,
    owner_boot      TEXT    NOT NULL,
    started_at      INTEGER NOT NULL,
    ended_at        INTEGER,
    -- A terminal run always says why it ended; a live one never does.
    CHECK ((status = 'running' AND end_reason IS NULL AND ended_at IS NULL)
        OR (status <> 'running' AND end_reason IS NOT NULL AND ended_at IS NOT NULL))
);
CREATE INDEX runs_thread ON runs(thread_id, id);
CREATE INDEX runs_live ON runs(status) WHERE status = 'running';

CREATE TABLE messages (
    id            INTEGER PRIMARY KEY,
    thread_id     INTEGER NOT NULL REFERENCES threads(id),
    role          TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    origin        TEXT    NOT NULL,
    origin_detail TEXT,
    is_root       INTEGER NOT NULL DEFAULT 0,
    root_id       INTEGER REFERENCES messages(id),
    run_id        INTEGER REFERENCES runs(id),
    finish        TEXT CHECK (finish IN ('stop', 'tool_calls', 'length', 'error', 'interrupted')),
    error         TEXT,
    delivery_key  TEXT,
    -- Stamps fixed at creation (e.g. the workflow active then); read when context is assembled.
    metadata      TEXT,
    created_at    INTEGER NOT NULL
);
CREATE INDEX messages_thread ON messages(thread_id, id);
CREATE INDEX messages_root ON messages(root_id, id);

CREATE TABLE message_parts (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('text', 'tool_call', 'tool_result')),
    text       TEXT    NOT NULL DEFAULT '',
    call_id    TEXT,
    tool_name  TEXT,
    is_error   INTEGER NOT NULL DEFAULT 0,
    visible    INTEGER NOT NULL DEFAULT 1,
    in_context INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (message_id, seq)
);

CREATE TABLE inbox_items (
    id            INTEGER PRIMARY KEY,
    thread_id     INTEGER NOT NULL REFERENCES threads(id),
    mode          TEXT    NOT NULL CHECK (mode IN ('task', 'steer', 'context')),
    priority      INTEGER NOT NULL CHECK (priority BETWEEN 1 AND 4),
    order_key     INTEGER NOT NULL,
    delivery_key  TEXT,
    origin        TEXT    NOT NULL,
    origin_detail TEXT,
    body          TEXT    NOT NULL,
    visible       INTEGER NOT NULL DEFAULT 1,
    failed_reason TEXT,
    created_at    INTEGER NOT NULL
);
CREATE UNIQUE INDEX inbox_items_key ON inbox_items(thread_id, delivery_key)
    WHERE delivery_key IS NOT NULL;
CREATE INDEX inbox_items_thread ON inbox_items(thread_id, priority, order_key, id);

-- Written when a keyed item becomes a message: a key is delivered at most once, ever.
CREATE TABLE inbox_receipts (
    thread_id    INTEGER NOT NULL REFERENCES threads(id),
    delivery_key TEXT    NOT NULL,
    item_id      INTEGER NOT NULL,
    message_id   INTEGER NOT NULL,
    completed_at INTEGER NOT NULL,
    PRIMARY KEY (thread_id, delivery_key)
);

CREATE TABLE model_calls (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs(id),
    role          TEXT    NOT NULL,
    endpoint      TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    latency_ms    INTEGER NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 1,
    -- The final error, when the call failed after its retries.
    error         TEXT,
    -- One line per failed attempt (JSON list), kept even when a retry succeeded.
    attempt_errors TEXT   NOT NULL DEFAULT '[]',
    started_at    INTEGER NOT NULL
);
CREATE INDEX model_calls_run ON model_calls(run_id, id);

CREATE TABLE tool_calls (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    message_id  INTEGER NOT NULL REFERENCES messages(id),
    call_id     TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    arguments   TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('ok', 'error', 'refused', 'repeated')),
    result      TEXT    NOT NULL,
    duration_ms INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX tool_calls_run ON tool_calls(run_id, id);

CREATE TABLE command_records (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    call_id     TEXT    NOT NULL,
    command     TEXT    NOT NULL,
    exit_code   INTEGER,
    signal      INTEGER,
    timed_out   INTEGER NOT NULL DEFAULT 0,
    cancelled   INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER NOT NULL,
    output_tail TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX command_records_run ON command_records(run_id, id);

CREATE TABLE effects (
    id          INTEGER PRIMARY KEY,
    thread_id   INTEGER NOT NULL REFERENCES threads(id),
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    effect_key  TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    summary     TEXT    NOT NULL,
    outcome     TEXT    NOT NULL
                CHECK (outcome IN ('started', 'succeeded', 'refused', 'failed', 'unknown')),
    pgid        INTEGER,
    detail      TEXT,
    started_at  INTEGER NOT NULL,
    settled_at  INTEGER,
    UNIQUE (thread_id, effect_key)
);
CREATE INDEX effects_run ON effects(run_id);

CREATE TABLE admission_refusals (
    id         INTEGER PRIMARY KEY,
    thread_id  INTEGER NOT NULL REFERENCES threads(id),
    check_name TEXT    NOT NULL,
    cause      TEXT    NOT NULL,
    queued     INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE INDEX admission_refusals_thread ON admission_refusals(thread_id, id);

-- Threads whose wake an admission check queued; retried when capacity frees up.
CREATE TABLE queued_wakes (
    thread_id  INTEGER PRIMARY KEY REFERENCES threads(id),
    cause      TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         INTEGER NOT NULL,
    thread_id  INTEGER,
    run_id     INTEGER,
    kind       TEXT    NOT NULL,
    payload    TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX events_thread ON events(thread_id, id);
