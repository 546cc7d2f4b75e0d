//! Child tasks as the HTTP API sees them: listed by parent session or thread, read, cancelled,
//! and reconciled at startup.

use crate::cortex::runtime;
use crate::{WorkflowError, Workflows};
use serde::Serialize;
use troupe_core::{SessionId, ThreadId};
use troupe_store::{TaskId, TaskRecord};

/// What startup reconciliation found.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct TaskRecovery {
    /// Tasks that were queued or running and are now `interrupted`.
    pub interrupted: Vec<TaskId>,
}

impl Workflows {
    /// Tasks started by a session's threads, or by one thread (exactly one of the two), oldest
    /// first.
    pub fn tasks(
        &self,
        parent_session: Option<SessionId>,
        parent_thread: Option<ThreadId>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, WorkflowError> {
        let threads = match (parent_session, parent_thread) {
            (Some(s), None) => self.store().read(|tx| {
                tx.session(s)?;
                tx.session_threads(s)
            })?,
            (None, Some(t)) => {
                self.store().read(|tx| tx.thread(t))?;
                vec![t]
            }
            _ => {
                return Err(WorkflowError::invalid(
                    "give exactly one of parent_session and parent_thread",
                ));
            }
        };
        let mut out = self.store().read(|tx| {
            let mut all = Vec::new();
            for t in &threads {
                all.extend(tx.tasks_of_parent(*t, &[], limit)?);
            }
            Ok(all)
        })?;
        out.sort_by_key(|t| t.id);
        out.truncate(limit as usize);
        Ok(out)
    }

    pub fn task(&self, id: TaskId) -> Result<TaskRecord, WorkflowError> {
        Ok(self.store().read(|tx| tx.task(id))?)
    }

    /// Cancel a task (idempotent); a completed or failed one is a `task_finished` conflict. A
    /// workflow's reviewer belongs to its loop: cancelling it alone would leave the loop waiting
    /// for a verdict that cannot come, so it is refused (`reviewer_task`) — cancel the loop.
    pub async fn cancel_task(&self, id: TaskId) -> Result<TaskRecord, WorkflowError> {
        let t = self.task(id)?;
        if t.role == troupe_store::TaskRole::Reviewer {
            return Err(WorkflowError::conflict(
                "reviewer_task",
                format!(
                    "task {id} is a workflow's reviewer; cancel its loop instead (the session's workflow, or POST /v1/blueprint-loops/{{id}}/cancel)"
                ),
            ));
        }
        runtime::cancel(self.engine(), id).await
    }

    /// Startup: queued and running tasks of a stopped process become `interrupted`, each
    /// parent told once. Call before the kernel's recovery ([`troupe_engine::Engine::recover`]).
    pub fn reconcile_tasks(&self) -> Result<TaskRecovery, WorkflowError> {
        Ok(TaskRecovery {
            interrupted: runtime::reconcile(self.engine())?,
        })
    }
}
