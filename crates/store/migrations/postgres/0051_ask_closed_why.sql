-- Why an ask stopped taking an answer when it was not its turn's stop (that leaves it NULL): a
-- work question card its work went on without (`superseded`, WQ-8), or whose work closed
-- (`closed`).
ALTER TABLE session_messages ADD COLUMN ask_closed_why TEXT
    CHECK (ask_closed_why IN ('superseded', 'closed'));
