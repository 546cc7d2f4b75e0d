//! Property tests for the supervisor's rules (core/src/supervisor, docs/supervisor.md):
//! random ticks over a work item that needs attention, and random due work items.

use proptest::prelude::*;
use troupe_core::supervisor::{
    LastSegment, PICKUPS_PER_HOUR, PickupCause, PickupFacts, PickupVerdict, RestartCause,
    WaitFacts, WorkAction, WorkFacts, pickup_verdict, work_action,
};
use troupe_core::work_item::WorkState;

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

/// What changes between two ticks: the world's facts, or the person speaking.
#[derive(Clone, Debug)]
enum Tick {
    Facts {
        cause: PickupCause,
        restart: Option<RestartCause>,
        held: bool,
        ticket_closed: bool,
        ball_elsewhere: bool,
        bot_unusable: bool,
        unknown_effect: bool,
        cannot_continue: bool,
    },
    /// The user's word: a new window, the budget line may be told again.
    PersonSpeaks,
}

fn tick() -> impl Strategy<Value = Tick> {
    let cause = prop::sample::select(vec![
        PickupCause::Interrupted,
        PickupCause::Failed,
        PickupCause::Restart,
        PickupCause::Attention,
    ]);
    let restart = prop::option::of(prop::sample::select(vec![
        RestartCause::CleanStop,
        RestartCause::Crash,
    ]));
    let rare = || prop::bool::weighted(0.15);
    prop_oneof![
        8 => (cause, restart, rare(), rare(), rare(), rare(), rare(), rare()).prop_map(
            |(cause, restart, held, ticket_closed, ball_elsewhere, bot_unusable, unknown_effect, cannot_continue)| {
                Tick::Facts { cause, restart, held, ticket_closed, ball_elsewhere, bot_unusable, unknown_effect, cannot_continue }
            }
        ),
        1 => Just(Tick::PersonSpeaks),
    ]
}

proptest! {
    #![proptest_config(cases())]

    /// Invariants of the pick-up rule over any run of ticks:
    /// - budget-spending pick-ups between two words of the person never exceed
    ///   PICKUPS_PER_HOUR; a clean stop's cut spends nothing;
    /// - work with an unknown effect, a stop over it, a closed ticket, the ball elsewhere or an
    ///   unusable Bot is never picked up;
    /// - the unknown-effect line and the budget line are each told at most once (per cut,
    ///   per window), however many ticks see them.
    #[test]
    fn pickup_rule_invariants(ticks in prop::collection::vec(tick(), 1..60)) {
        let (mut in_window, mut budget_told, mut unknown_told) = (0u32, false, false);
        let (mut budget_tells, mut unknown_tells) = (0u32, 0u32);
        for t in ticks {
            let Tick::Facts { cause, restart, held, ticket_closed, ball_elsewhere, bot_unusable, unknown_effect, cannot_continue } = t else {
                in_window = 0;
                budget_told = false;
                budget_tells = 0;
                continue;
            };
            let f = PickupFacts {
                cause, restart, held, ticket_closed, ball_elsewhere, bot_unusable,
                unknown_effect: unknown_effect.then(|| "shell: make deploy".to_string()),
                unknown_effect_told: unknown_told,
                cannot_continue: cannot_continue.then(|| "archived".to_string()),
                pickups_in_window: in_window,
                budget_told,
            };
            let blocked = unknown_effect || held || ticket_closed || ball_elsewhere || bot_unusable;
            match pickup_verdict(&f) {
                PickupVerdict::PickUp { attempt, spends_budget, .. } => {
                    prop_assert!(!blocked && !cannot_continue, "picked up despite {f:?}");
                    prop_assert_eq!(spends_budget, restart != Some(RestartCause::CleanStop));
                    if spends_budget {
                        prop_assert_eq!(attempt, in_window + 1);
                        in_window = attempt;
                    }
                }
                PickupVerdict::UnknownEffect { tell, .. } => {
                    prop_assert!(unknown_effect);
                    if tell {
                        unknown_tells += 1;
                        unknown_told = true;
                    }
                }
                PickupVerdict::BudgetSpent { tell } => {
                    prop_assert!(in_window >= PICKUPS_PER_HOUR);
                    if tell {
                        budget_tells += 1;
                        budget_told = true;
                    }
                }
                PickupVerdict::Wait { .. } | PickupVerdict::Refused { .. } => {}
            }
            prop_assert!(in_window <= PICKUPS_PER_HOUR, "{in_window} pick-ups in one window");
            prop_assert!(unknown_tells <= 1 && budget_tells <= 1);
        }
    }

    /// Invariants of the work-item passes for any due work item: work with a live segment
    /// is never requeued or flagged (it is running somewhere); a person's hold keeps
    /// everything where it is — no requeue, no idle, no invalidated wait (a cut segment under
    /// a hold is still marked as needing attention, and the pick-up rule then waits on the
    /// hold); only work that needs attention goes to the pick-up pass.
    #[test]
    fn work_action_invariants(
        state in prop::sample::select(vec![WorkState::Running, WorkState::Queued, WorkState::Idle,
            WorkState::Waiting, WorkState::Blocked, WorkState::NeedsAttention]),
        live_segment: bool, mail: bool, held: bool, paused_by_failure: bool,
        wait in prop::sample::select(vec![WaitFacts::None, WaitFacts::DelegationOpen,
            WaitFacts::DelegationReplied, WaitFacts::Gone { what: "gone".into() }, WaitFacts::User]),
        last_segment in prop::option::of(prop::sample::select(vec![LastSegment::Interrupted,
            LastSegment::Failed, LastSegment::Stopped, LastSegment::Ended])),
    ) {
        let f = WorkFacts { state, live_segment, mail, wait, held, last_segment, paused_by_failure };
        let action = work_action(&f);
        if live_segment {
            prop_assert!(matches!(action, WorkAction::Nothing | WorkAction::PickUp | WorkAction::WaitInvalid { .. }), "{action:?} for {f:?}");
        }
        if held {
            prop_assert!(
                matches!(action, WorkAction::Nothing | WorkAction::PickUp | WorkAction::NeedsAttention),
                "{action:?} for {f:?}"
            );
        }
        prop_assert_eq!(matches!(action, WorkAction::PickUp), state == WorkState::NeedsAttention);
        if action == WorkAction::Requeue {
            prop_assert!(mail);
        }
    }
}
