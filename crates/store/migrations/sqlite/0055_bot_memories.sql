-- A Bot's memories (digest 003-B §11.4) and the retrospective (§11, ADR 0062): short notes a
-- Bot keeps and reads in its situation, written by its `remember` tool, the person, or its
-- retrospective, which keeps what each change replaced so the person can undo it.

CREATE TABLE retrospectives (
    id            INTEGER PRIMARY KEY,
    plan_id       INTEGER NOT NULL REFERENCES plans(id),
    bot_id        INTEGER NOT NULL REFERENCES bots(id),
    -- The delivery it looked back on: one per Bot and delivery (a reopened job delivered
    -- again gets another, which looks only at what went wrong since `since_at`: RS5).
    delivered_at  INTEGER NOT NULL,
    since_at      INTEGER,
    state         TEXT    NOT NULL CHECK (state IN ('skipped', 'done', 'failed')),
    went_wrong    TEXT    NOT NULL DEFAULT '[]',
    summary       TEXT,
    -- tripped_up, sent_back_because, do_again, verdicts.
    lists         TEXT    NOT NULL DEFAULT '{}',
    model         TEXT,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL,
    raw           TEXT,
    error         TEXT,
    at            INTEGER NOT NULL,
    UNIQUE (plan_id, bot_id, delivered_at),
    CHECK (state <> 'skipped' OR model IS NULL),
    CHECK (state <> 'done' OR model IS NOT NULL)
);
CREATE INDEX retrospectives_at ON retrospectives(at);
CREATE INDEX retrospectives_bot ON retrospectives(bot_id, at);

CREATE TABLE bot_memories (
    id               INTEGER PRIMARY KEY,
    bot_id           INTEGER NOT NULL REFERENCES bots(id),
    subject          TEXT    NOT NULL CHECK (length(subject) BETWEEN 1 AND 40),
    body             TEXT    NOT NULL CHECK (length(body) BETWEEN 1 AND 160),
    enabled          INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    -- "Written by the retrospective of …": cleared when the Bot or the person rewrites it.
    retrospective_id INTEGER REFERENCES retrospectives(id),
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    UNIQUE (bot_id, subject)
);

-- At most 20 of a Bot's memories are on at once.
CREATE TRIGGER bot_memories_enabled_cap BEFORE INSERT ON bot_memories
WHEN NEW.enabled = 1
 AND (SELECT count(*) FROM bot_memories WHERE bot_id = NEW.bot_id AND enabled = 1) >= 20
BEGIN
    SELECT RAISE(ABORT, 'memories_full');
END;
CREATE TRIGGER bot_memories_enabled_cap_on BEFORE UPDATE OF enabled ON bot_memories
WHEN NEW.enabled = 1 AND OLD.enabled = 0
 AND (SELECT count(*) FROM bot_memories WHERE bot_id = NEW.bot_id AND enabled = 1) >= 20
BEGIN
    SELECT RAISE(ABORT, 'memories_full');
END;

CREATE TABLE retrospective_changes (
    id               INTEGER PRIMARY KEY,
    retrospective_id INTEGER NOT NULL REFERENCES retrospectives(id),
    kind             TEXT    NOT NULL CHECK (kind IN ('write', 'delete')),
    subject          TEXT    NOT NULL,
    before_body      TEXT,
    after_body       TEXT,
    -- Why it was not made; NULL: made.
    refused          TEXT,
    undone_at        INTEGER,
    CHECK (refused IS NULL OR undone_at IS NULL)
);
CREATE INDEX retrospective_changes_of ON retrospective_changes(retrospective_id);
