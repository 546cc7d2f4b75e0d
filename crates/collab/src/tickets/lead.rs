//! Who leads a job (B §0.1): the confirmed lead of its home group (GL-1). A job whose
//! conversation has no lead is led by the Bot whose work opened it — the Bot of the segment
//! that opened it (its first revision's turn), or, for a job the person opened, the Bot whose
//! work on it came first.

use troupe_core::plan::RevisionCause;
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, PlanId};
use troupe_store::{StoreError, Tx};

/// The job's lead, if it has anyone to lead it.
pub fn job_lead(tx: &Tx<'_>, plan: PlanId) -> Result<Option<BotId>, StoreError> {
    let record = tx.plan(plan)?;
    if let Some(home) = record.home_session_id
        && let Some(lead) = tx.lead(home)?
    {
        return Ok(Some(lead));
    }
    let opened_by = tx
        .plan_revisions(plan)?
        .into_iter()
        .find_map(|r| match r.cause {
            RevisionCause::Turn(run) => Some(run),
            _ => None,
        });
    if let Some(run) = opened_by
        && let Some(seg) = tx.segment(run)?
    {
        return Ok(Some(seg.bot_id));
    }
    Ok(tx
        .work_items_of_plan(plan)?
        .into_iter()
        .find(|w| w.mode == WorkMode::Work)
        .map(|w| w.bot_id))
}
