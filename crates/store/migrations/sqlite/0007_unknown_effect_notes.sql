-- When the next turn's context named an effect whose outcome is unknown, so it is named once.
ALTER TABLE effects ADD COLUMN named_at INTEGER;
-- Effects cut off before this column existed are not news to anyone: count them as named.
UPDATE effects SET named_at = COALESCE(settled_at, started_at) WHERE outcome = 'unknown';
