//! SV-20: hand-overs nobody has moved for 15 s — still being checked, or handed over with no
//! reviewer — are settled by the approval pass on the tick (route to a reviewer, send back,
//! approve by `no_reviewer`/`routine`/`one_go`, or wait on the user's word, recorded once).
//! Outside stops and dormant jobs: those wait until they lift or wake.

use crate::submissions::{Hooks, SubmissionPass};
use crate::{Collab, CollabError};
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::plan::PlanStatus;
use troupe_core::supervisor::SUBMISSION_WAIT_MS;
use troupe_core::ticket::AppPass;

/// Hand-overs one tick settles.
const BATCH: u32 = 50;

impl Collab {
    /// The tick's hand-over pass; answers what moved, by submission.
    pub async fn supervise_submissions(&self) -> Result<Vec<Value>, CollabError> {
        let due = self.store().read(|tx| {
            let now = tx.now();
            let mut out = Vec::new();
            for id in tx.submissions_waiting(now - SUBMISSION_WAIT_MS, BATCH)? {
                let s = tx.submission(id)?;
                let plan = tx.plan(s.plan_id)?;
                if plan.status != PlanStatus::Active || plan.is_dormant() {
                    continue;
                }
                let held = match s.work_item_id {
                    Some(w) => {
                        let thread = tx.work_item(w)?.thread_id;
                        !crate::holds::holds_over(tx, thread)?.is_empty()
                    }
                    None => false,
                };
                if !held {
                    out.push(id);
                }
            }
            Ok(out)
        })?;
        if due.is_empty() {
            return Ok(Vec::new());
        }
        let pass = SubmissionPass::new(Hooks {
            checks: Arc::new(self.checks()),
            ..Hooks::default()
        });
        let mut moved = Vec::with_capacity(due.len());
        for id in due {
            let m = pass
                .run(self.store(), id, AppPass::Tick)
                .await
                .map_err(|e| CollabError::invalid(format!("submission {id}: {e}")))?;
            moved.push(json!({"submission_id": id, "moved": format!("{m:?}")}));
        }
        Ok(moved)
    }
}
