//! A job's tickets as the dependency rules see them (T17, LJ5): what a ticket waits for now,
//! in the board's words (T19).

use troupe_core::ticket::{TicketNode, Wait, waits_for};
use troupe_core::{PlanId, TicketId};
use troupe_store::{StoreError, TicketRecord, Tx};

pub fn node(t: &TicketRecord) -> TicketNode {
    TicketNode {
        id: t.id,
        plan_id: t.plan_id,
        number: u32::try_from(t.number).unwrap_or(u32::MAX),
        stage: t.stage,
        handed_over_once: t.handed_over_once,
        depends_on: t.depends_on.clone(),
    }
}

pub fn nodes(tickets: &[TicketRecord]) -> Vec<TicketNode> {
    tickets.iter().map(node).collect()
}

/// What `ticket` waits for now: its dependencies not yet through, then the job's sample.
pub fn waits(tx: &Tx<'_>, plan: PlanId, ticket: TicketId) -> Result<Vec<Wait>, StoreError> {
    let tickets = tx.tickets_of_plan(plan)?;
    let sample = tx.plan_deliverables(plan)?.sample_ticket_id;
    Ok(waits_for(&nodes(&tickets), sample, ticket))
}

/// `waits_for_dependency: Waits for #01 to be handed over; …`, or none when it may start.
pub fn wait_refusal(waits: &[Wait]) -> Option<String> {
    if waits.is_empty() {
        return None;
    }
    let texts: Vec<String> = waits.iter().map(Wait::text).collect();
    Some(format!(
        "waits_for_dependency: {}. Nothing on this ticket starts until then.",
        texts.join("; ")
    ))
}
