//! Lattice: a large goal aligned, planned as an ordered Pathway of Steps, each Step carried out
//! by a reviewed Blueprint in a Lattice-owned BlueprintLoop, the unstarted rest replanned after
//! each result. The machine is `troupe_core::lattice`; here: the controller that applies it in
//! store transactions and carries out its effects, the continuation policy, the tools, the
//! person's requests (enable, disable, resume, approve, cancel), startup recovery and the
//! follower of loop and note events.

pub mod controller;
pub mod persist;
pub mod policy;
pub mod recovery;
pub mod service;
pub mod texts;
pub mod tools;

pub use recovery::LatticeRecovery;
pub use service::{EnableLattice, LatticeView};
