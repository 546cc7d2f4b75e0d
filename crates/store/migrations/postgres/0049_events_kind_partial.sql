-- Only the work log reads events by kind, and only its own kinds: the index by kind keeps
-- those and no longer takes an entry (a page written at commit, most commits) for every
-- other event. The list is `troupe_store::KINDS_READ_BY_KIND`; queries repeat it word for word
-- so that either database can use the index.
DROP INDEX events_kind;
CREATE INDEX events_kind ON events(kind, id)
    WHERE kind IN ('control_hold', 'hold_lifted', 'wake_suppressed', 'hold_reopened', 'control_acted', 'hold_still_running');
