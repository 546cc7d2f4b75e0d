-- A steer that changes what the person asked for defers the running hop's calls that have not
-- run yet (TURN-4); a question does not.
ALTER TABLE inbox_items ADD COLUMN defers_calls INTEGER NOT NULL DEFAULT 0;
CREATE INDEX inbox_items_deferring ON inbox_items(thread_id) WHERE defers_calls = 1;
