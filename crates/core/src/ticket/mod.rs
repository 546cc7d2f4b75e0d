//! Tickets (digest B §1): a job's units of deliverable work, their stage machine, parts,
//! dependencies and folders.

pub mod part;
pub mod stage;

pub use part::{PartEvent, PartStage, next_part_stage};
pub use stage::{
    AppPass, Approval, AutoApproval, SendBack, StageEvent, StageRefusal, StageSource, TicketStage,
    TicketStatus, next_stage, stage_source,
};
