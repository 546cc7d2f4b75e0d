//! When an Agenda item is due: pure functions of a trigger and clock readings (ms since the
//! epoch, taken from the injectable [`troupe_core::Clock`] by the caller).
//!
//! A recurring item that was due several times while the daemon was down fires once, at the
//! first tick that sees it, and its next deadline is the first period boundary after that tick:
//! missed periods are skipped, never replayed one by one.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use troupe_core::Clock;

/// The shortest period or delay accepted, and the longest (a year).
pub const MIN_SECONDS: u64 = 1;
pub const MAX_SECONDS: u64 = 366 * 24 * 3600;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Trigger {
    /// Once, at a moment (ms since the epoch; a moment already past fires at the next tick).
    At { at: i64 },
    /// Once, this many seconds after creation (or after the trigger was last set).
    Delay { seconds: u64 },
    /// Repeatedly, every this many seconds; the first run is one period after creation, or at
    /// `start_at` when given.
    Every {
        seconds: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start_at: Option<i64>,
    },
}

/// What a delivery at a due time does to the item.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Fire {
    /// The next deadline, or none when the item is finished.
    pub next: Option<i64>,
    /// The item becomes done.
    pub done: bool,
}

fn check_seconds(what: &str, s: u64) -> Result<(), String> {
    if !(MIN_SECONDS..=MAX_SECONDS).contains(&s) {
        return Err(format!(
            "trigger.{what}: must be between {MIN_SECONDS} and {MAX_SECONDS} seconds (got {s})"
        ));
    }
    Ok(())
}

impl Trigger {
    /// Read and validate a trigger given as JSON (`{"kind": "at"|"delay"|"every", …}`).
    pub fn parse(v: &Value) -> Result<Trigger, String> {
        let t: Trigger = serde_json::from_value(v.clone()).map_err(|e| {
            format!(
                "trigger: {e} (expected {{\"kind\":\"at\",\"at\":<ms>}}, {{\"kind\":\"delay\",\"seconds\":N}} or {{\"kind\":\"every\",\"seconds\":N,\"start_at\"?:<ms>}})"
            )
        })?;
        match &t {
            Trigger::At { at } if *at < 0 => {
                return Err("trigger.at: must be a time in ms since the epoch".into());
            }
            Trigger::Delay { seconds } => check_seconds("seconds", *seconds)?,
            Trigger::Every { seconds, start_at } => {
                check_seconds("seconds", *seconds)?;
                if start_at.is_some_and(|s| s < 0) {
                    return Err("trigger.start_at: must be a time in ms since the epoch".into());
                }
            }
            Trigger::At { .. } => {}
        }
        Ok(t)
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Trigger::At { .. } => "at",
            Trigger::Delay { .. } => "delay",
            Trigger::Every { .. } => "every",
        }
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The first deadline of a trigger set at `set_at`.
    pub fn first_due(&self, set_at: i64) -> i64 {
        match self {
            Trigger::At { at } => *at,
            Trigger::Delay { seconds } => set_at.saturating_add(ms(*seconds)),
            Trigger::Every { seconds, start_at } => {
                start_at.unwrap_or_else(|| set_at.saturating_add(ms(*seconds)))
            }
        }
    }

    /// The first deadline, read from a clock.
    pub fn first_due_on(&self, clock: &dyn Clock) -> i64 {
        self.first_due(clock.now_ms())
    }

    /// The deadline after a delivery made at `now` for the deadline `due`: none for a one-time
    /// trigger; for a recurring one the first period boundary strictly after `now`, so periods
    /// missed while the daemon was down are skipped.
    pub fn next_after(&self, due: i64, now: i64) -> Option<i64> {
        match self {
            Trigger::At { .. } | Trigger::Delay { .. } => None,
            Trigger::Every { seconds, .. } => {
                let p = ms(*seconds);
                if due.saturating_add(p) > now {
                    return Some(due.saturating_add(p));
                }
                let periods = (now - due) / p + 1;
                Some(due.saturating_add(p.saturating_mul(periods)))
            }
        }
    }
}

fn ms(seconds: u64) -> i64 {
    i64::try_from(seconds.saturating_mul(1000)).unwrap_or(i64::MAX)
}

