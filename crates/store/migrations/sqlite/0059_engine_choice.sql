-- A conversation either chose its engine or runs Settings' default (ADR 0085, digest 003-B
-- §0.3): until now every conversation stored one, `general` unless switched, so the ones
-- that say something else were switched by the person.
ALTER TABLE sessions ADD COLUMN engine_chosen INTEGER NOT NULL DEFAULT 0
    CHECK (engine_chosen IN (0, 1));
UPDATE sessions SET engine_chosen = 1 WHERE engine <> 'general';
