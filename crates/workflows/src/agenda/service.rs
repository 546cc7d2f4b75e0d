//! Creating, changing and delivering Agenda items, shared by the HTTP API and the model-facing
//! tools. Each change re-reads the item in its transaction; a change that releases the last
//! one-shot watch of a thread says so, and the caller requests that thread's drive.

use crate::agenda::trigger::{self, Trigger};
use crate::agenda::{cancel_commands, is_blocker, wake};
use crate::{WorkflowError, Workflows};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::{SessionId, ThreadId};
use troupe_store::{
    AgendaEdit, AgendaId, AgendaItem, AgendaStatus, NewAgendaItem, Store, StoreError, Tx,
};

pub const MAX_TITLE_CHARS: usize = 200;
pub const MAX_PAYLOAD_BYTES: usize = 16 * 1024;
/// Items delivered by one tick at most; the rest are due at the next.
pub const TICK_BATCH: u32 = 200;

/// `POST /v1/agenda`, and the fields of `agenda_create`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewAgendaRequest {
    /// The session whose thread receives the deliveries (the API requires it; a tool uses the
    /// caller's own thread).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    #[serde(default)]
    pub session_id: Option<SessionId>,
    #[serde(default)]
    pub title: Option<String>,
    /// `{"kind":"at","at":<ms>}`, `{"kind":"delay","seconds":N}`,
    /// `{"kind":"every","seconds":N,"start_at"?:<ms>}` or
    /// `{"kind":"cron","expr":"0 9 * * MON-FRI","tz":"Europe/Paris"}` (five-field cron read in
    /// an IANA time zone; due at the first match strictly after now).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub trigger: Value,
    /// The text delivered when it is due.
    pub payload: String,
    /// A one-shot watch: done once delivered; until then it holds back continuation.
    #[serde(default)]
    pub auto_done: bool,
    /// Whether a delivery wakes the thread (default true).
    #[serde(default)]
    pub wake: Option<bool>,
    /// A silent delivery is hidden from the transcript (default false).
    #[serde(default)]
    pub silent: Option<bool>,
}

/// `PATCH /v1/agenda/:id`, and the fields of `agenda_update`. Absent fields stay.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgendaPatchRequest {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub payload: Option<String>,
    /// A new trigger; its first deadline counts from now.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(default)]
    pub trigger: Option<Value>,
    /// `active` or `paused`.
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub wake: Option<bool>,
    #[serde(default)]
    pub silent: Option<bool>,
}

/// An item after a change, and the thread whose last blocking watch the change released.
#[derive(Clone, Debug)]
pub struct AgendaChange {
    pub item: AgendaItem,
    pub released: Option<ThreadId>,
}

/// What one tick did.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TickReport {
    /// Items whose due delivery was written by this tick.
    pub delivered: Vec<AgendaId>,
    /// Items that became done.
    pub completed: Vec<AgendaId>,
}

fn check_title(title: Option<&str>) -> Result<Option<String>, WorkflowError> {
    let Some(t) = title else { return Ok(None) };
    let t = t.trim();
    if t.chars().count() > MAX_TITLE_CHARS {
        return Err(WorkflowError::invalid(format!(
            "title: at most {MAX_TITLE_CHARS} characters"
        )));
    }
    Ok(Some(t.to_string()))
}

fn check_payload(p: &str) -> Result<(), WorkflowError> {
    if p.trim().is_empty() {
        return Err(WorkflowError::invalid("payload: required and non-empty"));
    }
    if p.len() > MAX_PAYLOAD_BYTES {
        return Err(WorkflowError::invalid(format!(
            "payload: at most {MAX_PAYLOAD_BYTES} bytes"
        )));
    }
    Ok(())
}

fn parse_trigger(v: &Value) -> Result<Trigger, WorkflowError> {
    Trigger::parse(v).map_err(WorkflowError::Invalid)
}

/// Create an item delivering into `thread`.
pub fn create(
    store: &Store,
    thread: ThreadId,
    req: &NewAgendaRequest,
) -> Result<AgendaItem, WorkflowError> {
    let trigger = parse_trigger(&req.trigger)?;
    check_payload(&req.payload)?;
    let title = check_title(req.title.as_deref())?.unwrap_or_default();
    Ok(store.write(|tx| {
        let session = match req.session_id {
            Some(s) => Some(s),
            None => tx.session_of_thread(thread)?,
        };
        tx.create_agenda_item(&NewAgendaItem {
            thread_id: thread,
            session_id: session,
            title: title.clone(),
            trigger_kind: trigger.kind().into(),
            trigger: trigger.to_value(),
            next_run_at: trigger.first_due(tx.now()),
            auto_done: req.auto_done,
            wake: req.wake.unwrap_or(true),
            silent: req.silent.unwrap_or(false),
            payload: req.payload.clone(),
        })
    })?)
}

/// The item, if `owner` (when given) is its origin thread; another thread's item is not found.
fn owned(tx: &Tx<'_>, id: AgendaId, owner: Option<ThreadId>) -> Result<AgendaItem, StoreError> {
    let item = tx.claim_agenda_item(id)?;
    if owner.is_some_and(|o| o != item.thread_id) {
        return Err(StoreError::not_found("agenda item", id));
    }
    Ok(item)
}

