-- A ticket's own Done when lines are board entries of that ticket (RL-7): their words are on
-- that ticket's board, not the job's. The check is otherwise as 0029 wrote it.
CREATE OR REPLACE FUNCTION requirements_board_quote() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    board TEXT;
    changed BIGINT;
BEGIN
    IF NEW.source_message_id IS NULL AND NEW.source_kind = 'board' THEN
        SELECT rules || chr(10) || done_when, updated_at INTO board, changed
            FROM plans WHERE id = NEW.plan_id;
        IF NEW.created_at < changed THEN
            RETURN NEW;
        END IF;
        IF NEW.ticket_id IS NOT NULL THEN
            SELECT done_when INTO board FROM tickets WHERE id = NEW.ticket_id;
        END IF;
        IF fold(NEW.quote) = '' OR strpos(fold(board), fold(NEW.quote)) = 0 THEN
            RAISE EXCEPTION 'quote_not_in_line: a board entry''s words are not on the board'
                USING ERRCODE = 'check_violation';
        END IF;
    END IF;
    RETURN NEW;
END $$;
