-- The hand-overs waiting on the user's word (UW1), read for every person's line: a partial
-- index keeps that lookup to the few waiting rows.
CREATE INDEX submissions_awaiting_word ON submissions(id) WHERE state = 'awaiting_user';
