//! The event log: every state change appends a row with a monotonic id in the same
//! transaction; subscribers hear about it after commit.

use crate::args;
use crate::db::Dialect;
use crate::tail::{CONTROL_CHANNEL, EVENTS_CHANNEL, EVENTS_LOCK, Tail};
use crate::{Result, Tx};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, LazyLock, OnceLock};
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
    /// Set on PostgreSQL, where other nodes commit too: committed events reach subscribers
    /// through it, in id order with theirs.
    tail: OnceLock<Arc<Tail>>,
}

impl EventSink {
    pub(crate) fn new() -> Self {
        let (tx, _) = broadcast::channel(4096);
        let (control, _) = broadcast::channel(256);
        EventSink {
            tx,
            control,
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

    /// A control message of a single-process store (SQLite), delivered at its commit.
    pub(crate) fn publish_control(&self, messages: Vec<String>) {
        for m in messages {
            let _ = self.control.send(m);
        }
    }
}

/// One text, so the statement cache prepares it once per connection.
static PG_EVENT_INSERT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO events (at, thread_id, run_id, session_id, kind, payload)
         SELECT CAST(?1 AS BIGINT), CAST(?2 AS BIGINT), CAST(?3 AS BIGINT), CAST(?4 AS BIGINT),
                CAST(?5 AS TEXT), CAST(?6 AS TEXT)
         FROM (SELECT pg_advisory_xact_lock({EVENTS_LOCK}), pg_notify('{EVENTS_CHANNEL}', '')) AS turn"
    )
});

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

    /// Append an event; it is published when this transaction commits.
    pub fn event(
        &mut self,
        kind: &str,
        thread: Option<ThreadId>,
        run: Option<RunId>,
        payload: serde_json::Value,
    ) -> Result<EventId> {
        self.append_event(kind, thread, run, None, payload)
    }

    /// One insert for every event; `session` is set for events that belong to a conversation.
    pub(crate) fn append_event(
        &mut self,
        kind: &str,
        thread: Option<ThreadId>,
        run: Option<RunId>,
        session: Option<troupe_core::SessionId>,
        payload: serde_json::Value,
    ) -> Result<EventId> {
        let text = payload.to_string();
        let sql = match self.dialect() {
            Dialect::Sqlite => {
                "INSERT INTO events (at, thread_id, run_id, session_id, kind, payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
            }
            // The lock (held to commit) makes ids follow commit order across connections and
            // nodes; the notification wakes the other nodes' tails at commit. See tail.rs.
            Dialect::Postgres => PG_EVENT_INSERT.as_str(),
        };
        let id = EventId(self.insert(
            sql,
            args![
                self.now,
                thread.map(|t| t.0),
                run.map(|r| r.0),
                session.map(|s| s.0),
                kind,
                text
            ],
        )?);
        self.events.push(Event {
            id,
            at: self.now,
            thread_id: thread,
            run_id: run,
            session_id: session,
            kind: kind.to_string(),
            payload,
        });
        Ok(id)
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

    pub(crate) fn events_where(
        &self,
        clause: &str,
        args: &[crate::Value],
        limit: u32,
    ) -> Result<Vec<Event>> {
        let sql = format!(
            "SELECT id, at, thread_id, run_id, session_id, kind, payload FROM events WHERE {clause} ORDER BY id LIMIT {limit}"
        );
        self.query_all(&sql, args, |r| {
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
        })
    }

    pub fn last_event_id(&self) -> Result<EventId> {
        let id: Option<i64> =
            self.query_one("SELECT MAX(id) FROM events", args![], |r| r.get(0))?;
        Ok(EventId(id.unwrap_or(0)))
    }
}
