//! Light Loop recovery at start, after the kernel's own recovery and after `reconcile_tasks`
//! marked the reviewer tasks of the stopped process `interrupted`. Loop state is read only from
//! stored records. Every surviving claim (stop intent) is re-driven through the gated drive;
//! a bound reviewer that was cut off (its task interrupted) is unbound first — keeping the
//! claim and the recovery count — so the drive binds it again under the same task key, which
//! resumes the same child thread where it was cut off. A reviewer whose task ended while still
//! bound (one from before reviewers were tasks) is settled as an ending without a verdict.

use crate::cortex;
use crate::lightloop::commit;
use crate::lightloop::machine::{self, Ack, LoopEvent};
use crate::reviewer_task::{self, AtStartup};
use crate::slot::WorkflowSlot;
use crate::{WorkflowError, Workflows};
use serde::Serialize;
use troupe_core::ThreadId;
use troupe_store::StoreError;

/// What recovery found and did.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct LightLoopRecovery {
    /// Executors with a surviving claim, re-driven.
    pub claims: Vec<ThreadId>,
    /// Reviewers found cut off and unbound for replacement (budget untouched).
    pub replaced_reviewers: Vec<ThreadId>,
}

impl Workflows {
    pub async fn recover_light_loops(&self) -> Result<LightLoopRecovery, WorkflowError> {
        let engine = self.engine().clone();
        let mut report = LightLoopRecovery::default();
        let candidates: Vec<(ThreadId, Option<ThreadId>)> = self.store().read(|tx| {
            Ok(tx
                .threads(u32::MAX)?
                .into_iter()
                .filter(|t| t.archived_at.is_none())
                .filter_map(|t| match WorkflowSlot::of(t.workflow.as_ref()) {
                    Some(WorkflowSlot::LightLoop(ll)) => {
                        ll.stop_request.map(|s| (t.id, s.reviewer_thread_id))
                    }
                    _ => None,
                })
                .collect())
        })?;
        for (executor, reviewer) in candidates {
            if let Some(r) = reviewer
                && !engine.is_running(r)
            {
                let replaced = self.store().write(|tx| {
                    match reviewer_task::at_startup(tx, r)? {
                        AtStartup::CutOff => {}
                        AtStartup::Ended(task) => {
                            reviewer_task::settle_ended(tx, &task)?;
                            return Ok(false);
                        }
                        AtStartup::Nothing => return Ok(false),
                    }
                    let Some(ll) = commit::light_loop(tx, executor)? else {
                        return Ok(false);
                    };
                    let step =
                        machine::step(Some(&ll), LoopEvent::ReviewerInterrupted { reviewer: r })
                            .map_err(|e| StoreError::Invalid(e.to_string()))?;
                    if step.ack != Ack::Recorded {
                        return Ok(false);
                    }
                    commit::commit(tx, executor, &ll, &step)?;
                    Ok(true)
                })?;
                if replaced {
                    report.replaced_reviewers.push(r);
                }
            }
            // The gate decides: a latched executor waits for Continue. An unbound claim is
            // bound again under the same task key, which resumes the interrupted reviewer.
            engine
                .request_drive(executor, "stop-review-recovery", false)
                .await?;
            report.claims.push(executor);
        }
        // A recovery turn queued above.
        cortex::start_admitted(&engine);
        Ok(report)
    }
}
