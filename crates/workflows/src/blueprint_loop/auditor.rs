//! The audit session: an unattended child thread of the executor, on the executor's workspace,
//! running the host-selected `supervisor` agent on the `review` role. It is created (or an
//! interrupted one for the same claim is reused), bound to the loop and given its audit task in
//! one transaction — and only then started (BL-8).

use crate::blueprint_loop::commit::{self, AfterCommit};
use crate::blueprint_loop::machine::{self, Event};
use crate::blueprint_loop::texts::{AUDITOR_PROMPT, REVIEW_ROLE};
use troupe_core::blueprint_loop::{BlueprintLoopId, LoopStatus};
use troupe_core::run::EndReason;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{MessageId, ThreadId};
use troupe_engine::Engine;
use troupe_store::{NewThread, Store, StoreError, Tx};

pub fn auditor_agent(name: &str) -> AgentBinding {
    AgentBinding {
        name: name.into(),
        system_prompt: AUDITOR_PROMPT.into(),
        role: REVIEW_ROLE.into(),
        endpoint: None,
    }
}

/// The title names the loop and the claim; it is how an interrupted auditor of the same claim
/// is found again.
fn title(id: BlueprintLoopId, requester: MessageId) -> String {
    format!("BlueprintLoop {id} audit of claim {}", requester.0)
}

fn reusable(
    tx: &Tx<'_>,
    executor: ThreadId,
    agent: &str,
    want: &str,
) -> Result<Option<ThreadId>, StoreError> {
    Ok(tx
        .threads(u32::MAX)?
        .into_iter()
        .find(|t| {
            t.parent_id == Some(executor)
                && t.agent.name == agent
                && t.title == want
                && t.lease.holder.is_none()
        })
        .map(|t| t.id))
}

/// Bind an auditor to the loop's pending, unaudited claim of `requester`, queue its audit task
/// and move the loop to `auditing`, in one transaction. Returns the auditor to start, or `None`
/// when the claim moved on.
pub fn bind(
    store: &Store,
    id: BlueprintLoopId,
    requester: MessageId,
) -> Result<Option<ThreadId>, StoreError> {
    store.write(|tx| {
        let l = tx.blueprint_loop(id)?;
        let pending = l.status == LoopStatus::Running
            && l.audit_thread_id.is_none()
            && l.stop_request
                .as_ref()
                .is_some_and(|s| s.requester_message_id == requester);
        if !pending {
            return Ok(None);
        }
        let exec = tx.thread(l.thread_id)?;
        let want = title(l.id, requester);
        let auditor = match reusable(tx, l.thread_id, &l.audit_agent, &want)? {
            Some(a) => a,
            None => {
                tx.create_thread(&NewThread {
                    parent_id: Some(l.thread_id),
                    title: want,
                    agent: auditor_agent(&l.audit_agent),
                    workspace: exec.workspace.clone(),
                    interaction: Interaction::Unattended,
                })?
                .id
            }
        };
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

/// Run a bound auditor: a forced drive (it resumes a cut-off audit, and the task queued for
/// it), then wait until it is idle and settle an audit its model could not finish. A failed
/// reply reaches no continuation policy (the gate refuses it), so this watcher is its path.
pub async fn run_audit(engine: Engine, id: BlueprintLoopId, auditor: ThreadId) {
    loop {
        if let Err(e) = engine.continue_thread(auditor).await {
            tracing::warn!(thread = %auditor, error = %e, "starting the auditor failed");
            let _ = apply(
                engine.store(),
                id,
                Event::AuditorLaunchFailed {
                    error: e.to_string(),
                },
            );
            return;
        }
        engine.wait_idle(auditor).await;
        match settle_failed_audit(&engine, id, auditor) {
            Ok(true) => continue,
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(thread = %auditor, error = %e, "settling the auditor failed");
                return;
            }
        }
    }
}

/// After the auditor went idle: if it is still bound and its last run failed, settle the
/// claim — a first call that failed is a launch failure, a later failure counts as an ending
/// without a verdict. Returns whether a recovery turn was queued (run it again).
fn settle_failed_audit(
    engine: &Engine,
    id: BlueprintLoopId,
    auditor: ThreadId,
) -> Result<bool, StoreError> {
    if engine.is_running(auditor) {
        return Ok(false);
    }
    let after = engine.store().write(|tx| {
        let l = tx.blueprint_loop(id)?;
        if l.status != LoopStatus::Auditing || l.audit_thread_id != Some(auditor) {
            return Ok(None);
        }
        let runs = tx.runs_for_thread(auditor, 2)?;
        let Some(last) = runs.first() else {
            return Ok(None);
        };
        let error = match &last.end_reason {
            Some(EndReason::ModelError(e)) | Some(EndReason::Internal(e)) => e.clone(),
            _ => return Ok(None),
        };
        let event = if runs.len() == 1 && last.hops <= 1 {
            Event::AuditorLaunchFailed { error }
        } else {
            Event::AuditorEndedWithoutVerdict { auditor }
        };
        let step = machine::step(&l, event).map_err(|e| StoreError::Invalid(e.to_string()))?;
        Ok(Some(commit::commit(tx, &l, &step)?))
    })?;
    Ok(after.is_some_and(|a| a.recovery.is_some()))
}
