-- The reflection lesson (digest 003-B §10.2, ADR 0051): after an overturned approval or a
-- capability ceiling, the Bot involved proposes one checklist item or one check on a file, or
-- nothing; the person adopts or declines it on a card. One reflection per quality event that
-- called for it; an adopted checklist item is read in that Bot's situation.

CREATE TABLE reflections (
    id               INTEGER PRIMARY KEY,
    bot_id           INTEGER NOT NULL REFERENCES bots(id),
    plan_id          INTEGER NOT NULL REFERENCES plans(id),
    ticket_id        INTEGER NOT NULL REFERENCES tickets(id),
    -- The overturned approval's or the ceiling's event.
    quality_event_id INTEGER NOT NULL UNIQUE REFERENCES quality_events(id),
    cause            TEXT    NOT NULL CHECK (cause IN ('review_miss', 'ceiling')),
    state            TEXT    NOT NULL CHECK (state IN
        ('proposed', 'adopted', 'declined', 'nothing', 'failed', 'skipped')),
    proposal         TEXT,
    -- The card's line, and what adopting made.
    message_id       INTEGER,
    check_id         INTEGER,
    model            TEXT,
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    cost_usd         REAL,
    raw              TEXT,
    error            TEXT,
    at               INTEGER NOT NULL,
    answered_at      INTEGER,
    CHECK ((state IN ('proposed', 'adopted', 'declined')) = (proposal IS NOT NULL))
);
CREATE INDEX reflections_at ON reflections(at);
CREATE INDEX reflections_bot_ticket ON reflections(bot_id, ticket_id, at);

CREATE TABLE checklist_items (
    id            INTEGER PRIMARY KEY,
    bot_id        INTEGER NOT NULL REFERENCES bots(id),
    read_when     TEXT    NOT NULL CHECK (read_when IN
        ('before_reviewing', 'before_handing_over', 'before_generating')),
    text          TEXT    NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
    reflection_id INTEGER NOT NULL UNIQUE REFERENCES reflections(id),
    enabled       INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX checklist_items_bot ON checklist_items(bot_id);

-- The retrospective and the reflection are switchable engine steps (ADR 0085): the
-- retrospective on in all three engines, the reflection off in the general one.
CREATE TABLE engine_steps_next (
    engine     TEXT    NOT NULL CHECK (engine IN ('video', 'general', 'coding')),
    step       TEXT    NOT NULL CHECK (step IN ('scribe', 'retrospective', 'reflection')),
    enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (engine, step)
);
INSERT INTO engine_steps_next SELECT engine, step, enabled, updated_at FROM engine_steps;
DROP TABLE engine_steps;
ALTER TABLE engine_steps_next RENAME TO engine_steps;
INSERT INTO engine_steps (engine, step, enabled, updated_at) VALUES
    ('video', 'retrospective', 1, 0), ('general', 'retrospective', 1, 0),
    ('coding', 'retrospective', 1, 0),
    ('video', 'reflection', 1, 0), ('general', 'reflection', 0, 0), ('coding', 'reflection', 1, 0);
