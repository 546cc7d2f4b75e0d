-- A Bot's skills and project skills (seed 003, ADR 0052): named instructions a Bot reads with
-- `read_skill` from the catalog in its situation; a project skill is a copy of one, shared
-- with every Bot, which none of them changes. A retrospective may change a skill within the
-- rules of digest 003-B §11.4, kept in retrospective_changes like a memory's change.

CREATE TABLE bot_skills (
    id               INTEGER PRIMARY KEY,
    bot_id           INTEGER NOT NULL REFERENCES bots(id),
    name             TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    description      TEXT    NOT NULL CHECK (length(description) BETWEEN 1 AND 200),
    body             TEXT    NOT NULL CHECK (length(body) BETWEEN 1 AND 20000),
    -- The retrospective whose change stands in it: cleared when the Bot or the person
    -- rewrites it, after which that change is no longer undone.
    retrospective_id INTEGER REFERENCES retrospectives(id),
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE UNIQUE INDEX bot_skills_name ON bot_skills(bot_id, lower(name));

-- A Bot keeps at most 30 skills.
CREATE TRIGGER bot_skills_cap BEFORE INSERT ON bot_skills
WHEN (SELECT count(*) FROM bot_skills WHERE bot_id = NEW.bot_id) >= 30
BEGIN
    SELECT RAISE(ABORT, 'skills_full');
END;

CREATE TABLE project_skills (
    id              INTEGER PRIMARY KEY,
    -- The skill it was copied from; NULL once the owner deleted it (the copy stays).
    source_skill_id INTEGER REFERENCES bot_skills(id),
    owner_bot_id    INTEGER NOT NULL REFERENCES bots(id),
    name            TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    description     TEXT    NOT NULL CHECK (length(description) BETWEEN 1 AND 200),
    body            TEXT    NOT NULL CHECK (length(body) BETWEEN 1 AND 20000),
    enabled         INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    shared_at       INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX project_skills_name ON project_skills(lower(name));
CREATE UNIQUE INDEX project_skills_source ON project_skills(source_skill_id);

-- QE7: at most 20 project skills are on at once.
CREATE TRIGGER project_skills_on_cap BEFORE INSERT ON project_skills
WHEN NEW.enabled = 1
 AND (SELECT count(*) FROM project_skills WHERE enabled = 1) >= 20
BEGIN
    SELECT RAISE(ABORT, 'project_skills_full');
END;
CREATE TRIGGER project_skills_on_cap_on BEFORE UPDATE OF enabled ON project_skills
WHEN NEW.enabled = 1 AND OLD.enabled = 0
 AND (SELECT count(*) FROM project_skills WHERE enabled = 1) >= 20
BEGIN
    SELECT RAISE(ABORT, 'project_skills_full');
END;

-- A retrospective's change is to a memory or to a skill (its subject is the skill's name).
ALTER TABLE retrospective_changes ADD COLUMN target TEXT NOT NULL DEFAULT 'memory'
    CHECK (target IN ('memory', 'skill'));
