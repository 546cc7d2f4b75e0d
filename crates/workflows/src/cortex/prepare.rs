//! Preparing a child task inside the caller's transaction: the child thread (unattended,
//! under the parent, on the parent's workspace, bound to the agent), the task record, and the
//! prompt as the child's task inbox item. Nothing runs until [`crate::cortex::runtime::start_admitted`].

use crate::cortex::contract::OutputContract;
use crate::cortex::machine::{self, TaskEvent};
use crate::cortex::texts;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{MessageId, ThreadId};
use troupe_store::{
    NewTask, NewThread, StoreError, TaskEdit, TaskId, TaskRecord, TaskRole, TaskStatus, Tx,
};

/// What a child task is asked to do, by a tool or by a workflow.
#[derive(Clone, Debug)]
pub struct ChildRequest {
    pub parent: ThreadId,
    /// The message whose tool call asked (none for a workflow's own child).
    pub parent_message: Option<MessageId>,
    pub agent: AgentBinding,
    pub prompt: String,
    pub description: String,
    pub output: OutputContract,
    /// `Reviewer` is exempt from the concurrency caps.
    pub role: TaskRole,
    /// Whether the parent gets the result as a steer item (a reviewer's verdict tools deliver
    /// their own result instead).
    pub notify_parent: bool,
    /// Idempotency per parent: the same key finds the same task.
    pub key: String,
}

#[derive(Clone, Debug)]
pub struct Prepared {
    pub task: TaskRecord,
    /// A new task and child thread were written.
    pub created: bool,
    /// An interrupted task under the same key was taken up again (same child thread).
    pub resumed: bool,
}

fn prompt_delivery(t: &TaskRecord, contract: &OutputContract) -> Delivery {
    Delivery {
        mode: InboxMode::Task,
        priority: Priority::SUPERVISOR,
        origin: Origin::Delegation(format!("cortex:{}", t.id)),
        // A reviewer's prompt is its whole review task: its verdict tools, not its final
        // reply, carry the result, so it gets no output contract to meet.
        text: match t.role {
            TaskRole::Reviewer => t.prompt.clone(),
            TaskRole::Task => texts::child_prompt(&t.description, &t.prompt, contract),
        },
        visible: true,
        delivery_key: Some(texts::prompt_key(t)),
        order_key: None,
        defers_calls: false,
    }
}

/// Create (or find, or resume) the task under `req.key`, in the caller's transaction. A task
/// already under the key is returned as it is, unless it is interrupted: then it is queued
/// again on the same child thread, which keeps its history.
pub fn prepare_child(tx: &mut Tx<'_>, req: &ChildRequest) -> Result<Prepared, StoreError> {
    if let Some(existing) = tx.task_by_key(req.parent, &req.key)? {
        if existing.status == TaskStatus::Interrupted {
            return Ok(Prepared {
                task: resume(tx, existing.id)?,
                created: false,
                resumed: true,
            });
        }
        return Ok(Prepared {
            task: existing,
            created: false,
            resumed: false,
        });
    }
    let parent = tx.thread(req.parent)?;
    let child = tx.create_thread(&NewThread {
        parent_id: Some(parent.id),
        title: format!("Task for {}: {}", parent.id, req.description),
        agent: req.agent.clone(),
        workspace: parent.workspace.clone(),
        workspace_root: parent.workspace_root.clone(),
        interaction: Interaction::Unattended,
    })?;
    let task = tx.create_task(&NewTask {
        parent_thread_id: parent.id,
        parent_message_id: req.parent_message,
        child_thread_id: child.id,
        agent: req.agent.name.clone(),
        prompt: req.prompt.clone(),
        description: req.description.clone(),
        output_contract: req.output.to_value(),
        role: req.role,
        notify_parent: req.notify_parent,
        delivery_key: req.key.clone(),
    })?;
    tx.deliver(child.id, &prompt_delivery(&task, &req.output))?;
    Ok(Prepared {
        task,
        created: true,
        resumed: false,
    })
}

/// Queue an interrupted task again (`resumes` counts it, so its next result and any later
/// interruption get delivery keys of their own). Its prompt is delivered again under the same key, which
/// writes nothing when the child had already taken it: the child then resumes its open turn.
pub fn resume(tx: &mut Tx<'_>, id: TaskId) -> Result<TaskRecord, StoreError> {
    let t = tx.task(id)?;
    let to = machine::step(t.status, &TaskEvent::Resume)
        .map_err(|m| StoreError::Conflict(format!("task {id}: {m}")))?;
    let contract =
        OutputContract::parse(Some(&t.output_contract)).unwrap_or(OutputContract::Summary);
    tx.deliver(t.child_thread_id, &prompt_delivery(&t, &contract))?;
    tx.edit_task(
        id,
        &TaskEdit {
            status: to,
            error: Some(None),
            resumes: Some(t.resumes + 1),
            ..TaskEdit::default()
        },
    )
}

/// Give an ended (or interrupted) task another turn on the same child thread: `turn` is
/// delivered to the child and the task is queued again, its output and repair count cleared.
/// For a workflow's reviewer that ended without a verdict; start it with
/// [`crate::cortex::runtime::start_admitted`] after the transaction commits.
pub fn follow_up(tx: &mut Tx<'_>, id: TaskId, turn: &Delivery) -> Result<TaskRecord, StoreError> {
    let t = tx.task(id)?;
    let to = machine::step(t.status, &TaskEvent::FollowUp)
        .map_err(|m| StoreError::Conflict(format!("task {id}: {m}")))?;
    tx.deliver(t.child_thread_id, turn)?;
    tx.edit_task(
        id,
        &TaskEdit {
            status: to,
            output_text: Some(None),
            output_json: Some(None),
            error: Some(None),
            repair_attempts: Some(0),
            resumes: Some(t.resumes + 1),
            ..TaskEdit::default()
        },
    )
}
