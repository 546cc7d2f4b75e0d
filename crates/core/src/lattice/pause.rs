//! How a Run's pause shows on the session's latch (LAT-13): a machine pause latches the session
//! `workflow` with its reason in words, the first pause winning; leaving the pause, or pausing
//! because the person left, lifts only a `workflow` latch — a latch with any other reason (a
//! person's stop, a failed turn) is theirs and stays.

use super::run::{LatticeRun, RunStatus, StatusReason};
use crate::pause::{PauseReason, Paused};

/// What to do to the session latch after a Run changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LatchChange {
    None,
    /// Latch `workflow` with this description, unless the session is latched already.
    Latch(String),
    /// Lift the latch if, and only if, its reason is `workflow`.
    ReleaseWorkflow,
}

pub fn latch_text(reason: StatusReason) -> String {
    format!("Lattice run paused: {}", reason.words())
}

/// The latch change for a Run that went from `before` to `after`.
pub fn sync(before: &LatticeRun, after: &LatticeRun) -> LatchChange {
    let was = before.status == RunStatus::Paused;
    let is = after.status == RunStatus::Paused;
    match (was, is, after.status_reason) {
        (false, true, Some(StatusReason::UserExit)) => LatchChange::ReleaseWorkflow,
        (false, true, Some(reason)) => LatchChange::Latch(latch_text(reason)),
        (true, false, _) => LatchChange::ReleaseWorkflow,
        _ => LatchChange::None,
    }
}

/// Whether a latch may be lifted by a Run leaving its pause.
pub fn releasable(latch: Option<&Paused>) -> bool {
    latch.is_some_and(|p| p.reason == PauseReason::Workflow)
}
