//! Routines (seed 003: the morning brief): work a Bot does again and again on a schedule, in
//! one conversation. Each due time adds a ticket to the routine's standing job, whose runs are
//! approved once their gates pass (`by: routine`, RT-a), which never goes dormant (PLAN-D11),
//! which the supervisor never calls back (SV-12) and no retrospective looks back on (RS3). A
//! routine coming due under a hold counts as not run and runs once, for its latest due time,
//! after the lift (HOLD-W6).
//!
//! The rules here are pure: the schedule a routine may have, the limits of its fields, what a
//! tick does with it, and the words of a run's ticket and task.

use crate::schedule::Trigger;
use chrono::{Datelike, TimeZone, Timelike};
use serde_json::Value;

/// A name is at most this many characters (one per Bot, compared without case).
pub const NAME_MAX: usize = 80;
/// What a run does, at most this many characters.
pub const INSTRUCTION_MAX: usize = 4_000;
/// A Bot has at most this many routines.
pub const PER_BOT_MAX: usize = 20;
/// Runs come at least this far apart: each one opens a ticket and a turn.
pub const MIN_GAP_SECONDS: i64 = 15 * 60;
/// Occurrences of a cron schedule looked at for the shortest gap (a month of a daily pattern,
/// any pattern's irregular gaps within a few days).
const GAPS_LOOKED_AT: usize = 64;

/// A name as stored: trimmed, one line, 1–80 characters.
pub fn name(raw: &str) -> Result<String, String> {
    crate::field::one_line("name", raw, NAME_MAX)
}

/// What each run does, as stored: trimmed, 1–4,000 characters.
pub fn instruction(raw: &str) -> Result<String, String> {
    let t = raw.trim();
    if !t.chars().any(char::is_alphanumeric) {
        return Err("instruction: say what each run does".into());
    }
    let n = t.chars().count();
    if n > INSTRUCTION_MAX {
        return Err(format!(
            "instruction: {n} characters; at most {INSTRUCTION_MAX}"
        ));
    }
    Ok(t.to_string())
}

/// Why a Bot that has `held` routines may not have another.
pub fn room_for_one_more(held: usize) -> Result<(), String> {
    if held >= PER_BOT_MAX {
        Err(format!(
            "this Bot has {PER_BOT_MAX} routines already; delete one first"
        ))
    } else {
        Ok(())
    }
}

/// A routine's schedule: `every` (at least 15 minutes) or `cron` (no two runs closer than 15
/// minutes), read at `now`. One-time triggers are Agenda items, not routines.
pub fn schedule(v: &Value, now: i64) -> Result<Trigger, String> {
    let t = Trigger::parse(v).map_err(|e| e.replacen("trigger", "schedule", 1))?;
    match &t {
        Trigger::At { .. } | Trigger::Delay { .. } => Err(
            "schedule: a routine repeats — use {\"kind\":\"every\",\"seconds\":N} or \
             {\"kind\":\"cron\",\"expr\":\"0 9 * * MON-FRI\",\"tz\":\"Europe/Paris\"}"
                .into(),
        ),
        Trigger::Every { seconds, .. } => {
            if (*seconds as i64) < MIN_GAP_SECONDS {
                return Err(format!(
                    "schedule.seconds: at least {MIN_GAP_SECONDS} (15 minutes); got {seconds}"
                ));
            }
            Ok(t)
        }
        Trigger::Cron { expr, .. } => {
            let mut at = now;
            let mut prev: Option<i64> = None;
            for _ in 0..GAPS_LOOKED_AT {
                let Some(next) = t.next_after(at, at) else {
                    break;
                };
                if let Some(p) = prev
                    && next - p < MIN_GAP_SECONDS * 1000
                {
                    return Err(format!(
                        "schedule.expr: '{expr}' runs {} minutes apart; a routine runs at most \
                         every 15 minutes",
                        (next - p) / 60_000
                    ));
                }
                prev = Some(next);
                at = next;
            }
            Ok(t)
        }
    }
}

/// A routine's state as a tick reads it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DueFacts {
    /// Paused routines never run.
    pub active: bool,
    pub next_due_at: Option<i64>,
    /// A due time a hold kept from running, not run yet.
    pub owed_due_at: Option<i64>,
    /// A hold covers the Bot's work on the routine now.
    pub held: bool,
}

/// What a tick does with a routine.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DueStep {
    Nothing,
    /// Run for `due` (a scheduled time, or the one a hold kept back).
    Run {
        due: i64,
    },
    /// A hold kept this due time from running: it is owed (replacing an older one owed) and
    /// runs after the lift. `first`: nothing was owed before, so the suppressed wake is
    /// recorded now (once per hold: HOLD-W4, W6).
    Owe {
        due: i64,
        first: bool,
    },
}

