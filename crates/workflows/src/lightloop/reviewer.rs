//! The reviewer: a child task (role `Reviewer`, keyed per claim) of the executor's thread,
//! whose unattended child runs the `review` role on the executor's workspace. The task is
//! prepared (or an interrupted one of the same claim resumed) and recorded in the loop's slot
//! in one transaction — and only then started. When the task ends, [`settle_ended`] decides
//! what a missing verdict means.

use crate::lightloop::commit::{self, light_loop};
use crate::lightloop::machine::{self, LoopEvent};
use crate::lightloop::texts::{self, REVIEW_ROLE, REVIEWER_AGENT};
use crate::reviewer_task::{self, Ending};
use crate::slot::{LightLoopSlot, WorkflowSlot};
use troupe_core::inbox::Delivery;
use troupe_core::thread::{AgentBinding, Thread};
use troupe_core::{MessageId, ThreadId};
use troupe_store::{Store, StoreError, TaskRecord, Tx};

pub fn reviewer_agent() -> AgentBinding {
    AgentBinding {
        name: REVIEWER_AGENT.into(),
        system_prompt: texts::REVIEWER_PROMPT.into(),
        role: REVIEW_ROLE.into(),
        endpoint: None,
    }
}

/// The task key: one reviewer task per claim, so an interrupted review is resumed on the same
/// child thread.
fn key(requester: MessageId) -> String {
    format!("lightloop-review:{}", requester.0)
}

/// The executor and its loop when `thread` is the reviewer recorded for that loop's claim.
pub fn bound_loop(
    tx: &Tx<'_>,
    thread: &Thread,
) -> Result<Option<(ThreadId, LightLoopSlot)>, StoreError> {
    if thread.agent.name != REVIEWER_AGENT {
        return Ok(None);
    }
    let Some(parent) = thread.parent_id else {
        return Ok(None);
    };
    let Some(ll) = light_loop(tx, parent)? else {
        return Ok(None);
    };
    let bound = ll.stop_request.as_ref().and_then(|s| s.reviewer_thread_id) == Some(thread.id);
    Ok(bound.then_some((parent, ll)))
}

/// Whether `thread` is the recorded reviewer of a live claim (for availability checks).
pub fn is_bound_reviewer(store: &Store, thread: &Thread) -> bool {
    thread.agent.name == REVIEWER_AGENT
        && store
            .read(|tx| bound_loop(tx, thread))
            .ok()
            .flatten()
            .is_some()
}

/// Bind a reviewer to the pending, unbound claim of `requester`: its task is prepared (or the
/// interrupted one of the same claim resumed) and the loop bound to the task's child in one
/// transaction. Returns the reviewer; the caller starts it once this has committed
/// ([`crate::cortex::start_admitted`]). `None` when the claim moved on.
pub fn bind(
    store: &Store,
    executor: ThreadId,
    requester: MessageId,
) -> Result<Option<ThreadId>, StoreError> {
    store.write(|tx| {
        let t = tx.thread(executor)?;
        let Some(WorkflowSlot::LightLoop(ll)) = WorkflowSlot::of(t.workflow.as_ref()) else {
            return Ok(None);
        };
        let Some(stop) = ll.stop_request.clone() else {
            return Ok(None);
        };
        if stop.requester_message_id != requester || stop.reviewer_thread_id.is_some() {
            return Ok(None);
        }
        let task = reviewer_task::prepare(
            tx,
            executor,
            reviewer_agent(),
            texts::review_task(executor, &ll, &stop),
            format!("Light Loop review of claim {}", requester.0),
            key(requester),
        )?;
        let reviewer = task.child_thread_id;
        let step = machine::step(
            Some(&ll),
            LoopEvent::ReviewerBound {
                reviewer,
                requester,
            },
        )
        .map_err(|e| StoreError::Invalid(e.to_string()))?;
        commit::commit(tx, executor, &ll, &step)?;
        Ok(Some(reviewer))
    })
}

/// The reviewer task `task` ended (in the transaction that ended it): if the loop is still
/// bound to its child, no verdict came — a launch failure fails the loop, an ending without a
/// verdict gets a recovery turn (returned, for the caller to deliver as a follow-up of the
/// task) or fails the loop once the budget is spent. `None` otherwise.
pub fn settle_ended(
    tx: &mut Tx<'_>,
    task: &TaskRecord,
    how: &Ending,
) -> Result<Option<Delivery>, StoreError> {
    let reviewer = task.child_thread_id;
    let executor = task.parent_thread_id;
    let Some(ll) = light_loop(tx, executor)? else {
        return Ok(None);
    };
    if ll.stop_request.as_ref().and_then(|s| s.reviewer_thread_id) != Some(reviewer) {
        return Ok(None);
    }
    let event = match how {
        Ending::LaunchFailed(error) => LoopEvent::ReviewerLaunchFailed {
            reviewer,
            error: error.clone(),
        },
        Ending::WithoutVerdict => LoopEvent::ReviewerEndedWithoutVerdict { reviewer },
    };
    let step = machine::step(Some(&ll), event).map_err(|e| StoreError::Invalid(e.to_string()))?;
    if step.ack == machine::Ack::Unchanged {
        return Ok(None);
    }
    let after = commit::commit(tx, executor, &ll, &step)?;
    Ok(after.recovery.map(|(_, d)| d))
}
