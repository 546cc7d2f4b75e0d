-- Runtime Boss memories and projects (issue 18 items 16-17). A memory is a titled note the
-- account's boss keeps across conversations, filed under a category; one per (category, title),
-- so a write to an existing title replaces its body. A project is a directory the boss opened a
-- project boss in: registered once, the repeat answers the existing row.
CREATE TABLE memories (
    id          INTEGER PRIMARY KEY,
    category    TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    body        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (category, title)
);
CREATE TABLE projects (
    id          INTEGER PRIMARY KEY,
    directory   TEXT    NOT NULL UNIQUE,
    title       TEXT    NOT NULL,
    session_id  INTEGER REFERENCES sessions(id),
    created_at  INTEGER NOT NULL
);
