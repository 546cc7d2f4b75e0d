//! Pipelines: chains of operator agents run as sessions on disk.
//!
//! A pipeline is defined in a folder the user owns ([`defs`]): operators with their prompts,
//! output schemas and stop codes, a routing table from stop domains to routes, and named
//! workflows. A run of a workflow is a [`session`]: a folder under the source checkout with a
//! manifest (`state.json`) and one branch folder per step and parallel branch. Two [`gate`]s
//! check every request before an agent runs and every response after; [`route`] is the pure
//! state machine that turns a validated response into the next manifest and the effects the
//! runner carries out; [`git`] holds the source writes on a session branch and the publish;
//! [`runner`] drives a session by running each operator as a Troupe agent thread.

pub mod defs;
pub mod gate;
pub mod git;
pub mod route;
pub mod runner;
pub mod session;

mod fsutil;
mod hash;
mod stamp;

pub use hash::{sha256_bytes, sha256_file};
pub use stamp::{iso_utc, session_stamp};
