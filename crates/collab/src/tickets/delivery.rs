//! T9/T10 at the edge: after any move of a ticket's stage, the job is delivered when every
//! ticket not dropped is approved and its job-wide gates passed on their last run, and a
//! delivered job is active again when one of its tickets leaves approved. Whoever moves a
//! stage (submissions, reviews, the board, the lead's drop, work starting) calls
//! [`after_stage_change`] in the same transaction.

use troupe_core::TicketId;
use troupe_core::delivery::{DeliveryChange, delivery_after};
use troupe_core::submission::CheckSource;
use troupe_core::ticket::TicketStage;
use troupe_core::ticket::dependency::released;
use troupe_store::{CheckRecord, RunOutcome, StoreError, Tx};

/// A job-wide gate: a check bound to no ticket that the user (or an organizer) set, or one
/// from the user's words that was confirmed. Offers, sample standard checks and removed
/// checks hold nothing here.
pub fn is_job_wide_gate(c: &CheckRecord) -> bool {
    c.ticket_id.is_none()
        && c.removed_at.is_none()
        && match c.source {
            CheckSource::User | CheckSource::Organizer => true,
            CheckSource::Words => c.confirmed,
            CheckSource::Sample => false,
        }
}

/// Whether every job-wide gate of the job passed on its last run (one never run has not).
/// A job with no such gate passes; a run judged on pictures is for reference and holds
/// nothing back.
pub fn job_wide_gates_passed(tx: &Tx<'_>, plan: troupe_core::PlanId) -> Result<bool, StoreError> {
    Ok(tx
        .checks_of_plan(plan, false)?
        .iter()
        .filter(|c| is_job_wide_gate(c))
        .all(|c| {
            c.runs
                .first()
                .is_some_and(|r| r.outcome == RunOutcome::Passed || r.for_reference)
        }))
}

/// Call after `ticket`'s stage moved (in the same transaction): delivers its job (T9,
/// `plan_delivered`) or makes a delivered one active again (T10, `plan_reopened`). Answers
/// what changed.
pub fn after_stage_change(
    tx: &mut Tx<'_>,
    ticket: TicketId,
) -> Result<Option<DeliveryChange>, StoreError> {
    let moved = tx.ticket(ticket)?;
    crate::ceiling::after_stage_change(tx, &moved)?;
    let plan = moved.plan_id;
    // SC1: the sample approved holds the tickets waiting for it to its standard.
    crate::checks::sample::attach(tx, plan)?;
    let tickets = tx.tickets_of_plan(plan)?;
    let deliverables = tx.plan_deliverables(plan)?;
    // T18: a hand-over (or a drop) that releases a ticket nobody started has its owner called
    // at the next tick.
    if matches!(
        moved.stage,
        TicketStage::Submitted
            | TicketStage::InReview
            | TicketStage::Approved
            | TicketStage::Rework
            | TicketStage::Dropped
    ) {
        let graph = crate::tickets::graph::nodes(&tickets);
        if tickets
            .iter()
            .any(|t| released(&graph, deliverables.sample_ticket_id, t.id))
        {
            tx.mark_plan_released(plan)?;
        }
    }
    let stages: Vec<_> = tickets.iter().map(|t| t.stage).collect();
    let delivered = deliverables.delivered;
    // The gates are read only when they could decide anything.
    let gates_passed = !delivered && job_wide_gates_passed(tx, plan)?;
    let change = delivery_after(delivered, &stages, gates_passed, moved.stage);
    match change {
        Some(DeliveryChange::Deliver) => tx.set_plan_delivered(plan, true)?,
        Some(DeliveryChange::Reopen) => tx.set_plan_delivered(plan, false)?,
        None => false,
    };
    Ok(change)
}
