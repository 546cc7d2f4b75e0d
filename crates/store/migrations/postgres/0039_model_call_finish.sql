-- model_call_finish: issue 16 (Deliverables II). PostgreSQL twin of
-- sqlite/0039_model_call_finish.sql.
ALTER TABLE model_calls ADD COLUMN finish TEXT;
