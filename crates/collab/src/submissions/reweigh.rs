//! An input of the approval changed after a hand-over was checked — a check from the user's
//! words confirmed (CW-16: it is a gate from now on) — so the job's undecided hand-overs are
//! weighed again at once rather than at some later tick (B §4.2: "on every input change").

use super::{Hooks, SubmissionPass};
use crate::Collab;
use std::sync::Arc;
use troupe_core::PlanId;
use troupe_core::ticket::AppPass;

impl Collab {
    /// Run the approval pass over the job's undecided hand-overs, with the daemon's checks.
    /// A failure is logged, not returned: the change that asked for it has already landed and
    /// the supervisor's tick weighs the hand-overs again.
    pub async fn reweigh_job(&self, plan: PlanId) {
        let hooks = Hooks {
            checks: Arc::new(self.checks()),
            ..Hooks::default()
        };
        match SubmissionPass::new(hooks)
            .run_plan(self.store(), plan, AppPass::Checks)
            .await
        {
            Ok(moved) if !moved.is_empty() => {
                tracing::info!(%plan, moved = moved.len(), "hand-overs weighed again")
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(%plan, error = %e, "weighing the job's hand-overs again failed")
            }
        }
    }
}
