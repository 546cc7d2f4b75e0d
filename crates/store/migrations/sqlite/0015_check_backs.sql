-- Check-backs: one-time timers a Bot books for its own work item (CB-1…9). Delegation waits are
-- not rows here, so a due-time scan of this table can never fire or replace one (DEL-24/26).

CREATE TABLE check_backs (
    id               INTEGER PRIMARY KEY,
    bot_id           INTEGER NOT NULL REFERENCES bots(id),
    work_item_id     INTEGER NOT NULL REFERENCES work_items(id),
    -- Where it was booked, and where the woken segment speaks.
    session_id       INTEGER NOT NULL REFERENCES sessions(id),
    -- The job its hourly limit counts against; none for a desk's booking.
    plan_id          INTEGER,
    -- A booking replaces only a pending one with this exact key (CB-7).
    dedupe_key       TEXT    NOT NULL,
    due_at           INTEGER NOT NULL,
    note             TEXT    NOT NULL,
    state            TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN
        ('pending', 'set_aside', 'fired', 'voided', 'cleared')),
    booked_by_run_id INTEGER REFERENCES runs(id),
    created_at       INTEGER NOT NULL,
    fired_at         INTEGER,
    updated_at       INTEGER NOT NULL
);
CREATE UNIQUE INDEX check_backs_one_pending ON check_backs(dedupe_key) WHERE state = 'pending';
CREATE INDEX check_backs_due ON check_backs(state, due_at);
CREATE INDEX check_backs_work_item ON check_backs(work_item_id, created_at);
