//! The reviewer child: an unattended kernel thread under the executor's thread, on the
//! executor's workspace, bound to the `review` role. It is created (or an interrupted one for
//! the same claim is reused) and recorded in the loop's slot in one transaction, together with
//! its review task — and only then started.

use crate::lightloop::commit::{self, light_loop};
use crate::lightloop::machine::{self, LoopEvent};
use crate::lightloop::texts::{self, REVIEW_ROLE, REVIEWER_AGENT};
use crate::slot::{LightLoopSlot, WorkflowSlot};
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::run::EndReason;
use troupe_core::thread::{AgentBinding, Interaction, Thread};
use troupe_core::{MessageId, ThreadId};
use troupe_engine::Engine;
use troupe_store::{NewThread, Store, StoreError, Tx};

pub fn reviewer_agent() -> AgentBinding {
    AgentBinding {
        name: REVIEWER_AGENT.into(),
        system_prompt: texts::REVIEWER_PROMPT.into(),
        role: REVIEW_ROLE.into(),
        endpoint: None,
    }
}

/// The title names the claim a reviewer was prepared for; it is how an interrupted reviewer
/// of the same claim is found again.
fn title(requester: MessageId) -> String {
    format!("Light Loop review of claim {}", requester.0)
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

fn reusable(
    tx: &Tx<'_>,
    executor: ThreadId,
    requester: MessageId,
) -> Result<Option<ThreadId>, StoreError> {
    let want = title(requester);
    Ok(tx
        .threads(u32::MAX)?
        .into_iter()
        .find(|t| {
            t.parent_id == Some(executor)
                && t.agent.name == REVIEWER_AGENT
                && t.title == want
                && t.lease.holder.is_none()
        })
        .map(|t| t.id))
}

/// Bind a reviewer to the pending, unbound claim of `requester` and queue its review task, in
/// one transaction. Returns the reviewer to start, or `None` when the claim moved on.
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
        let reviewer = match reusable(tx, executor, requester)? {
            Some(r) => r,
            None => {
                tx.create_thread(&NewThread {
                    parent_id: Some(executor),
                    title: title(requester),
                    agent: reviewer_agent(),
                    workspace: t.workspace.clone(),
                    interaction: Interaction::Unattended,
                })?
                .id
            }
        };
        let step = machine::step(
            Some(&ll),
            LoopEvent::ReviewerBound {
                reviewer,
                requester,
            },
        )
        .map_err(|e| StoreError::Invalid(e.to_string()))?;
        commit::commit(tx, executor, &ll, &step)?;
        // A reused reviewer already holds this key: the delivery is then a no-op and the
        // review resumes where it was cut off.
        tx.deliver(
            reviewer,
            &Delivery {
                mode: InboxMode::Task,
                priority: Priority::SUPERVISOR,
                origin: Origin::Delegation(commit::POLICY_ID.into()),
                text: texts::review_task(executor, &ll, &stop),
                visible: true,
                delivery_key: Some(format!("lightloop-review:{}", requester.0)),
                order_key: None,
            },
        )?;
        Ok(Some(reviewer))
    })
}

/// Run a bound reviewer: a forced drive (it resumes a cut-off review, and a review task
/// queued for it), then wait until it is idle and settle a review its model could not finish.
pub async fn run_review(engine: Engine, executor: ThreadId, reviewer: ThreadId) {
    loop {
        if let Err(e) = engine.continue_thread(reviewer).await {
            tracing::warn!(thread = %reviewer, error = %e, "starting the reviewer failed");
            return;
        }
        engine.wait_idle(reviewer).await;
        match settle_failed_review(&engine, executor, reviewer) {
            Ok(true) => continue,
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(thread = %reviewer, error = %e, "settling the reviewer failed");
                return;
            }
        }
    }
}

/// After the reviewer went idle: if it is still bound and its last run failed (its model
/// could not answer), the claim is settled here — a first call that failed is a launch
/// failure, a later failure counts as an ending without a verdict. Returns whether a recovery
/// turn was queued (the reviewer is to run again).
fn settle_failed_review(
    engine: &Engine,
    executor: ThreadId,
    reviewer: ThreadId,
) -> Result<bool, StoreError> {
    if engine.is_running(reviewer) {
        return Ok(false);
    }
    let after = engine.store().write(|tx| {
        let Some(ll) = light_loop(tx, executor)? else {
            return Ok(None);
        };
        let bound = ll.stop_request.as_ref().and_then(|s| s.reviewer_thread_id);
        if bound != Some(reviewer) {
            return Ok(None);
        }
        let runs = tx.runs_for_thread(reviewer, 2)?;
        let Some(last) = runs.first() else {
            return Ok(None);
        };
        let error = match &last.end_reason {
            Some(EndReason::ModelError(e)) | Some(EndReason::Internal(e)) => e.clone(),
            _ => return Ok(None),
        };
        let event = if runs.len() == 1 && last.hops <= 1 {
            LoopEvent::ReviewerLaunchFailed { reviewer, error }
        } else {
            LoopEvent::ReviewerEndedWithoutVerdict { reviewer }
        };
        let step =
            machine::step(Some(&ll), event).map_err(|e| StoreError::Invalid(e.to_string()))?;
        Ok(Some(commit::commit(tx, executor, &ll, &step)?))
    })?;
    Ok(after.is_some_and(|a| a.recovery.is_some()))
}
