//! The retrospective (digest 003-B §11, ADR 0062): once a delivered job has been quiet for
//! 30 minutes, each of the (at most three) Bots that handed over most in it looks back once at
//! its own conduct from the job's record — never the transcript — and works what it learned
//! into its own memories and skills, within the memory tool's limits and the skill edit
//! rules. A Bot nothing went wrong for is recorded as skipped without a model call (RS4).

pub mod answer;
pub mod changes;
pub mod prompt;
pub mod skill_changes;

use crate::BotId;
use crate::quality::cause;

/// RS2: the job has been quiet this long since its delivery and its last activity.
pub const QUIET_MS: i64 = 30 * 60_000;
/// RS3: only deliveries this recent qualify.
pub const RECENT_MS: i64 = 7 * 24 * 3_600_000;
/// RS3: at most this many Bots look back per delivery.
pub const MAX_BOTS: usize = 3;
/// §11.5: at most this many retrospectives with a model call a day…
pub const DAY_LIMIT: usize = 12;
/// …costing at most this much (US dollars) a day.
pub const DAY_BUDGET_USD: f64 = 2.0;
/// §11.3: each list holds at most five entries.
pub const LIST_MAX: usize = 5;
/// §11.3: at most three memories written, rewritten or merged…
pub const WRITES_MAX: usize = 3;
/// …and at most three deleted.
pub const DELETES_MAX: usize = 3;

/// Whether a job delivered at `delivered_at`, last active at `last_activity`, is due for its
/// retrospective at `now` (RS2, RS3).
pub fn due(delivered_at: i64, last_activity: i64, now: i64) -> bool {
    let quiet_since = delivered_at.max(last_activity);
    now - quiet_since >= QUIET_MS && now - delivered_at <= RECENT_MS
}

/// RS3: the Bots that handed over most, at most three; a tie goes to the lower id, so the
/// choice is the same on every tick.
pub fn pick_bots(handovers: &[(BotId, u32)]) -> Vec<BotId> {
    let mut v: Vec<(BotId, u32)> = handovers.iter().copied().filter(|(_, n)| *n > 0).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.0.cmp(&b.0.0)));
    v.into_iter().take(MAX_BOTS).map(|(b, _)| b).collect()
}

/// What counts as having gone wrong for a Bot (RS4), as one line for the record and the
/// prompt; `None` for a cause that does not (a model error, a stall, a ceiling…).
pub fn went_wrong_line(quality_cause: &str) -> Option<&'static str> {
    Some(match quality_cause {
        cause::CHECKS_FAILED => "a hand-over failed its checks",
        cause::REVIEW_REJECTED => "a review rejected a hand-over",
        cause::USER_SENT_BACK => "the person sent a hand-over back",
        cause::COMPLAINT => "a complaint sent approved work back for rework",
        cause::REQUIREMENT_AFTER_HANDOVER => "a requirement was first said after a hand-over",
        cause::CHECK_AFTER_HANDOVER => "a check was written after a hand-over",
        cause::RENDER_FAILED => "a render was lost",
        cause::COMMAND_TIMED_OUT => "a command was killed by its timeout",
        _ => return None,
    })
}

/// RS4: everything that went wrong for the Bot, from its quality events' causes and the
/// tickets it handed over more than once (`(ticket label, times)`). Empty: it is skipped.
pub fn went_wrong(causes: &[String], handed_over_again: &[(String, u32)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in causes {
        if let Some(line) = went_wrong_line(c) {
            out.push(line.to_string());
        }
    }
    for (ticket, n) in handed_over_again.iter().filter(|(_, n)| *n > 1) {
        out.push(format!("ticket {ticket} was handed over {n} times"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rs2_due_after_thirty_quiet_minutes_and_only_for_a_week() {
        let min = 60_000;
        assert!(!due(0, 0, 29 * min));
        assert!(due(0, 0, 30 * min));
        assert!(
            !due(0, 20 * min, 40 * min),
            "activity since delivery restarts the wait"
        );
        assert!(due(0, 20 * min, 50 * min));
        assert!(
            !due(0, 0, RECENT_MS + 1),
            "RS3: older deliveries do not qualify"
        );
    }

    #[test]
    fn rs3_the_three_that_handed_over_most() {
        let picked = pick_bots(&[
            (BotId(4), 1),
            (BotId(2), 3),
            (BotId(9), 3),
            (BotId(1), 2),
            (BotId(5), 0),
        ]);
        assert_eq!(picked, [BotId(2), BotId(9), BotId(1)]);
        assert!(pick_bots(&[(BotId(5), 0)]).is_empty());
    }

    #[test]
    fn rs4_only_the_listed_failures_count() {
        let causes: Vec<String> = ["checks_failed", "stall", "model_error", "complaint"]
            .map(String::from)
            .to_vec();
        let lines = went_wrong(&causes, &[("01".into(), 1), ("02".into(), 3)]);
        assert_eq!(
            lines,
            [
                "a hand-over failed its checks",
                "a complaint sent approved work back for rework",
                "ticket 02 was handed over 3 times",
            ]
        );
        let clean = went_wrong(&["stall".into(), "hop_limit".into()], &[("01".into(), 1)]);
        assert!(clean.is_empty(), "a stall is not the Bot's conduct");
    }
}
