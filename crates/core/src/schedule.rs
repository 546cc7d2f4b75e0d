//! When a schedule is due (an Agenda item's trigger, a routine's): pure functions of a
//! trigger and clock readings (ms since the epoch, taken from the injectable [`crate::Clock`]
//! by the caller).
//!
//! A recurring item that was due several times while the daemon was down fires once, at the
//! first tick that sees it, and its next deadline is the first period boundary after that tick:
//! missed periods are skipped, never replayed one by one. A `cron` trigger follows the same
//! rule: after a delivery its next deadline is the first occurrence strictly after that tick,
//! computed on the wall clock of its IANA time zone (daylight-saving changes included).

use crate::Clock;
use chrono::TimeZone;
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The shortest period or delay accepted, and the longest (a year).
pub const MIN_SECONDS: u64 = 1;
pub const MAX_SECONDS: u64 = 366 * 24 * 3600;
/// The longest cron expression accepted.
pub const MAX_EXPR_CHARS: usize = 200;

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
    /// Repeatedly, at each match of a five-field cron expression (minute hour day-of-month month
    /// day-of-week, e.g. `0 9 * * MON-FRI`) read on the wall clock of `tz`, an IANA time zone
    /// such as `Europe/Paris`; the first run is the first match strictly after creation.
    Cron { expr: String, tz: String },
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
                "trigger: {e} (expected {{\"kind\":\"at\",\"at\":<ms>}}, {{\"kind\":\"delay\",\"seconds\":N}}, {{\"kind\":\"every\",\"seconds\":N,\"start_at\"?:<ms>}} or {{\"kind\":\"cron\",\"expr\":\"<min hour dom month dow>\",\"tz\":\"<IANA zone>\"}})"
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
            Trigger::Cron { expr, tz } => {
                CronSchedule::new(expr, tz)?;
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
            Trigger::Cron { .. } => "cron",
        }
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The first deadline of a trigger set at `set_at`; none only for a cron trigger with no
    /// occurrence left (or one that is unreadable, which [`Trigger::parse`] refuses).
    pub fn first_due(&self, set_at: i64) -> Option<i64> {
        match self {
            Trigger::At { at } => Some(*at),
            Trigger::Delay { seconds } => Some(set_at.saturating_add(ms(*seconds))),
            Trigger::Every { seconds, start_at } => {
                Some(start_at.unwrap_or_else(|| set_at.saturating_add(ms(*seconds))))
            }
            Trigger::Cron { expr, tz } => CronSchedule::new(expr, tz).ok()?.next_after(set_at),
        }
    }

    /// The first deadline, read from a clock.
    pub fn first_due_on(&self, clock: &dyn Clock) -> Option<i64> {
        self.first_due(clock.now_ms())
    }

    /// The deadline after a delivery made at `now` for the deadline `due`: none for a one-time
    /// trigger; for a recurring one the first period boundary (or cron occurrence) strictly
    /// after `now`, so periods missed while the daemon was down are skipped.
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
            Trigger::Cron { expr, tz } => CronSchedule::new(expr, tz).ok()?.next_after(now),
        }
    }
}

/// A validated cron expression and its time zone.
struct CronSchedule {
    cron: Cron,
    tz: Tz,
}

impl CronSchedule {
    fn new(expr: &str, tz: &str) -> Result<CronSchedule, String> {
        if expr.trim().is_empty() {
            return Err("trigger.expr: must not be empty".into());
        }
        if expr.chars().count() > MAX_EXPR_CHARS {
            return Err(format!(
                "trigger.expr: at most {MAX_EXPR_CHARS} characters (got {})",
                expr.chars().count()
            ));
        }
        let cron = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build()
            .parse(expr)
            .map_err(|e| {
                format!(
                    "trigger.expr: '{expr}' is not a valid cron expression ({e}); expected five fields: minute hour day-of-month month day-of-week, e.g. \"0 9 * * MON-FRI\""
                )
            })?;
        let zone: Tz = tz.parse().map_err(|_| {
            format!("trigger.tz: unknown time zone '{tz}' (expected an IANA name such as \"Europe/Paris\" or \"UTC\")")
        })?;
        let schedule = CronSchedule { cron, tz: zone };
        // Without a year field every satisfiable pattern matches within a few decades of any
        // moment; one that does not (say, February 30) would never fire.
        if schedule.next_after(0).is_none() {
            return Err(format!("trigger.expr: '{expr}' never matches a date"));
        }
        Ok(schedule)
    }

