//! Check-backs (CB-1…9, DEL-24/26): a one-time timer a Bot books for its own work item. The
//! limits keep a Bot from polling, and the ball rule keeps it from booking wakes that can only
//! find the user still to answer.

use crate::ids::{CheckBackId, WorkItemId};
use serde::{Deserialize, Serialize};

/// Shortest wait a Bot may book.
pub const MIN_MINUTES: i64 = 5;
/// Longest wait: seven days.
pub const MAX_MINUTES: i64 = 10_080;
/// Bookings allowed per job in any hour.
pub const PER_HOUR_PER_JOB: usize = 6;
/// Longest note, in characters.
pub const MAX_NOTE_CHARS: usize = 2000;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckBackState {
    Pending,
    /// A hold or a stop covers it; it returns when that lifts.
    SetAside,
    Fired,
    Voided,
    /// Came due for a Bot that is archived or gone; woke nobody.
    Cleared,
}

impl CheckBackState {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckBackState::Pending => "pending",
            CheckBackState::SetAside => "set_aside",
            CheckBackState::Fired => "fired",
            CheckBackState::Voided => "voided",
            CheckBackState::Cleared => "cleared",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "pending" => Ok(CheckBackState::Pending),
            "set_aside" => Ok(CheckBackState::SetAside),
            "fired" => Ok(CheckBackState::Fired),
            "voided" => Ok(CheckBackState::Voided),
            "cleared" => Ok(CheckBackState::Cleared),
            other => Err(format!(
                "unknown check-back state '{other}' (expected pending, set_aside, fired, \
                 voided or cleared)"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckBackArgs {
    pub after_minutes: i64,
    /// What to check when it fires.
    pub note: String,
}

pub fn parse_check_back_args(json: &str) -> Result<CheckBackArgs, String> {
    let obj = tool_args::object("check_back", json)?;
    tool_args::refuse_unknown("check_back", &obj, &["after_minutes", "note"])?;
    let after_minutes = tool_args::optional_int(
        &obj,
        "after_minutes",
        &format!("whole minutes from now, {MIN_MINUTES} to {MAX_MINUTES}"),
    )?
    .ok_or_else(|| {
        format!(
            "`after_minutes` is required: give whole minutes from now, {MIN_MINUTES} to \
             {MAX_MINUTES}."
        )
    })?;
    let note = tool_args::required_text(&obj, "note", "what you will check when you come back")?;
    let chars = note.chars().count();
    if chars > MAX_NOTE_CHARS {
        return Err(format!(
            "`note` is {chars} characters long; keep it to {MAX_NOTE_CHARS}: say briefly what \
             you will check."
        ));
    }
    Ok(CheckBackArgs {
        after_minutes,
        note,
    })
}

/// Why a booking was refused; an ordinary failed call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub text: String,
}

/// Whether a booking may be made. A bad time is reported first; then the ball rule, since no
/// count of bookings makes waking for the user's answer useful; then the hourly limit.
pub fn check_booking(
    args: &CheckBackArgs,
    booked_last_hour_for_job: usize,
    blocked_on_user: bool,
) -> Result<(), Refusal> {
    if !(MIN_MINUTES..=MAX_MINUTES).contains(&args.after_minutes) {
        return Err(Refusal {
            code: "invalid",
            text: format!(
                "`after_minutes` is {}, outside {MIN_MINUTES} to {MAX_MINUTES} (5 minutes to 7 \
                 days). Book again with a wait in that range.",
                args.after_minutes
            ),
        });
    }
    if blocked_on_user {
        return Err(Refusal {
            code: "ball_is_yours",
            text: "This job is waiting on the user: they have the ball, and a check-back would \
                   wake you to nothing new. End your turn and wait for their answer; it wakes \
                   you when it comes."
                .into(),
        });
    }
    if booked_last_hour_for_job >= PER_HOUR_PER_JOB {
        return Err(Refusal {
            code: "check_back_limit",
            text: format!(
                "You have already booked {booked_last_hour_for_job} check-backs on this job in \
                 the last hour (at most {PER_HOUR_PER_JOB}). Do not poll: book one longer wait \
                 that replaces your pending one, or end your turn."
            ),
        });
    }
    Ok(())
}

/// CB-7/DEL-26: a booking replaces only a pending check-back with this exact key, so one job's
/// timer never overwrites another's, nor a delegation wait.
pub fn dedupe_key(work_item: WorkItemId) -> String {
    format!("work_item:{}", work_item.0)
}

/// The delivery key of the wake a check-back fires, so a catch-up cannot deliver it twice.
pub fn fire_key(id: CheckBackId) -> String {
    format!("check_back:{}", id.0)
}

/// CB-1: the private system line the woken segment reads.
pub fn fired_line(note: &str) -> String {
    format!("Check-back: {}", note.trim())
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DueAction {
    Fire,
    /// Due, but its Bot is archived or left: mark it cleared and wake nobody.
    Clear,
    NotYet,
}

/// What a due-time scan does with one check-back. A missed due time is simply due (CB-4):
/// it fires once, because the caller marks it fired in the same write and a fired one is
/// never due again. Delegation waits are not check-backs and never reach this (DEL-24).
pub fn due_action(state: CheckBackState, due_at: i64, now: i64, bot_gone: bool) -> DueAction {
    if state != CheckBackState::Pending || now < due_at {
        DueAction::NotYet
    } else if bot_gone {
        DueAction::Clear
    } else {
        DueAction::Fire
    }
}

/// Argument reading shared by the tools' parsers (check_back, delegate, end_turn): each error
/// names the field and what it takes, so the model can fix the call in one go.
pub(crate) mod tool_args {
    use serde_json::{Map, Value};

    pub(crate) fn object(tool: &str, json: &str) -> Result<Map<String, Value>, String> {
        match serde_json::from_str::<Value>(json) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(format!("{tool}'s arguments must be a JSON object.")),
            Err(e) => Err(format!(
                "{tool}'s arguments are not valid JSON ({e}); send one JSON object."
            )),
        }
    }

    pub(crate) fn refuse_unknown(
        tool: &str,
        obj: &Map<String, Value>,
        allowed: &[&str],
    ) -> Result<(), String> {
        let unknown: Vec<String> = obj
            .keys()
            .filter(|k| !allowed.contains(&k.as_str()))
            .map(|k| format!("`{k}`"))
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        Err(format!(
            "{tool} does not take {}; its arguments are {}.",
            unknown.join(", "),
            allowed.join(", ")
        ))
    }

    pub(crate) fn required_text(
        obj: &Map<String, Value>,
        key: &str,
        what: &str,
    ) -> Result<String, String> {
        match obj.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                Err(format!("`{key}` is required: give {what}."))
            }
            Some(other) => Err(format!("`{key}` must be text ({what}), not {other}.")),
        }
    }

