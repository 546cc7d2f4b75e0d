-- The replacement card (digest 003-C §16 CW-18): a check from the user's words in force, and a
-- different number said later. The card asks which stands; the old check stays in force until
-- it is answered. One card open per job and dimension; one press per card.
CREATE TABLE replacement_cards (
    id                INTEGER PRIMARY KEY,
    plan_id           INTEGER NOT NULL REFERENCES plans(id),
    dimension         TEXT    NOT NULL
                      CHECK (dimension IN ('running_time', 'resolution', 'aspect', 'frame_rate')),
    in_force_check_id INTEGER NOT NULL REFERENCES checks(id),
    offer_check_id    INTEGER NOT NULL REFERENCES checks(id),
    said_count        INTEGER NOT NULL CHECK (said_count >= 1),
    message_id        INTEGER NOT NULL UNIQUE REFERENCES session_messages(id),
    state             TEXT    NOT NULL DEFAULT 'open'
                      CHECK (state IN ('open', 'answered', 'withdrawn', 'reposted')),
    answer            TEXT    CHECK (answer IN ('use_new', 'change', 'keep_old')),
    created_at        INTEGER NOT NULL,
    closed_at         INTEGER,
    CHECK ((state = 'answered') = (answer IS NOT NULL)),
    CHECK ((state = 'open') = (closed_at IS NULL))
);
CREATE UNIQUE INDEX replacement_cards_open ON replacement_cards(plan_id, dimension)
    WHERE state = 'open';
