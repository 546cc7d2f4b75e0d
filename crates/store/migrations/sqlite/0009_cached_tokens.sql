-- The part of a model call's input_tokens the provider served from its prompt cache.
ALTER TABLE model_calls ADD COLUMN cached_input_tokens INTEGER NOT NULL DEFAULT 0;
