//! The approval of a hand-over by the app, with no reviewer (digest B §4.7 CK3–CK5, §4.8
//! RT-a and OG-a, §4.5 W5, LJ7; digest C §12 SV-20 a–h). One pure function, run when the
//! checks finish, on every change to its inputs, and by the supervisor's tick: nothing is
//! accepted on a Bot's say.

use crate::CheckId;
use crate::submission::{ApprovedBy, SubmissionOrigin};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Who wrote a check (CK3). The user's own and the organizer's are gates; one from the user's
/// words is a gate only once the user confirmed it; the sample's standard check (SC5) is a
/// gate whose pass backs an approval like a user check.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckSource {
    User,
    /// Not built (no organizer); a stored value kept for its meaning.
    Organizer,
    Words,
    /// "Holds to the standard of sample #NN" (SC1–SC10).
    Sample,
}

impl CheckSource {
    pub const ALL: [CheckSource; 4] = [
        CheckSource::User,
        CheckSource::Organizer,
        CheckSource::Words,
        CheckSource::Sample,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CheckSource::User => "user",
            CheckSource::Organizer => "organizer",
            CheckSource::Words => "words",
            CheckSource::Sample => "sample",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        CheckSource::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                format!("check source '{s}' is not one of user, organizer, words, sample")
            })
    }
}

impl fmt::Display for CheckSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A bound check's result for this submission (only runs started after it count: CK2).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckResult {
    Pass,
    Fail,
    /// Not run yet for this submission, or still running.
    Pending,
    /// No judgement could be made (SC6: no model, the user's stop, the picture budget spent).
    NotJudged,
}

impl CheckResult {
    pub const ALL: [CheckResult; 4] = [
        CheckResult::Pass,
        CheckResult::Fail,
        CheckResult::Pending,
        CheckResult::NotJudged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CheckResult::Pass => "pass",
            CheckResult::Fail => "fail",
            CheckResult::Pending => "pending",
            CheckResult::NotJudged => "not_judged",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        CheckResult::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                format!("check result '{s}' is not one of pass, fail, pending, not_judged")
            })
    }
}

/// One check bound to the submission (CK1), as the approval sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundCheck {
    pub check_id: CheckId,
    pub source: CheckSource,
    /// The user confirmed it (only meaningful for checks from the user's words).
    pub confirmed: bool,
    pub result: CheckResult,
}

impl BoundCheck {
    /// CK3: user-written, organizer-written, the sample's standard, or from the user's words
    /// and confirmed. An unconfirmed proposal is measured and shown but holds nothing.
    pub fn is_gate(&self) -> bool {
        match self.source {
            CheckSource::User | CheckSource::Organizer | CheckSource::Sample => true,
            CheckSource::Words => self.confirmed,
        }
    }

    /// CK4, SC5: a passing gate the user wrote or confirmed (or the sample's standard) backs
    /// an approval; the organizer's pass backs nothing.
    pub fn backs(&self) -> bool {
        self.is_gate()
            && self.result == CheckResult::Pass
            && matches!(
                self.source,
                CheckSource::User | CheckSource::Words | CheckSource::Sample
            )
    }
}

/// OG-a's facts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OneGoFacts {
    /// The job has exactly one ticket that is not dropped.
    pub one_ticket: bool,
    /// The user was never asked about the job on an approval or required-items card.
    pub never_asked_on_card: bool,
    /// The hand-over was made by the only segment since the job opened or was last approved
    /// (segments that started after the hand-over don't count).
    pub only_segment: bool,
}

impl OneGoFacts {
    pub fn holds(&self) -> bool {
        self.one_ticket && self.never_asked_on_card && self.only_segment
    }
}

/// Everything the approval depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalFacts {
    pub origin: SubmissionOrigin,
    /// The ticket has a reviewer now (SV-20a: one set later routes it there).
    pub has_reviewer: bool,
    pub checks: Vec<BoundCheck>,
    /// Required items (said ≥ 2 times, or about the picture) that nothing backs (CK5, SV-20e),
    /// as the caller names them for the user.
    pub unbacked_required_items: Vec<String>,
    /// A ticket of a routine's standing plan (RT-a).
    pub routine_plan: bool,
    pub one_go: OneGoFacts,
    /// The last unapproved ticket of a laid-out large job: approving it delivers the job (LJ7).
    pub large_job_last_ticket: bool,
    /// The user's word let this hand-over through (WU2); gates still rerun first.
    pub user_let_through: bool,
}

