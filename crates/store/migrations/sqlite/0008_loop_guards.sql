-- The continuation guard of a loop that continues a session by itself (Light Loop,
-- BlueprintLoop): its budget, no-progress streak and spacing. One active guard per thread.
CREATE TABLE loop_guards (
    id                   INTEGER PRIMARY KEY,
    thread_id            INTEGER NOT NULL REFERENCES threads(id),
    -- Which loop: 'lightloop' or 'blueprint_loop:<id>'.
    loop_ref             TEXT    NOT NULL,
    max_model_calls      INTEGER NOT NULL CHECK (max_model_calls >= 0),
    no_progress_limit    INTEGER NOT NULL CHECK (no_progress_limit >= 0),
    spacing_ms           INTEGER NOT NULL CHECK (spacing_ms >= 0),
    counted_since        INTEGER NOT NULL,
    no_progress_streak   INTEGER NOT NULL DEFAULT 0,
    last_seen_run        INTEGER,
    last_continuation_at INTEGER,
    due_at               INTEGER,
    paused               TEXT CHECK (paused IN ('model_call_budget_exhausted', 'no_progress')),
    created_at           INTEGER NOT NULL,
    ended_at             INTEGER
);
CREATE UNIQUE INDEX loop_guards_active ON loop_guards(thread_id) WHERE ended_at IS NULL;
CREATE INDEX loop_guards_due ON loop_guards(due_at) WHERE ended_at IS NULL AND due_at IS NOT NULL;
CREATE INDEX model_calls_started ON model_calls(run_id, started_at);