/// Whether a stored deadline is due at `now`.
pub fn is_due(next_run_at: Option<i64>, now: i64) -> bool {
    next_run_at.is_some_and(|n| n <= now)
}

/// What delivering the deadline `due` at `now` does: a one-shot watch (`auto_done`) or a
/// one-time trigger is done; a recurring one moves to its next deadline. An unreadable trigger
/// (`None`) fires once and is done.
pub fn fire(trigger: Option<&Trigger>, auto_done: bool, due: i64, now: i64) -> Fire {
    let next = match trigger {
        Some(t) if !auto_done => t.next_after(due, now),
        _ => None,
    };
    Fire {
        next,
        done: next.is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use troupe_core::ManualClock;

    const H: i64 = 3_600_000;

    #[test]
    fn at_fires_once_at_its_moment() {
        let clock = ManualClock::new(1_000);
        let t = Trigger::parse(&json!({"kind": "at", "at": 5_000})).unwrap();
        let due = t.first_due_on(&clock);
        assert_eq!(due, 5_000);
        assert!(!is_due(Some(due), clock.now_ms()));
        clock.set(5_000);
        assert!(is_due(Some(due), clock.now_ms()));
        assert_eq!(
            fire(Some(&t), false, due, clock.now_ms()),
            Fire {
                next: None,
                done: true
            }
        );
    }

    #[test]
    fn delay_counts_from_when_it_is_set() {
        let clock = ManualClock::new(10_000);
        let t = Trigger::parse(&json!({"kind": "delay", "seconds": 30})).unwrap();
        assert_eq!(t.first_due_on(&clock), 40_000);
        assert!(fire(Some(&t), false, 40_000, 40_000).done);
    }

    #[test]
    fn every_moves_one_period_on_from_its_deadline() {
        let clock = ManualClock::new(0);
        let t = Trigger::parse(&json!({"kind": "every", "seconds": 3600})).unwrap();
        let due = t.first_due_on(&clock);
        assert_eq!(due, H);
        // Delivered a little late: the next deadline keeps the cadence, it does not drift.
        clock.set(H + 900);
        assert_eq!(t.next_after(due, clock.now_ms()), Some(2 * H));
        let start =
            Trigger::parse(&json!({"kind": "every", "seconds": 60, "start_at": 7})).unwrap();
        assert_eq!(start.first_due(1_000_000), 7);
    }

    #[test]
    fn periods_missed_while_down_fire_once_not_once_each() {
        let t = Trigger::Every {
            seconds: 3600,
            start_at: None,
        };
        // Due at 1h; the daemon comes back at 5h30: one delivery, then the next boundary (6h).
        let f = fire(Some(&t), false, H, 5 * H + H / 2);
        assert_eq!(
            f,
            Fire {
                next: Some(6 * H),
                done: false
            }
        );
        assert!(!is_due(f.next, 5 * H + H / 2));
        // Exactly on a boundary: that boundary is the one delivered, the next is one period on.
        assert_eq!(t.next_after(H, 3 * H), Some(4 * H));
    }

    #[test]
    fn a_one_shot_watch_is_done_after_its_first_delivery_even_when_recurring() {
        let t = Trigger::Every {
            seconds: 60,
            start_at: None,
        };
        assert!(fire(Some(&t), true, 60_000, 60_000).done);
        assert!(fire(None, false, 60_000, 60_000).done);
    }

    #[test]
    fn bad_triggers_are_refused_with_the_contract() {
        for bad in [
            json!({"kind": "delay", "seconds": 0}),
            json!({"kind": "every", "seconds": 400_000_000}),
            json!({"kind": "at"}),
            json!({"kind": "cron", "expr": "* * * * *"}),
            json!({"kind": "at", "at": 5, "extra": 1}),
            json!("every hour"),
        ] {
            let e = Trigger::parse(&bad).unwrap_err();
            assert!(e.starts_with("trigger"), "{e}");
        }
        let t = Trigger::parse(&json!({"kind": "every", "seconds": 60})).unwrap();
        assert_eq!(Trigger::parse(&t.to_value()).unwrap(), t);
        assert_eq!(t.kind(), "every");
    }
}
