//! RL-17, RL-18: every segment working in a job reads the ledger's entries in force for it
//! (minus those set aside there), and apart from them those waiting for the user and the old
//! rules, so a pending wish is never taken for a requirement. Read-only: Bots never write it.

use troupe_core::PlanId;
use troupe_core::requirement::situation::{Line, render};
use troupe_core::requirement::{Scope, State};
use troupe_core::thread::Thread;
use troupe_core::work_item::WorkMode;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{Store, StoreError, Tx};

pub struct RequirementsSituation;

/// The job's requirements as a segment on `ticket` reads them, with entries written up to
/// `until` (a hold's making) when given; none when the ledger is empty.
pub fn requirements_block(
    tx: &Tx<'_>,
    plan: PlanId,
    ticket: Option<i64>,
    until: Option<i64>,
) -> Result<Option<String>, StoreError> {
    let excluded = tx.requirements_excluded_in(plan)?;
    let tickets = tx.tickets_of_plan(plan)?;
    let mut lines = Vec::new();
    for r in tx.requirements_of_plan(plan)? {
        let shown = matches!(
            r.state,
            State::InForce | State::ToConfirm | State::OldRuleUnverified
        );
        let later = until.is_some_and(|u| r.created_at > u);
        if !shown || later || excluded.contains(&r.id) || r.quote.is_empty() {
            continue;
        }
        let inherited_from = if r.plan_id != plan {
            Some(tx.plan(r.plan_id)?.name)
        } else {
            None
        };
        let t = r
            .ticket_id
            .and_then(|id| tickets.iter().find(|t| t.id == id));
        lines.push(Line {
            id: r.id.0,
            quote: r.quote,
            restatement: r.restatement,
            state: r.state,
            scope: r.scope,
            ticket: t.map(|t| format!("ticket {:02} {}", t.number, t.title)),
            this_ticket: r.scope == Scope::Ticket && r.ticket_id.map(|t| t.0) == ticket,
            inherited_from,
            said_count: u32::try_from(r.said_count).unwrap_or(u32::MAX),
            job_count: u32::try_from(r.job_count).unwrap_or(u32::MAX),
            check: r.number.map(|n| n.asked()),
            said_at: r.said_at,
        });
    }
    let text = render(&lines);
    Ok((!text.is_empty()).then_some(text))
}

fn situation(thread: &Thread, store: &Store) -> Result<Option<String>, StoreError> {
    if !crate::tools::in_conversation(thread) {
        return Ok(None);
    }
    let Some(run) = thread.lease.holder else {
        return Ok(None);
    };
    store.read(|tx| {
        let Some(seg) = tx.segment_work(run)? else {
            return Ok(None);
        };
        if seg.mode != WorkMode::Work {
            return Ok(None);
        }
        let item = tx.work_item(seg.work_item_id)?;
        let Some(plan) = item.plan_id else {
            return Ok(None);
        };
        // Under a hold: as they stood when the first hold still in force was made.
        let mut until = None;
        for h in crate::holds::holds_over(tx, thread.id)? {
            let at = tx.hold(h)?.created_at;
            until = Some(until.map_or(at, |u: i64| u.min(at)));
        }
        requirements_block(tx, plan, item.ticket_id, until)
    })
}

impl ContextContributor for RequirementsSituation {
    fn name(&self) -> &str {
        "requirements"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match situation(thread, store) {
            Ok(Some(text)) => out.situation.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "the job's requirements could not be read")
            }
        }
    }
}
