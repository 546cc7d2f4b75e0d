//! A loop's reviewer as a child task (role `Reviewer`, parent not notified, keyed per claim),
//! shared by the Light Loop's reviewer and the BlueprintLoop's auditor. The loop prepares the
//! task and binds its child in one transaction and starts it after commit; the cortex watcher
//! runs it, and when the task ends this module tells the loop that bound it — in the same
//! transaction that ends the task, so a review cannot end unseen.

use crate::blueprint_loop::auditor;
use crate::cortex::{self, ChildRequest, OutputContract};
use crate::lightloop::reviewer;
use crate::{WorkflowError, Workflows};
use troupe_core::ThreadId;
use troupe_core::inbox::Delivery;
use troupe_core::run::EndReason;
use troupe_core::thread::AgentBinding;
use troupe_store::{StoreError, TaskRecord, TaskRole, TaskStatus, Tx};

/// Prepare (or find, or resume when interrupted) the reviewer task under `key`, in the
/// caller's transaction. The child thread it returns is the reviewer to bind.
pub fn prepare(
    tx: &mut Tx<'_>,
    parent: ThreadId,
    agent: AgentBinding,
    prompt: String,
    description: String,
    key: String,
) -> Result<TaskRecord, StoreError> {
    let req = ChildRequest {
        parent,
        parent_message: None,
        agent,
        prompt,
        description,
        // Not enforced for reviewers: the verdict tools carry the result.
        output: OutputContract::Summary,
        role: TaskRole::Reviewer,
        notify_parent: false,
        key,
    };
    Ok(cortex::prepare_child(tx, &req)?.task)
}

/// How a reviewer's task ended, as the loop that bound it sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Its first model call failed (or it never ran): `reviewer_launch_failed`.
    LaunchFailed(String),
    /// It ended (or a later call failed) and no verdict tool settled the claim.
    WithoutVerdict,
}

/// What an ended task means for its loop; `None` for a task that has not ended or was
/// cancelled (a cancel is someone's decision, not a review's outcome).
pub fn ending(tx: &Tx<'_>, task: &TaskRecord) -> Result<Option<Ending>, StoreError> {
    if !matches!(task.status, TaskStatus::Completed | TaskStatus::Failed) {
        return Ok(None);
    }
    let runs = tx.runs_for_thread(task.child_thread_id, 2)?;
    let Some(last) = runs.first() else {
        let why = task.error.clone();
        return Ok(Some(Ending::LaunchFailed(
            why.unwrap_or_else(|| "the reviewer never started".into()),
        )));
    };
    Ok(Some(match &last.end_reason {
        Some(EndReason::ModelError(e)) | Some(EndReason::Internal(e))
            if runs.len() == 1 && last.hops <= 1 =>
        {
            Ending::LaunchFailed(e.clone())
        }
        _ => Ending::WithoutVerdict,
    }))
}

/// Tell the loop that bound `task`'s child that the task ended, in the transaction that ended
/// it. A loop still bound to it got no verdict: it either fails, or gives the reviewer a
/// recovery turn — a follow-up on the same task and child, queued here and started by the
/// cortex runtime once committed. Nothing happens when no loop is bound to the child.
pub fn settle_ended(tx: &mut Tx<'_>, task: &TaskRecord) -> Result<(), StoreError> {
    let Some(how) = ending(tx, task)? else {
        return Ok(());
    };
    let turn: Option<Delivery> = match reviewer::settle_ended(tx, task, &how)? {
        Some(d) => Some(d),
        None => auditor::settle_ended(tx, task, &how)?,
    };
    if let Some(d) = turn {
        cortex::follow_up(tx, task.id, &d)?;
    }
    Ok(())
}

/// What startup finds for a bound reviewer, after `reconcile_tasks`.
#[derive(Clone, Debug)]
pub enum AtStartup {
    /// Cut off by the stop (its task interrupted): unbind it so the policy prepares it again
    /// under the same key, which resumes the same child. A reviewer from before reviewers were
    /// tasks has no task to resume: unbound too, a fresh reviewer task takes the claim.
    CutOff,
    /// Its task ended while still bound (a crash between the two is impossible — they are one
    /// transaction — so this is a repair): settle it as an ending.
    Ended(Box<TaskRecord>),
    /// Cancelled, or started by this process: nothing to do.
    Nothing,
}

pub fn at_startup(tx: &Tx<'_>, reviewer: ThreadId) -> Result<AtStartup, StoreError> {
    Ok(match tx.task_of_child(reviewer)? {
        None => AtStartup::CutOff,
        Some(t) => match t.status {
            TaskStatus::Interrupted => AtStartup::CutOff,
            TaskStatus::Completed | TaskStatus::Failed => AtStartup::Ended(Box::new(t)),
            // Active tasks were started by this process (`reconcile_tasks` ran first): a
            // reviewer bound since, say by a boot wake of its executor, is live.
            TaskStatus::Queued | TaskStatus::Running | TaskStatus::Cancelled => AtStartup::Nothing,
        },
    })
}

impl Workflows {
    /// Stop a loop's work on `thread`: a task's child is cancelled through its task (so the
    /// task record says so and nothing restarts it); any other thread's live turn is stopped
    /// as a domain cancellation (no latch).
    pub(crate) async fn stop_work(&self, thread: ThreadId) {
        let task = match self.store().read(|tx| tx.task_of_child(thread)) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(thread = %thread, error = %e, "reading a reviewer's task failed");
                None
            }
        };
        let Some(task) = task else {
            self.stop_quietly(thread).await;
            return;
        };
        match cortex::runtime::cancel(self.engine(), task.id).await {
            // A task that already ended has nothing left to stop.
            Ok(_) | Err(WorkflowError::Conflict { .. }) => {}
            Err(e) => {
                tracing::warn!(task = %task.id, error = %e, "cancelling a reviewer task failed")
            }
        }
    }
}
