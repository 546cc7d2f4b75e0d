-- The line a work item's next segment starts on when it came some other way than a delivery
-- to the job's thread (a desk binding hands its line over): the segment's trigger line.
-- Taken (cleared) by the segment that starts on it.
ALTER TABLE work_items ADD COLUMN trigger_line_id INTEGER REFERENCES session_messages(id);
