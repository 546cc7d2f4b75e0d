-- Notifications: what the person is told outside the conversation they look at (SV-18's
-- "stopped", END-11's blocked work, a work question waiting, WQ-5/WQ-8). Open until what it
-- asked for happens (resolved) or stops mattering (voided), never open again; the open ones
-- are the page's badge, so they have their own index.
CREATE TABLE notifications (
    id           INTEGER PRIMARY KEY,
    kind         TEXT    NOT NULL CHECK (kind IN ('stopped', 'blocked', 'waiting_for_answer')),
    title        TEXT    NOT NULL,
    body         TEXT    NOT NULL,
    session_id   INTEGER REFERENCES sessions(id),
    plan_id      INTEGER REFERENCES plans(id),
    ticket_id    INTEGER REFERENCES tickets(id),
    work_item_id INTEGER REFERENCES work_items(id),
    message_id   INTEGER REFERENCES session_messages(id),
    status       TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'voided')),
    resolution   TEXT,
    created_at   INTEGER NOT NULL,
    closed_at    INTEGER,
    CHECK ((status = 'open') = (closed_at IS NULL))
);
CREATE INDEX notifications_open ON notifications(id) WHERE status = 'open';
CREATE INDEX notifications_work ON notifications(work_item_id) WHERE status = 'open';
CREATE INDEX notifications_message ON notifications(message_id) WHERE message_id IS NOT NULL;

-- A notification never reopens: status only leaves 'open'.
CREATE TRIGGER notifications_never_reopen
BEFORE UPDATE OF status ON notifications
WHEN OLD.status <> 'open' AND NEW.status <> OLD.status
BEGIN
    SELECT RAISE(ABORT, 'notification_closed');
END;