/// Why a hand-over waits on the user's word (recorded on `submission.awaiting_word`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitReason {
    /// W5: words are never approved by checks or a reviewer.
    WordsHandOver,
    /// OR2–OR3: an organizer's reading is never approved on checks.
    OrganizerReading,
    /// LJ7 (Q10): the last ticket of a laid-out large job.
    LargeJobLastTicket,
    /// SC6: a gate could not judge; it holds nothing and the user decides.
    NotJudged(Vec<CheckId>),
    /// CK4–CK5: no check the user wrote or confirmed backs the files.
    NoUserCheck,
    /// CK5, SV-20e: required items nothing backs.
    UnbackedRequiredItems(Vec<String>),
}

impl WaitReason {
    pub fn code(&self) -> &'static str {
        match self {
            WaitReason::WordsHandOver => "words_hand_over",
            WaitReason::OrganizerReading => "organizer_reading",
            WaitReason::LargeJobLastTicket => "large_job_last_ticket",
            WaitReason::NotJudged(_) => "not_judged",
            WaitReason::NoUserCheck => "no_user_check",
            WaitReason::UnbackedRequiredItems(_) => "unbacked_required_items",
        }
    }
}

impl fmt::Display for WaitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitReason::WordsHandOver => {
                f.write_str("words handed over are only accepted by the user's word")
            }
            WaitReason::OrganizerReading => {
                f.write_str("an organizer's reading is only accepted by the user's word")
            }
            WaitReason::LargeJobLastTicket => f.write_str(
                "the last ticket of a large job: approving it delivers the job, so the user decides",
            ),
            WaitReason::NotJudged(ids) => write!(f, "checks that could not judge: {}", list(ids)),
            WaitReason::NoUserCheck => {
                f.write_str("no check the user wrote or confirmed backs these files")
            }
            WaitReason::UnbackedRequiredItems(items) => {
                write!(f, "required items nothing backs: {}", items.join(", "))
            }
        }
    }
}

