//! Boss Mode: a conversation as the root of a tree of persistent workers. The rules are
//! `troupe_core::boss`; here the tree is read from the store (`members`), the operations the tools
//! and routes share (`service`), the tools, the worker nudge (`policy`) and what each turn is told
//! (`texts`). Boss keeps no ledger: assignments and reports are inbox items and the messages they
//! become.

pub mod members;
pub mod policy;
pub mod service;
pub mod texts;
pub mod tools;

pub use service::{
    AssignRequest, Assigned, BossService, CancelRequest, Cancelled, SpawnRequest, Spawned,
};
