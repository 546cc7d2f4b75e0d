-- The jobs a Bot worked on lately (a line's filing candidates, read for every line said in a
-- group): only the segments bound to a work item, by Bot and time, not every turn it had.
CREATE INDEX segments_bot_work ON segments(bot_id, created_at) WHERE work_item_id IS NOT NULL;
