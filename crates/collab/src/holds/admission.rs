//! Under a hold nothing it covers starts by itself (HOLD-L1, W1): a check-back coming due,
//! another Bot's line, a delegation's answer, a continuation, a boot resume or Continue. The
//! work stays queued in the inbox and runs when the person lifts the hold. Each suppressed
//! wake is put in the work log once per hold set and cause (HOLD-W4).

use super::facts::holds_over_thread;
use super::log;
use troupe_core::ThreadId;
use troupe_core::message::Origin;
use troupe_engine::extension::{Admission, AdmissionCheck, AdmissionContext};
use troupe_store::{StoreError, Tx};

/// A routine coming due under a hold counts as not run and runs once, for its latest due
/// time, after the lift (HOLD-W6). Called in the write that queues a routine's due delivery
/// on `thread`: while a hold covers the thread, that routine's earlier deliveries still
/// queued there (same `origin`) are dropped, so only the newest waits for the lift. Answers
/// how many were dropped; with no hold over the thread, nothing is.
pub fn routine_due_under_hold(
    tx: &mut Tx<'_>,
    thread: ThreadId,
    origin: &Origin,
) -> Result<usize, StoreError> {
    if holds_over_thread(tx, thread)?.is_empty() {
        return Ok(0);
    }
    let earlier: Vec<_> = tx
        .inbox(thread)?
        .into_iter()
        .filter(|i| &i.origin == origin && i.failed.is_none())
        .map(|i| i.id)
        .collect();
    tx.drop_inbox_items(thread, &earlier)
}

pub struct HoldAdmission;

impl AdmissionCheck for HoldAdmission {
    fn name(&self) -> &str {
        "hold"
    }

    fn check(&self, ctx: &AdmissionContext<'_>) -> Admission {
        if !crate::tools::in_conversation(ctx.thread) {
            return Admission::Admit;
        }
        let thread = ctx.thread.id;
        let holds = match ctx.store.read(|tx| holds_over_thread(tx, thread)) {
            Ok(h) => h,
            // A cover that cannot be read must not start held work; the wake stays queued.
            Err(e) => return Admission::Refuse(format!("holds could not be read: {e}")),
        };
        if holds.is_empty() {
            return Admission::Admit;
        }
        // The one wake a hold lets through: a read-only answer (HOLD-R1, SQ-3).
        if matches!(super::readonly::waiting(ctx.store, thread), Ok(true)) {
            return Admission::Admit;
        }
        if let Err(e) = ctx
            .store
            .write(|tx| log::wake_suppressed(tx, thread, ctx.reason, &holds))
        {
            tracing::warn!(thread = %thread, error = %e, "a suppressed wake could not be logged");
        }
        Admission::Refuse(format!("held by {}", log::ids(&holds)))
    }
}
