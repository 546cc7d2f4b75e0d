//! The event log: every state change appends a row with a monotonic id in the same
//! transaction; subscribers hear about it after commit.

use crate::args;
use crate::db::Conn;
use crate::db::Dialect;
use crate::tail::{CONTROL_CHANNEL, EVENTS_CHANNEL, EVENTS_LOCK, Tail};
use crate::{Result, Tx};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};
use tokio::sync::broadcast;
use troupe_core::{EventId, RunId, ThreadId};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub id: EventId,
    pub at: i64,
    pub thread_id: Option<ThreadId>,
    pub run_id: Option<RunId>,
    /// Set for events that belong to a conversation rather than to one thread.
    pub session_id: Option<troupe_core::SessionId>,
    pub kind: String,
    pub payload: serde_json::Value,
}

pub struct EventSink {
    tx: broadcast::Sender<Event>,
    /// Requests from other nodes (PostgreSQL's `troupe_control` channel).
    control: broadcast::Sender<String>,
    /// Threads to wake on this node after a commit.
    wakes: broadcast::Sender<ThreadId>,
    /// Set on PostgreSQL, where other nodes commit too: committed events reach subscribers
    /// through it, in id order with theirs.
    tail: OnceLock<Arc<Tail>>,
}

impl EventSink {
    pub(crate) fn new() -> Self {
        let (tx, _) = broadcast::channel(4096);
        let (control, _) = broadcast::channel(256);
        let (wakes, _) = broadcast::channel(1024);
        EventSink {
            tx,
            control,
            wakes,
            tail: OnceLock::new(),
        }
    }

    /// Tail the database from now on (PostgreSQL).
    pub(crate) fn tail(&self, target: &crate::db::PgTarget) -> Result<()> {
        let tail = Tail::start(target, self.tx.clone(), self.control.clone())?;
        let _ = self.tail.set(tail);
        Ok(())
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }

    pub(crate) fn subscribe_control(&self) -> broadcast::Receiver<String> {
        self.control.subscribe()
    }

    /// Called right after a commit, with the events it appended, in id order.
    pub(crate) fn publish(&self, events: Vec<Event>) {
        if let Some(tail) = self.tail.get() {
            return tail.committed(events);
        }
        for e in events {
            // No subscriber is fine: the log is the source of truth; live delivery is a hint.
            let _ = self.tx.send(e);
        }
    }

    pub(crate) fn subscribe_wakes(&self) -> broadcast::Receiver<ThreadId> {
        self.wakes.subscribe()
    }

    pub(crate) fn publish_wakes(&self, threads: Vec<ThreadId>) {
        for t in threads {
            let _ = self.wakes.send(t);
        }
    }

    /// A control message of a single-process store (SQLite), delivered at its commit.
    pub(crate) fn publish_control(&self, messages: Vec<String>) {
        for m in messages {
            let _ = self.control.send(m);
        }
    }
}

/// The event kinds the index by kind holds (migration 0049): the work log's. Every other
/// event is written without an entry there, which spares most commits a page.
pub const KINDS_READ_BY_KIND: &[&str] = &[
    "control_hold",
    "hold_lifted",
    "wake_suppressed",
    "hold_reopened",
    "control_acted",
    "hold_still_running",
];

/// The partial index's own condition, word for word, when every kind asked for is in it: a
/// database uses a partial index only for a query that states its condition.
fn by_kind(kinds: &[&str]) -> String {
    if !kinds.iter().all(|k| KINDS_READ_BY_KIND.contains(k)) {
        return String::new();
    }
    let listed: Vec<String> = KINDS_READ_BY_KIND
        .iter()
        .map(|k| format!("'{k}'"))
        .collect();
    format!("kind IN ({}) AND ", listed.join(", "))
}

