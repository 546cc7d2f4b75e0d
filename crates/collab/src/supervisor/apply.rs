//! Writing what the supervisor decided: a Bot-only line on a work item's thread, the app's
//! line to the user (SV-18), and the work-log row for each action.

use serde_json::{Value, json};
use troupe_core::conversation::{Author, LineKind};
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::notification::NotificationKind;
use troupe_core::work_item::{PRIORITY_DELEGATION_REQUEST, WorkState};
use troupe_core::{SessionId, TicketId};
use troupe_store::{NewLine, NewNotification, StoreError, Tx, WorkItemRecord, WorkRef};

/// Deliver a Bot-only line to the work item's thread under `key` (a repeat delivers nothing),
/// queue the work, and have the engine drive it after the commit. A thread a cut-off run left
/// paused is released: the supervisor's wake is the Continue the rules allow (SV-7).
pub(super) fn wake(
    tx: &mut Tx<'_>,
    item: &WorkItemRecord,
    speaks_in: SessionId,
    text: String,
    key: String,
) -> Result<(), StoreError> {
    let running = tx.thread(item.thread_id)?.lease.holder.is_some();
    let d = Delivery {
        origin: Origin::Timer(key.clone()),
        visible: false,
        ..Delivery::user_task(text)
            .with_mode(if running {
                InboxMode::Steer
            } else {
                InboxMode::Task
            })
            .with_priority(Priority::SUPERVISOR)
            .with_key(key)
    };
    tx.deliver(item.thread_id, &d)?;
    tx.clear_pause(item.thread_id)?;
    if !running {
        tx.set_work_state(item.id, WorkState::Queued, item.waiting_on.as_ref())?;
    }
    tx.set_work_mail(item.id, speaks_in, PRIORITY_DELEGATION_REQUEST)?;
    tx.wake_after_commit(item.thread_id);
    Ok(())
}

/// A Bot-only note on the thread that wakes nobody (SV-4's "the wait no longer stands").
pub(super) fn note(
    tx: &mut Tx<'_>,
    item: &WorkItemRecord,
    text: String,
    key: String,
) -> Result<(), StoreError> {
    let d = Delivery {
        origin: Origin::Timer(key.clone()),
        visible: false,
        ..Delivery::user_task(text)
            .with_mode(InboxMode::Context)
            .with_key(key)
    };
    tx.deliver(item.thread_id, &d)?;
    Ok(())
}

/// SV-18: the app's line in the user's conversation, in no Bot's context (a system line is
/// routed to nobody), with the control `{kind: "supervisor", code, …, offer: []}`.
pub(super) fn tell_user(
    tx: &mut Tx<'_>,
    session: SessionId,
    item: &WorkItemRecord,
    code: &str,
    text: String,
) -> Result<(), StoreError> {
    let mut line = NewLine::plain(session, Author::System, text.clone());
    line.kind = LineKind::System;
    line.bot_id = Some(item.bot_id);
    let line = tx.insert_line(&line)?;
    // SV-18: the person is also told outside the conversation ("stopped").
    let bot = tx.bot(item.bot_id)?.name;
    let job = match item.plan_id {
        Some(p) => Some(tx.plan(p)?.name),
        None => None,
    };
    tx.notify(&NewNotification {
        kind: NotificationKind::Stopped,
        title: &NotificationKind::Stopped.title(&bot, job.as_deref()),
        body: &text,
        session_id: Some(session),
        plan_id: item.plan_id,
        ticket_id: item.ticket_id,
        work_item_id: Some(item.id),
        message_id: Some(line.id),
    })?;
    tx.set_line_control(
        line.id,
        &json!({
            "kind": "supervisor",
            "code": code,
            "task_id": item.plan_id,
            "ticket_id": item.ticket_id,
            "work_item_id": item.id,
            "offer": [],
        }),
    )?;
    Ok(())
}

/// Whether [`log`] recorded `kind` for this work at or after `since`: in its job's work log, or
/// for a desk, which has no job, as the event `log` wrote on its thread.
pub(super) fn logged_since(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
    kind: &str,
    since: i64,
) -> Result<bool, StoreError> {
    if item.plan_id.is_some() {
        return Ok(!tx.work_log_of_item(item.id, kind, since)?.is_empty());
    }
    Ok(tx
        .last_event_of(kind, item.thread_id)?
        .is_some_and(|e| e.at >= since && e.payload["work_item_id"] == json!(item.id)))
}

/// The work-log row (a job's work) or, for a desk, the event alone.
pub(super) fn log(
    tx: &mut Tx<'_>,
    item: &WorkItemRecord,
    kind: &str,
    payload: Value,
) -> Result<(), StoreError> {
    match item.plan_id {
        Some(plan) => {
            tx.log_work(
                WorkRef {
                    plan,
                    ticket: item.ticket_id.map(TicketId),
                    work_item: Some(item.id),
                },
                kind,
                payload,
            )?;
        }
        None => {
            let mut payload = payload;
            if let Value::Object(m) = &mut payload {
                m.insert("work_item_id".into(), json!(item.id));
            }
            tx.event(kind, Some(item.thread_id), None, payload)?;
        }
    }
    Ok(())
}

/// Where the user hears about a work item: the conversation it speaks in, else its job's home.
pub(super) fn user_place(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
) -> Result<Option<SessionId>, StoreError> {
    if let Some(s) = item.speaks_in.or(item.session_id) {
        return Ok(Some(s));
    }
    Ok(match item.plan_id {
        Some(p) => tx.plan(p)?.home_session_id,
        None => None,
    })
}