fn list(ids: &[CheckId]) -> String {
    ids.iter()
        .map(|id| id.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What happens to the hand-over now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalDecision {
    Approve(ApprovedBy),
    /// A gate failed: back to the producer. `reasons` are the failing gates.
    Rework {
        reasons: Vec<CheckId>,
    },
    /// A gate has not finished; decide again when it has.
    WaitForChecks,
    /// The ticket has a reviewer: its review decides (§5.3), the app does not.
    ToReviewer,
    AwaitingUser {
        reasons: Vec<WaitReason>,
    },
}

/// The approval decision. In order:
/// 1. a failing gate sends it back, for every origin and even after the user's word (SV-20b,
///    OR3, WU2); a pending gate is waited for;
/// 2. the user's word lets it through (`by: user`);
/// 3. with a reviewer, the review decides (SV-20a);
/// 4. words and organizer readings wait on the user (W5, SV-20c), as does a large job's last
///    ticket (LJ7) and a hand-over with a gate that could not judge (SC6);
/// 5. a routine run is approved on its gates (RT-a, SV-20f);
/// 6. one-go is approved, unbacked required items included (OG-a, SV-20g);
/// 7. files backed by a user-written or confirmed passing gate, with no unbacked required
///    item, are approved `no_reviewer` (CK4, SV-20d); otherwise they wait on the user's word
///    (CK5, SV-20d–e, h).
pub fn approval_decision(facts: &ApprovalFacts) -> ApprovalDecision {
    let gates: Vec<&BoundCheck> = facts.checks.iter().filter(|c| c.is_gate()).collect();
    let failing: Vec<CheckId> = gates
        .iter()
        .filter(|c| c.result == CheckResult::Fail)
        .map(|c| c.check_id)
        .collect();
    if !failing.is_empty() {
        return ApprovalDecision::Rework { reasons: failing };
    }
    if gates.iter().any(|c| c.result == CheckResult::Pending) {
        return ApprovalDecision::WaitForChecks;
    }
    if facts.user_let_through {
        return ApprovalDecision::Approve(ApprovedBy::User);
    }
    if facts.has_reviewer {
        return ApprovalDecision::ToReviewer;
    }

    let mut hard = Vec::new();
    match facts.origin {
        SubmissionOrigin::Answer => hard.push(WaitReason::WordsHandOver),
        SubmissionOrigin::Organizer => hard.push(WaitReason::OrganizerReading),
        SubmissionOrigin::Explicit | SubmissionOrigin::Implicit => {}
    }
    if facts.large_job_last_ticket {
        hard.push(WaitReason::LargeJobLastTicket);
    }
    let not_judged: Vec<CheckId> = gates
        .iter()
        .filter(|c| c.result == CheckResult::NotJudged)
        .map(|c| c.check_id)
        .collect();
    if !not_judged.is_empty() {
        hard.push(WaitReason::NotJudged(not_judged));
    }
    if !hard.is_empty() {
        // Keep the required items on the record so the user sees them with the rest.
        if !facts.unbacked_required_items.is_empty() {
            hard.push(WaitReason::UnbackedRequiredItems(
                facts.unbacked_required_items.clone(),
            ));
        }
        return ApprovalDecision::AwaitingUser { reasons: hard };
    }

    if facts.routine_plan {
        return ApprovalDecision::Approve(ApprovedBy::Routine);
    }
    if facts.one_go.holds() {
        return ApprovalDecision::Approve(ApprovedBy::OneGo);
    }

    let mut reasons = Vec::new();
    if !gates.iter().any(|c| c.backs()) {
        reasons.push(WaitReason::NoUserCheck);
    }
    if !facts.unbacked_required_items.is_empty() {
        reasons.push(WaitReason::UnbackedRequiredItems(
            facts.unbacked_required_items.clone(),
        ));
    }
    if reasons.is_empty() {
        ApprovalDecision::Approve(ApprovedBy::NoReviewer)
    } else {
        ApprovalDecision::AwaitingUser { reasons }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    // The test below is named after the rule, which shadows the function.
    use super::approval_decision as decide;

    fn check(id: i64, source: CheckSource, confirmed: bool, result: CheckResult) -> BoundCheck {
        BoundCheck {
            check_id: CheckId(id),
            source,
            confirmed,
            result,
        }
    }

    fn user_pass() -> BoundCheck {
        check(1, CheckSource::User, false, CheckResult::Pass)
    }

    fn files(checks: Vec<BoundCheck>) -> ApprovalFacts {
        ApprovalFacts {
            origin: SubmissionOrigin::Explicit,
            has_reviewer: false,
            checks,
            unbacked_required_items: vec![],
            routine_plan: false,
            one_go: OneGoFacts::default(),
            large_job_last_ticket: false,
            user_let_through: false,
        }
    }

    fn one_go() -> OneGoFacts {
        OneGoFacts {
            one_ticket: true,
            never_asked_on_card: true,
            only_segment: true,
        }
    }

    fn awaiting(d: ApprovalDecision) -> Vec<&'static str> {
        match d {
            ApprovalDecision::AwaitingUser { reasons } => {
                reasons.iter().map(|r| r.code()).collect()
            }
            other => panic!("expected awaiting_user, got {other:?}"),
        }
    }

    #[test]
    fn approval_decision() {
        use ApprovalDecision::*;
        // CK4 / SV-20d: a user check backs it and every gate passes → no_reviewer.
        assert_eq!(
            decide(&files(vec![user_pass()])),
            Approve(ApprovedBy::NoReviewer)
        );
        // A confirmed check from the user's words backs it too.
        let confirmed = check(2, CheckSource::Words, true, CheckResult::Pass);
        assert_eq!(
            decide(&files(vec![confirmed])),
            Approve(ApprovedBy::NoReviewer)
        );

        // CK3 / SV-20b: a failing gate sends it back, naming the gate.
        let failing = check(3, CheckSource::Organizer, false, CheckResult::Fail);
        assert_eq!(
            decide(&files(vec![user_pass(), failing.clone()])),
            Rework {
                reasons: vec![CheckId(3)]
            }
        );
        // A pending gate is waited for.
        let pending = check(4, CheckSource::User, false, CheckResult::Pending);
        assert_eq!(
            decide(&files(vec![user_pass(), pending.clone()])),
            WaitForChecks
        );

        // CK3: an unconfirmed proposal neither blocks nor backs.
        let proposal_fail = check(5, CheckSource::Words, false, CheckResult::Fail);
        assert_eq!(
            decide(&files(vec![user_pass(), proposal_fail.clone()])),
            Approve(ApprovedBy::NoReviewer)
        );
        let proposal_pass = check(6, CheckSource::Words, false, CheckResult::Pass);
        assert_eq!(
            awaiting(decide(&files(vec![proposal_pass]))),
            ["no_user_check"]
        );

        // S-SUB5 / CK4: the organizer's pass backs nothing.
        let organizer = check(7, CheckSource::Organizer, false, CheckResult::Pass);
        assert_eq!(awaiting(decide(&files(vec![organizer]))), ["no_user_check"]);
        // Nothing bound at all: waits too.
        assert_eq!(awaiting(decide(&files(vec![]))), ["no_user_check"]);

        // CK5 / SV-20e: an unbacked required item waits even with a user check.
        let mut required = files(vec![user_pass()]);
        required.unbacked_required_items = vec!["about 2 minutes".into()];
        assert_eq!(awaiting(decide(&required)), ["unbacked_required_items"]);

        // W5 / SV-20c: words never approved on checks, even backed.
        let mut words = files(vec![user_pass()]);
        words.origin = SubmissionOrigin::Answer;
        assert_eq!(awaiting(decide(&words)), ["words_hand_over"]);
        words.routine_plan = true;
        words.one_go = one_go();
        assert_eq!(awaiting(decide(&words)), ["words_hand_over"]);
        // OR3: an organizer's reading neither; a failing gate still sends it back.
        let mut reading = files(vec![user_pass()]);
        reading.origin = SubmissionOrigin::Organizer;
        assert_eq!(awaiting(decide(&reading)), ["organizer_reading"]);
        reading.checks.push(failing.clone());
        assert_eq!(
            decide(&reading),
            Rework {
                reasons: vec![CheckId(3)]
            }
        );

        // RT-a / SV-20f / S-SUB1: routine approved once its gates pass, never waits.
        let mut routine = files(vec![organizer_pass()]);
        routine.routine_plan = true;
        routine.unbacked_required_items = vec!["x".into()];
        assert_eq!(decide(&routine), Approve(ApprovedBy::Routine));
        routine.checks.push(failing.clone());
        assert_eq!(
            decide(&routine),
            Rework {
                reasons: vec![CheckId(3)]
            }
        );

        // OG-a / SV-20g / S-SUB6: one ticket, one segment, never asked → one_go, even with
        // unbacked required items and no user check.
        let mut go = files(vec![organizer_pass()]);
        go.one_go = one_go();
        go.unbacked_required_items = vec!["the picture".into()];
        assert_eq!(decide(&go), Approve(ApprovedBy::OneGo));
        for broken in [
            OneGoFacts {
                one_ticket: false,
                ..one_go()
            },
            OneGoFacts {
                never_asked_on_card: false,
                ..one_go()
            },
            OneGoFacts {
                only_segment: false,
                ..one_go()
            },
        ] {
            go.one_go = broken;
            assert!(matches!(decide(&go), AwaitingUser { .. }));
        }

        // LJ7 / Q10: a laid-out large job's last ticket always waits on the user.
        let mut last = files(vec![user_pass()]);
        last.large_job_last_ticket = true;
        last.one_go = one_go();
        assert_eq!(awaiting(decide(&last)), ["large_job_last_ticket"]);

        // SC6 / S-SA3: a standard check not judged holds nothing; the user decides.
        let not_judged = check(8, CheckSource::Sample, false, CheckResult::NotJudged);
        assert_eq!(
            awaiting(decide(&files(vec![user_pass(), not_judged]))),
            ["not_judged"]
        );
        // SC5: a passing standard check backs like a user check.
        let standard = check(9, CheckSource::Sample, false, CheckResult::Pass);
        assert_eq!(
            decide(&files(vec![standard])),
            Approve(ApprovedBy::NoReviewer)
        );

        // SV-20a: with a reviewer, the review decides once the gates pass.
        let mut reviewed = files(vec![user_pass()]);
        reviewed.has_reviewer = true;
        assert_eq!(decide(&reviewed), ToReviewer);
        reviewed.checks.push(failing.clone());
        assert_eq!(
            decide(&reviewed),
            Rework {
                reasons: vec![CheckId(3)]
            }
        );

        // WU2 / SV-20h: the user's word lets it through after gates rerun — words, last
        // ticket and unbacked items included — but a failing gate still sends it back and a
        // pending one is waited for.
        let mut word = files(vec![]);
        word.origin = SubmissionOrigin::Answer;
        word.large_job_last_ticket = true;
        word.unbacked_required_items = vec!["x".into()];
        word.user_let_through = true;
        assert_eq!(decide(&word), Approve(ApprovedBy::User));
        word.checks.push(pending);
        assert_eq!(decide(&word), WaitForChecks);
        word.checks.push(failing);
        assert_eq!(
            decide(&word),
            Rework {
                reasons: vec![CheckId(3)]
            }
        );
    }

    fn organizer_pass() -> BoundCheck {
        check(10, CheckSource::Organizer, false, CheckResult::Pass)
    }

    #[test]
    fn wait_reasons_name_what_is_missing() {
        let text = WaitReason::UnbackedRequiredItems(vec!["about 2 minutes".into()]).to_string();
        assert!(text.contains("about 2 minutes"));
        assert!(
            WaitReason::NotJudged(vec![CheckId(4)])
                .to_string()
                .contains("ck_4")
        );
    }

    #[test]
    fn stored_values_round_trip() {
        for s in CheckSource::ALL {
            assert_eq!(CheckSource::parse(s.as_str()), Ok(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        for r in CheckResult::ALL {
            assert_eq!(CheckResult::parse(r.as_str()), Ok(r));
            assert_eq!(
                serde_json::to_string(&r).unwrap(),
                format!("\"{}\"", r.as_str())
            );
        }
        assert!(CheckSource::parse("bot").unwrap_err().contains("'bot'"));
        assert!(CheckResult::parse("passed").is_err());
    }
}
