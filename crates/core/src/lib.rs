//! Troupe's domain types and pure state machines. No I/O, no async: every rule here is a
//! function of its inputs, so each can be proven by a scenario test without a database.

pub mod acceptance_check;
pub mod ball;
pub mod blueprint_loop;
pub mod boss;
pub mod bot_memory;
pub mod ceiling;
pub mod channel_push;
pub mod check_back;
pub mod clock;
pub mod closing_check;
pub mod continuation_guard;
pub mod conversation;
pub mod delegation;
pub mod delivery;
pub mod dormancy;
pub mod drive;
pub mod effect;
pub mod ending;
pub mod external_job;
mod field;
pub mod hold;
pub mod ids;
pub mod inbox;
pub mod large_job;
pub mod lattice;
pub mod lead;
pub mod lesson;
pub mod line_flow;
pub mod line_queue;
pub mod mention;
pub mod message;
pub mod nod;
pub mod notification;
pub mod participation;
pub mod pause;
pub mod plan;
pub mod plan_name;
pub mod quality;
pub mod quote;
pub mod reading;
pub mod reflection;
pub mod repeat;
pub mod repeated_reply;
pub mod requirement;
pub mod retrospective;
pub mod review;
pub mod routine;
pub mod run;
pub mod runtime_boss;
pub mod sample_standard;
pub mod schedule;
pub mod scribe_patch;
pub mod seams;
pub mod skill;
pub mod submission;
pub mod supervisor;
pub mod thread;
pub mod ticket;
pub mod time;
pub mod words_check;
pub mod work_item;

pub use clock::{Clock, ManualClock, SystemClock};
pub use ids::{
    BotId, CheckBackId, CheckId, DelegationId, EffectId, EventId, HoldId, InboxItemId,
    LatticeRunId, MessageId, PartId, PlanId, ReviewId, RunId, SessionId, SessionMessageId,
    SubmissionId, ThreadId, TicketId, WorkItemId,
};
