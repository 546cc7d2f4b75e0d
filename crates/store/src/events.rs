//! The event log: every state change appends a row with a monotonic id in the same
//! transaction; subscribers hear about it after commit.

use crate::args;
use crate::{Result, Tx};
use serde::{Deserialize, Serialize};
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
}

impl EventSink {
    pub(crate) fn new() -> Self {
        let (tx, _) = broadcast::channel(4096);
        EventSink { tx }
    }
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }
    pub(crate) fn publish(&self, events: Vec<Event>) {
        for e in events {
            // No subscriber is fine: the log is the source of truth; live delivery is a hint.
            let _ = self.tx.send(e);
        }
    }
}

impl Tx<'_> {
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
        let id = EventId(self.insert(
            "INSERT INTO events (at, thread_id, run_id, session_id, kind, payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            args![self.now, thread.map(|t| t.0), run.map(|r| r.0), session.map(|s| s.0), kind, text],
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
