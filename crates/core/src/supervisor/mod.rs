//! The supervisor (C §12, SV-2…SV-20): a deterministic routine the scheduler tick runs over
//! stored records. Each pass is a pure function from a snapshot of what is due to the actions
//! to write; the conversation layer gathers the snapshot and applies the actions in one write.
//! No model calls, no timers of its own: every deadline it sets is a stored time.

pub mod account;
pub mod pickup;
pub mod stalled;
pub mod work;

pub use account::account_failure;
pub use pickup::{
    PickupCause, PickupFacts, PickupVerdict, RestartCause, budget_spent_line, clipped,
    how_it_ended, pickup_line, pickup_verdict,
};
pub use stalled::{
    StalledFacts, StalledVerdict, TicketQuiet, callback_line, stalled_verdict, threshold_ms,
};
pub use work::{LastSegment, WaitFacts, WorkAction, WorkFacts, work_action};

/// SV-7: pick-ups allowed per work item in a rolling hour before the user's word is needed.
pub const PICKUPS_PER_HOUR: u32 = 3;
/// The rolling window pick-ups are counted in.
pub const PICKUP_WINDOW_MS: i64 = 3_600_000;
/// SV-13: a job's tickets are quiet after 2 min without activity…
pub const QUIET_MS: i64 = 120_000;
/// …or 10 min when the job's last line in a user conversation is a Bot's, after the user's.
pub const QUIET_AFTER_BOT_LINE_MS: i64 = 600_000;
/// SV-14: call-backs per ticket per progress cycle.
pub const CALLBACKS_PER_CYCLE: u32 = 2;
/// SV-20: a hand-over with no reviewer waits this long before the tick settles it.
pub const SUBMISSION_WAIT_MS: i64 = 15_000;
