//! The continuation guard: what keeps a workflow that continues a session by itself (Light Loop,
//! BlueprintLoop; Lattice and Boss Mode later) from spinning without bound. Before each
//! continuation it checks a model-call budget, a no-progress streak and a minimum spacing; a
//! spent budget or a streak pauses the loop until the person resumes it, and a resume grants
//! exactly one more (call, or continuation without progress).

use crate::RunId;
use serde::{Deserialize, Serialize};

/// The limits a loop starts with; the config sets the defaults, a loop's request may override
/// the budget.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardLimits {
    /// Model calls of the loop's own session (reviewers excluded); 0 means unlimited.
    pub max_model_calls: u32,
    /// Continuations in a row whose turns made no tool call before the loop pauses; 0: off.
    pub no_progress_limit: u32,
    /// The least time between the starts of two continuations, in milliseconds.
    pub spacing_ms: i64,
}

impl Default for GuardLimits {
    fn default() -> Self {
        GuardLimits {
            max_model_calls: 200,
            no_progress_limit: 3,
            spacing_ms: 1_000,
        }
    }
}

/// Why the guard paused a loop.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum GuardPause {
    ModelCallBudgetExhausted,
    NoProgress,
}

impl GuardPause {
    pub fn as_str(self) -> &'static str {
        match self {
            GuardPause::ModelCallBudgetExhausted => "model_call_budget_exhausted",
            GuardPause::NoProgress => "no_progress",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "model_call_budget_exhausted" => Ok(GuardPause::ModelCallBudgetExhausted),
            "no_progress" => Ok(GuardPause::NoProgress),
            other => Err(format!("unknown guard pause '{other}'")),
        }
    }
}

/// A loop's guard as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardState {
    /// The current cap: the starting budget, raised by one at each resume after it was spent.
    pub limits: GuardLimits,
    /// Model calls from this time on count (the loop's start), epoch ms.
    pub counted_since: i64,
    /// Continuation turns in a row that made no tool call.
    pub no_progress_streak: u32,
    /// The last run the streak has taken into account.
    pub last_seen_run: Option<RunId>,
    pub last_continuation_at: Option<i64>,
    /// A continuation held back by the spacing is due then (read by the workflow tick).
    pub due_at: Option<i64>,
    pub paused: Option<GuardPause>,
}

impl GuardState {
    pub fn new(limits: GuardLimits, now: i64) -> Self {
        GuardState {
            limits,
            counted_since: now,
            no_progress_streak: 0,
            last_seen_run: None,
            last_continuation_at: None,
            due_at: None,
            paused: None,
        }
    }
}

/// What a turn of the loop's session did, as far as the streak is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TurnFacts {
    pub run: RunId,
    /// The turn answered one of the loop's continuations (not a person's line).
    pub continuation: bool,
    pub tool_calls: u32,
}