/// Give ids to the events a PostgreSQL transaction appended (they carry id 0 until now) and
/// insert them, as the transaction's last step before COMMIT. The lock taken here, held to
/// commit, hands ids out in commit order across connections and nodes; taking it last means a
/// transaction holding it waits for nothing else, so it can close no deadlock. The notification
/// wakes the other nodes' tails at commit (see tail.rs). SQLite inserts each event as it is
/// appended (one writer), so nothing is pending there.
pub(crate) fn flush_pending(conn: &Conn, events: &mut [Event]) -> Result<()> {
    let pending: Vec<usize> = (0..events.len()).filter(|i| events[*i].id.0 == 0).collect();
    if pending.is_empty() {
        return Ok(());
    }
    conn.query(
        &format!("SELECT pg_advisory_xact_lock({EVENTS_LOCK}), pg_notify('{EVENTS_CHANNEL}', '')"),
        &[],
    )?;
    let ids = conn.query(
        "SELECT CAST(nextval(pg_get_serial_sequence('events', 'id')) AS BIGINT) AS id
         FROM generate_series(1, CAST(?1 AS BIGINT)) ORDER BY 1",
        args![pending.len() as i64],
    )?;
    let mut rows = Vec::with_capacity(pending.len());
    for (i, row) in pending.iter().zip(&ids) {
        let e = &mut events[*i];
        e.id = EventId(row.get(0)?);
        rows.push(serde_json::json!({
            "id": e.id.0, "at": e.at, "thread_id": e.thread_id.map(|t| t.0),
            "run_id": e.run_id.map(|r| r.0), "session_id": e.session_id.map(|s| s.0),
            "kind": e.kind, "payload": e.payload.to_string(),
        }));
    }
    // One statement for any number of events: they travel as one JSON array.
    conn.execute(
        "INSERT INTO events (id, at, thread_id, run_id, session_id, kind, payload)
         SELECT CAST(e->>'id' AS BIGINT), CAST(e->>'at' AS BIGINT), CAST(e->>'thread_id' AS BIGINT),
                CAST(e->>'run_id' AS BIGINT), CAST(e->>'session_id' AS BIGINT), e->>'kind',
                e->>'payload'
         FROM json_array_elements(CAST(?1 AS json)) AS e",
        args![serde_json::Value::Array(rows).to_string()],
    )?;
    Ok(())
}

