-- T18: a ticket whose dependencies (or the sample it is held to) came through is looked at the
-- next supervisor tick, whatever its job's quiet clock says. The activity triggers move
-- `supervise_at`; they leave this mark alone.
ALTER TABLE plans ADD COLUMN released_at INTEGER;
CREATE INDEX plans_released ON plans(released_at) WHERE released_at IS NOT NULL;
