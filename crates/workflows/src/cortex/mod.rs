//! Child tasks (the seeds' Cortex): a thread hands a prompt to a named agent, which works on
//! it in an unattended child thread; the parent gets the result as a steer item when the
//! child ends, and reads it any time with `task_output` ([`await_end`]: waiting a while for
//! a task still working). Reviewers are child tasks too
//! ([`prepare::prepare_child`] with [`troupe_store::TaskRole::Reviewer`]).
//!
//! The rules are pure ([`machine`]: statuses and admission under the caps; [`contract`]: what
//! a final reply yields); [`runtime`] applies them in store transactions and drives the
//! children; [`wait`] holds the parent's continuation while its tasks work; [`admission`]
//! keeps a child from running outside its task.

pub mod admission;
pub mod api;
pub mod await_end;
pub mod cascade;
pub mod contract;
pub mod machine;
pub mod prepare;
pub mod runtime;
pub mod texts;
pub mod tools;
pub mod wait;

pub use contract::OutputContract;
pub use prepare::{ChildRequest, Prepared, follow_up, prepare_child, resume};
pub use runtime::start_admitted;
