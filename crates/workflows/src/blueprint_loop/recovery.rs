//! BlueprintLoop reconciliation at start, after the kernel's own recovery, in the seeds'
//! order: adjudicate each active loop (one without a durable driver latches its execution
//! session with `workflow` and is left exactly as stored — never terminalized), restore the
//! bindings of active loops, sweep bindings and note links that point at nothing live, then
//! recover stop intents (an auditor whose task the restart interrupted is unbound without
//! spending the recovery budget; binding it again under the same task key resumes the same
//! child) and re-drive them through the gated drive.

use crate::blueprint_loop::commit;
use crate::blueprint_loop::machine::{self, Event};
use crate::cortex;
use crate::reviewer_task::{self, AtStartup};
use crate::{WorkflowError, Workflows};
use serde::Serialize;
use troupe_core::ThreadId;
use troupe_core::blueprint_loop::{BlueprintLoopId, LoopStatus};
use troupe_core::pause::PauseReason;
use troupe_store::StoreError;

pub const WORKFLOW_HOLD: &str = "A BlueprintLoop was running here when Troupe stopped and nothing is left to drive it. Continue resumes the loop; Abandon cancels it.";

/// What reconciliation found and did.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct BlueprintLoopRecovery {
    /// Loops without a durable driver whose execution session was latched (`workflow`).
    pub latched: Vec<BlueprintLoopId>,
    /// Bindings removed because their loop is gone or ended.
    pub swept_bindings: Vec<ThreadId>,
    /// Notes whose active-loop link pointed at no active loop.
    pub swept_notes: Vec<i64>,
    /// Auditors found cut off and unbound for replacement (budget untouched).
    pub replaced_auditors: Vec<ThreadId>,
    /// Loops with a surviving stop intent, re-driven.
    pub stop_intents: Vec<BlueprintLoopId>,
}

impl Workflows {
    pub async fn recover_blueprint_loops(&self) -> Result<BlueprintLoopRecovery, WorkflowError> {
        let engine = self.engine().clone();
        let mut report = BlueprintLoopRecovery::default();
        let (active, runnable) = self.store().read(|tx| {
            Ok((
                tx.blueprint_loops(true, u32::MAX)?,
                tx.threads_with_runnable_tasks()?,
            ))
        })?;

        // 1. Adjudicate; 2. restore bindings. One transaction per loop: a failure is contained.
        for l in &active {
            let running = engine.is_running(l.thread_id);
            let latched = self.store().write(|tx| {
                tx.restore_loop_bindings(l.id)?;
                // A Lattice loop's driver is its Run's controller, which recovery reconciles next.
                let lattice = l.source == troupe_core::blueprint_loop::LoopSource::Lattice;
                if l.stop_request.is_some() || lattice || running || runnable.contains(&l.thread_id)
                {
                    return Ok(false);
                }
                let before = tx.thread(l.thread_id)?.paused;
                let after = tx.pause(
                    l.thread_id,
                    PauseReason::Workflow,
                    Some(WORKFLOW_HOLD.into()),
                )?;
                Ok(before.is_none() && after.is_some())
            });
            match latched {
                Ok(true) => report.latched.push(l.id),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(loop_id = %l.id, error = %e, "adjudicating a BlueprintLoop failed")
                }
            }
        }

        // 3. Sweep what points at nothing live.
        self.store().write(|tx| {
            for b in tx.loop_bindings()? {
                let live = tx.find_blueprint_loop(b.loop_id)?.is_some_and(|l| {
                    l.status.is_active()
                        && (l.thread_id == b.thread_id || l.audit_thread_id == Some(b.thread_id))
                });
                if !live && tx.remove_loop_binding(b.thread_id)? {
                    report.swept_bindings.push(b.thread_id);
                }
            }
            for note in tx.notes_with_active_loop()? {
                if tx.clear_stale_note_link(note)? {
                    report.swept_notes.push(note);
                }
            }
            Ok(())
        })?;

        // 4. Stop intents: replace a cut-off auditor, then re-drive through the gate.
        for l in active.iter().filter(|l| l.stop_request.is_some()) {
            if let (LoopStatus::Auditing, Some(a)) = (l.status, l.audit_thread_id)
                && !engine.is_running(a)
            {
                let replaced = self.store().write(|tx| {
                    match reviewer_task::at_startup(tx, a)? {
                        AtStartup::CutOff => {}
                        AtStartup::Ended(task) => {
                            reviewer_task::settle_ended(tx, &task)?;
                            return Ok(false);
                        }
                        AtStartup::Nothing => return Ok(false),
                    }
                    let cur = tx.blueprint_loop(l.id)?;
                    let step = machine::step(&cur, Event::AuditorInterrupted { auditor: a })
                        .map_err(|e| StoreError::Invalid(e.to_string()))?;
                    if step.ack != machine::Ack::Recorded {
                        return Ok(false);
                    }
                    commit::commit(tx, &cur, &step)?;
                    Ok(true)
                })?;
                if replaced {
                    report.replaced_auditors.push(a);
                }
            }
            // An unbound claim is bound again under the same task key, which resumes the
            // interrupted auditor on its own child thread.
            engine
                .request_drive(l.thread_id, "stop-review-recovery", false)
                .await?;
            report.stop_intents.push(l.id);
        }
        // A recovery turn queued above.
        cortex::start_admitted(&engine);
        Ok(report)
    }
}
