-- BlueprintLoops: one execution of a Blueprint note, audited before it ends. The record is kept
-- whole as JSON (`record`); the columns beside it are what queries and constraints need.
-- Bindings project a loop onto its sessions (role and phase) and are written only together
-- with the record, by the store's single transition point.

CREATE TABLE blueprint_loops (
    id              INTEGER PRIMARY KEY,
    note_id         INTEGER NOT NULL REFERENCES notes(id),
    thread_id       INTEGER NOT NULL REFERENCES threads(id),
    audit_thread_id INTEGER REFERENCES threads(id),
    status          TEXT    NOT NULL
                    CHECK (status IN ('armed', 'running', 'auditing', 'completed', 'failed', 'cancelled')),
    record          TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
-- At most one active loop per Blueprint and per execution session.
CREATE UNIQUE INDEX blueprint_loops_active_note ON blueprint_loops(note_id)
    WHERE status IN ('armed', 'running', 'auditing');
CREATE UNIQUE INDEX blueprint_loops_active_thread ON blueprint_loops(thread_id)
    WHERE status IN ('armed', 'running', 'auditing');
CREATE INDEX blueprint_loops_status ON blueprint_loops(status, id);

CREATE TABLE blueprint_bindings (
    thread_id INTEGER PRIMARY KEY REFERENCES threads(id),
    loop_id   INTEGER NOT NULL REFERENCES blueprint_loops(id),
    role      TEXT    NOT NULL CHECK (role IN ('execution', 'audit')),
    phase     TEXT    NOT NULL CHECK (phase IN ('running', 'auditing'))
);
CREATE INDEX blueprint_bindings_loop ON blueprint_bindings(loop_id);

-- A Blueprint's run history: how often it ran, when last, and the loop running it now.
ALTER TABLE notes ADD COLUMN run_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE notes ADD COLUMN last_run_at INTEGER;
ALTER TABLE notes ADD COLUMN active_loop_id INTEGER;
