//! Instruction projection: the active workflow is stamped on each new root request when it is
//! written (kind and contract version), and a stamped root's first text is wrapped with that
//! workflow's contract whenever the model's context is assembled. The stamp is fixed at
//! creation, so a later workflow change never re-stamps history; the stored text never changes.
//! The kernel wraps only root messages whose origin is a person, so steer, context and
//! continuation deliveries are never wrapped.

use crate::contracts;
use crate::slot::{CONTRACT_VERSION, WorkflowSlot};
use serde_json::{Value, json};
use troupe_core::thread::Thread;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::Store;

/// The contributor's name: the key of its stamp in a message's metadata.
pub const STAMP_KEY: &str = "workflow";

pub struct WorkflowProjection;

/// The stamp for a thread's current slot (`None` when no known workflow is active).
pub fn stamp_for(thread: &Thread) -> Option<Value> {
    match WorkflowSlot::of(thread.workflow.as_ref())? {
        slot @ (WorkflowSlot::Plan | WorkflowSlot::LightLoop(_) | WorkflowSlot::Lattice(_)) => {
            Some(json!({
                "kind": slot.kind(),
                "version": CONTRACT_VERSION,
            }))
        }
        // Only the root's requests are a person's; a worker's tasks are assignments.
        WorkflowSlot::Boss(b) if b.role == troupe_core::boss::BossRole::Boss => Some(json!({
            "kind": crate::slot::BOSS,
            "version": CONTRACT_VERSION,
        })),
        WorkflowSlot::Boss(_) | WorkflowSlot::Unknown(_) => None,
    }
}

impl ContextContributor for WorkflowProjection {
    fn name(&self) -> &str {
        STAMP_KEY
    }

    /// The Light Loop's current task is read from the slot on every call, so an instruction
    /// update reaches the next model step.
    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        let current = store
            .read(|tx| tx.thread(thread.id))
            .map(|t| t.workflow)
            .unwrap_or_else(|_| thread.workflow.clone());
        if let Some(WorkflowSlot::Boss(b)) = WorkflowSlot::of(current.as_ref()) {
            if let Some(section) = crate::boss::texts::section(store, thread, &b) {
                out.system.push(section);
            }
            return;
        }
        if let Some(WorkflowSlot::Lattice(l)) = WorkflowSlot::of(current.as_ref()) {
            // Withdrawn while a Step executes: the BlueprintLoop owns the turn (LAT-14).
            if !l.executing
                && let Ok(Some(run)) = store.read(|tx| tx.peek_current_lattice_run(thread.id))
                && run.id == l.run_id
            {
                out.system.push(crate::lattice::texts::system_section(&run));
            }
            return;
        }
        if let Some(WorkflowSlot::LightLoop(ll)) = WorkflowSlot::of(current.as_ref()) {
            let mut section = format!(
                "# Light Loop\n\nThe task this loop works on (it may have been revised since the request):\n\n{}",
                ll.instructions
            );
            if let Some(stop) = &ll.stop_request {
                section.push_str(&format!(
                    "\n\nYou claimed completion (\"{}\"). A reviewer decides after this turn ends: end your turn.",
                    stop.summary
                ));
            } else if let Some(reason) = &ll.review.last_reason {
                section.push_str(&format!("\n\nThe last review rejected the claim: {reason}"));
            }
            out.system.push(section);
        }
    }

    fn stamp_root(&self, thread: &Thread) -> Option<Value> {
        stamp_for(thread)
    }

    fn wrap_root(&self, stamp: &Value, text: &str) -> Option<String> {
        let kind = stamp.get("kind")?.as_str()?;
        let version = stamp.get("version")?.as_u64()?;
        contracts::wrap(kind, version, text)
    }
}
