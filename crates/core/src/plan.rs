//! A plan (the seed's "task", a "job" to people): one job pursued toward a goal, across
//! conversations. Its spec is versioned; every revision names its cause (PLAN-O2), and only
//! the person renames it (PLAN-2).

use crate::ids::{HoldId, RunId, SessionMessageId};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Longest plan name, in code points (PLAN-1).
pub const NAME_MAX_CHARS: usize = 40;
/// Longest spec field, in code points.
pub const FIELD_MAX_CHARS: usize = 4000;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// In progress.
    Active,
    Done,
    /// Stopped by a hold; set only by the Holds work, never by an edit.
    Parked,
}

/// PLAN-U1: a job that was one question and its answer — closed (done or parked), never laid
/// out in tickets, at most one turn. The Jobs panel folds those away from the work; the job on
/// screen is never folded (the page's rule, not this one).
pub fn is_one_question(status: PlanStatus, tickets: u32, turns: u32) -> bool {
    status != PlanStatus::Active && tickets == 0 && turns <= 1
}

impl PlanStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Active => "active",
            PlanStatus::Done => "done",
            PlanStatus::Parked => "parked",
        }
    }

    pub fn parse(s: &str) -> Result<PlanStatus, String> {
        match s {
            "active" => Ok(PlanStatus::Active),
            "done" => Ok(PlanStatus::Done),
            "parked" => Ok(PlanStatus::Parked),
            other => Err(format!(
                "unknown plan status '{other}' (expected active, done or parked)"
            )),
        }
    }
}

/// The spec fields as the flow board shows them; empty means not written yet.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSpec {
    #[serde(default)]
    pub kind: String,
    /// What exactly to do now.
    #[serde(default)]
    pub goal: String,
    /// Written only by the person (PLAN-O1).
    #[serde(default)]
    pub done_when: String,
    /// Standards, constraints, improvement notes; written only by the person (PLAN-O1).
    #[serde(default)]
    pub rules: String,
    /// Steps, who does what.
    #[serde(default)]
    pub process: String,
    /// Done / to do / stuck.
    #[serde(default)]
    pub progress: String,
}

impl PlanSpec {
    /// The fields in their board order, with their stored names.
    pub fn fields(&self) -> [(&'static str, &str); 6] {
        [
            ("kind", &self.kind),
            ("goal", &self.goal),
            ("done_when", &self.done_when),
            ("rules", &self.rules),
            ("process", &self.process),
            ("progress", &self.progress),
        ]
    }
}

/// Why a revision was made (PLAN-O2): the person's edit, a line, or a turn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RevisionCause {
    User,
    Message(SessionMessageId),
    Turn(RunId),
    /// A hold parked the job, or gave its status back on lift (HOLD-P5).
    Hold(HoldId),
}

impl RevisionCause {
    pub fn is_user(self) -> bool {
        self == RevisionCause::User
    }

    pub fn parse(s: &str) -> Result<RevisionCause, String> {
        if s == "user" {
            return Ok(RevisionCause::User);
        }
        match s.split_once(':') {
            Some(("message", id)) => id.parse().map(RevisionCause::Message),
            Some(("turn", id)) => id.parse().map(RevisionCause::Turn),
            Some(("hold", id)) => id.parse().map(RevisionCause::Hold),
            _ => Err(format!(
                "unknown revision cause '{s}' (expected user, message:<id>, turn:<id> or hold:<id>)"
            )),
        }
    }
}

impl fmt::Display for RevisionCause {
    /// `user`, `message:<n>` or `turn:<n>` (bare numbers: the kind is already named).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RevisionCause::User => f.write_str("user"),
            RevisionCause::Message(m) => write!(f, "message:{}", m.0),
            RevisionCause::Turn(r) => write!(f, "turn:{}", r.0),
            RevisionCause::Hold(h) => write!(f, "hold:{}", h.0),
        }
    }
}

impl FromStr for RevisionCause {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        RevisionCause::parse(s)
    }
}

impl Serialize for RevisionCause {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RevisionCause {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        RevisionCause::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// An edit of a plan; absent fields stay as they are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecPatch {
    pub name: Option<String>,
    pub kind: Option<String>,
    pub goal: Option<String>,
    pub done_when: Option<String>,
    pub rules: Option<String>,
    pub process: Option<String>,
    pub progress: Option<String>,
    pub status: Option<PlanStatus>,
}

impl SpecPatch {
    /// The spec fields the patch sets, by stored name.
    pub fn fields(&self) -> [(&'static str, Option<&str>); 6] {
        [
            ("kind", self.kind.as_deref()),
            ("goal", self.goal.as_deref()),
            ("done_when", self.done_when.as_deref()),
            ("rules", self.rules.as_deref()),
            ("process", self.process.as_deref()),
            ("progress", self.progress.as_deref()),
        ]
    }

    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.status.is_none()
            && self.fields().iter().all(|(_, v)| v.is_none())
    }
}

/// A name as stored: trimmed, 1 to 40 code points, one line.
pub fn validate_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("name: must not be blank".into());
    }
    if name.chars().count() > NAME_MAX_CHARS {
        return Err(format!("name: at most {NAME_MAX_CHARS} characters"));
    }
    if name.chars().any(char::is_control) {
        return Err("name: must be one line without control characters".into());
    }
    Ok(name.to_string())
}

