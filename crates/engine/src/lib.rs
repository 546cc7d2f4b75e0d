//! The kernel runtime: drive, agent loop, tool dispatch with guards and the effect ledger,
//! abort, recovery, and the extension points the collaboration, workflow and pipeline layers
//! plug into. State rules live in `troupe-core`; durable state in `troupe-store`.

mod abort;
mod context;
mod dispatch;
mod drive;
mod engine;
mod error;
pub mod extension;
mod live;
pub mod models;
mod node;
mod recovery;
mod run_loop;
mod shutdown;
mod step;

pub use abort::{RecordedStop, StopMode};
pub use drive::DriveOutcome;
pub use engine::{Engine, EngineBuilder, EngineConfig};
pub use error::EngineError;
pub use live::StreamNotice;
pub use models::{ModelResolver, ResolvedModel, RoleTable};
pub use node::{NodeTick, host_name};
pub use recovery::RecoveryReport;
