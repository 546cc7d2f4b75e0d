//! Property tests for the BlueprintLoop status rule (core/src/blueprint_loop.rs):
//! random requested status changes, applied only when `check_transition` allows them.

use proptest::prelude::*;
use troupe_core::blueprint_loop::{LoopStatus, check_transition};

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

const ALL: [LoopStatus; 6] = [
    LoopStatus::Armed,
    LoopStatus::Running,
    LoopStatus::Auditing,
    LoopStatus::Completed,
    LoopStatus::Failed,
    LoopStatus::Cancelled,
];

proptest! {
    #![proptest_config(cases())]

    /// Invariants over any sequence of requested changes from `armed`:
    /// - a loop completes only through running or auditing (never straight from armed), so
    ///   nothing completes without having run;
    /// - `failed` and `cancelled` absorb every later change; `completed` accepts only itself;
    /// - `armed` is never re-entered once left;
    /// - a refused change names both statuses and leaves the loop where it was;
    /// - only active statuses project a session phase, and status names round-trip.
    #[test]
    fn blueprint_loop_status_invariants(requests in prop::collection::vec(prop::sample::select(ALL.to_vec()), 1..40)) {
        let mut status = LoopStatus::Armed;
        let mut ran = false;
        for to in requests {
            match check_transition(status, to) {
                Ok(()) => {
                    prop_assert!(!matches!(status, LoopStatus::Failed | LoopStatus::Cancelled),
                        "{status:?} -> {to:?} left a final status");
                    if status == LoopStatus::Completed {
                        prop_assert_eq!(to, LoopStatus::Completed);
                    }
                    prop_assert!(to != LoopStatus::Armed, "armed re-entered from {status:?}");
                    if to == LoopStatus::Completed {
                        prop_assert!(ran, "completed without running");
                    }
                    status = to;
                    ran |= status == LoopStatus::Running;
                }
                Err(e) => {
                    prop_assert_eq!(e.from, status.as_str());
                    prop_assert_eq!(e.to, to.as_str());
                }
            }
            prop_assert_eq!(status.phase().is_some(), matches!(status, LoopStatus::Running | LoopStatus::Auditing));
            prop_assert!(status.phase().is_none() || status.is_active());
            prop_assert_eq!(LoopStatus::parse(status.as_str()).unwrap(), status);
        }
    }
}
