-- Chat channels (issue 18 items 12-13): outside chats reach Bots through a channel account
-- (`[channels.NAME]`). With Boss Mode off each (account, chat) has one direct conversation
-- with the account's Bot (`channel_chats`); every accepted inbound message is kept once by
-- its (account, message id) with the person's line it became (`channel_messages`); every
-- send to a channel is recorded before it is made and settled after (`channel_outbound`), so
-- a restart resends exactly the sends not settled, with the same idempotency key.
CREATE TABLE channel_chats (
    id          INTEGER PRIMARY KEY,
    account     TEXT    NOT NULL,
    chat_id     TEXT    NOT NULL,
    chat_type   TEXT    NOT NULL CHECK (chat_type IN ('dm', 'group')),
    chat_name   TEXT,
    session_id  INTEGER NOT NULL REFERENCES sessions(id),
    bot_id      INTEGER NOT NULL REFERENCES bots(id),
    created_at  INTEGER NOT NULL,
    UNIQUE (account, chat_id)
);
CREATE INDEX channel_chats_session ON channel_chats(session_id);

CREATE TABLE channel_messages (
    id          INTEGER PRIMARY KEY,
    account     TEXT    NOT NULL,
    message_id  TEXT    NOT NULL,
    chat_id     TEXT    NOT NULL,
    sender_id   TEXT    NOT NULL,
    session_id  INTEGER NOT NULL REFERENCES sessions(id),
    line_id     INTEGER NOT NULL REFERENCES session_messages(id),
    created_at  INTEGER NOT NULL,
    UNIQUE (account, message_id)
);
CREATE INDEX channel_messages_line ON channel_messages(line_id);

CREATE TABLE channel_outbound (
    id                  INTEGER PRIMARY KEY,
    idempotency_key     TEXT    NOT NULL UNIQUE,
    account             TEXT    NOT NULL,
    chat_id             TEXT    NOT NULL,
    kind                TEXT    NOT NULL CHECK (kind IN ('reply', 'message', 'reaction')),
    text                TEXT    NOT NULL,
    reply_to_message_id TEXT,
    line_id             INTEGER REFERENCES session_messages(id),
    status              TEXT    NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    attempts            INTEGER NOT NULL DEFAULT 0,
    error               TEXT,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
);
CREATE INDEX channel_outbound_pending ON channel_outbound(id) WHERE status = 'pending';
