//! Agenda items: scheduled deliveries into the thread that created them. The store keeps the
//! rows and the deadline (`next_run_at`); what a trigger means and when it is next due is the
//! workflow layer's rule, not the store's.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fmt;
use std::str::FromStr;
use troupe_core::{SessionId, ThreadId};

/// An Agenda item's id (`agenda_N` in display form; the bare number is accepted too).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = i64))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgendaId(pub i64);

impl fmt::Display for AgendaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "agenda_{}", self.0)
    }
}

impl FromStr for AgendaId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let digits = s.trim().strip_prefix("agenda_").unwrap_or(s.trim());
        digits
            .parse::<i64>()
            .map(AgendaId)
            .map_err(|_| format!("'{s}' is not a valid agenda id (expected agenda_N)"))
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgendaStatus {
    Active,
    Paused,
    Done,
    Cancelled,
}

impl AgendaStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AgendaStatus::Active => "active",
            AgendaStatus::Paused => "paused",
            AgendaStatus::Done => "done",
            AgendaStatus::Cancelled => "cancelled",
        }
    }
    /// Done and cancelled items never change again.
    pub fn is_final(self) -> bool {
        matches!(self, AgendaStatus::Done | AgendaStatus::Cancelled)
    }
}

impl FromStr for AgendaStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "active" => Ok(AgendaStatus::Active),
            "paused" => Ok(AgendaStatus::Paused),
            "done" => Ok(AgendaStatus::Done),
            "cancelled" => Ok(AgendaStatus::Cancelled),
            other => Err(format!(
                "unknown agenda status '{other}' (expected active, paused, done or cancelled)"
            )),
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgendaItem {
    pub id: AgendaId,
    /// The origin thread: deliveries go to its inbox.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub thread_id: ThreadId,
    /// The origin thread's session, when it has one.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub session_id: Option<SessionId>,
    pub title: String,
    /// `at`, `delay`, `every` or `cron`.
    pub trigger_kind: String,
    /// The trigger's fields as given.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub trigger: Value,
    /// When it is next due (ms since the epoch); null once nothing is left to fire.
    pub next_run_at: Option<i64>,
    pub last_run_at: Option<i64>,
    pub run_count: i64,
    pub status: AgendaStatus,
    /// A one-shot watch: done once delivered, and it holds back continuation until then.
    pub auto_done: bool,
    /// Whether a delivery wakes the thread.
    pub wake: bool,
    /// A silent delivery is hidden from the transcript.
    pub silent: bool,
    pub payload: String,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Clone, Debug)]
pub struct NewAgendaItem {
    pub thread_id: ThreadId,
    pub session_id: Option<SessionId>,
    pub title: String,
    pub trigger_kind: String,
    pub trigger: Value,
    pub next_run_at: Option<i64>,
    pub auto_done: bool,
    pub wake: bool,
    pub silent: bool,
    pub payload: String,
}

/// A change to an item; absent fields stay as they are.
#[derive(Clone, Debug, Default)]
pub struct AgendaEdit {
    pub title: Option<String>,
    pub payload: Option<String>,
    pub status: Option<AgendaStatus>,
    pub wake: Option<bool>,
    pub silent: Option<bool>,
    /// A new trigger: kind, fields and the deadline computed from them.
    pub trigger: Option<(String, Value, Option<i64>)>,
    /// A new deadline alone (e.g. after a delivery).
    pub next_run_at: Option<Option<i64>>,
    /// Record a delivery: last_run_at is set and run_count grows by one.
    pub ran_at: Option<i64>,
}

const COLUMNS: &str = "id, thread_id, session_id, title, trigger_kind, trigger_spec, next_run_at, \
     last_run_at, run_count, status, auto_done, wake, silent, payload, created_at, updated_at";

fn item_from_row(r: &crate::Row) -> Result<AgendaItem> {
    let spec: String = r.get(5)?;
    let status: String = r.get(9)?;
    let parsed = (|| -> Result<(Value, AgendaStatus)> {
        let trigger = serde_json::from_str(&spec)
            .map_err(|e| StoreError::Corrupt(format!("agenda trigger: {e}")))?;
        let status = status
            .parse::<AgendaStatus>()
            .map_err(|e| StoreError::Corrupt(format!("agenda status: {e}")))?;
        Ok((trigger, status))
    })();
    let (trigger, status) = parsed?;
    Ok(AgendaItem {
        id: AgendaId(r.get(0)?),
        thread_id: ThreadId(r.get(1)?),
        session_id: r.get::<Option<i64>>(2)?.map(SessionId),
        title: r.get(3)?,
        trigger_kind: r.get(4)?,
        trigger,
        next_run_at: r.get(6)?,
        last_run_at: r.get(7)?,
        run_count: r.get(8)?,
        status,
        auto_done: r.get(10)?,
        wake: r.get(11)?,
        silent: r.get(12)?,
        payload: r.get(13)?,
        created_at: r.get(14)?,
        updated_at: r.get(15)?,
    })
}

