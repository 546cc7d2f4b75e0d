//! The audit session: a child task (role `Reviewer`, keyed per claim) of the executor's
//! thread, whose unattended child runs the host-selected `supervisor` agent on the `review`
//! role on the executor's workspace. The task is prepared (or an interrupted one of the same
//! claim resumed), bound to the loop and the loop moved to `auditing` in one transaction — and
//! only then started (BL-8). When the task ends, [`settle_ended`] decides what a missing
//! verdict means.

use crate::blueprint_loop::commit::{self, AfterCommit};
use crate::blueprint_loop::machine::{self, Event};
use crate::blueprint_loop::texts::{self, AUDITOR_PROMPT, REVIEW_ROLE};
use crate::reviewer_task::{self, Ending};
use troupe_core::blueprint_loop::{BlueprintLoopId, LoopStatus};
use troupe_core::inbox::Delivery;
use troupe_core::thread::AgentBinding;
use troupe_core::{MessageId, ThreadId};
use troupe_store::{Store, StoreError, TaskRecord, Tx};

pub fn auditor_agent(name: &str) -> AgentBinding {
    AgentBinding {
        name: name.into(),
        system_prompt: AUDITOR_PROMPT.into(),
        role: REVIEW_ROLE.into(),
        endpoint: None,
    }
}

/// The task key: one audit task per loop and claim, so an interrupted audit is resumed on the
/// same child thread.
fn key(id: BlueprintLoopId, requester: MessageId) -> String {
    format!("blueprint-loop-audit:{id}:{}", requester.0)
}

/// Bind an auditor to the loop's pending, unaudited claim of `requester`: its task is prepared
/// with the audit as its prompt and the loop moved to `auditing`, in one transaction. Returns
/// the auditor; the caller starts it once this has committed
/// ([`crate::cortex::start_admitted`]). `None` when the claim moved on.
pub fn bind(
    store: &Store,
    id: BlueprintLoopId,
    requester: MessageId,
) -> Result<Option<ThreadId>, StoreError> {
    store.write(|tx| {
        let l = tx.blueprint_loop(id)?;
        let stop = match &l.stop_request {
            Some(s)
                if l.status == LoopStatus::Running
                    && l.audit_thread_id.is_none()
                    && s.requester_message_id == requester =>
            {
                s.clone()
            }
            _ => return Ok(None),
        };
        let task = reviewer_task::prepare(
            tx,
            l.thread_id,
            auditor_agent(&l.audit_agent),
            texts::audit_task(&l, &stop, l.thread_id),
            format!("BlueprintLoop {} audit of claim {}", l.id, requester.0),
            key(l.id, requester),
        )?;
        let auditor = task.child_thread_id;
        let step = machine::step(&l, Event::AuditorBound { auditor, requester })
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        commit::commit(tx, &l, &step)?;
        Ok(Some(auditor))
    })
}

/// Apply `event` to loop `id` in one transaction, when the machine accepts it.
pub fn apply(
    store: &Store,
    id: BlueprintLoopId,
    event: Event,
) -> Result<Option<AfterCommit>, StoreError> {
    store.write(|tx| {
        let l = tx.blueprint_loop(id)?;
        match machine::step(&l, event) {
            Ok(step) if step.ack == machine::Ack::Recorded => {
                Ok(Some(commit::commit(tx, &l, &step)?))
            }
            _ => Ok(None),
        }
    })
}

/// The audit task `task` ended (in the transaction that ended it): if a loop is still auditing
/// with its child bound, no verdict came — a launch failure fails the loop, an ending without a
/// verdict gets a recovery turn (returned, for the caller to deliver as a follow-up of the
/// task) or fails the loop once the budget is spent. `None` otherwise.
pub fn settle_ended(
    tx: &mut Tx<'_>,
    task: &TaskRecord,
    how: &Ending,
) -> Result<Option<Delivery>, StoreError> {
    let auditor = task.child_thread_id;
    let Some((role, l)) = commit::bound_loop(tx, auditor)? else {
        return Ok(None);
    };
    if role != "audit" || l.status != LoopStatus::Auditing || l.audit_thread_id != Some(auditor) {
        return Ok(None);
    }
    let event = match how {
        Ending::LaunchFailed(error) => Event::AuditorLaunchFailed {
            error: error.clone(),
        },
        Ending::WithoutVerdict => Event::AuditorEndedWithoutVerdict { auditor },
    };
    let step = machine::step(&l, event).map_err(|e| StoreError::Invalid(e.to_string()))?;
    if step.ack != machine::Ack::Recorded {
        return Ok(None);
    }
    let after = commit::commit(tx, &l, &step)?;
    Ok(after.recovery.map(|(_, d)| d))
}