/// Apply an edit and report a release (the item blocked before, not after, and the thread has
/// no blocker left).
fn edit_releasing(
    tx: &mut Tx<'_>,
    before: &AgendaItem,
    edit: &AgendaEdit,
) -> Result<AgendaChange, StoreError> {
    let item = tx.edit_agenda_item(before.id, edit)?;
    let released = (is_blocker(before)
        && !is_blocker(&item)
        && tx.agenda_blockers(item.thread_id)?.is_empty())
    .then_some(item.thread_id);
    Ok(AgendaChange { item, released })
}

/// Change an item of `owner` (any item when `owner` is none).
pub fn update(
    store: &Store,
    owner: Option<ThreadId>,
    id: AgendaId,
    req: &AgendaPatchRequest,
) -> Result<AgendaChange, WorkflowError> {
    let AgendaPatchRequest {
        title,
        payload,
        trigger,
        status,
        wake,
        silent,
    } = req;
    if title.is_none()
        && payload.is_none()
        && trigger.is_none()
        && status.is_none()
        && wake.is_none()
        && silent.is_none()
    {
        return Err(WorkflowError::invalid(
            "nothing to change: give title, payload, trigger, status, wake or silent",
        ));
    }
    let status = match status.as_deref().map(str::trim) {
        None => None,
        Some("active") => Some(AgendaStatus::Active),
        Some("paused") => Some(AgendaStatus::Paused),
        Some(other) => {
            return Err(WorkflowError::invalid(format!(
                "status: '{other}' cannot be set (expected active or paused; use agenda_cancel to cancel)"
            )));
        }
    };
    let trigger = trigger.as_ref().map(parse_trigger).transpose()?;
    if let Some(p) = payload {
        check_payload(p)?;
    }
    let title = check_title(title.as_deref())?;
    Ok(store.write(|tx| {
        let before = owned(tx, id, owner)?;
        let edit = AgendaEdit {
            title: title.clone(),
            payload: payload.clone(),
            status,
            wake: *wake,
            silent: *silent,
            trigger: trigger
                .as_ref()
                .map(|t| (t.kind().into(), t.to_value(), t.first_due(tx.now()))),
            ..AgendaEdit::default()
        };
        edit_releasing(tx, &before, &edit)
    })?)
}

/// Cancel an item of `owner`. Cancelling a cancelled item changes nothing; a done one is a
/// conflict.
pub fn cancel(
    store: &Store,
    owner: Option<ThreadId>,
    id: AgendaId,
) -> Result<AgendaChange, WorkflowError> {
    Ok(store.write(|tx| {
        let before = owned(tx, id, owner)?;
        if before.status == AgendaStatus::Cancelled {
            return Ok(AgendaChange {
                item: before,
                released: None,
            });
        }
        edit_releasing(
            tx,
            &before,
            &AgendaEdit {
                status: Some(AgendaStatus::Cancelled),
                next_run_at: Some(None),
                ..AgendaEdit::default()
            },
        )
    })?)
}

/// Items, oldest first.
pub fn list(
    store: &Store,
    thread: Option<ThreadId>,
    status: Option<AgendaStatus>,
    limit: u32,
) -> Result<Vec<AgendaItem>, WorkflowError> {
    Ok(store.read(|tx| tx.agenda_items(thread, status, limit))?)
}

/// The cancel commands of a thread's blocking watches (empty when none).
pub fn blocker_commands(tx: &Tx<'_>, thread: ThreadId) -> Result<Vec<String>, StoreError> {
    Ok(cancel_commands(&tx.agenda_blockers(thread)?))
}

pub fn parse_status(raw: Option<&str>) -> Result<Option<AgendaStatus>, WorkflowError> {
    raw.map(|s| {
        s.trim()
            .parse::<AgendaStatus>()
            .map_err(|e| WorkflowError::invalid(format!("status: {e}")))
    })
    .transpose()
}

/// The delivery key of an item's due time: a repeat tick finds it and writes nothing.
pub fn delivery_key(id: AgendaId, due: i64) -> String {
    format!("agenda:{}:{due}", id.0)
}

fn delivery(item: &AgendaItem, due: i64) -> Delivery {
    let label = if item.title.is_empty() {
        item.id.to_string()
    } else {
        format!("{}: {}", item.id, item.title)
    };
    let watch = if item.auto_done {
        " This one-shot watch is now done."
    } else {
        ""
    };
    Delivery {
        mode: if item.wake {
            InboxMode::Task
        } else {
            InboxMode::Context
        },
        priority: Priority::OWN_TIMER,
        origin: Origin::Timer(format!("agenda:{}", item.id)),
        text: format!("[Agenda {label}]{watch}\n{}", item.payload),
        visible: !item.silent,
        delivery_key: Some(delivery_key(item.id, due)),
        order_key: Some(due),
        defers_calls: false,
    }
}

