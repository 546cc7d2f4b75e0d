//! An Agenda item's trigger is a schedule: the pure rules live in the core crate, shared with
//! the routines of the collaboration layer.

pub use troupe_core::schedule::*;