/// What a patch may carry before it is compared with the plan. A patch never parks a plan:
/// parked is the Holds issue's (a stop), so an edit asking for it is refused.
pub fn validate_patch(p: &SpecPatch) -> Result<(), String> {
    if p.is_empty() {
        return Err("nothing to change".into());
    }
    if let Some(name) = &p.name {
        validate_name(name)?;
    }
    for (field, value) in p.fields() {
        if value.is_some_and(|v| v.chars().count() > FIELD_MAX_CHARS) {
            return Err(format!("{field}: at most {FIELD_MAX_CHARS} characters"));
        }
    }
    if p.status == Some(PlanStatus::Parked) {
        return Err(
            "status: parked is set by a stop (a hold), not by an edit; use active or done".into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    #[test]
    fn plan_u1_one_question_is_closed_without_tickets_and_at_most_one_turn() {
        use super::{PlanStatus, is_one_question};
        assert!(is_one_question(PlanStatus::Done, 0, 1));
        assert!(is_one_question(PlanStatus::Parked, 0, 0));
        assert!(
            !is_one_question(PlanStatus::Active, 0, 1),
            "open work is work"
        );
        assert!(
            !is_one_question(PlanStatus::Done, 1, 1),
            "a ticket makes it work"
        );
        assert!(
            !is_one_question(PlanStatus::Done, 0, 2),
            "two turns make it work"
        );
    }
    use super::*;

    #[test]
    fn statuses_parse_and_print() {
        for s in ["active", "done", "parked"] {
            assert_eq!(PlanStatus::parse(s).unwrap().as_str(), s);
        }
        assert!(PlanStatus::parse("closed").is_err());
        assert_eq!(
            serde_json::to_value(PlanStatus::Done).unwrap(),
            serde_json::json!("done")
        );
    }

    #[test]
    fn revision_causes_round_trip() {
        for (cause, text) in [
            (RevisionCause::User, "user"),
            (RevisionCause::Message(SessionMessageId(12)), "message:12"),
            (RevisionCause::Turn(RunId(7)), "turn:7"),
        ] {
            assert_eq!(cause.to_string(), text);
            assert_eq!(RevisionCause::parse(text).unwrap(), cause);
        }
        assert_eq!(
            RevisionCause::parse("message:sm_12").unwrap(),
            RevisionCause::Message(SessionMessageId(12))
        );
        assert!(RevisionCause::parse("hold").is_err());
        assert!(RevisionCause::parse("turn:x").is_err());
    }

    #[test]
    fn plan_1_a_name_is_one_to_forty_code_points() {
        let ok = |n: &str| {
            validate_patch(&SpecPatch {
                name: Some(n.into()),
                ..Default::default()
            })
        };
        assert!(ok("  做一个 logo ").is_ok());
        assert!(ok(&"字".repeat(40)).is_ok());
        assert!(ok(&"字".repeat(41)).unwrap_err().starts_with("name:"));
        assert!(ok("   ").unwrap_err().contains("blank"));
        assert!(ok("a\nb").is_err());
        assert_eq!(validate_name("  Logo  ").unwrap(), "Logo");
    }

    #[test]
    fn spec_fields_are_bounded_and_name_the_field() {
        let p = SpecPatch {
            rules: Some("x".repeat(FIELD_MAX_CHARS + 1)),
            ..Default::default()
        };
        assert!(validate_patch(&p).unwrap_err().starts_with("rules:"));
        let p = SpecPatch {
            goal: Some("x".repeat(FIELD_MAX_CHARS)),
            ..Default::default()
        };
        assert!(validate_patch(&p).is_ok());
    }

    #[test]
    fn an_edit_never_parks_a_plan() {
        let p = SpecPatch {
            status: Some(PlanStatus::Parked),
            ..Default::default()
        };
        let e = validate_patch(&p).unwrap_err();
        assert!(e.starts_with("status:") && e.contains("hold"), "{e}");
        for s in [PlanStatus::Active, PlanStatus::Done] {
            let p = SpecPatch {
                status: Some(s),
                ..Default::default()
            };
            assert!(validate_patch(&p).is_ok());
        }
    }

    #[test]
    fn an_empty_patch_has_nothing_to_change() {
        assert_eq!(
            validate_patch(&SpecPatch::default()).unwrap_err(),
            "nothing to change"
        );
    }
}
