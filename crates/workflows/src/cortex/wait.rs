//! A thread's queued and running child tasks as continuation waits: while one exists the
//! shared gate stays closed and no workflow policy runs. Read from stored records, so a task
//! still holds its parent after a restart until startup reconciliation interrupts it.

use troupe_core::thread::Thread;
use troupe_engine::extension::WaitProvider;
use troupe_store::{Store, TaskStatus};

/// Waits listed for one thread, at most (the rest are summed up).
const LISTED: usize = 20;

pub struct CortexWaits;

impl WaitProvider for CortexWaits {
    fn name(&self) -> &str {
        "cortex"
    }

    fn waits(&self, thread: &Thread, store: &Store) -> Result<Vec<String>, String> {
        let active = store
            .read(|tx| {
                tx.tasks_of_parent(
                    thread.id,
                    &[TaskStatus::Queued, TaskStatus::Running],
                    u32::MAX,
                )
            })
            .map_err(|e| e.to_string())?;
        let mut out: Vec<String> = active
            .iter()
            .take(LISTED)
            .map(|t| format!("task {} ({}) is {}", t.id, t.agent, t.status.as_str()))
            .collect();
        if active.len() > LISTED {
            out.push(format!("…and {} more tasks", active.len() - LISTED));
        }
        Ok(out)
    }
}
