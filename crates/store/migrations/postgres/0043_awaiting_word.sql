-- awaiting_word: PostgreSQL twin of sqlite/0043_awaiting_word.sql.
CREATE INDEX submissions_awaiting_word ON submissions(id) WHERE state = 'awaiting_user';
