-- Plans (the seed's tasks, "jobs" to people): one job toward a goal, across conversations;
-- the revisions of its spec with their causes; and which plans a line is filed under.

CREATE TABLE plans (
    id                    INTEGER PRIMARY KEY,
    -- Never blank (PLAN-1); only the person renames (PLAN-2).
    name                  TEXT    NOT NULL CHECK (trim(name) <> ''),
    kind                  TEXT    NOT NULL DEFAULT '',
    goal                  TEXT    NOT NULL DEFAULT '',
    done_when             TEXT    NOT NULL DEFAULT '',
    rules                 TEXT    NOT NULL DEFAULT '',
    process               TEXT    NOT NULL DEFAULT '',
    progress              TEXT    NOT NULL DEFAULT '',
    status                TEXT    NOT NULL DEFAULT 'active'
                          CHECK (status IN ('active', 'done', 'parked')),
    delivered_at          INTEGER,
    -- Dormancy is not a status (PLAN-D1): set and cleared on its own.
    dormant_at            INTEGER,
    dormant_cause         TEXT,
    -- The person's last rename (PLAN-3).
    renamed_at            INTEGER,
    last_user_activity_at INTEGER,
    -- The opening line's words, verbatim: never rewritten.
    original_request      TEXT    NOT NULL,
    home_session_id       INTEGER REFERENCES sessions(id),
    opening_line_id       INTEGER REFERENCES session_messages(id),
    -- Absolute, fixed when the plan is made: a rename does not move it.
    folder                TEXT    NOT NULL,
    version               INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    CHECK ((dormant_at IS NULL) = (dormant_cause IS NULL))
);
CREATE INDEX plans_home_session ON plans(home_session_id);

-- Every version of a plan's spec: its cause (user, message:<id>, turn:<id>) and the fields it
-- changed as {"field": {"old": …, "new": …}} (PLAN-O2).
CREATE TABLE plan_revisions (
    plan_id INTEGER NOT NULL REFERENCES plans(id),
    version INTEGER NOT NULL,
    cause   TEXT    NOT NULL,
    changes TEXT    NOT NULL,
    at      INTEGER NOT NULL,
    PRIMARY KEY (plan_id, version)
);

-- A line's targets (attribution): a plan, maybe one of its tickets and a part of it, how the
-- filing was found and by whom. One row per line × plan × ticket; no tickets table yet.
CREATE TABLE message_filings (
    message_id INTEGER NOT NULL REFERENCES session_messages(id),
    plan_id    INTEGER NOT NULL REFERENCES plans(id),
    ticket_id  INTEGER,
    part_id    TEXT,
    source     TEXT    NOT NULL
               CHECK (source IN ('quoted_reply', 'path', 'binding', 'reader', 'work_on', 'desk')),
    filed_by   TEXT    NOT NULL,
    locked     INTEGER NOT NULL CHECK (locked IN (0, 1)),
    is_primary INTEGER NOT NULL CHECK (is_primary IN (0, 1)),
    at         INTEGER NOT NULL
);
-- A filing without a ticket is ticket 0 here, so one line is filed once per plan and ticket.
CREATE UNIQUE INDEX message_filings_target
    ON message_filings(message_id, plan_id, COALESCE(ticket_id, 0));
CREATE INDEX message_filings_plan ON message_filings(plan_id, message_id);
