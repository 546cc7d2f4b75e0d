//! A task's child thread runs only while its task is `running` in this process. Whatever
//! else asks for a drive of the child (the kernel's boot wakes, a stray delivery) is refused
//! and recorded, so a cut-off or cancelled task never calls a model on its own and the caps
//! cannot be bypassed.

use crate::lightloop::host::LoopHost;
use std::sync::Arc;
use troupe_engine::extension::{Admission, AdmissionCheck, AdmissionContext};
use troupe_store::TaskStatus;

pub struct ChildAdmission {
    pub host: Arc<LoopHost>,
}

impl AdmissionCheck for ChildAdmission {
    fn name(&self) -> &str {
        "cortex"
    }

    fn check(&self, ctx: &AdmissionContext<'_>) -> Admission {
        // Only children can be tasks; top-level threads cost no read.
        if ctx.thread.parent_id.is_none() {
            return Admission::Admit;
        }
        let task = match ctx.store.read(|tx| tx.task_of_child(ctx.thread.id)) {
            Ok(Some(t)) => t,
            Ok(None) => return Admission::Admit,
            Err(e) => return Admission::Refuse(format!("reading the child's task failed: {e}")),
        };
        let boot = self.host.engine().map(|e| e.config().boot_id.as_str());
        if task.status == TaskStatus::Running && task.started_boot.as_deref() == boot {
            return Admission::Admit;
        }
        Admission::Refuse(format!(
            "task {} is {}: its child runs only while the task runs in the process that started it",
            task.id,
            task.status.as_str()
        ))
    }
}
