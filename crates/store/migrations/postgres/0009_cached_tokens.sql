-- The part of a model call's input_tokens the provider served from its prompt cache.
-- (PostgreSQL twin of sqlite/0009_cached_tokens.sql; INTEGER is BIGINT here.)
ALTER TABLE model_calls ADD COLUMN cached_input_tokens BIGINT NOT NULL DEFAULT 0;
