-- Session workflows: versioned notes (a Blueprint is a note of kind 'blueprint') and the
-- terminal records a Light Loop leaves when it ends (the slot itself lives on the thread).

CREATE TABLE notes (
    id         INTEGER PRIMARY KEY,
    kind       TEXT    NOT NULL CHECK (kind IN ('note', 'blueprint')),
    title      TEXT    NOT NULL CHECK (length(trim(title)) > 0),
    body       TEXT    NOT NULL,
    -- The content version: starts at 1, grows by one with every edit.
    version    INTEGER NOT NULL CHECK (version >= 1),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX notes_kind_updated ON notes(kind, updated_at);

-- One row per ended Light Loop: written before the slot is cleared, so what happened stays
-- readable after the workflow is gone.
CREATE TABLE workflow_terminals (
    id           INTEGER PRIMARY KEY,
    thread_id    INTEGER NOT NULL REFERENCES threads(id),
    kind         TEXT    NOT NULL,
    status       TEXT    NOT NULL
                 CHECK (status IN ('completed', 'failed', 'cancelled', 'timed_out', 'iteration_exhausted')),
    instructions TEXT    NOT NULL DEFAULT '',
    error        TEXT,
    created_at   INTEGER NOT NULL
);
CREATE INDEX workflow_terminals_thread ON workflow_terminals(thread_id, id);
