-- Every reading of a line, by line (the partial index 0011 made serves only `kind = 'user'`
-- lookups; reading a line's readings scanned the table, on every person's line).
CREATE INDEX line_readings_line ON line_readings(line_id);
