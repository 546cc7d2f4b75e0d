//! Holds in the conversation layer (digest A §13–16): a person's stop kept as a row until
//! they lift it. Making one ends what it covers in one write; while it stands nothing it
//! covers starts by itself (admission) or takes an effect (guard); only the person's line or
//! button lifts it, and the lift reopens the stopped work it should.

mod admission;
mod api;
mod boot;
mod control;
mod facts;
mod guard;
pub(crate) mod lift;
pub(crate) use lift::AfterLift;
pub(crate) mod lines;
pub(crate) mod log;
mod make;
pub(crate) mod readonly;

pub use admission::{HoldAdmission, routine_due_under_hold};
pub use api::{ComposerStop, HoldRequest, HoldView, ScopeRequest};
pub use boot::HoldRepair;
pub use control::{ControlOutcome, ControlRequest};
pub(crate) use guard::Held;
pub use guard::HoldGuard;
pub use log::WORK_LOG_KINDS;
pub use make::{HoldSpec, Made};
pub use readonly::ReadonlyTools;

/// The holds in force over the next turn on `thread`.
pub(crate) fn holds_over(
    tx: &Tx<'_>,
    thread: troupe_core::ThreadId,
) -> Result<Vec<troupe_core::HoldId>, StoreError> {
    facts::holds_over_thread(tx, thread)
}

use troupe_store::{CheckBackRecord, StoreError, Tx};

/// A check-back a hold covers is set aside on its first hold's list instead of firing
/// (HOLD-C1, W4); the suppressed wake is logged. Whether it was.
pub(crate) fn set_aside_if_held(tx: &mut Tx<'_>, cb: &CheckBackRecord) -> Result<bool, StoreError> {
    let Some(f) = facts::check_back_facts(tx, cb)? else {
        return Ok(false);
    };
    let holds = tx.covering_holds(&f)?;
    let Some(first) = holds.first() else {
        return Ok(false);
    };
    tx.set_check_back_state(cb.id, troupe_core::check_back::CheckBackState::SetAside)?;
    let mut h = tx.hold(*first)?;
    if !h.effect.check_backs_set_aside.contains(&cb.id) {
        h.effect.check_backs_set_aside.push(cb.id);
        tx.set_hold_effect(h.id, &h.effect)?;
    }
    log::wake_suppressed(tx, f.thread_id, "check_back", &holds)?;
    Ok(true)
}
