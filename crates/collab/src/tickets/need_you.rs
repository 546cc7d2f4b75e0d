//! "N need you" in a job's title row (ADR 0086): what in the job waits on the person — its
//! checks whose latest run failed, its progress blocked (checks whose latest run was blocked or
//! errored: no evidence either way, recorded under Progress · Blocked), and the requirements
//! waiting for their word (the ledger's entries that need a look).

use serde::Serialize;
use troupe_core::PlanId;
use troupe_core::ticket::TicketStage;
use troupe_store::{CheckRecord, RunOutcome, StoreError, TicketRecord, Tx, WordsStatus};

/// What a job's "N need you" adds up.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NeedYou {
    /// The sum of the three below.
    pub count: usize,
    /// Checks whose latest run failed.
    pub failed_checks: usize,
    /// Checks whose latest run was blocked or errored.
    pub blocked: usize,
    /// Requirements waiting for the person's word.
    pub requirements: usize,
    /// "2 need you"; none when nothing does.
    pub text: Option<String>,
}

impl NeedYou {
    pub fn new(failed_checks: usize, blocked: usize, requirements: usize) -> Self {
        let count = failed_checks + blocked + requirements;
        NeedYou {
            count,
            failed_checks,
            blocked,
            requirements,
            text: (count > 0).then(|| format!("{count} need you")),
        }
    }
}

/// The latest run that counts of a check that can hold the job: a check from words still only
/// an offer gates nothing, a run for reference (a judge of pictures) holds nothing back, and a
/// dropped or set-aside ticket's checks are nobody's business now.
fn latest(c: &CheckRecord, tickets: &[TicketRecord]) -> Option<RunOutcome> {
    if c.status == Some(WordsStatus::Offer) {
        return None;
    }
    let dropped = c.ticket_id.is_some_and(|id| {
        tickets
            .iter()
            .any(|t| t.id == id && t.stage == TicketStage::Dropped)
    });
    if dropped {
        return None;
    }
    c.runs.iter().find(|r| !r.for_reference).map(|r| r.outcome)
}

pub(crate) fn read(
    tx: &Tx<'_>,
    plan: PlanId,
    tickets: &[TicketRecord],
) -> Result<NeedYou, StoreError> {
    let (mut failed, mut blocked) = (0, 0);
    for c in tx.checks_of_plan(plan, false)? {
        match latest(&c, tickets) {
            Some(RunOutcome::Failed) => failed += 1,
            Some(RunOutcome::Blocked | RunOutcome::Error) => blocked += 1,
            _ => {}
        }
    }
    let requirements = crate::ledger::plan_requirements(tx, plan)?.needs_a_look;
    Ok(NeedYou::new(failed, blocked, requirements))
}
