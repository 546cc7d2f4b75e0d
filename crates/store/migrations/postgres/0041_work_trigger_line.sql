-- work_trigger_line: issue 13 (Collaboration II). PostgreSQL twin of
-- sqlite/0041_work_trigger_line.sql.
ALTER TABLE work_items ADD COLUMN trigger_line_id BIGINT REFERENCES session_messages(id);
