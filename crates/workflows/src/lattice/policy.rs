//! The `lattice` continuation policy (priority 50), asked at the gate after a finished turn when
//! no higher policy (a BlueprintLoop's, 100) proposed anything. It reconciles the session's
//! current Run — settling the prompt the turn read, checking the budget before any Lattice
//! continuation (LAT-13), taking the pending action, carrying out effects — and proposes what
//! that queued, else the plain continuation keyed by the finished turn.

use super::controller::{self, Reason};
use crate::lightloop::host::LoopHost;
use crate::slot::WorkflowSlot;
use std::sync::Arc;
use troupe_engine::StopMode;
use troupe_engine::extension::{ContinuationPolicy, Gate, Proposal};

pub const POLICY_ID: &str = "lattice";
pub const PRIORITY: i32 = 50;

pub struct LatticePolicy {
    pub host: Arc<LoopHost>,
}

impl ContinuationPolicy for LatticePolicy {
    fn id(&self) -> &str {
        POLICY_ID
    }

    fn priority(&self) -> i32 {
        PRIORITY
    }

    /// The Run's position: a proposal is new when the Run moved since the last one.
    fn revision_key(&self, gate: &Gate<'_>) -> Result<Option<String>, String> {
        let run = gate
            .store
            .read(|tx| tx.peek_current_lattice_run(gate.thread.id))
            .map_err(|e| e.to_string())?;
        Ok(run.map(|r| {
            format!(
                "{}|{}|{}|{}|{}|{}|{}",
                gate.terminal_message_id.0,
                r.id.0,
                r.status.as_str(),
                r.state_revision,
                r.pathway_revision,
                r.effect.as_ref().map_or(0, |e| e.id()),
                r.pending_action.as_ref().map_or(0, |a| a.id),
            )
        }))
    }

    fn propose(&self, gate: &Gate<'_>) -> Result<Proposal, String> {
        let Some(WorkflowSlot::Lattice(slot)) = WorkflowSlot::of(gate.thread.workflow.as_ref())
        else {
            return Ok(Proposal::None);
        };
        let limits = self.host.guard_defaults();
        let thread = gate.thread.id;
        let pass = gate
            .store
            .write(|tx| {
                match tx.peek_current_lattice_run(thread)? {
                    Some(r) if r.id == slot.run_id => {}
                    _ => return Ok(None),
                }
                controller::reconcile(tx, thread, Reason::Gate(gate.terminal_message_id), limits)
                    .map(Some)
            })
            .map_err(|e| e.to_string())?;
        let Some(pass) = pass else {
            return Ok(Proposal::None);
        };
        if !pass.abort.is_empty()
            && let Some(engine) = self.host.engine().cloned()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            let abort = pass.abort.clone();
            rt.spawn(async move {
                for t in abort {
                    let _ = engine.stop(t, StopMode::Internal).await;
                }
            });
        }
        // Everything was queued in the transaction; proposing it again is a no-op delivery
        // that lets the kernel start the turn that reads it.
        if let Some(d) = pass.deliveries.into_iter().next() {
            return Ok(Proposal::Inbox(d));
        }
        let (Some(cont), Some(run)) = (pass.continuation, pass.run) else {
            return Ok(Proposal::None);
        };
        // The plain continuation is a loop like any other: the continuation guard's budget and
        // no-progress streak stop a model that only ever answers in prose.
        let verdict = crate::guard::admit_continuation(
            gate.store,
            thread,
            &format!("lattice:{}", run.id.0),
            self.host.guard_defaults(),
        )
        .map_err(|e| e.to_string())?;
        if verdict != troupe_core::continuation_guard::GuardVerdict::Continue {
            return Ok(Proposal::None);
        }
        Ok(Proposal::Inbox(cont))
    }
}
