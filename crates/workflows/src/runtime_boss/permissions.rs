//! A person's decision on a `communication` permission request (issue 18 item 15): allowed,
//! the push it holds is recorded in the outbound ledger under a key of its own, so it is sent
//! exactly once however often the decision is repeated; denied, the session that asked is told
//! by a steer and woken. A request is decided once (409 `already_decided` after).

use super::push::{outbound, permission_key, push_of};
use crate::WorkflowError;
use troupe_collab::Collab;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::{SessionId, ThreadId};
use troupe_store::{PermissionDecision, PermissionRequest, PermissionStatus, StoreError, Tx};

pub const DENIED_ORIGIN: &str = "permission_denied";

/// Requests listed at most.
pub const LIST_LIMIT: u32 = 200;

/// A session's requests (all sessions' without one), newest first.
pub fn list(
    collab: &Collab,
    session: Option<SessionId>,
) -> Result<Vec<PermissionRequest>, WorkflowError> {
    Ok(collab
        .store()
        .read(|tx| tx.permission_requests(session, LIST_LIMIT))?)
}

/// The session's conversation thread (the one its Bot works in).
fn session_thread(tx: &Tx<'_>, session: SessionId) -> Result<Option<ThreadId>, StoreError> {
    let s = tx.session(session)?;
    match s.bot_ids.first() {
        Some(bot) => tx.session_thread(session, *bot, troupe_store::CONVERSATION),
        None => Ok(None),
    }
}

fn denied_text(r: &PermissionRequest) -> String {
    let p = push_of(&r.request);
    let to = p
        .as_ref()
        .map(|p| format!("chat {:?} on account {:?}", p.chat_id, p.account))
        .unwrap_or_else(|| "the chat".into());
    format!(
        "Permission {} denied: your channel_push to {to} was not sent. Do not push it again \
         unless the person asks for it.",
        r.id
    )
}

/// Decide request `id`.
pub async fn decide(
    collab: &Collab,
    id: i64,
    decision: PermissionDecision,
) -> Result<PermissionRequest, WorkflowError> {
    let (request, wake) = collab.store().write(|tx| {
        let Some(r) = tx.permission_request(id)? else {
            return Ok(Err(WorkflowError::NotFound {
                what: "permission request",
                id: id.to_string(),
            }));
        };
        if r.status != PermissionStatus::Pending {
            return Ok(Err(WorkflowError::conflict(
                "already_decided",
                format!(
                    "permission request {id} was {} already; a request is decided once",
                    r.status.as_str()
                ),
            )));
        }
        tx.decide_permission_request(id, decision)?;
        let mut wake = None;
        match decision {
            PermissionDecision::Allow => {
                let push = push_of(&r.request).ok_or_else(|| {
                    StoreError::Corrupt(format!("permission request {id} holds no push"))
                })?;
                tx.record_channel_outbound(&outbound(&push, permission_key(r.session_id, id)))?;
            }
            PermissionDecision::Deny => {
                if let Some(thread) = session_thread(tx, r.session_id)? {
                    let d = tx.deliver(
                        thread,
                        &Delivery::user_task(denied_text(&r))
                            .with_mode(InboxMode::Steer)
                            .with_priority(Priority::DELEGATION_RESULT)
                            .with_origin(Origin::System(DENIED_ORIGIN.into()))
                            .with_key(format!("permission:{id}:denied")),
                    )?;
                    if d.created {
                        wake = Some(thread);
                    }
                }
            }
        }
        let r = tx
            .permission_request(id)?
            .ok_or_else(|| StoreError::not_found("permission request", id))?;
        Ok(Ok((r, wake)))
    })??;
    if let Some(thread) = wake
        && let Err(e) = collab
            .engine()
            .request_drive(thread, "permission_denied", false)
            .await
    {
        // The steer is durable; the next wake takes it.
        tracing::warn!(thread = %thread, error = %e, "drive after a denied permission failed");
    }
    Ok(request)
}
