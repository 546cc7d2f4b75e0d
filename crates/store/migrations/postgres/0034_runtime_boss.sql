-- Runtime Boss sessions (PostgreSQL twin of sqlite/0034_runtime_boss.sql; INTEGER is BIGINT
-- here). One standing coordinator per enabled channel account (RB-1): the row names the
-- account it is routed from and its endpoint (`chat_id` is the sentinel "boss", never a real
-- chat; `scope_key` "boss"). A channel-less local boss session has `account` NULL. Disabling
-- boss mode keeps the rows (RB-7). Runtime settings (`experimental.boss_*`) live in
-- `app_settings`.
CREATE TABLE runtime_boss_sessions (
    session_id  BIGINT  PRIMARY KEY REFERENCES sessions(id),
    account     TEXT,
    scope_key   TEXT    NOT NULL DEFAULT 'boss',
    chat_id     TEXT,
    -- The fingerprint of the identity last briefed and how many briefings were sent: a
    -- persona change is briefed once more under a versioned key (RB-2).
    briefed_identity TEXT,
    briefings   BIGINT  NOT NULL DEFAULT 0,
    created_at  BIGINT  NOT NULL
);
CREATE UNIQUE INDEX runtime_boss_sessions_account
    ON runtime_boss_sessions(account, scope_key) WHERE account IS NOT NULL;