    /// Absent, null or blank reads as none.
    pub(crate) fn optional_text(
        obj: &Map<String, Value>,
        key: &str,
    ) -> Result<Option<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(other) => Err(format!("`{key}` must be text, not {other}.")),
        }
    }

    pub(crate) fn optional_bool(obj: &Map<String, Value>, key: &str) -> Result<bool, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(format!("`{key}` must be true or false, not {other}.")),
        }
    }

    fn int(v: &Value) -> Option<i64> {
        match v {
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| f as i64)
            }),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// A whole number; a string of digits is accepted too.
    pub(crate) fn optional_int(
        obj: &Map<String, Value>,
        key: &str,
        what: &str,
    ) -> Result<Option<i64>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => int(v)
                .map(Some)
                .ok_or_else(|| format!("`{key}` must be a whole number ({what}), not {v}.")),
        }
    }

    fn list<'a>(obj: &'a Map<String, Value>, key: &str, what: &str) -> Result<&'a [Value], String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(other) => Err(format!("`{key}` must be a list of {what}, not {other}.")),
        }
    }

    pub(crate) fn string_list(
        obj: &Map<String, Value>,
        key: &str,
        what: &str,
    ) -> Result<Vec<String>, String> {
        list(obj, key, what)?
            .iter()
            .map(|v| match v {
                Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
                other => Err(format!(
                    "`{key}` must be a list of {what}; {other} is not one."
                )),
            })
            .collect()
    }

    pub(crate) fn int_list(
        obj: &Map<String, Value>,
        key: &str,
        what: &str,
    ) -> Result<Vec<i64>, String> {
        list(obj, key, what)?
            .iter()
            .map(|v| {
                int(v).ok_or_else(|| format!("`{key}` must be a list of {what}; {v} is not one."))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn booking(after_minutes: i64) -> CheckBackArgs {
        CheckBackArgs {
            after_minutes,
            note: "verify render".into(),
        }
    }

    #[test]
    fn states_round_trip_as_snake_case() {
        for s in [
            CheckBackState::Pending,
            CheckBackState::SetAside,
            CheckBackState::Fired,
            CheckBackState::Voided,
            CheckBackState::Cleared,
        ] {
            assert_eq!(CheckBackState::parse(s.as_str()), Ok(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert!(CheckBackState::parse("done").is_err());
    }

    #[test]
    fn check_back_args_parse_and_name_bad_fields() {
        let a = parse_check_back_args(r#"{"after_minutes":30,"note":" verify render "}"#).unwrap();
        assert_eq!(a, booking(30));
        let missing = parse_check_back_args(r#"{"note":"x"}"#).unwrap_err();
        assert!(missing.contains("`after_minutes`"), "{missing}");
        let fraction = parse_check_back_args(r#"{"after_minutes":2.5,"note":"x"}"#).unwrap_err();
        assert!(fraction.contains("`after_minutes`"), "{fraction}");
        let no_note = parse_check_back_args(r#"{"after_minutes":30,"note":""}"#).unwrap_err();
        assert!(no_note.contains("`note`"), "{no_note}");
        let long = format!(r#"{{"after_minutes":30,"note":"{}"}}"#, "x".repeat(2001));
        assert!(parse_check_back_args(&long).unwrap_err().contains("2000"));
        let extra =
            parse_check_back_args(r#"{"after_minutes":30,"note":"x","poll":true}"#).unwrap_err();
        assert!(extra.contains("`poll`"), "{extra}");
    }

    #[test]
    fn booking_under_five_minutes_or_over_a_week_is_invalid() {
        // S-CB-4.
        let short = check_booking(&booking(2), 0, false).unwrap_err();
        assert_eq!(short.code, "invalid");
        assert!(short.text.contains("5 to 10080"), "{}", short.text);
        assert_eq!(
            check_booking(&booking(10_081), 0, false).unwrap_err().code,
            "invalid"
        );
        assert!(check_booking(&booking(5), 0, false).is_ok());
        assert!(check_booking(&booking(10_080), 0, false).is_ok());
    }

    #[test]
    fn seventh_booking_in_an_hour_is_refused() {
        assert!(check_booking(&booking(30), 5, false).is_ok());
        let r = check_booking(&booking(30), 6, false).unwrap_err();
        assert_eq!(r.code, "check_back_limit");
    }

    #[test]
    fn booking_while_the_user_has_the_ball_is_refused_before_the_limit() {
        // S-CB-3.
        let r = check_booking(&booking(30), 6, true).unwrap_err();
        assert_eq!(r.code, "ball_is_yours");
        assert!(r.text.contains("wait for their answer"), "{}", r.text);
        // A bad time is still reported first.
        assert_eq!(
            check_booking(&booking(1), 6, true).unwrap_err().code,
            "invalid"
        );
    }

    #[test]
    fn different_work_items_have_different_dedupe_keys() {
        // S-CB-2: two jobs' check-backs must not replace each other.
        assert_eq!(dedupe_key(WorkItemId(3)), "work_item:3");
        assert_ne!(dedupe_key(WorkItemId(3)), dedupe_key(WorkItemId(4)));
        assert_eq!(fire_key(CheckBackId(9)), "check_back:9");
        assert_eq!(fired_line(" verify render "), "Check-back: verify render");
    }

    #[test]
    fn missed_due_time_fires_once() {
        // S-CB-6: the daemon slept a day past the due time.
        let due = 1_000;
        let late = due + 86_400_000;
        assert_eq!(
            due_action(CheckBackState::Pending, due, late, false),
            DueAction::Fire
        );
        // Marked fired in the same write: the next scan does nothing.
        assert_eq!(
            due_action(CheckBackState::Fired, due, late + 1, false),
            DueAction::NotYet
        );
    }

    #[test]
    fn check_back_not_yet_due_or_not_pending_waits() {
        assert_eq!(
            due_action(CheckBackState::Pending, 1_000, 999, false),
            DueAction::NotYet
        );
        for s in [
            CheckBackState::SetAside,
            CheckBackState::Voided,
            CheckBackState::Cleared,
        ] {
            assert_eq!(due_action(s, 1_000, 2_000, false), DueAction::NotYet);
        }
        assert_eq!(
            due_action(CheckBackState::Pending, 1_000, 1_000, false),
            DueAction::Fire
        );
    }

    #[test]
    fn due_check_back_of_a_gone_bot_clears_and_wakes_nobody() {
        assert_eq!(
            due_action(CheckBackState::Pending, 1_000, 2_000, true),
            DueAction::Clear
        );
    }
}
