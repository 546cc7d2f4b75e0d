//! BlueprintLoop: one execution of a Blueprint note in a session, kept going by its
//! continuation policy until an independent `supervisor` audit approves it. The pure machine is
//! `machine`; `commit` applies a step in a transaction through the store's single transition
//! point; `auditor` binds and runs the audit session; `policy`, `tools`, `service` and
//! `recovery` are the edges.

pub mod auditor;
pub mod commit;
pub mod looked;
pub mod machine;
pub mod policy;
pub mod recovery;
pub mod service;
pub mod texts;
pub mod tools;
pub mod worktree;
