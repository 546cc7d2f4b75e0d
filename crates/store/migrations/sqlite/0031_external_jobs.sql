-- external_jobs: issue 16 (Deliverables II).
-- External jobs (B §8): one render a media server accepted through a paired submit_<x> /
-- check_<x> tool, registered when submitted and polled by the app outside any turn.

CREATE TABLE external_jobs (
    id                     INTEGER PRIMARY KEY,
    -- The tool source that offered the pair (an MCP server's `mcp:<name>`), the submit tool,
    -- and its partner the poller asks.
    server                 TEXT    NOT NULL,
    tool                   TEXT    NOT NULL,
    check_tool             TEXT    NOT NULL,
    -- SHA-256 of the arguments without resubmit_reason, key order aside (EJ2).
    args_fingerprint       TEXT    NOT NULL,
    arguments              TEXT    NOT NULL,
    submitter_bot_id       INTEGER REFERENCES bots(id),
    submitter_thread_id    INTEGER NOT NULL REFERENCES threads(id),
    submitter_work_item_id INTEGER REFERENCES work_items(id),
    -- The turn and reply that submitted it: the poller's calls are recorded under them.
    run_id                 INTEGER NOT NULL REFERENCES runs(id),
    message_id             INTEGER REFERENCES messages(id),
    plan_id                INTEGER REFERENCES plans(id),
    ticket_id              INTEGER REFERENCES tickets(id),
    part_number            INTEGER,
    remote_id              TEXT    NOT NULL,
    -- The key the id came under in the submit's answer.
    remote_key             TEXT    NOT NULL,
    status                 TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN
        ('pending', 'done', 'failed', 'lost')),
    -- The last answer read: {status, url, duration, cost, error, raw_lines}.
    result                 TEXT,
    resubmit_reason        TEXT,
    created_at             INTEGER NOT NULL,
    next_poll_at           INTEGER NOT NULL,
    poll_step              INTEGER NOT NULL DEFAULT 0,
    polls                  INTEGER NOT NULL DEFAULT 0,
    finished_at            INTEGER,
    updated_at             INTEGER NOT NULL
);
-- The tick reads only pending jobs that are due.
CREATE INDEX external_jobs_due ON external_jobs(next_poll_at) WHERE status = 'pending';
CREATE INDEX external_jobs_same ON external_jobs(server, tool, args_fingerprint, created_at);
CREATE INDEX external_jobs_plan ON external_jobs(plan_id, id);
CREATE INDEX external_jobs_remote ON external_jobs(check_tool, remote_id);

-- Bots that checked on a job (EJ4), each woken on its own thread when it settles.
CREATE TABLE external_job_waiters (
    job_id       INTEGER NOT NULL REFERENCES external_jobs(id),
    thread_id    INTEGER NOT NULL REFERENCES threads(id),
    bot_id       INTEGER REFERENCES bots(id),
    work_item_id INTEGER REFERENCES work_items(id),
    added_at     INTEGER NOT NULL,
    PRIMARY KEY (job_id, thread_id)
);
