-- part_filings: PostgreSQL twin of sqlite/0046_part_filings.sql.
DROP INDEX message_filings_target;
CREATE UNIQUE INDEX message_filings_target
    ON message_filings(message_id, plan_id, COALESCE(ticket_id, 0), COALESCE(part_id, ''));
