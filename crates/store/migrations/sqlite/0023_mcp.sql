-- MCP servers (issue 19): the servers' definitions, edited while the daemon runs, and a
-- record of every MCP call a run made. A definition is kept as the JSON object the mcp crate
-- validated (the store does not know its shape); the name check here is the floor under
-- that validation, so a raw write cannot name a server the tool names could not carry.
CREATE TABLE mcp_servers (
    name        TEXT    PRIMARY KEY
                CHECK (length(name) BETWEEN 1 AND 32 AND name NOT GLOB '*[^-a-z0-9_]*'),
    definition  TEXT    NOT NULL CHECK (json_valid(definition) AND json_type(definition) = 'object'),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- Every MCP call, read-only or not, with its clipped result; not a command record.
CREATE TABLE mcp_calls (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    thread_id   INTEGER NOT NULL REFERENCES threads(id),
    call_id     TEXT    NOT NULL,
    server      TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    read_only   INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER NOT NULL,
    ok          INTEGER NOT NULL,
    error       TEXT,
    result      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX mcp_calls_run ON mcp_calls(run_id, id);
