//! Tickets in the conversation layer (digest 003-B §1–3): the lead's layout (`plan_items`),
//! ticket folders with their `ticket.md`, work on a ticket, the waits for dependencies and the
//! sample, the guards (ticket folders, large jobs, work starting), the ticket part of a
//! segment's situation, the board's edits, who does what in a job, and a job's delivery.

pub mod api;
pub mod ball;
pub mod delivery;
pub(crate) mod descend;
pub mod folders;
pub mod graph;
pub mod guards;
mod large_reading;
pub(crate) mod layout;
pub mod lead;
pub mod need_you;
pub mod situation;
pub mod view;
pub mod who;
pub(crate) mod work;
pub mod work_rules;

pub use api::{LargeChoiceRequest, NewTicketRequest, PartsRequest, TicketPatchRequest};
pub use delivery::after_stage_change;
pub use guards::{LargeJobGuard, TicketFolderGuard, WorkStarted, not_laid_out};
pub use need_you::NeedYou;
pub use situation::TicketSituation;
pub use view::{TicketList, TicketView};
pub use who::{BotShareView, TurnsRun};
pub use work_rules::{OneSegmentPerJob, TicketEndings};
