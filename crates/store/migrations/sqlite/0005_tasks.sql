-- Child tasks (the seeds' Cortex): a thread hands a prompt to a named agent, which works on it
-- in a child thread. The record is the authority on the task's status; the child thread holds
-- the work itself.

CREATE TABLE tasks (
    id                INTEGER PRIMARY KEY,
    parent_thread_id  INTEGER NOT NULL REFERENCES threads(id),
    -- The message whose tool call asked for the task (none when a workflow prepared it).
    parent_message_id INTEGER,
    child_thread_id   INTEGER NOT NULL UNIQUE REFERENCES threads(id),
    agent             TEXT    NOT NULL,
    prompt            TEXT    NOT NULL,
    description       TEXT    NOT NULL DEFAULT '',
    -- The output contract as JSON: {"kind": "summary" | "final" | "structured", "schema"?: {...}}.
    output_contract   TEXT    NOT NULL,
    -- `task` counts against the concurrency caps; `reviewer` does not (it is never starved).
    role              TEXT    NOT NULL CHECK (role IN ('task', 'reviewer')),
    -- Whether the parent is told the result (a workflow's reviewer delivers its own verdict).
    notify_parent     INTEGER NOT NULL DEFAULT 1 CHECK (notify_parent IN (0, 1)),
    status            TEXT    NOT NULL CHECK (status IN
                          ('queued', 'running', 'completed', 'failed', 'cancelled', 'interrupted')),
    output_text       TEXT,
    output_json       TEXT,
    error             TEXT,
    repair_attempts   INTEGER NOT NULL DEFAULT 0 CHECK (repair_attempts >= 0),
    -- How many times an interrupted task was taken up again.
    resumes           INTEGER NOT NULL DEFAULT 0 CHECK (resumes >= 0),
    -- Makes creation idempotent per parent (a retried tool call finds its task).
    delivery_key      TEXT    NOT NULL,
    -- The process (boot id) that started it: a child runs only in that process.
    started_boot      TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    started_at        INTEGER,
    ended_at          INTEGER,
    UNIQUE (parent_thread_id, delivery_key)
);
CREATE INDEX tasks_status ON tasks(status, id);
CREATE INDEX tasks_parent ON tasks(parent_thread_id, id);
