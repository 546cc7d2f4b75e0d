//! Light Loop recovery at start, after the kernel's own recovery. Loop state is read only from
//! stored records. Every surviving claim (stop intent) is re-driven through the gated drive;
//! a bound reviewer that was cut off (its last run interrupted, or it never ran) is unbound
//! first — keeping the claim and the recovery count — so the drive rebinds it (the same
//! reviewer thread is reused for the same claim) and resumes the review. A reviewer that
//! ended without a verdict keeps its binding and is driven into the bounded recovery path.

use crate::lightloop::commit;
use crate::lightloop::machine::{self, Ack, LoopEvent};
use crate::slot::WorkflowSlot;
use crate::{WorkflowError, Workflows};
use serde::Serialize;
use troupe_core::ThreadId;
use troupe_core::run::EndReason;
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
            let mut drive_reviewer = None;
            if let Some(r) = reviewer
                && !engine.is_running(r)
            {
                let replaced = self.store().write(|tx| {
                    let last = tx.runs_for_thread(r, 1)?.into_iter().next();
                    let cut_off = match &last {
                        None => true,
                        Some(run) => run.end_reason == Some(EndReason::Interrupted),
                    };
                    if !cut_off {
                        return Ok(false);
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
                } else {
                    drive_reviewer = Some(r);
                }
            }
            // The gate decides: a latched executor waits for Continue.
            engine
                .request_drive(executor, "stop-review-recovery", false)
                .await?;
            if let Some(r) = drive_reviewer {
                engine
                    .request_drive(r, "stop-review-recovery", false)
                    .await?;
            }
            report.claims.push(executor);
        }
        Ok(report)
    }
}
