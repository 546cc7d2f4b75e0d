//! At every boot (item 10, HOLD-X3's repair pass): the process groups that turns a hold
//! stopped may have left (the daemon died inside the kill's grace) are ended, and what the
//! holds in force cover is made consistent again — a job a whole-job hold covers is parked, a
//! pending check-back a hold covers is set aside. Each repair is logged.

use super::facts::check_back_facts;
use crate::{Collab, CollabError};
use troupe_core::check_back::CheckBackState;
use troupe_core::hold::parking::park;
use troupe_core::plan::{PlanStatus, RevisionCause, SpecPatch};
use troupe_store::CheckBackFilter;

/// What the boot repair did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HoldRepair {
    pub ended_groups: Vec<i32>,
    pub plans_parked: usize,
    pub check_backs_set_aside: usize,
}

impl Collab {
    pub async fn repair_holds(&self) -> Result<HoldRepair, CollabError> {
        let mut report = HoldRepair::default();
        let pgids = self.store().read(|tx| {
            let mut pgids = Vec::new();
            for h in tx.holds_in_force()? {
                for t in &h.effect.stopped_turns {
                    for e in tx.effects_for_run(t.run_id)? {
                        // The stop's own write marked the calls it cut off unknown (so they
                        // are settled already); a call that finished ended its group itself.
                        if let Some(p) = e.pgid
                            && e.outcome == troupe_core::effect::EffectOutcome::Unknown
                            && !pgids.contains(&p)
                        {
                            pgids.push(p);
                        }
                    }
                }
            }
            Ok(pgids)
        })?;
        // Every group at once: each may take the whole grace (SIGTERM ignored).
        let ends = pgids
            .iter()
            .map(|p| self.engine().end_left_groups(std::slice::from_ref(p)));
        report.ended_groups = futures::future::join_all(ends)
            .await
            .into_iter()
            .flatten()
            .collect();
        let (parked, set_aside) = self.store().write(|tx| {
            let holds = tx.holds_in_force()?;
            let mut parked = 0;
            for h in &holds {
                let mut effect = h.effect.clone();
                let plans = match &h.scope {
                    troupe_core::hold::HoldScope::Plan { plan_id } => vec![tx.plan(*plan_id)?],
                    troupe_core::hold::HoldScope::Session { session_id } => tx
                        .plans_of_session(*session_id, true)?
                        .into_iter()
                        .filter(|p| p.home_session_id == Some(*session_id))
                        .collect(),
                    _ => Vec::new(),
                };
                for plan in plans {
                    if let Some(p) = park(&h.scope, plan.id, plan.home_session_id, plan.status) {
                        tx.patch_plan(
                            plan.id,
                            plan.version,
                            &SpecPatch {
                                status: Some(PlanStatus::Parked),
                                ..Default::default()
                            },
                            RevisionCause::Hold(h.id),
                        )?;
                        effect.plans_parked.push(p);
                        parked += 1;
                    }
                }
                if effect != h.effect {
                    tx.set_hold_effect(h.id, &effect)?;
                }
            }
            let mut set_aside = 0;
            if !holds.is_empty() {
                let pending = tx.check_backs(
                    &CheckBackFilter {
                        state: Some(CheckBackState::Pending),
                        ..Default::default()
                    },
                    10_000,
                )?;
                for cb in pending {
                    if check_back_facts(tx, &cb)?.is_some_and(|f| {
                        holds
                            .iter()
                            .any(|h| troupe_core::hold::cover::covers(h, &f))
                    }) && super::set_aside_if_held(tx, &cb)?
                    {
                        set_aside += 1;
                    }
                }
            }
            Ok((parked, set_aside))
        })?;
        report.plans_parked = parked;
        report.check_backs_set_aside = set_aside;
        if report != HoldRepair::default() {
            tracing::info!(?report, "boot repaired what the holds in force cover");
        }
        Ok(report)
    }
}
