-- How the provider said each answer ended (`stop`, `tool_calls`, `length`, `refusal`, or the
-- provider's own word), so a declined reply is the model's quality event (digest 003-B §9.1).
-- NULL for calls that failed and for calls recorded before this column.
ALTER TABLE model_calls ADD COLUMN finish TEXT;
