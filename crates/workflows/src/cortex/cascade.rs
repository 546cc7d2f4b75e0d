//! A person's stop reaches the thread's child tasks: stopping a turn (or abandoning the
//! session) cancels the tasks it handed out that are still queued or running, so no delegated
//! work goes on behind a Bot the person has stopped. A workflow's reviewers are left to their
//! loop, whose own cancel path ends them.

use crate::cortex::runtime;
use crate::{WorkflowError, Workflows};
use troupe_core::{SessionId, ThreadId};
use troupe_store::{TaskId, TaskRole, TaskStatus};

impl Workflows {
    /// Cancel `thread`'s queued and running child tasks. Returns the ones cancelled.
    pub async fn cancel_child_tasks(&self, thread: ThreadId) -> Result<Vec<TaskId>, WorkflowError> {
        let active = self.store().read(|tx| {
            tx.tasks_of_parent(thread, &[TaskStatus::Queued, TaskStatus::Running], u32::MAX)
        })?;
        let mut out = Vec::new();
        for t in active.into_iter().filter(|t| t.role == TaskRole::Task) {
            match runtime::cancel(self.engine(), t.id).await {
                Ok(_) => out.push(t.id),
                // It finished in the meantime: nothing to stop.
                Err(WorkflowError::Conflict {
                    code: "task_finished",
                    ..
                }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The composer Stop in a direct: a hold on the turn's work (ending it), then the child
    /// tasks it handed out are cancelled.
    pub async fn stop_session(
        &self,
        session: SessionId,
        turn: Option<troupe_core::RunId>,
    ) -> Result<troupe_collab::holds::ComposerStop, WorkflowError> {
        let stop = self.collab.composer_stop(session, turn).await?;
        self.cancel_child_tasks(stop.run.thread_id).await?;
        Ok(stop)
    }
}
