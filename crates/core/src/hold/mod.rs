//! Holds (digest A §13–16): a person's stop kept as a row, what it covers, what lifts it,
//! what reopens after, and how a stop line's words and place name its scope.

pub mod cascade;
pub mod control;
pub mod cover;
pub mod lifetime;
pub mod lift;
pub mod parking;
pub mod reopen;
pub mod scope;
pub mod scope_words;

#[cfg(test)]
mod test_support;

pub use cascade::{DelegationEdge, Handoff, MAX_HANDOFFS, delegation_targets, handed_on};
pub use control::{ControlAction, ControlHandling, control_handling, visible_offer};
pub use cover::{covering, covers};
pub use lift::{LineFacts, lift_by_line};
pub use parking::{Restore, held_by, park, parking_holds, parks_plan, restore};
pub use reopen::{LiftTrigger, Reopen, reopen_after_lift};
pub use scope::{
    HeldOver, Hold, HoldEffect, HoldScope, HoldSource, HoldStatus, HoldTarget, LiftedBy,
    ParkedPlan, StoppedTurn, TurnFacts,
};
pub use scope_words::{Place, scope_from_words};
