//! Writing a Run after the machine moved it, in the caller's transaction: the record and its
//! events through the store's single transition point, the session latch it projects (LAT-13),
//! the slot it projects, and the cancellation of the loops it gave up — so none of them can
//! disagree with the Run after a crash.

use crate::blueprint_loop::{commit, machine as bl};
use crate::slot::{LatticeSlot, WorkflowSlot};
use serde_json::Value;
use troupe_core::ThreadId;
use troupe_core::blueprint_loop::BlueprintLoopId;
use troupe_core::lattice::pause::{LatchChange, releasable, sync};
use troupe_core::lattice::{Event, LatticeRun, RunStatus, Transition, WorkState, step};
use troupe_core::pause::PauseReason;
use troupe_store::{StoreError, Tx};

/// Several machine events applied in a row, written once.
pub struct Moves {
    pub before: LatticeRun,
    pub run: LatticeRun,
    pub events: Vec<(&'static str, Value)>,
    pub cancel_loops: Vec<BlueprintLoopId>,
}

impl Moves {
    pub fn new(run: LatticeRun) -> Self {
        Moves {
            before: run.clone(),
            run,
            events: vec![],
            cancel_loops: vec![],
        }
    }

    /// Apply one event; a refusal (a terminal Run asked to resume) is returned, nothing kept.
    pub fn apply(
        &mut self,
        event: Event,
        now: i64,
    ) -> Result<bool, troupe_core::lattice::MachineError> {
        let Transition {
            run,
            events,
            cancel_loops,
            changed,
        } = step(&self.run, event, now)?;
        if changed {
            self.run = run;
            self.events.extend(events);
            self.cancel_loops.extend(cancel_loops);
        }
        Ok(changed)
    }

    /// Apply an event the caller knows fits (machine refusals are only for resume and cancel).
    pub fn must(&mut self, event: Event, now: i64) -> bool {
        self.apply(event, now).unwrap_or(false)
    }

    pub fn changed(&self) -> bool {
        self.run != self.before
    }
}

/// What is left to do once the write has committed.
#[derive(Debug, Default)]
pub struct Written {
    /// Threads whose live work stops (cancelled loops' auditors).
    pub abort: Vec<ThreadId>,
}

/// Write the Run and what it projects. Nothing is written if nothing changed.
pub fn write(tx: &mut Tx<'_>, m: &Moves) -> Result<Written, StoreError> {
    let mut out = Written::default();
    if !m.changed() {
        return Ok(out);
    }
    let run = tx.save_lattice_run(&m.run, &m.events)?;
    let thread = run.thread_id;
    match sync(&m.before, &run) {
        LatchChange::None => {}
        LatchChange::Latch(text) => {
            tx.pause(thread, PauseReason::Workflow, Some(text))?;
        }
        LatchChange::ReleaseWorkflow => {
            if releasable(tx.thread(thread)?.paused.as_ref()) {
                tx.clear_pause(thread)?;
            }
        }
    }
    project_slot(tx, &run)?;
    for id in &m.cancel_loops {
        let Some(l) = tx.find_blueprint_loop(*id)? else {
            continue;
        };
        let step =
            bl::step(&l, bl::Event::Cancel).map_err(|e| StoreError::Invalid(e.to_string()))?;
        if step.ack != bl::Ack::Recorded {
            continue;
        }
        let after = commit::commit(tx, &l, &step)?;
        // The execution session is the Run's own: the caller decides whether to stop it.
        out.abort
            .extend(after.abort.into_iter().filter(|t| *t != thread));
    }
    Ok(out)
}

/// Keep the slot a projection of its Run: mode and `executing` follow the Run; a terminal Run
/// clears the slot that names it. A slot naming another Run, or another kind, is left alone.
pub fn project_slot(tx: &mut Tx<'_>, run: &LatticeRun) -> Result<(), StoreError> {
    let t = tx.thread(run.thread_id)?;
    let Some(WorkflowSlot::Lattice(slot)) = WorkflowSlot::of(t.workflow.as_ref()) else {
        return Ok(());
    };
    if slot.run_id != run.id {
        return Ok(());
    }
    if run.status.is_terminal() {
        return tx.set_workflow(run.thread_id, None);
    }
    let want = slot_for(run);
    if want != slot {
        tx.set_workflow(run.thread_id, Some(&WorkflowSlot::Lattice(want).to_value()))?;
    }
    Ok(())
}

pub fn slot_for(run: &LatticeRun) -> LatticeSlot {
    LatticeSlot {
        run_id: run.id,
        mode: run.mode,
        executing: run.state == WorkState::Executing && run.status != RunStatus::Cancelled,
    }
}
