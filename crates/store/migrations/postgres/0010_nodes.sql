-- The daemon processes ("nodes") that share this database. A node writes its row when it starts
-- and its heartbeat every 2 s; one whose heartbeat is older than 5 beats is dead, and the node
-- that claims it (sets reaped_at in a conditional update, so only one does) recovers the runs
-- it held. A run names its node in runs.owner_boot.
-- (PostgreSQL twin of sqlite/0010_nodes.sql; INTEGER is BIGINT here.)
CREATE TABLE nodes (
    id           TEXT    PRIMARY KEY NOT NULL,
    host         TEXT    NOT NULL,
    pid          BIGINT  NOT NULL,
    addr         TEXT,
    started_at   BIGINT  NOT NULL,
    heartbeat_at BIGINT  NOT NULL,
    -- Set by the node itself when it stops cleanly, after its runs were drained.
    stopped_at   BIGINT,
    -- Set by the node that found it dead and took over its runs.
    reaped_at    BIGINT,
    reaped_by    TEXT
);
CREATE INDEX nodes_live ON nodes(heartbeat_at) WHERE stopped_at IS NULL AND reaped_at IS NULL;
CREATE INDEX runs_owner_live ON runs(owner_boot) WHERE status = 'running';
