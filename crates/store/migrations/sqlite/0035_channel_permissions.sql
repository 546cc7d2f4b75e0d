-- Runtime Boss channel sends and their permission (issue 18 item 15). A `channel_push` that
-- is not an anchored reply to the current chat on the session's own account crosses the
-- communication boundary: it waits here as a `communication` request (the push it would
-- make, as JSON) until a person allows it (it is then sent once) or denies it (the session
-- is told). `decision` is the word the person sent, `decided_at` when.
CREATE TABLE permission_requests (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id),
    kind        TEXT    NOT NULL CHECK (kind IN ('communication')),
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'allowed', 'denied')),
    request     TEXT    NOT NULL,
    decision    TEXT    CHECK (decision IN ('allow', 'deny')),
    decided_at  INTEGER,
    created_at  INTEGER NOT NULL
);
CREATE INDEX permission_requests_session ON permission_requests(session_id, id);

-- What an inbox item carries besides its text (a channel message's `channel_*` facts), as a
-- JSON object; it becomes part of the message's metadata when the item is taken. NULL for
-- every item that carries nothing.
ALTER TABLE inbox_items ADD COLUMN metadata TEXT;

-- A runtime boss session takes every message of its account: its status reactions read its
-- newest inbound messages on each turn.
CREATE INDEX channel_messages_session ON channel_messages(session_id, id);
