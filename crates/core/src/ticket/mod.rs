//! Tickets (digest B §1): a job's units of deliverable work, their stage machine, parts,
//! dependencies and folders.

pub mod dependency;
pub mod folder;
pub mod part;
pub mod stage;
pub mod who_ran;

pub use dependency::{
    DependencyError, MAX_DEPENDENCIES, TicketNode, Wait, blocking, check_dependencies, find_loop,
    held_to_sample, holds_back, is_through, sample_dependencies, waits_for, waits_for_sample,
};
pub use folder::{looks_like_ticket_folder, ticket_folder_name};
pub use part::{PartEvent, PartStage, next_part_stage};
pub use stage::{
    AppPass, Approval, AutoApproval, SendBack, StageEvent, StageRefusal, StageSource, TicketStage,
    TicketStatus, next_stage, stage_source,
};
pub use who_ran::{
    BotShare, RanNote, SUGGEST_REVIEWER_AT, TicketPeople, TurnCount, ran_by, ran_note,
    reviewer_suggestion, shares,
};