/// Take the latest finished turn into account, once. A turn a person asked for resets the
/// streak (they gave it direction); a continuation that made a tool call resets it; one that
/// did not adds to it.
pub fn observe_turn(state: &GuardState, turn: Option<TurnFacts>) -> GuardState {
    let mut s = state.clone();
    let Some(t) = turn else { return s };
    if s.last_seen_run.is_some_and(|seen| seen >= t.run) {
        return s;
    }
    s.last_seen_run = Some(t.run);
    s.no_progress_streak = if t.continuation && t.tool_calls == 0 {
        s.no_progress_streak + 1
    } else {
        0
    };
    s
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuardVerdict {
    /// Propose the continuation now.
    Continue,
    /// Not before `due_at`: the tick drives the session then.
    Wait { due_at: i64 },
    /// Latch the session (`workflow`) with this description; nothing continues until a resume.
    Pause {
        pause: GuardPause,
        description: String,
    },
}

/// Decide on a continuation, given the model calls the loop's session has made so far.
pub fn decide(state: &GuardState, spent: u32, now: i64) -> (GuardState, GuardVerdict) {
    let mut s = state.clone();
    let l = s.limits;
    let pause = if l.max_model_calls > 0 && spent >= l.max_model_calls {
        Some((
            GuardPause::ModelCallBudgetExhausted,
            format!(
                "model-call budget spent: {spent} of {} calls; Continue allows one more",
                l.max_model_calls
            ),
        ))
    } else if l.no_progress_limit > 0 && s.no_progress_streak >= l.no_progress_limit {
        Some((
            GuardPause::NoProgress,
            format!(
                "no progress: {} continuations in a row made no tool call; Continue allows one more",
                s.no_progress_streak
            ),
        ))
    } else {
        None
    };
    if let Some((pause, description)) = pause {
        s.paused = Some(pause);
        s.due_at = None;
        return (s, GuardVerdict::Pause { pause, description });
    }
    s.paused = None;
    if let Some(last) = s.last_continuation_at
        && now < last + l.spacing_ms
    {
        let due_at = last + l.spacing_ms;
        s.due_at = Some(due_at);
        return (s, GuardVerdict::Wait { due_at });
    }
    s.due_at = None;
    s.last_continuation_at = Some(now);
    (s, GuardVerdict::Continue)
}

/// The person resumed the loop: a spent budget grows by exactly one call, a no-progress streak
/// allows exactly one more continuation without progress.
pub fn resume(state: &GuardState, spent: u32) -> GuardState {
    let mut s = state.clone();
    if s.limits.max_model_calls > 0 && spent >= s.limits.max_model_calls {
        s.limits.max_model_calls = spent + 1;
    }
    if s.limits.no_progress_limit > 0 && s.no_progress_streak >= s.limits.no_progress_limit {
        s.no_progress_streak = s.limits.no_progress_limit - 1;
    }
    s.paused = None;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: u32, streak: u32, spacing: i64) -> GuardLimits {
        GuardLimits {
            max_model_calls: max,
            no_progress_limit: streak,
            spacing_ms: spacing,
        }
    }

    #[test]
    fn a_spent_budget_pauses_and_a_resume_grants_exactly_one_call() {
        let s = GuardState::new(limits(3, 0, 0), 0);
        assert_eq!(decide(&s, 2, 10).1, GuardVerdict::Continue);
        let (paused, v) = decide(&s, 3, 10);
        assert!(matches!(
            v,
            GuardVerdict::Pause { pause: GuardPause::ModelCallBudgetExhausted, ref description }
                if description.contains("3 of 3")
        ));
        let resumed = resume(&paused, 3);
        assert_eq!(resumed.limits.max_model_calls, 4);
        assert_eq!(resumed.paused, None);
        assert_eq!(decide(&resumed, 3, 10).1, GuardVerdict::Continue);
        assert!(matches!(
            decide(&resumed, 4, 10).1,
            GuardVerdict::Pause { .. }
        ));
    }

    #[test]
    fn zero_means_unlimited() {
        let s = GuardState::new(limits(0, 0, 0), 0);
        assert_eq!(decide(&s, 1_000_000, 0).1, GuardVerdict::Continue);
    }

    #[test]
    fn continuations_without_progress_pause_and_progress_resets() {
        let mut s = GuardState::new(limits(0, 2, 0), 0);
        let idle = |run| {
            Some(TurnFacts {
                run: RunId(run),
                continuation: true,
                tool_calls: 0,
            })
        };
        s = observe_turn(&s, idle(1));
        // The same run seen twice counts once.
        s = observe_turn(&s, idle(1));
        assert_eq!(s.no_progress_streak, 1);
        assert_eq!(decide(&s, 0, 0).1, GuardVerdict::Continue);
        s = observe_turn(&s, idle(2));
        let (paused, v) = decide(&s, 0, 0);
        assert!(matches!(
            v,
            GuardVerdict::Pause {
                pause: GuardPause::NoProgress,
                ..
            }
        ));
        let resumed = resume(&paused, 0);
        assert_eq!(decide(&resumed, 0, 0).1, GuardVerdict::Continue);
        let again = observe_turn(&resumed, idle(3));
        assert!(matches!(decide(&again, 0, 0).1, GuardVerdict::Pause { .. }));
        let worked = observe_turn(
            &again,
            Some(TurnFacts {
                run: RunId(4),
                continuation: true,
                tool_calls: 2,
            }),
        );
        assert_eq!(worked.no_progress_streak, 0);
        let person = observe_turn(
            &observe_turn(&s, idle(5)),
            Some(TurnFacts {
                run: RunId(6),
                continuation: false,
                tool_calls: 0,
            }),
        );
        assert_eq!(person.no_progress_streak, 0);
    }

    #[test]
    fn continuations_are_spaced_from_the_last_start() {
        let s = GuardState::new(limits(0, 0, 1_000), 0);
        let (s, v) = decide(&s, 0, 5_000);
        assert_eq!(v, GuardVerdict::Continue);
        assert_eq!(s.last_continuation_at, Some(5_000));
        let (s, v) = decide(&s, 0, 5_400);
        assert_eq!(v, GuardVerdict::Wait { due_at: 6_000 });
        assert_eq!(s.due_at, Some(6_000));
        let (s, v) = decide(&s, 0, 6_000);
        assert_eq!(v, GuardVerdict::Continue);
        assert_eq!(s.due_at, None);
    }
}
