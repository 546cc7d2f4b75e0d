-- ceiling: issue 16 (Deliverables II).
-- Capability ceiling (B §7). Why each failed hand-over failed, written when it failed (the
-- submission's state alone does not tell a user's send-back from a gate's), and the cards that
-- asked the user how a stuck part (or whole ticket) goes on. The count itself is derived from
-- these and the submissions; a card's answer restarts it.

CREATE TABLE handover_failures (
    id            INTEGER PRIMARY KEY,
    -- A hand-over fails once: later reasons for the same one are not counted again.
    submission_id INTEGER NOT NULL UNIQUE REFERENCES submissions(id),
    ticket_id     INTEGER NOT NULL REFERENCES tickets(id),
    kind          TEXT    NOT NULL CHECK (kind IN ('checks', 'review', 'user')),
    -- JSON array of the requirement ids that failed (check ids, review verdicts' ids).
    requirements  TEXT    NOT NULL DEFAULT '[]',
    at            INTEGER NOT NULL
);
CREATE INDEX handover_failures_ticket ON handover_failures(ticket_id);

CREATE TABLE ceiling_cards (
    id            INTEGER PRIMARY KEY,
    plan_id       INTEGER NOT NULL REFERENCES plans(id),
    ticket_id     INTEGER NOT NULL REFERENCES tickets(id),
    -- None: the whole ticket, counting only hand-overs that name no part.
    part_id       INTEGER REFERENCES ticket_parts(id),
    case_kind     TEXT    NOT NULL CHECK (case_kind IN ('same_requirement', 'sent_back', 'too_many')),
    requirement   TEXT,
    -- The hand-over that tipped it: after an answer only later hand-overs count.
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    -- The card's line (a system line with its control).
    message_id    INTEGER REFERENCES session_messages(id),
    state         TEXT    NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'answered', 'closed')),
    answer        TEXT    CHECK (answer IN ('another_way', 'change_plan', 'relax', 'take_as_is', 'carry_on')),
    -- A relax that reached the ledger names the entry set aside for the job.
    relaxed_requirement_id INTEGER REFERENCES requirements(id),
    -- Why a card still asking lost its buttons (its ticket closed another way).
    closed_reason TEXT,
    created_at    INTEGER NOT NULL,
    decided_at    INTEGER,
    CHECK ((state = 'answered') = (answer IS NOT NULL)),
    CHECK ((case_kind = 'same_requirement') = (requirement IS NOT NULL))
);
CREATE INDEX ceiling_cards_ticket ON ceiling_cards(ticket_id, state);
CREATE INDEX ceiling_cards_message ON ceiling_cards(message_id);
