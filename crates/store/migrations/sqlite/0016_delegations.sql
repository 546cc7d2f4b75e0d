-- Delegations (A §3): one Bot's work item asks another's, on a shared job, for a deliverable, a
-- review or an answer. The request and its result are records (shown in the pair's direct);
-- the sender's wait is its work item's `waiting_on`, voided only by the reply or a cancel.

CREATE TABLE delegations (
    id                  INTEGER PRIMARY KEY,
    plan_id             INTEGER NOT NULL REFERENCES plans(id),
    ticket_id           INTEGER,
    parts               TEXT    NOT NULL DEFAULT '[]',
    requirement_ids     TEXT    NOT NULL DEFAULT '[]',
    sender_work_item    INTEGER NOT NULL REFERENCES work_items(id),
    recipient_work_item INTEGER NOT NULL REFERENCES work_items(id),
    originating_run_id  INTEGER REFERENCES runs(id),
    -- The exact Bot-pair direct the records show in.
    pair_session_id     INTEGER NOT NULL REFERENCES sessions(id),
    ask                 TEXT    NOT NULL CHECK (trim(ask) <> ''),
    expects             TEXT    NOT NULL CHECK (expects IN ('deliverable', 'review', 'answer')),
    continue_working    INTEGER NOT NULL DEFAULT 0,
    state               TEXT    NOT NULL DEFAULT 'open'
                        CHECK (state IN ('open', 'replied', 'cancelled')),
    -- JSON: {"text": …} for a word reply, {"reason": …} for a cancellation.
    result              TEXT,
    replied_at          INTEGER,
    cancelled_at        INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    CHECK (sender_work_item <> recipient_work_item),
    -- A reply or a cancellation is written once, with its result and time.
    CHECK ((state = 'open' AND result IS NULL)
        OR (state = 'replied' AND result IS NOT NULL AND replied_at IS NOT NULL)
        OR (state = 'cancelled' AND result IS NOT NULL AND cancelled_at IS NOT NULL))
);
CREATE INDEX delegations_recipient ON delegations(recipient_work_item, state);
CREATE INDEX delegations_sender ON delegations(sender_work_item, state);
CREATE INDEX delegations_plan ON delegations(plan_id, id);
CREATE INDEX delegations_pair ON delegations(pair_session_id, id);

-- Settled is settled: a replied or cancelled delegation never opens again or changes its result.
CREATE TRIGGER delegations_settle_once BEFORE UPDATE ON delegations
WHEN OLD.state <> 'open' AND (NEW.state IS NOT OLD.state OR NEW.result IS NOT OLD.result)
BEGIN
    SELECT RAISE(ABORT, 'delegation_settled: a replied or cancelled delegation does not change');
END;