/// HOLD-W6 on a tick at `now`: a due time runs unless held; held, it is owed and only the
/// latest owed one runs, once, when no hold covers the routine any more. Whether the
/// scheduled deadline moves on is the caller's: it does whenever it came due.
pub fn due_step(f: &DueFacts, now: i64) -> DueStep {
    if !f.active {
        return DueStep::Nothing;
    }
    let scheduled = f.next_due_at.filter(|d| *d <= now);
    match (scheduled, f.owed_due_at, f.held) {
        (Some(due), owed, true) => DueStep::Owe {
            due,
            first: owed.is_none(),
        },
        (Some(due), _, false) => DueStep::Run { due },
        (None, Some(due), false) => DueStep::Run { due },
        (None, _, _) => DueStep::Nothing,
    }
}

/// A due time as the person reads it: on the schedule's own wall clock for a cron schedule
/// (`2026-12-07 09:00`), in UTC otherwise (`2026-12-07 09:00 UTC`).
pub fn due_label(schedule: Option<&Trigger>, due: i64) -> String {
    if let Some(Trigger::Cron { tz, .. }) = schedule
        && let Ok(zone) = tz.parse::<chrono_tz::Tz>()
        && let Some(t) = zone.timestamp_millis_opt(due).single()
    {
        return minutes(&t);
    }
    match chrono::Utc.timestamp_millis_opt(due).single() {
        Some(t) => format!("{} UTC", minutes(&t)),
        None => due.to_string(),
    }
}

/// `YYYY-MM-DD HH:MM` of a wall-clock time.
fn minutes<T: Datelike + Timelike>(t: &T) -> String {
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute()
    )
}

/// The latest due time at or before `now`, from the scheduled `due` on: a routine whose
/// periods the daemon slept through runs once, for the newest of them ("today's brief").
pub fn latest_due(schedule: &Trigger, due: i64, now: i64) -> i64 {
    if let Trigger::Every { seconds, .. } = schedule {
        let p = (*seconds as i64).saturating_mul(1000).max(1);
        return if now <= due {
            due
        } else {
            due + (now - due) / p * p
        };
    }
    let mut latest = due;
    while let Some(next) = schedule.next_after(latest, latest) {
        if next > now {
            break;
        }
        latest = next;
    }
    latest
}

/// The key (and origin) of the task a run's turn opens on, one per routine and due time.
pub fn run_key(routine: i64, due: i64) -> String {
    format!("{RUN_KEY_PREFIX}{routine}:{due}")
}

const RUN_KEY_PREFIX: &str = "routine:";

/// Whether a timer's origin is a routine's run: work the person scheduled, not a wake nobody
/// asked for.
pub fn is_run_key(origin: &str) -> bool {
    origin.starts_with(RUN_KEY_PREFIX)
}

/// The title of the ticket a run opens in the standing job.
pub fn run_title(name: &str, label: &str) -> String {
    format!("{name} — {label}")
}

