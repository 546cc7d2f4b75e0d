-- reply_in: issue 13 (Collaboration II). PostgreSQL twin of sqlite/0040_reply_in.sql.
ALTER TABLE line_deliveries ADD COLUMN reply_in BIGINT REFERENCES sessions(id);