/// Deliver one due item (if it is still due at `now`) and advance or complete it, in one
/// transaction. Returns the thread to drive, if any.
fn deliver_due(
    tx: &mut Tx<'_>,
    id: AgendaId,
    now: i64,
    report: &mut TickReport,
) -> Result<Option<ThreadId>, StoreError> {
    // Claimed: another node ticking at the same moment finds it already advanced.
    let item = tx.claim_agenda_item(id)?;
    let Some(due) = item.next_run_at else {
        return Ok(None);
    };
    if item.status != AgendaStatus::Active || due > now {
        return Ok(None);
    }
    let parsed = Trigger::parse(&item.trigger);
    if let Err(e) = &parsed {
        tracing::warn!(agenda = %item.id, error = %e, "unreadable agenda trigger; it fires once");
    }
    let fire = trigger::fire(parsed.as_ref().ok(), item.auto_done, due, now);
    // The item is advanced first so the wake guidance lists only the waits that remain; both
    // writes commit together.
    let change = edit_releasing(
        tx,
        &item,
        &AgendaEdit {
            next_run_at: Some(fire.next),
            status: fire.done.then_some(AgendaStatus::Done),
            ran_at: Some(now),
            ..AgendaEdit::default()
        },
    )?;
    let mut d = delivery(&item, due);
    if item.wake
        && let Some(block) = wake::guidance(tx, item.thread_id)?
    {
        d.text = format!("{}\n\n{block}", d.text);
    }
    if item.wake {
        // Under a hold the newest due time replaces the ones still queued (HOLD-W6).
        troupe_collab::holds::routine_due_under_hold(tx, item.thread_id, &d.origin)?;
    }
    let delivered = tx.deliver(item.thread_id, &d)?;
    if delivered.created {
        report.delivered.push(id);
    }
    if fire.done {
        report.completed.push(id);
    }
    let drive = (delivered.created && item.wake) || change.released.is_some();
    Ok(drive.then_some(item.thread_id))
}

impl Workflows {
    /// Deliver every item due at `now` into its origin thread's inbox, advance or complete it
    /// in the same transaction, then request the drive of each thread that got a waking
    /// delivery or lost its last blocking watch (once per thread). A repeat tick for the same
    /// due time writes nothing: the deadline has moved and the delivery key is receipted.
    pub async fn agenda_tick(&self, now: i64) -> Result<TickReport, WorkflowError> {
        let due = self
            .store()
            .read(|tx| tx.due_agenda_items(now, TICK_BATCH))?;
        let mut report = TickReport::default();
        let mut drives: Vec<ThreadId> = Vec::new();
        for item in due {
            let res = self
                .store()
                .write(|tx| deliver_due(tx, item.id, now, &mut report));
            match res {
                Ok(Some(thread)) if !drives.contains(&thread) => drives.push(thread),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(agenda = %item.id, error = %e, "agenda delivery failed; retried next tick")
                }
            }
        }
        for thread in drives {
            if let Err(e) = self.engine().request_drive(thread, "agenda", false).await {
                tracing::warn!(thread = %thread, error = %e, "agenda drive failed");
            }
        }
        Ok(report)
    }

    pub fn agenda_items(
        &self,
        session: Option<SessionId>,
        status: Option<AgendaStatus>,
        limit: u32,
    ) -> Result<Vec<AgendaItem>, WorkflowError> {
        let thread = session
            .map(|s| self.collab().direct_thread(s))
            .transpose()?;
        list(self.store(), thread, status, limit)
    }

    pub fn agenda_item(&self, id: AgendaId) -> Result<AgendaItem, WorkflowError> {
        Ok(self.store().read(|tx| tx.agenda_item(id))?)
    }

    /// Create an item on a session's direct thread.
    pub fn create_agenda_item(&self, req: NewAgendaRequest) -> Result<AgendaItem, WorkflowError> {
        let session = req
            .session_id
            .ok_or_else(|| WorkflowError::invalid("session_id: required"))?;
        let thread = match self.collab().direct_thread(session) {
            Ok(t) => t,
            Err(e) => {
                return Err(match WorkflowError::from(e) {
                    WorkflowError::NotFound { what, id } => {
                        WorkflowError::invalid(format!("session_id: {what} {id} not found"))
                    }
                    other => other,
                });
            }
        };
        create(self.store(), thread, &req)
    }

    pub async fn update_agenda_item(
        &self,
        id: AgendaId,
        req: AgendaPatchRequest,
    ) -> Result<AgendaItem, WorkflowError> {
        let change = update(self.store(), None, id, &req)?;
        self.resume_if_released(&change).await;
        Ok(change.item)
    }

    pub async fn cancel_agenda_item(&self, id: AgendaId) -> Result<AgendaItem, WorkflowError> {
        let change = cancel(self.store(), None, id)?;
        self.resume_if_released(&change).await;
        Ok(change.item)
    }

    async fn resume_if_released(&self, change: &AgendaChange) {
        if let Some(thread) = change.released
            && let Err(e) = self
                .engine()
                .request_drive(thread, "agenda-wait-released", false)
                .await
        {
            tracing::warn!(thread = %thread, error = %e, "agenda release drive failed");
        }
    }
}
