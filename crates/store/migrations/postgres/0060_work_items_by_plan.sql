-- A job's work items by job: its turns are counted for the Jobs panel and the job's view
-- (tickets and turns, who ran what), which read every job of a conversation on each refresh.
CREATE INDEX work_items_plan ON work_items(plan_id) WHERE plan_id IS NOT NULL;
