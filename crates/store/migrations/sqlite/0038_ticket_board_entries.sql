-- A ticket's own Done when lines are board entries of that ticket (RL-7): their words are on
-- that ticket's board, not the job's. The check is otherwise as 0029 wrote it.
DROP TRIGGER requirements_board_quote;
CREATE TRIGGER requirements_board_quote BEFORE INSERT ON requirements
WHEN NEW.source_message_id IS NULL AND NEW.source_kind = 'board'
    AND NEW.created_at >= (SELECT updated_at FROM plans WHERE id = NEW.plan_id)
BEGIN
    SELECT RAISE(ABORT, 'quote_not_in_line: a board entry''s words are not on the board')
    WHERE fold(NEW.quote) = ''
       OR instr(fold(CASE
                         WHEN NEW.ticket_id IS NULL
                         THEN (SELECT rules || char(10) || done_when FROM plans
                               WHERE id = NEW.plan_id)
                         ELSE (SELECT done_when FROM tickets WHERE id = NEW.ticket_id)
                     END),
                fold(NEW.quote)) = 0;
END;
