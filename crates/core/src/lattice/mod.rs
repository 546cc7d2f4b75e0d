//! Lattice: a large goal aligned (requirements), planned as an ordered Pathway of Steps, each
//! Step carried out by a reviewed Blueprint through a Lattice-owned BlueprintLoop, the unstarted
//! rest replanned after each result. Records and the one machine that moves them; the
//! workflow layer persists and carries out what the machine decides.

pub mod action;
pub mod effect;
pub mod machine;
#[cfg(test)]
mod machine_props;
#[cfg(test)]
mod machine_tests;
pub mod pathway;
pub mod pause;
pub mod run;
pub mod step;
pub mod submit;
#[cfg(test)]
mod test_support;

pub use action::{ActionKind, ActionSource, PendingAction, valid_action};
pub use effect::{Effect, PromptType};
pub use machine::{Event, LoopOutcome, MachineError, NoteFacts, Transition, step};
pub use pathway::{FutureStep, PathwayError, PathwayView};
pub use run::{LatticeRun, Mode, Requirements, RunStatus, StatusReason, WorkState};
pub use step::{AttemptStatus, BlueprintBinding, LoopAttempt, Step, StepStatus};
pub use submit::{SubmitFacts, SubmitRefusal, Submitted, budget_spent, submit};