    /// The first occurrence strictly after `after` (ms since the epoch), in ms.
    fn next_after(&self, after: i64) -> Option<i64> {
        // Occurrences fall on whole seconds: searching past the second holding `after` gives
        // the first one strictly after it.
        let second = after.div_euclid(1000).saturating_mul(1000);
        let start = self.tz.timestamp_millis_opt(second).single()?;
        let next = self.cron.find_next_occurrence(&start, false).ok()?;
        Some(next.timestamp_millis())
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
    use crate::ManualClock;
    use serde_json::json;

    const H: i64 = 3_600_000;

    #[test]
    fn at_fires_once_at_its_moment() {
        let clock = ManualClock::new(1_000);
        let t = Trigger::parse(&json!({"kind": "at", "at": 5_000})).unwrap();
        let due = t.first_due_on(&clock).unwrap();
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
        assert_eq!(t.first_due_on(&clock), Some(40_000));
        assert!(fire(Some(&t), false, 40_000, 40_000).done);
    }

    #[test]
    fn every_moves_one_period_on_from_its_deadline() {
        let clock = ManualClock::new(0);
        let t = Trigger::parse(&json!({"kind": "every", "seconds": 3600})).unwrap();
        let due = t.first_due_on(&clock).unwrap();
        assert_eq!(due, H);
        // Delivered a little late: the next deadline keeps the cadence, it does not drift.
        clock.set(H + 900);
        assert_eq!(t.next_after(due, clock.now_ms()), Some(2 * H));
        let start =
            Trigger::parse(&json!({"kind": "every", "seconds": 60, "start_at": 7})).unwrap();
        assert_eq!(start.first_due(1_000_000), Some(7));
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

    /// Epoch ms of a UTC wall-clock reading.
    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
        chrono::Utc
            .with_ymd_and_hms(y, mo, d, h, mi, 0)
            .single()
            .unwrap()
            .timestamp_millis()
    }

    fn weekdays_nine_paris() -> Trigger {
        Trigger::parse(&json!({"kind": "cron", "expr": "0 9 * * MON-FRI", "tz": "Europe/Paris"}))
            .unwrap()
    }

    #[test]
    fn cron_skips_the_weekend_in_its_zone() {
        let t = weekdays_nine_paris();
        assert_eq!(t.kind(), "cron");
        assert_eq!(Trigger::parse(&t.to_value()).unwrap(), t);
        // Friday 27 Nov 2026, 09:00 Paris (CET, UTC+1) exactly: strictly after, so Monday.
        let clock = ManualClock::new(utc(2026, 11, 27, 8, 0));
        assert_eq!(t.first_due_on(&clock), Some(utc(2026, 11, 30, 8, 0)));
        // A moment before: the same day.
        assert_eq!(
            t.first_due(utc(2026, 11, 27, 7, 59) + 999),
            Some(utc(2026, 11, 27, 8, 0))
        );
    }

    #[test]
    fn cron_follows_daylight_saving_changes() {
        let t = weekdays_nine_paris();
        // Spring forward on Sunday 29 Mar 2026: Friday is CET (08:00 UTC), Monday CEST (07:00 UTC).
        assert_eq!(
            t.first_due(utc(2026, 3, 27, 9, 0)),
            Some(utc(2026, 3, 30, 7, 0))
        );
        // Fall back on Sunday 25 Oct 2026: Monday is CET again (08:00 UTC).
        assert_eq!(
            t.first_due(utc(2026, 10, 23, 8, 0)),
            Some(utc(2026, 10, 26, 8, 0))
        );
        // A daily time inside the spring-forward gap still runs that day, after the gap.
        let gap =
            Trigger::parse(&json!({"kind": "cron", "expr": "30 2 * * *", "tz": "Europe/Paris"}))
                .unwrap();
        let next = gap.first_due(utc(2026, 3, 28, 12, 0)).unwrap();
        assert!(
            next > utc(2026, 3, 29, 0, 0) && next <= utc(2026, 3, 29, 1, 30),
            "{next}"
        );
    }

    #[test]
    fn cron_missed_while_down_fires_once_then_the_next_occurrence() {
        let t = weekdays_nine_paris();
        let due = utc(2026, 11, 23, 8, 0); // Monday 09:00 Paris
        // Back on Wednesday at noon Paris: one delivery, next is Thursday 09:00.
        let now = utc(2026, 11, 25, 11, 0);
        let f = fire(Some(&t), false, due, now);
        assert_eq!(
            f,
            Fire {
                next: Some(utc(2026, 11, 26, 8, 0)),
                done: false
            }
        );
        assert!(!is_due(f.next, now));
    }

    #[test]
    fn bad_cron_triggers_name_the_field() {
        let e = Trigger::parse(&json!({"kind": "cron", "expr": "61 9 * * *", "tz": "UTC"}))
            .unwrap_err();
        assert!(e.starts_with("trigger.expr: "), "{e}");
        let e =
            Trigger::parse(&json!({"kind": "cron", "expr": "every day", "tz": "UTC"})).unwrap_err();
        assert!(e.starts_with("trigger.expr: "), "{e}");
        let e = Trigger::parse(&json!({"kind": "cron", "expr": "0 0 30 2 *", "tz": "UTC"}))
            .unwrap_err();
        assert!(
            e.starts_with("trigger.expr: ") && e.contains("never"),
            "{e}"
        );
        let e = Trigger::parse(&json!({"kind": "cron", "expr": "0 9 * * *", "tz": "Mars/Olympus"}))
            .unwrap_err();
        assert_eq!(
            e,
            "trigger.tz: unknown time zone 'Mars/Olympus' (expected an IANA name such as \"Europe/Paris\" or \"UTC\")"
        );
    }
}
