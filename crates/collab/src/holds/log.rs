//! The work log of holds (`GET /v1/audit`): events of their own kinds, each naming the holds
//! it is about in `hold_ids`. `hold_upsert` also reaches each conversation a hold touches.

use troupe_core::hold::Hold;
use troupe_core::{HoldId, SessionId, ThreadId};
use troupe_store::{StoreError, Tx};

/// Kinds the work log lists.
pub const WORK_LOG_KINDS: &[&str] = troupe_store::KINDS_READ_BY_KIND;

pub(crate) fn ids(holds: &[HoldId]) -> String {
    holds
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn id_values(holds: &[HoldId]) -> serde_json::Value {
    serde_json::Value::from(holds.iter().map(|h| h.0).collect::<Vec<_>>())
}

/// A wake the holds refused, logged once per thread, cause and hold set (a routine due three
/// times under one hold is one record: HOLD-W6).
pub(crate) fn wake_suppressed(
    tx: &mut Tx<'_>,
    thread: ThreadId,
    cause: &str,
    holds: &[HoldId],
) -> Result<(), StoreError> {
    let ids = id_values(holds);
    if let Some(last) = tx.last_event_of("wake_suppressed", thread)?
        && last.payload["cause"] == cause
        && last.payload["hold_ids"] == ids
    {
        return Ok(());
    }
    tx.event(
        "wake_suppressed",
        Some(thread),
        None,
        serde_json::json!({"cause": cause, "hold_ids": ids}),
    )
}

/// `hold_upsert` on the global stream and in each conversation the hold touches. It carries
/// the hold without what it stopped (clients read that from `GET /v1/holds/:id`): with a
/// hundred turns stopped the whole record is tens of kilobytes, sent once per conversation.
pub(crate) fn upsert(
    tx: &mut Tx<'_>,
    hold: &Hold,
    sessions: &[SessionId],
) -> Result<(), StoreError> {
    let mut summary = serde_json::to_value(hold).unwrap_or_default();
    if let Some(obj) = summary.as_object_mut() {
        obj.remove("effect");
        obj.remove("targets");
    }
    let payload = serde_json::json!({"hold_ids": [hold.id.0], "hold": summary});
    tx.event("hold_upsert", None, None, payload.clone())?;
    for s in sessions {
        tx.session_event("hold_upsert", *s, None, payload.clone())?;
    }
    Ok(())
}

/// A work-log row about holds.
pub(crate) fn entry(
    tx: &mut Tx<'_>,
    kind: &str,
    holds: &[HoldId],
    mut detail: serde_json::Value,
) -> Result<(), StoreError> {
    if let Some(obj) = detail.as_object_mut() {
        obj.insert("hold_ids".into(), id_values(holds));
    }
    tx.event(kind, None, None, detail)
}

/// Whether a work-log event names `hold`.
pub fn names_hold(payload: &serde_json::Value, hold: HoldId) -> bool {
    payload["hold_ids"]
        .as_array()
        .is_some_and(|a| a.iter().any(|v| v.as_i64() == Some(hold.0)))
}
