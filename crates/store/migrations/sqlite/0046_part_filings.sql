-- A line may be filed under several parts of one ticket (digest 003-C AT-4, AT-5): the one
-- filing per line, plan and ticket becomes one per line, plan, ticket and part. `part_id`
-- holds the part's id (ticket_parts.id) as text.
DROP INDEX message_filings_target;
CREATE UNIQUE INDEX message_filings_target
    ON message_filings(message_id, plan_id, COALESCE(ticket_id, 0), COALESCE(part_id, ''));
