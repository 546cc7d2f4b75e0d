//! Holds in the conversation layer (digest A §13–16): a person's stop kept as a row until
//! they lift it. Making one ends what it covers in one write; while it stands nothing it
//! covers starts by itself (admission) or takes an effect (guard); only the person's line or
//! button lifts it, and the lift reopens the stopped work it should.

mod admission;
mod api;
mod facts;
mod guard;
mod lift;
pub(crate) mod lines;
mod log;
mod make;

pub use admission::HoldAdmission;
pub use api::{ComposerStop, HoldRequest, HoldView, ScopeRequest};
pub(crate) use guard::Held;
pub use guard::HoldGuard;
pub use log::WORK_LOG_KINDS;
pub use make::{HoldSpec, Made};
