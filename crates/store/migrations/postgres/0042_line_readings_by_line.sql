-- line_readings_by_line: PostgreSQL twin of sqlite/0042_line_readings_by_line.sql.
CREATE INDEX line_readings_line ON line_readings(line_id);
