-- Conversations people see (a "session" in the API), kept apart from the kernel's threads:
-- a conversation holds what people and Bots say; threads hold model context and runs.

CREATE TABLE bots (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    persona     TEXT    NOT NULL DEFAULT '',
    endpoint    TEXT,
    -- A built-in scripted demo Bot, labelled as such wherever it is shown.
    scripted    INTEGER NOT NULL DEFAULT 0,
    archived_at INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX bots_live_name ON bots(lower(name)) WHERE archived_at IS NULL;

CREATE TABLE model_roles (
    role       TEXT    PRIMARY KEY
               CHECK (role IN ('default', 'reading', 'scribe', 'judgement', 'review', 'picture_judge')),
    endpoint   TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    kind        TEXT    NOT NULL CHECK (kind IN ('direct', 'group')),
    title       TEXT    NOT NULL DEFAULT '',
    archived_at INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE session_members (
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    bot_id     INTEGER NOT NULL REFERENCES bots(id),
    PRIMARY KEY (session_id, bot_id)
);

-- Which kernel threads work for a conversation; a conversation may have many.
CREATE TABLE session_threads (
    thread_id  INTEGER PRIMARY KEY REFERENCES threads(id),
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    bot_id     INTEGER NOT NULL REFERENCES bots(id),
    purpose    TEXT    NOT NULL DEFAULT 'direct'
);
CREATE INDEX session_threads_session ON session_threads(session_id);

CREATE TABLE session_messages (
    id                INTEGER PRIMARY KEY,
    session_id        INTEGER NOT NULL REFERENCES sessions(id),
    author            TEXT    NOT NULL CHECK (author IN ('user', 'bot', 'system')),
    bot_id            INTEGER REFERENCES bots(id),
    parent_id         INTEGER REFERENCES session_messages(id),
    body              TEXT    NOT NULL,
    -- The kernel message a Bot's line was projected from (at most once).
    thread_message_id INTEGER UNIQUE REFERENCES messages(id),
    turn_id           INTEGER REFERENCES runs(id),
    status            TEXT    NOT NULL DEFAULT 'done'
                      CHECK (status IN ('done', 'working', 'failed', 'interrupted')),
    created_at        INTEGER NOT NULL
);
CREATE INDEX session_messages_session ON session_messages(session_id, id);

ALTER TABLE events ADD COLUMN session_id INTEGER;
CREATE INDEX events_session ON events(session_id, id) WHERE session_id IS NOT NULL;