impl Tx<'_> {
    pub fn create_agenda_item(&mut self, n: &NewAgendaItem) -> Result<AgendaItem> {
        self.thread(n.thread_id)?;
        let id = AgendaId(self.insert(
            "INSERT INTO agenda_items (thread_id, session_id, title, trigger_kind, trigger_spec,
                 next_run_at, status, auto_done, wake, silent, payload, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'active', ?7, ?8, ?9, ?10, ?11, ?11)",
            args![
                n.thread_id.0,
                n.session_id.map(|s| s.0),
                n.title,
                n.trigger_kind,
                n.trigger.to_string(),
                n.next_run_at,
                n.auto_done,
                n.wake,
                n.silent,
                n.payload,
                self.now
            ],
        )?);
        self.event(
            "agenda_created",
            Some(n.thread_id),
            None,
            json!({"agenda_id": id.0, "trigger_kind": n.trigger_kind, "next_run_at": n.next_run_at}),
        )?;
        self.agenda_item(id)
    }

    pub fn agenda_item(&self, id: AgendaId) -> Result<AgendaItem> {
        self.find_agenda_item(id)?
            .ok_or_else(|| StoreError::not_found("agenda item", id))
    }

    /// The item, held for this transaction: on PostgreSQL another node's tick that wants it
    /// waits until this one commits, then reads what it recorded (so a firing happens once in
    /// the cluster). On SQLite the single writer already orders them.
    pub fn claim_agenda_item(&self, id: AgendaId) -> Result<AgendaItem> {
        let lock = if self.locks_rows() {
            " FOR NO KEY UPDATE"
        } else {
            ""
        };
        let sql = format!("SELECT {COLUMNS} FROM agenda_items WHERE id = ?1{lock}");
        self.query_opt(&sql, args![id.0], item_from_row)?
            .ok_or_else(|| StoreError::not_found("agenda item", id))
    }

    pub fn find_agenda_item(&self, id: AgendaId) -> Result<Option<AgendaItem>> {
        let sql = format!("SELECT {COLUMNS} FROM agenda_items WHERE id = ?1");
        self.query_opt(&sql, args![id.0], item_from_row)
    }

    /// Items, oldest first; filtered by origin thread and status when given.
    pub fn agenda_items(
        &self,
        thread: Option<ThreadId>,
        status: Option<AgendaStatus>,
        limit: u32,
    ) -> Result<Vec<AgendaItem>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM agenda_items
             WHERE (CAST(?1 AS BIGINT) IS NULL OR thread_id = ?1) AND (CAST(?2 AS TEXT) IS NULL OR status = ?2)
             ORDER BY id LIMIT ?3"
        );
        self.query_all(
            &sql,
            args![thread.map(|t| t.0), status.map(AgendaStatus::as_str), limit],
            item_from_row,
        )
    }

    /// Active items whose deadline is at or before `now`, earliest first.
    pub fn due_agenda_items(&self, now: i64, limit: u32) -> Result<Vec<AgendaItem>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM agenda_items
             WHERE status = 'active' AND next_run_at IS NOT NULL AND next_run_at <= ?1
             ORDER BY next_run_at, id LIMIT ?2"
        );
        self.query_all(&sql, args![now, limit], item_from_row)
    }

    /// The thread's one-shot watches that hold back continuation: auto-done, active, waking
    /// and not silent. The deadline is not looked at.
    pub fn agenda_blockers(&self, thread: ThreadId) -> Result<Vec<AgendaItem>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM agenda_items
             WHERE thread_id = ?1 AND auto_done = 1 AND status = 'active' AND wake = 1 AND silent = 0
             ORDER BY id"
        );
        self.query_all(&sql, args![thread.0], item_from_row)
    }

    /// The session a thread belongs to, if any.
    pub fn session_of_thread(&self, thread: ThreadId) -> Result<Option<SessionId>> {
        Ok(self
            .query_opt(
                "SELECT session_id FROM session_threads WHERE thread_id = ?1 ORDER BY session_id LIMIT 1",
                args![thread.0],
                |r| r.get::<i64>(0),
            )?
            .map(SessionId))
    }

    /// Apply an edit. A final (done or cancelled) item is refused as a conflict.
    pub fn edit_agenda_item(&mut self, id: AgendaId, e: &AgendaEdit) -> Result<AgendaItem> {
        let cur = self.agenda_item(id)?;
        if cur.status.is_final() {
            return Err(StoreError::Conflict(format!(
                "agenda item {id} is {} and cannot change",
                cur.status.as_str()
            )));
        }
        let (kind, spec, mut next) = match &e.trigger {
            Some((k, v, n)) => (k.clone(), v.clone(), *n),
            None => (
                cur.trigger_kind.clone(),
                cur.trigger.clone(),
                cur.next_run_at,
            ),
        };
        if let Some(n) = e.next_run_at {
            next = n;
        }
        let status = e.status.unwrap_or(cur.status);
        let (last, count) = match e.ran_at {
            Some(at) => (Some(at), cur.run_count + 1),
            None => (cur.last_run_at, cur.run_count),
        };
        self.exec(
            "UPDATE agenda_items SET title = ?2, payload = ?3, status = ?4, wake = ?5, silent = ?6,
                 trigger_kind = ?7, trigger_spec = ?8, next_run_at = ?9, last_run_at = ?10,
                 run_count = ?11, updated_at = ?12
             WHERE id = ?1",
            args![
                id.0,
                e.title.as_ref().unwrap_or(&cur.title),
                e.payload.as_ref().unwrap_or(&cur.payload),
                status.as_str(),
                e.wake.unwrap_or(cur.wake),
                e.silent.unwrap_or(cur.silent),
                kind,
                spec.to_string(),
                next,
                last,
                count,
                self.now
            ],
        )?;
        self.event(
            "agenda_updated",
            Some(cur.thread_id),
            None,
            json!({"agenda_id": id.0, "status": status.as_str(), "next_run_at": next}),
        )?;
        self.agenda_item(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agenda_ids_parse_bare_and_prefixed() {
        assert_eq!("agenda_4".parse::<AgendaId>().unwrap(), AgendaId(4));
        assert_eq!("4".parse::<AgendaId>().unwrap(), AgendaId(4));
        assert!("agenda_x".parse::<AgendaId>().is_err());
        assert_eq!(AgendaId(7).to_string(), "agenda_7");
    }

    #[test]
    fn statuses_round_trip() {
        for s in ["active", "paused", "done", "cancelled"] {
            assert_eq!(s.parse::<AgendaStatus>().unwrap().as_str(), s);
        }
        assert!("pending".parse::<AgendaStatus>().is_err());
    }

    fn store_with_thread() -> (crate::Store, ThreadId) {
        use troupe_core::thread::{AgentBinding, Interaction};
        let s =
            crate::Store::open_in_memory(std::sync::Arc::new(troupe_core::ManualClock::new(1_000)))
                .unwrap();
        let t = s
            .write(|tx| {
                tx.create_thread(&crate::NewThread {
                    workspace_root: None,
                    parent_id: None,
                    title: "t".into(),
                    agent: AgentBinding::new("a", "be brief"),
                    workspace: "/tmp".into(),
                    interaction: Interaction::Interactive,
                })
            })
            .unwrap()
            .id;
        (s, t)
    }

    fn new_item(t: ThreadId, next: i64, auto_done: bool) -> NewAgendaItem {
        NewAgendaItem {
            thread_id: t,
            session_id: None,
            title: "check".into(),
            trigger_kind: "at".into(),
            trigger: json!({"kind": "at", "at": next}),
            next_run_at: Some(next),
            auto_done,
            wake: true,
            silent: false,
            payload: "look again".into(),
        }
    }

    #[test]
    fn items_round_trip_and_due_reads_the_stored_deadline() {
        let (s, t) = store_with_thread();
        let a = s
            .write(|tx| tx.create_agenda_item(&new_item(t, 5_000, false)))
            .unwrap();
        assert_eq!(a.status, AgendaStatus::Active);
        assert_eq!(a.created_at, 1_000);
        assert_eq!(a.trigger["at"], 5_000);
        let due = |now| s.read(|tx| tx.due_agenda_items(now, 10)).unwrap();
        assert!(due(4_999).is_empty());
        assert_eq!(due(5_000)[0].id, a.id);
        let edited = s
            .write(|tx| {
                tx.edit_agenda_item(
                    a.id,
                    &AgendaEdit {
                        next_run_at: Some(None),
                        ran_at: Some(5_000),
                        status: Some(AgendaStatus::Done),
                        ..AgendaEdit::default()
                    },
                )
            })
            .unwrap();
        assert_eq!(
            (edited.run_count, edited.last_run_at, edited.next_run_at),
            (1, Some(5_000), None)
        );
        assert!(due(9_999).is_empty());
        let again = s.write(|tx| tx.edit_agenda_item(a.id, &AgendaEdit::default()));
        assert!(matches!(again, Err(StoreError::Conflict(_))));
    }

    #[test]
    fn blockers_are_active_waking_loud_auto_done_items_only() {
        let (s, t) = store_with_thread();
        let watch = s
            .write(|tx| tx.create_agenda_item(&new_item(t, 5_000, true)))
            .unwrap();
        s.write(|tx| tx.create_agenda_item(&new_item(t, 5_000, false)))
            .unwrap();
        let silent = s
            .write(|tx| {
                tx.create_agenda_item(&NewAgendaItem {
                    silent: true,
                    ..new_item(t, 5_000, true)
                })
            })
            .unwrap();
        let blockers = s.read(|tx| tx.agenda_blockers(t)).unwrap();
        assert_eq!(
            blockers.iter().map(|i| i.id).collect::<Vec<_>>(),
            [watch.id]
        );
        assert_ne!(silent.id, watch.id);
        s.write(|tx| {
            tx.edit_agenda_item(
                watch.id,
                &AgendaEdit {
                    status: Some(AgendaStatus::Paused),
                    ..AgendaEdit::default()
                },
            )
        })
        .unwrap();
        assert!(s.read(|tx| tx.agenda_blockers(t)).unwrap().is_empty());
    }
}