impl Tx<'_> {
    /// A message for another node, sent when this transaction commits (on SQLite, where there
    /// is one process, it reaches this store's own control subscribers).
    pub fn notify_control(&mut self, payload: &str) -> Result<()> {
        match self.dialect() {
            Dialect::Postgres => {
                self.query_one(
                    &format!("SELECT CAST(1 AS BIGINT) FROM (SELECT pg_notify('{CONTROL_CHANNEL}', CAST(?1 AS TEXT))) AS n"),
                    args![payload],
                    |r| r.get::<i64>(0),
                )?;
            }
            Dialect::Sqlite => self.controls.push(payload.to_string()),
        }
        Ok(())
    }

    /// Ask this node to drive `thread` once this transaction commits: for work given to a
    /// thread inside another's step (a Bot's line that names another Bot), where the caller
    /// cannot act after the commit itself. Whoever subscribed (the engine) acts on it.
    pub fn wake_after_commit(&mut self, thread: ThreadId) {
        if !self.wakes.contains(&thread) {
            self.wakes.push(thread);
        }
    }

    /// Append an event; it is published when this transaction commits.
    pub fn event(
        &mut self,
        kind: &str,
        thread: Option<ThreadId>,
        run: Option<RunId>,
        payload: serde_json::Value,
    ) -> Result<()> {
        self.append_event(kind, thread, run, None, payload)
    }

    /// Every event goes through here; `session` is set for events that belong to a
    /// conversation. On SQLite the row is inserted now; on PostgreSQL at the end of the
    /// transaction ([`flush_pending`]), where its id is given.
    pub(crate) fn append_event(
        &mut self,
        kind: &str,
        thread: Option<ThreadId>,
        run: Option<RunId>,
        session: Option<troupe_core::SessionId>,
        payload: serde_json::Value,
    ) -> Result<()> {
        let id = match self.dialect() {
            Dialect::Sqlite => EventId(self.insert(
                "INSERT INTO events (at, thread_id, run_id, session_id, kind, payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                args![self.now, thread.map(|t| t.0), run.map(|r| r.0), session.map(|s| s.0), kind, payload.to_string()],
            )?),
            Dialect::Postgres => EventId(0),
        };
        self.events.push(Event {
            id,
            at: self.now,
            thread_id: thread,
            run_id: run,
            session_id: session,
            kind: kind.to_string(),
            payload,
        });
        Ok(())
    }

    /// Events after `after`, oldest first, optionally for one thread.
    pub fn events_after(
        &self,
        after: EventId,
        thread: Option<ThreadId>,
        limit: u32,
    ) -> Result<Vec<Event>> {
        self.events_where(
            "id > ?1 AND (CAST(?2 AS BIGINT) IS NULL OR thread_id = ?2)",
            args![after.0, thread.map(|t| t.0)],
            limit,
        )
    }

    /// The newest event of `kind` on `thread`.
    pub fn last_event_of(&self, kind: &str, thread: ThreadId) -> Result<Option<Event>> {
        let sql = "SELECT id, at, thread_id, run_id, session_id, kind, payload FROM events
             WHERE thread_id = ?1 AND kind = ?2 ORDER BY id DESC LIMIT 1";
        Ok(self
            .query_all(sql, args![thread.0, kind], event_row)?
            .into_iter()
            .next())
    }

    /// Events of the given kinds after `after`, oldest first (the work log reads these).
    /// Kinds among [`KINDS_READ_BY_KIND`] are found through the index by kind; others by
    /// reading every event after `after`.
    pub fn events_of_kinds(
        &self,
        kinds: &[&str],
        after: EventId,
        limit: u32,
    ) -> Result<Vec<Event>> {
        if kinds.is_empty() {
            return Ok(Vec::new());
        }
        let list = kinds
            .iter()
            .map(|k| format!("'{}'", k.replace('\'', "")))
            .collect::<Vec<_>>()
            .join(", ");
        self.events_where(
            &format!("id > ?1 AND {}kind IN ({list})", by_kind(kinds)),
            args![after.0],
            limit,
        )
    }

    /// Events of the given kinds at or after `since` (ms), oldest first.
    pub fn events_of_kinds_since(
        &self,
        kinds: &[&str],
        since: i64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        if kinds.is_empty() {
            return Ok(Vec::new());
        }
        let list = kinds
            .iter()
            .map(|k| format!("'{}'", k.replace('\'', "")))
            .collect::<Vec<_>>()
            .join(", ");
        self.events_where(
            &format!("at >= ?1 AND {}kind IN ({list})", by_kind(kinds)),
            args![since],
            limit,
        )
    }

    pub(crate) fn events_where(
        &self,
        clause: &str,
        args: &[crate::Value],
        limit: u32,
    ) -> Result<Vec<Event>> {
        let sql = format!(
            "SELECT id, at, thread_id, run_id, session_id, kind, payload FROM events WHERE {clause} ORDER BY id LIMIT {limit}"
        );
        self.query_all(&sql, args, event_row)
    }

    pub fn last_event_id(&self) -> Result<EventId> {
        let id: Option<i64> =
            self.query_one("SELECT MAX(id) FROM events", args![], |r| r.get(0))?;
        Ok(EventId(id.unwrap_or(0)))
    }
}

fn event_row(r: &crate::Row) -> Result<Event> {
    let payload: String = r.get(6)?;
    Ok(Event {
        id: EventId(r.get(0)?),
        at: r.get(1)?,
        thread_id: r.get::<Option<i64>>(2)?.map(ThreadId),
        run_id: r.get::<Option<i64>>(3)?.map(RunId),
        session_id: r.get::<Option<i64>>(4)?.map(troupe_core::SessionId),
        kind: r.get(5)?,
        payload: serde_json::from_str(&payload).unwrap_or(serde_json::Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_read_by_kind_are_the_partial_index_condition_on_both_backends() {
        let condition = by_kind(&["hold_lifted"]);
        let listed = condition
            .trim_end_matches(" AND ")
            .trim_start_matches("kind IN ");
        for migration in [
            include_str!("../migrations/sqlite/0049_events_kind_partial.sql"),
            include_str!("../migrations/postgres/0049_events_kind_partial.sql"),
        ] {
            assert!(
                migration.contains(&format!("WHERE kind IN {listed};")),
                "{migration}"
            );
        }
        // A kind the index does not hold is read without it.
        assert_eq!(by_kind(&["hold_lifted", "quality_event"]), "");
    }
}