/// The task a run's turn opens on: which routine, which ticket, what to do, where to say it,
/// and how a run ends (a hand-over is approved once its checks pass; nobody waits on it).
pub fn run_task(
    name: &str,
    label: &str,
    ticket_number: i64,
    instruction: &str,
    place: &str,
) -> String {
    format!(
        "Your routine \"{name}\" is due ({label}). This run is ticket {ticket_number:02} of its \
         standing job; each run has a ticket of its own.\n\n\
         What to do each run:\n{instruction}\n\n\
         Do it now, in this ticket's folder: write the files first, then hand them over with \
         `submit` naming them (a routine's run is approved as soon as its checks pass; nobody \
         waits to approve it), and say what the run produced in {place}."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: i64 = 1_796_000_000_000;

    #[test]
    fn a_routine_repeats_at_least_fifteen_minutes_apart() {
        assert!(schedule(&json!({"kind": "every", "seconds": 900}), NOW).is_ok());
        let e = schedule(&json!({"kind": "every", "seconds": 899}), NOW).unwrap_err();
        assert!(e.contains("at least 900"), "{e}");
        let e = schedule(&json!({"kind": "at", "at": NOW + 1}), NOW).unwrap_err();
        assert!(e.contains("a routine repeats"), "{e}");
        let e = schedule(&json!({"kind": "delay", "seconds": 3600}), NOW).unwrap_err();
        assert!(e.contains("a routine repeats"), "{e}");
        let daily = json!({"kind": "cron", "expr": "0 9 * * MON-FRI", "tz": "Europe/Paris"});
        assert!(schedule(&daily, NOW).is_ok());
        let e = schedule(
            &json!({"kind": "cron", "expr": "*/5 * * * *", "tz": "UTC"}),
            NOW,
        )
        .unwrap_err();
        assert!(e.contains("5 minutes apart"), "{e}");
        // Two runs close together once a day are refused too.
        let e = schedule(
            &json!({"kind": "cron", "expr": "0,10 9 * * *", "tz": "UTC"}),
            NOW,
        )
        .unwrap_err();
        assert!(e.contains("10 minutes apart"), "{e}");
        let e = schedule(
            &json!({"kind": "cron", "expr": "0 9 * *", "tz": "UTC"}),
            NOW,
        )
        .unwrap_err();
        assert!(e.starts_with("schedule.expr"), "{e}");
    }

    #[test]
    fn names_and_instructions_are_checked() {
        assert_eq!(name("  Morning brief ").unwrap(), "Morning brief");
        assert!(name("").is_err());
        assert!(name(&"x".repeat(NAME_MAX + 1)).is_err());
        assert!(name("two\nlines").is_err());
        assert!(instruction("  ...  ").is_err());
        assert!(instruction(&"a".repeat(INSTRUCTION_MAX + 1)).is_err());
        assert_eq!(
            instruction(" Sum up the news. ").unwrap(),
            "Sum up the news."
        );
        assert!(room_for_one_more(PER_BOT_MAX - 1).is_ok());
        assert!(room_for_one_more(PER_BOT_MAX).is_err());
    }

    fn facts(next: Option<i64>, owed: Option<i64>, held: bool) -> DueFacts {
        DueFacts {
            active: true,
            next_due_at: next,
            owed_due_at: owed,
            held,
        }
    }

    #[test]
    fn a_due_time_runs_unless_held() {
        assert_eq!(
            due_step(&facts(Some(NOW + 1), None, false), NOW),
            DueStep::Nothing
        );
        assert_eq!(
            due_step(&facts(Some(NOW), None, false), NOW),
            DueStep::Run { due: NOW }
        );
        let paused = DueFacts {
            active: false,
            ..facts(Some(NOW), Some(NOW - 5), false)
        };
        assert_eq!(due_step(&paused, NOW), DueStep::Nothing);
    }

    #[test]
    fn under_a_hold_the_latest_due_time_is_owed_and_runs_once_after_the_lift() {
        // S-HOLD-9: due three times under a hold — recorded once, the latest owed.
        let first = due_step(&facts(Some(NOW), None, true), NOW);
        assert_eq!(
            first,
            DueStep::Owe {
                due: NOW,
                first: true
            }
        );
        let again = due_step(&facts(Some(NOW + 10), Some(NOW), true), NOW + 10);
        assert_eq!(
            again,
            DueStep::Owe {
                due: NOW + 10,
                first: false
            }
        );
        // Still held and nothing newly due: nothing.
        assert_eq!(
            due_step(&facts(Some(NOW + 20), Some(NOW + 10), true), NOW + 15),
            DueStep::Nothing
        );
        // Lifted: the owed one runs.
        assert_eq!(
            due_step(&facts(Some(NOW + 20), Some(NOW + 10), false), NOW + 15),
            DueStep::Run { due: NOW + 10 }
        );
        // Lifted as the next one comes due: that one runs and stands for the owed one.
        assert_eq!(
            due_step(&facts(Some(NOW + 20), Some(NOW + 10), false), NOW + 20),
            DueStep::Run { due: NOW + 20 }
        );
    }

    #[test]
    fn periods_slept_through_run_for_the_latest() {
        let hourly = Trigger::parse(&json!({"kind": "every", "seconds": 3600})).unwrap();
        let h = 3_600_000;
        assert_eq!(latest_due(&hourly, NOW, NOW - 1), NOW);
        assert_eq!(latest_due(&hourly, NOW, NOW + h - 1), NOW);
        assert_eq!(latest_due(&hourly, NOW, NOW + 5 * h + 60_000), NOW + 5 * h);
        let daily =
            Trigger::parse(&json!({"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"})).unwrap();
        // 2026-12-07 09:00 UTC, and three days later at 09:00 exactly.
        let due = 1_796_634_000_000;
        let day = 24 * h;
        assert_eq!(latest_due(&daily, due, due + 3 * day), due + 3 * day);
        assert_eq!(latest_due(&daily, due, due + 3 * day - 1), due + 2 * day);
        assert!(is_run_key(&run_key(4, due)));
        assert!(!is_run_key("check_back:4"));
    }

    #[test]
    fn a_due_time_reads_on_the_schedules_clock() {
        let cron =
            Trigger::parse(&json!({"kind": "cron", "expr": "0 9 * * *", "tz": "Asia/Tokyo"}))
                .unwrap();
        let every = Trigger::parse(&json!({"kind": "every", "seconds": 3600})).unwrap();
        // 2026-12-07T00:00:00Z is 09:00 in Tokyo.
        let due = 1_796_601_600_000;
        assert_eq!(due_label(Some(&cron), due), "2026-12-07 09:00");
        assert_eq!(due_label(Some(&every), due), "2026-12-07 00:00 UTC");
        assert_eq!(
            run_title("Morning brief", "2026-12-07 09:00"),
            "Morning brief — 2026-12-07 09:00"
        );
        let task = run_task(
            "Morning brief",
            "2026-12-07 09:00",
            3,
            "Sum up the news.",
            "the group \"Ops\"",
        );
        assert!(task.contains("ticket 03"), "{task}");
        assert!(task.contains("Sum up the news."), "{task}");
        assert!(task.contains("the group \"Ops\""), "{task}");
    }
}
