-- Lattice Runs (issue 17): one large goal aligned, planned as a Pathway of Steps and carried
-- out Step by Step. A Run is kept whole as JSON (`record`) keyed by its id, and a new Run never
-- overwrites an old one (LAT-1); the columns beside the record are what queries and constraints
-- need. `lattice_current` is the one pointer per session that selects its current Run; reads
-- repair it when it is missing or wrong (`Tx::current_lattice_run`).

CREATE TABLE lattice_runs (
    id          INTEGER PRIMARY KEY,
    thread_id   INTEGER NOT NULL REFERENCES threads(id),
    status      TEXT    NOT NULL
                CHECK (status IN ('active', 'paused', 'completed', 'failed', 'cancelled')),
    -- The one effect the Run holds, by name; NULL when it holds none.
    effect_kind TEXT    CHECK (effect_kind IN
        ('deliver_prompt', 'create_blueprint_loop', 'start_blueprint_loop', 'deliver_completion')),
    record      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
-- At most one non-terminal Run per session.
CREATE UNIQUE INDEX lattice_runs_one_live ON lattice_runs(thread_id)
    WHERE status IN ('active', 'paused');
CREATE INDEX lattice_runs_thread ON lattice_runs(thread_id, id);

-- Cancelled is terminal, and so are completed and failed: such a Run's status never changes
-- again (its record may still be written, e.g. to acknowledge its completion mail).
CREATE TRIGGER lattice_runs_terminal BEFORE UPDATE ON lattice_runs
WHEN OLD.status IN ('completed', 'failed', 'cancelled') AND NEW.status IS NOT OLD.status
BEGIN
    SELECT RAISE(ABORT, 'lattice_run_terminal: a completed, failed or cancelled Lattice Run keeps its status');
END;

CREATE TABLE lattice_current (
    thread_id  INTEGER PRIMARY KEY REFERENCES threads(id),
    run_id     INTEGER NOT NULL REFERENCES lattice_runs(id),
    updated_at INTEGER NOT NULL
);

-- Who made a BlueprintLoop: a person (`user`) or a Lattice Run for one of its Steps
-- (`lattice`), with the digest of the Blueprint content it was made for. A Lattice create
-- effect finds a loop it already made by these (LAT-6).
ALTER TABLE blueprint_loops ADD COLUMN source TEXT NOT NULL DEFAULT 'user'
    CHECK (source IN ('user', 'lattice'));
ALTER TABLE blueprint_loops ADD COLUMN source_digest TEXT;
CREATE INDEX blueprint_loops_lattice ON blueprint_loops(thread_id, note_id, created_at)
    WHERE source = 'lattice';
