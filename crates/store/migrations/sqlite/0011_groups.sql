-- Groups, Bot↔Bot directs, members with a confirmed lead, segments (one per run in a
-- conversation), lines in a row, line readings, judgements and asks.

-- sessions is rebuilt for its CHECK (SQLite cannot alter one); the runner turns foreign keys
-- off around a migration and checks them before it commits. New columns go last, as
-- PostgreSQL's ADD COLUMN puts them.
CREATE TABLE sessions_rebuilt (
    id                INTEGER PRIMARY KEY,
    kind              TEXT    NOT NULL CHECK (kind IN ('direct', 'group', 'bot_direct')),
    title             TEXT    NOT NULL DEFAULT '',
    archived_at       INTEGER,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    -- A Bot↔Bot direct: the conversation it was opened from, by whom, and how.
    origin_session_id INTEGER REFERENCES sessions(id),
    opened_by_bot_id  INTEGER REFERENCES bots(id),
    opened_via        TEXT    CHECK (opened_via IN ('create_direct', 'delegation')),
    -- "<lower bot id>:<higher bot id>", so a pair has one direct per way of opening it.
    pair_key          TEXT,
    CHECK ((kind = 'bot_direct') = (opened_via IS NOT NULL AND pair_key IS NOT NULL))
);
INSERT INTO sessions_rebuilt (id, kind, title, archived_at, created_at, updated_at)
    SELECT id, kind, title, archived_at, created_at, updated_at FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_rebuilt RENAME TO sessions;
CREATE UNIQUE INDEX sessions_bot_pair ON sessions(pair_key, opened_via) WHERE kind = 'bot_direct';

ALTER TABLE session_members ADD COLUMN is_lead INTEGER NOT NULL DEFAULT 0 CHECK (is_lead IN (0, 1));
ALTER TABLE session_members ADD COLUMN joined_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE session_members ADD COLUMN left_at INTEGER;
-- user, pull_in (an @mention), create_direct.
ALTER TABLE session_members ADD COLUMN added_by TEXT NOT NULL DEFAULT 'user';
CREATE UNIQUE INDEX session_members_one_lead ON session_members(session_id) WHERE is_lead = 1;

-- Only the person confirms a lead, and only a present, live member of a group can be one.
CREATE TRIGGER session_members_lead_live_insert BEFORE INSERT ON session_members
WHEN NEW.is_lead = 1 AND (
    NEW.left_at IS NOT NULL
    OR (SELECT kind FROM sessions WHERE id = NEW.session_id) IS NOT 'group'
    OR (SELECT archived_at FROM bots WHERE id = NEW.bot_id) IS NOT NULL)
BEGIN
    SELECT RAISE(ABORT, 'lead_not_live: a lead must be a present, live member of a group');
END;
CREATE TRIGGER session_members_lead_live_update BEFORE UPDATE ON session_members
WHEN NEW.is_lead = 1 AND (
    NEW.left_at IS NOT NULL
    OR (SELECT kind FROM sessions WHERE id = NEW.session_id) IS NOT 'group'
    OR (SELECT archived_at FROM bots WHERE id = NEW.bot_id) IS NOT NULL)
BEGIN
    SELECT RAISE(ABORT, 'lead_not_live: a lead must be a present, live member of a group');
END;

UPDATE session_threads SET purpose = 'conversation' WHERE purpose = 'direct';

-- One row per run of a Bot in a conversation: who speaks where, woken by which line, bound to
-- what (the conversation for now; work items later).
CREATE TABLE segments (
    run_id          INTEGER PRIMARY KEY REFERENCES runs(id),
    bot_id          INTEGER NOT NULL REFERENCES bots(id),
    session_id      INTEGER NOT NULL REFERENCES sessions(id),
    trigger_line_id INTEGER REFERENCES session_messages(id),
    binding         TEXT    NOT NULL DEFAULT '{"kind":"conversation"}',
    created_at      INTEGER NOT NULL
);
CREATE INDEX segments_session ON segments(session_id, run_id);

-- Lines: plain, an ask, or the app's own; a person's line moves reading → queued → routed
-- (or withdrawn).
ALTER TABLE session_messages ADD COLUMN kind TEXT NOT NULL DEFAULT 'line'
    CHECK (kind IN ('line', 'ask', 'system'));
ALTER TABLE session_messages ADD COLUMN routing TEXT
    CHECK (routing IN ('reading', 'queued', 'routed', 'withdrawn'));
ALTER TABLE session_messages ADD COLUMN routed_at INTEGER;
-- An ask: {question, options, multiple}; its answer {options, text}, written once.
ALTER TABLE session_messages ADD COLUMN ask TEXT;
ALTER TABLE session_messages ADD COLUMN ask_answer TEXT;
ALTER TABLE session_messages ADD COLUMN answered_at INTEGER;
ALTER TABLE session_messages ADD COLUMN ask_thread_id INTEGER REFERENCES threads(id);
ALTER TABLE session_messages ADD COLUMN ask_closed_at INTEGER;
CREATE INDEX session_messages_unrouted ON session_messages(session_id, id)
    WHERE routing IN ('reading', 'queued');
CREATE INDEX session_messages_open_asks ON session_messages(session_id)
    WHERE kind = 'ask' AND ask_answer IS NULL AND ask_closed_at IS NULL;

CREATE TRIGGER session_messages_answer_once BEFORE UPDATE ON session_messages
WHEN OLD.ask_answer IS NOT NULL AND NEW.ask_answer IS NOT OLD.ask_answer
BEGIN
    SELECT RAISE(ABORT, 'already_answered: an ask keeps its first answer');
END;

-- Who a line reached and how (mention, lead, judgement, ask_answer, pair_direct, …).
CREATE TABLE line_deliveries (
    line_id    INTEGER NOT NULL REFERENCES session_messages(id),
    bot_id     INTEGER NOT NULL REFERENCES bots(id),
    how        TEXT    NOT NULL,
    thread_id  INTEGER NOT NULL REFERENCES threads(id),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (line_id, bot_id)
);
CREATE INDEX line_deliveries_thread ON line_deliveries(thread_id);

-- What the line reader made of a line: a person's line is read once (by id); a Bot's line
-- once per turn and text.
CREATE TABLE line_readings (
    id         INTEGER PRIMARY KEY,
    kind       TEXT    NOT NULL CHECK (kind IN ('user', 'bot')),
    line_id    INTEGER REFERENCES session_messages(id),
    turn_id    INTEGER REFERENCES runs(id),
    text_key   TEXT,
    model      TEXT,
    -- Why the model's reading was not used (the word lists read it instead), or null.
    failure    TEXT,
    reading    TEXT    NOT NULL,
    raw        TEXT,
    created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX line_readings_user ON line_readings(line_id) WHERE kind = 'user';
CREATE UNIQUE INDEX line_readings_bot ON line_readings(turn_id, text_key) WHERE kind = 'bot';

-- Each present Bot's join-or-sit-out answer on an unaddressed line in a group without a lead.
CREATE TABLE judgements (
    line_id    INTEGER NOT NULL REFERENCES session_messages(id),
    bot_id     INTEGER NOT NULL REFERENCES bots(id),
    joined     INTEGER,
    failure    TEXT,
    raw        TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (line_id, bot_id)
);
