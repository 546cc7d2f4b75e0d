//! Holds (digest A §13–16): a person's stop kept as a row, what it covers, what lifts it,
//! what reopens after, and how a stop line's words and place name its scope.

pub mod scope;

pub use scope::{
    HeldOver, Hold, HoldEffect, HoldScope, HoldSource, HoldStatus, HoldTarget, LiftedBy,
    ParkedPlan, StoppedTurn, TurnFacts,
};
