//! Pick-up of work that needs attention (SV-7…SV-11, SV-15, SV-19, restart causes): whether
//! the tick continues it now, and what it tells the user when it will not.

use crate::run::EndReason;
use serde::Serialize;

/// How the process that ran the cut segment ended (issue 16 §3).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartCause {
    /// The daemon drained and stopped cleanly: picking the work up spends no budget.
    CleanStop,
    /// The daemon died: pick-ups spend budget and record an `orchestration` quality event.
    Crash,
}

/// Why the work needs attention, as the pick-up's line and its `wait_spec` say.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PickupCause {
    Interrupted,
    Failed,
    Restart,
    /// The ending contract bounced it twice, or its wait went away.
    Attention,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickupFacts {
    pub cause: PickupCause,
    /// Set when the segment was cut by its daemon stopping.
    pub restart: Option<RestartCause>,
    /// A person's hold covers the work (SV-10).
    pub held: bool,
    /// Its ticket is closed (done or dropped) (SV-10).
    pub ticket_closed: bool,
    /// Another request's recipient holds the ticket's ball (SV-10, S-SV-12).
    pub ball_elsewhere: bool,
    /// The Bot's last ended segment failed on sign-in, a missing model or spent quota (SV-15).
    pub bot_unusable: bool,
    /// A shell or MCP call of the cut segment whose outcome is unknown (SV-19), named.
    pub unknown_effect: Option<String>,
    /// The `unknown_effect` line was already written for this cut.
    pub unknown_effect_told: bool,
    /// Why the engine cannot continue from the line (archived conversation, the job under way
    /// elsewhere): a refusal that spends nothing (SV-9).
    pub cannot_continue: Option<String>,
    /// Budget-spending pick-ups in the window: the last hour, since the user's last word.
    pub pickups_in_window: u32,
    /// The `retry_budget` line was already written since the user's last word.
    pub budget_told: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum PickupVerdict {
    /// Not now, and nothing to say: re-armed by what changes it (a lift, a line, progress).
    Wait { why: String },
    /// SV-19: an unknown effect: no continuation; the user is told once.
    UnknownEffect { call: String, tell: bool },
    /// SV-7: budget spent: the user is told once; none until their word.
    BudgetSpent { tell: bool },
    /// SV-9: the engine cannot continue from it; nothing spent; retried next tick.
    Refused { why: String },
    /// Continue it. `attempt` counts budget-spending pick-ups in the window, this one included.
    PickUp {
        attempt: u32,
        spends_budget: bool,
        cause: PickupCause,
    },
}

/// The pick-up rule for one work item that needs attention. The unknown-effect rule comes
/// first (only the person's Continue forces past it), then the stops and the ball, then the
/// budget; a clean stop's cut is picked up without spending it.
pub fn pickup_verdict(f: &PickupFacts) -> PickupVerdict {
    if let Some(call) = &f.unknown_effect {
        return PickupVerdict::UnknownEffect {
            call: call.clone(),
            tell: !f.unknown_effect_told,
        };
    }
    if f.held {
        return PickupVerdict::Wait {
            why: "a stop covers it".into(),
        };
    }
    if f.ticket_closed {
        return PickupVerdict::Wait {
            why: "its ticket is closed".into(),
        };
    }
    if f.ball_elsewhere {
        return PickupVerdict::Wait {
            why: "another request's recipient holds the ball".into(),
        };
    }
    if f.bot_unusable {
        return PickupVerdict::Wait {
            why: "the Bot's last turn failed on its sign-in, model or quota".into(),
        };
    }
    if let Some(why) = &f.cannot_continue {
        return PickupVerdict::Refused { why: why.clone() };
    }
    let spends = f.restart != Some(RestartCause::CleanStop);
    if spends && f.pickups_in_window >= super::PICKUPS_PER_HOUR {
        return PickupVerdict::BudgetSpent {
            tell: !f.budget_told,
        };
    }
    PickupVerdict::PickUp {
        attempt: f.pickups_in_window + u32::from(spends),
        spends_budget: spends,
        cause: if f.restart.is_some() {
            PickupCause::Restart
        } else {
            f.cause
        },
    }
}

/// The Bot-only line a pick-up starts from when there is no cut-off line to resume (SV-7).
pub fn pickup_line(cause: PickupCause, last_step: Option<&str>, attempt: u32) -> String {
    let what = match cause {
        PickupCause::Interrupted => "Your last turn on this work was cut off",
        PickupCause::Failed => "Your last turn on this work failed",
        PickupCause::Restart => "Your last turn on this work was cut off by a restart",
        PickupCause::Attention => "This work needed attention",
    };
    let step = last_step
        .map(|s| format!(" Its last step: {s}."))
        .unwrap_or_default();
    format!(
        "{what}.{step} Pick it up from where it stopped (attempt {attempt} of {}): check what \
         was already done before repeating anything.",
        super::PICKUPS_PER_HOUR
    )
}

/// SV-7's line to the person once the pick-ups are spent: what the last attempt ended on
/// (`ended`, from [`how_it_ended`]) so they need not dig for why, then `ways_on`.
pub fn budget_spent_line(ended: Option<&str>, ways_on: &str) -> String {
    let why = ended
        .map(|e| format!(" The last attempt ended: {e}."))
        .unwrap_or_default();
    format!(
        "This work failed {} times within an hour and was picked up each time; it is not \
         retried again by itself.{why} To go on, {ways_on}.",
        super::PICKUPS_PER_HOUR
    )
}

/// How a run ended, in a person's words, clipped to a line; `None` when its end says nothing
/// beyond "it failed" (the failure notes then speak, the last one first).
pub fn how_it_ended(end: Option<&EndReason>, failure_notes: &[String]) -> Option<String> {
    let words = match end {
        Some(EndReason::ModelError(d)) => Some(format!("the model call failed ({d})")),
        Some(EndReason::HopLimit(n)) => Some(format!("it reached its limit of {n} steps")),
        Some(EndReason::Interrupted) => Some("it was cut off when Troupe stopped".to_string()),
        Some(EndReason::Internal(d)) => Some(format!("Troupe itself failed ({d})")),
        Some(EndReason::Consumer {
            detail: Some(d), ..
        }) => Some(d.clone()),
        _ => None,
    }
    .or_else(|| failure_notes.last().cloned())?;
    Some(clipped(&words, 300).trim_end_matches('.').to_string())
}

/// `words` trimmed and cut to `max` characters, with `…` where they were cut.
pub fn clipped(words: &str, max: usize) -> String {
    let words = words.trim();
    let mut out: String = words.chars().take(max).collect();
    if words.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spent_budget_line_says_how_the_last_attempt_ended() {
        let ended = how_it_ended(
            Some(&EndReason::ModelError(
                "default: HTTP 500: the model's answer was not a tool call.".into(),
            )),
            &[],
        );
        let line = budget_spent_line(ended.as_deref(), "write to @Ada");
        assert!(
            line.contains(
                "The last attempt ended: the model call failed (default: HTTP 500: the model's \
                 answer was not a tool call.). To go on, write to @Ada."
            ),
            "{line}"
        );
        assert!(line.starts_with("This work failed 3 times within an hour"));
        let long = "x".repeat(400);
        let clipped = how_it_ended(Some(&EndReason::Internal(long)), &[]).unwrap();
        assert_eq!(
            clipped.chars().count(),
            301,
            "300 characters and the ellipsis"
        );
        assert!(clipped.ends_with('…'));
        assert_eq!(
            how_it_ended(
                Some(&EndReason::Completed),
                &["shell failed 3 times in a row".into()]
            )
            .as_deref(),
            Some("shell failed 3 times in a row")
        );
        assert_eq!(how_it_ended(Some(&EndReason::Stopped), &[]), None);
        assert!(!budget_spent_line(None, "x").contains("ended:"));
    }

    fn facts() -> PickupFacts {
        PickupFacts {
            cause: PickupCause::Failed,
            restart: None,
            held: false,
            ticket_closed: false,
            ball_elsewhere: false,
            bot_unusable: false,
            unknown_effect: None,
            unknown_effect_told: false,
            cannot_continue: None,
            pickups_in_window: 0,
            budget_told: false,
        }
    }

    #[test]
    fn sv_7_picks_up_three_times_then_tells_once() {
        let mut f = facts();
        for n in 0..3 {
            f.pickups_in_window = n;
            assert_eq!(
                pickup_verdict(&f),
                PickupVerdict::PickUp {
                    attempt: n + 1,
                    spends_budget: true,
                    cause: PickupCause::Failed
                }
            );
        }
        f.pickups_in_window = 3;
        assert_eq!(
            pickup_verdict(&f),
            PickupVerdict::BudgetSpent { tell: true }
        );
        f.budget_told = true;
        assert_eq!(
            pickup_verdict(&f),
            PickupVerdict::BudgetSpent { tell: false }
        );
    }

    #[test]
    fn sv_19_an_unknown_effect_comes_first() {
        let mut f = facts();
        f.held = true;
        f.unknown_effect = Some("shell `make deploy`".into());
        assert_eq!(
            pickup_verdict(&f),
            PickupVerdict::UnknownEffect {
                call: "shell `make deploy`".into(),
                tell: true
            }
        );
    }

    #[test]
    fn sv_10_no_pickup_under_a_stop_a_closed_ticket_or_the_ball_elsewhere() {
        for set in [
            |f: &mut PickupFacts| f.held = true,
            |f: &mut PickupFacts| f.ticket_closed = true,
            |f: &mut PickupFacts| f.ball_elsewhere = true,
            |f: &mut PickupFacts| f.bot_unusable = true,
        ] {
            let mut f = facts();
            set(&mut f);
            assert!(matches!(pickup_verdict(&f), PickupVerdict::Wait { .. }));
        }
    }

    #[test]
    fn sv_9_a_refused_pickup_spends_nothing() {
        let mut f = facts();
        f.pickups_in_window = 3;
        f.cannot_continue = Some("the conversation is archived".into());
        assert!(matches!(pickup_verdict(&f), PickupVerdict::Refused { .. }));
    }

    #[test]
    fn clean_stop_spends_no_budget_crash_does() {
        let mut f = facts();
        f.restart = Some(RestartCause::CleanStop);
        f.pickups_in_window = 3;
        assert_eq!(
            pickup_verdict(&f),
            PickupVerdict::PickUp {
                attempt: 3,
                spends_budget: false,
                cause: PickupCause::Restart
            }
        );
        f.restart = Some(RestartCause::Crash);
        assert_eq!(
            pickup_verdict(&f),
            PickupVerdict::BudgetSpent { tell: true }
        );
    }

    #[test]
    fn the_line_names_the_last_step_and_the_attempt() {
        let line = pickup_line(PickupCause::Failed, Some("shell `cargo test`"), 2);
        assert!(line.contains("shell `cargo test`"));
        assert!(line.contains("attempt 2 of 3"));
    }
}
