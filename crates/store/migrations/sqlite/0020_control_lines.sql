-- A person's line read as possibly control carries its buttons (`control`: kind, offer,
-- scopes) and, once one is pressed, what that press did (`control_acted`): pressed once per
-- line (HOLD-B1). The work log reads events by kind.
ALTER TABLE session_messages ADD COLUMN control TEXT;
ALTER TABLE session_messages ADD COLUMN control_acted TEXT;
CREATE INDEX events_kind ON events(kind, id);
