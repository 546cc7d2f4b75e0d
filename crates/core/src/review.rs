//! Reviews (digest B §5): who may review a hand-over, the per-item verdicts, the same-model
//! rule, and the order in which an approve is refused, downgraded to waiting on the user, or
//! takes effect (§5.3). Saying "approved" in words moves nothing; only these rules do.

use crate::BotId;
use crate::CheckId;
use crate::submission::SubmissionOrigin;
use crate::ticket::TicketStage;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A reviewer's verdict on one requirement.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReviewVerdict {
    #[serde(rename = "pass")]
    Pass,
    #[serde(rename = "fail")]
    Fail,
    #[serde(rename = "unknown")]
    Unknown,
    #[serde(rename = "n/a")]
    NotApplicable,
}

impl ReviewVerdict {
    pub const ALL: [ReviewVerdict; 4] = [
        ReviewVerdict::Pass,
        ReviewVerdict::Fail,
        ReviewVerdict::Unknown,
        ReviewVerdict::NotApplicable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReviewVerdict::Pass => "pass",
            ReviewVerdict::Fail => "fail",
            ReviewVerdict::Unknown => "unknown",
            ReviewVerdict::NotApplicable => "n/a",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        ReviewVerdict::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| format!("verdict '{s}' is not one of pass, fail, unknown, n/a"))
    }
}

impl fmt::Display for ReviewVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewOutcome {
    Approve,
    Reject,
}

impl ReviewOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewOutcome::Approve => "approve",
            ReviewOutcome::Reject => "reject",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "approve" => Ok(ReviewOutcome::Approve),
            "reject" => Ok(ReviewOutcome::Reject),
            other => Err(format!("outcome '{other}' is not approve or reject")),
        }
    }
}

/// Why a Bot may not review this hand-over (§5.1).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReviewRefusal {
    #[error("you are not this ticket's reviewer; {0} reviews it")]
    NotReviewer(String),
    #[error("you made this work (or own its ticket); another Bot reviews it")]
    OwnSubmission,
    #[error("the ticket is {0}; only a submitted or in-review hand-over can be reviewed")]
    NotReviewable(TicketStage),
}

impl ReviewRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            ReviewRefusal::NotReviewer(_) => "not_reviewer",
            ReviewRefusal::OwnSubmission => "own_submission",
            ReviewRefusal::NotReviewable(_) => "not_reviewable",
        }
    }
}

/// Who is asking to review, and what the ticket says about reviewers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReviewPermissionFacts {
    pub reviewer: BotId,
    pub producer: BotId,
    pub owner: Option<BotId>,
    pub ticket_stage: TicketStage,
    /// The ticket's reviewer, if set (Q15: it wins over a request).
    pub ticket_reviewer: Option<BotId>,
    /// Recipients of open requests with `expects: review` on this ticket.
    pub review_requested_of: Vec<BotId>,
    /// The asking Bot is in the plan's conversation.
    pub in_plan_conversation: bool,
    /// Display names for the refusal text, by Bot; a missing one shows its id.
    pub names: Vec<(BotId, String)>,
}

/// §5.1, T8: the ticket's reviewer; else a Bot named by an open `expects: review` request;
/// else any Bot of the plan's conversation. Never the producer or the ticket's owner, and only
/// while the ticket is submitted or in review.
pub fn review_permission(facts: &ReviewPermissionFacts) -> Result<(), ReviewRefusal> {
    if facts.reviewer == facts.producer || facts.owner == Some(facts.reviewer) {
        return Err(ReviewRefusal::OwnSubmission);
    }
    if !matches!(
        facts.ticket_stage,
        TicketStage::Submitted | TicketStage::InReview
    ) {
        return Err(ReviewRefusal::NotReviewable(facts.ticket_stage));
    }
    let name = |bot: BotId| {
        facts
            .names
            .iter()
            .find(|(id, _)| *id == bot)
            .map(|(_, n)| n.clone())
            .unwrap_or_else(|| bot.to_string())
    };
    if let Some(set) = facts.ticket_reviewer {
        return if set == facts.reviewer {
            Ok(())
        } else {
            Err(ReviewRefusal::NotReviewer(name(set)))
        };
    }
    if !facts.review_requested_of.is_empty() {
        return if facts.review_requested_of.contains(&facts.reviewer) {
            Ok(())
        } else {
            let asked: Vec<String> = facts.review_requested_of.iter().map(|b| name(*b)).collect();
            Err(ReviewRefusal::NotReviewer(asked.join(" or ")))
        };
    }
    if facts.in_plan_conversation {
        Ok(())
    } else {
        Err(ReviewRefusal::NotReviewer(
            "a Bot of the job's conversation".into(),
        ))
    }
}

/// A model's name as the same-model rule compares it: trimmed, lower-cased, with any
/// `vendor/` prefix dropped ("OpenAI/GPT-4o" and "gpt-4o" are one model).
pub fn model_key(name: &str) -> String {
    let name = name.trim();
    let bare = name.rsplit('/').next().unwrap_or(name);
    bare.trim().to_lowercase()
}

/// Whether the reviewer ran on the producer's model. A model not recorded is unknown and
/// counts as the same: the rule exists to stop a model passing its own work.
pub fn same_model(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            let (a, b) = (model_key(a), model_key(b));
            a.is_empty() || b.is_empty() || a == b
        }
        _ => true,
    }
}

/// One requirement in force on the job, as the review sees it (§5.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub id: String,
    /// How many times the user said it.
    pub said_count: u32,
    /// Its category is about the picture (picture, shot, character, colour…).
    pub about_picture: bool,
    /// A passing check the user wrote or confirmed backs it, or the user confirmed the item.
    pub user_backed: bool,
}

impl Requirement {
    /// §5.2: said ≥ 2 times, or about the picture.
    pub fn is_required(&self) -> bool {
        self.said_count >= 2 || self.about_picture
    }
}

/// One verdict as the reviewer gave it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ItemVerdict {
    pub requirement_id: String,
    pub verdict: ReviewVerdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

impl ItemVerdict {
    fn has_evidence(&self) -> bool {
        self.evidence
            .as_deref()
            .is_some_and(|e| !e.trim().is_empty())
    }
}

/// Everything an approve is judged on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApproveFacts {
    pub origin: SubmissionOrigin,
    /// The gates after the rerun (§5.3 step 1): the failing and the unfinished ones.
    pub failing_gates: Vec<CheckId>,
    pub pending_gates: Vec<CheckId>,
    pub requirements: Vec<Requirement>,
    pub verdicts: Vec<ItemVerdict>,
    /// This segment read an image of the job's folder with `read_file` after the submission.
    pub read_image_after_submission: bool,
    pub producer_model: Option<String>,
    pub reviewer_model: Option<String>,
    /// A user-written or user-confirmed passing check backs the files.
    pub user_check_backs: bool,
    /// The last unapproved ticket of a laid-out large job (LJ7, Q10).
    pub large_job_last_ticket: bool,
}

/// A reason an approve did not take effect, returned to the reviewer or recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApproveReason {
    GateFailed(CheckId),
    /// Not in the source: the rerun gate has not finished. Never approve over it.
    GatePending(CheckId),
    RequiredItemNotPassed(String),
    RequiredItemWithoutEvidence(String),
    PictureNotViewed(String),
    /// Same model passed an item said ≥ 2 times that nothing the user confirmed backs.
    SameModelUnbacked(String),
    WordsHandOver,
    OrganizerReading,
    /// Files no user check backs, judged by the producer's model or an unknown one.
    SameOrUnknownModel,
    /// Files no user check backs, with no evidence on an applicable requirement.
    NoEvidence(String),
    LargeJobLastTicket,
}

impl fmt::Display for ApproveReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApproveReason::GateFailed(id) => write!(f, "check {id} failed"),
            ApproveReason::GatePending(id) => write!(f, "check {id} has not finished"),
            ApproveReason::RequiredItemNotPassed(r) => {
                write!(f, "required item {r} needs a pass with evidence")
            }
            ApproveReason::RequiredItemWithoutEvidence(r) => {
                write!(f, "required item {r} was passed without evidence")
            }
            ApproveReason::PictureNotViewed(r) => write!(
                f,
                "{r} is about the picture, and you passed it without reading an image of this \
                 job with read_file after the hand-over"
            ),
            ApproveReason::SameModelUnbacked(r) => write!(
                f,
                "you run on the maker's model and passed {r}, which nothing the user confirmed \
                 backs; the user decides"
            ),
            ApproveReason::WordsHandOver => {
                f.write_str("words handed over are accepted only by the user's word")
            }
            ApproveReason::OrganizerReading => {
                f.write_str("an organizer's reading is accepted only by the user's word")
            }
            ApproveReason::SameOrUnknownModel => f.write_str(
                "no check the user wrote or confirmed backs these files, and you run on the \
                 maker's model (or a model not recorded); the user decides",
            ),
            ApproveReason::NoEvidence(r) => write!(
                f,
                "no check the user wrote or confirmed backs these files, and you gave no \
                 evidence for {r}; the user decides"
            ),
            ApproveReason::LargeJobLastTicket => f.write_str(
                "the last ticket of a large job: approving it delivers the job, so the user decides",
            ),
        }
    }
}

/// What an approve does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApproveResult {
    /// `review.refused`: nothing changes; every reason goes back to the reviewer.
    Refused { reasons: Vec<ApproveReason> },
    /// `review.awaiting_user`: the hand-over waits on the user's word, verdicts kept.
    AwaitingUser { reasons: Vec<ApproveReason> },
    /// The ticket and its parts are approved (`by: reviewer`).
    Effective,
}

/// §5.3 steps 1–4, in order. Verdicts on requirement ids the job does not have count for
/// nothing (they neither pass an item nor supply evidence).
pub fn process_approve(facts: &ApproveFacts) -> ApproveResult {
    let verdict_on = |id: &str| facts.verdicts.iter().find(|v| v.requirement_id == id);

    // Step 1: gates, required items, pictures looked at.
    let mut refused: Vec<ApproveReason> = facts
        .failing_gates
        .iter()
        .map(|id| ApproveReason::GateFailed(*id))
        .chain(
            facts
                .pending_gates
                .iter()
                .map(|id| ApproveReason::GatePending(*id)),
        )
        .collect();
    for req in &facts.requirements {
        let verdict = verdict_on(&req.id);
        let passed = verdict.is_some_and(|v| v.verdict == ReviewVerdict::Pass);
        if req.is_required() {
            match verdict {
                Some(v) if v.verdict == ReviewVerdict::Pass && !v.has_evidence() => {
                    refused.push(ApproveReason::RequiredItemWithoutEvidence(req.id.clone()))
                }
                Some(v) if v.verdict == ReviewVerdict::Pass => {}
                _ => refused.push(ApproveReason::RequiredItemNotPassed(req.id.clone())),
            }
        }
        if req.about_picture && passed && !facts.read_image_after_submission {
            refused.push(ApproveReason::PictureNotViewed(req.id.clone()));
        }
    }
    if !refused.is_empty() {
        return ApproveResult::Refused { reasons: refused };
    }

    let same = same_model(
        facts.producer_model.as_deref(),
        facts.reviewer_model.as_deref(),
    );

    // Step 2: a same-model pass on an item said twice that the user never backed.
    if same {
        let unbacked: Vec<ApproveReason> = facts
            .requirements
            .iter()
            .filter(|r| r.said_count >= 2 && !r.user_backed)
            .filter(|r| verdict_on(&r.id).is_some_and(|v| v.verdict == ReviewVerdict::Pass))
            .map(|r| ApproveReason::SameModelUnbacked(r.id.clone()))
            .collect();
        if !unbacked.is_empty() {
            return ApproveResult::AwaitingUser { reasons: unbacked };
        }
    }

    // Step 3: approves that cannot be the actual approval.
    let mut waits = Vec::new();
    match facts.origin {
        SubmissionOrigin::Answer => waits.push(ApproveReason::WordsHandOver),
        SubmissionOrigin::Organizer => waits.push(ApproveReason::OrganizerReading),
        SubmissionOrigin::Explicit | SubmissionOrigin::Implicit => {
            if !facts.user_check_backs {
                if same {
                    waits.push(ApproveReason::SameOrUnknownModel);
                }
                for req in &facts.requirements {
                    if let Some(v) = verdict_on(&req.id)
                        && v.verdict != ReviewVerdict::NotApplicable
                        && !v.has_evidence()
                    {
                        waits.push(ApproveReason::NoEvidence(req.id.clone()));
                    }
                }
            }
        }
    }
    if facts.large_job_last_ticket {
        waits.push(ApproveReason::LargeJobLastTicket);
    }
    if !waits.is_empty() {
        return ApproveResult::AwaitingUser { reasons: waits };
    }

    // Step 4.
    ApproveResult::Effective
}

/// Trimmed, non-empty entries of a list a model gave (claims, remaining work, evidence).
/// Shared with the Light Loop reviewer.
pub fn clean(items: Vec<String>) -> Vec<String> {
    items
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A list as markdown bullets, or one bullet saying `none`.
pub fn bullets(items: &[String], none: &str) -> String {
    if items.is_empty() {
        return format!("- {none}");
    }
    items
        .iter()
        .map(|i| format!("- {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAKER: BotId = BotId(1);
    const CHECKER: BotId = BotId(2);
    const OTHER: BotId = BotId(3);

    fn permission() -> ReviewPermissionFacts {
        ReviewPermissionFacts {
            reviewer: CHECKER,
            producer: MAKER,
            owner: Some(MAKER),
            ticket_stage: TicketStage::Submitted,
            ticket_reviewer: None,
            review_requested_of: vec![],
            in_plan_conversation: true,
            names: vec![(OTHER, "审片员".into())],
        }
    }

    #[test]
    fn review_permission_order() {
        assert_eq!(review_permission(&permission()), Ok(()));
        // Never the producer (producer_never_reviews), nor the owner (T8).
        let own = ReviewPermissionFacts {
            reviewer: MAKER,
            ..permission()
        };
        assert_eq!(review_permission(&own), Err(ReviewRefusal::OwnSubmission));
        let owner = ReviewPermissionFacts {
            producer: OTHER,
            ..permission()
        };
        assert_eq!(
            review_permission(&own_owner(owner)),
            Err(ReviewRefusal::OwnSubmission)
        );
        // The ticket must be submitted or in review.
        for stage in [
            TicketStage::ToDo,
            TicketStage::Approved,
            TicketStage::Rework,
        ] {
            let f = ReviewPermissionFacts {
                ticket_stage: stage,
                ..permission()
            };
            assert_eq!(review_permission(&f).unwrap_err().code(), "not_reviewable");
        }
        let in_review = ReviewPermissionFacts {
            ticket_stage: TicketStage::InReview,
            ..permission()
        };
        assert_eq!(review_permission(&in_review), Ok(()));
        // The ticket's reviewer wins over a request (Q15).
        let set = ReviewPermissionFacts {
            ticket_reviewer: Some(OTHER),
            review_requested_of: vec![CHECKER],
            ..permission()
        };
        let refusal = review_permission(&set).unwrap_err();
        assert_eq!(refusal.code(), "not_reviewer");
        assert!(refusal.to_string().contains("审片员"));
        // A request names the reviewer when none is set.
        let asked_other = ReviewPermissionFacts {
            review_requested_of: vec![OTHER],
            ..permission()
        };
        assert_eq!(
            review_permission(&asked_other).unwrap_err().code(),
            "not_reviewer"
        );
        let asked_me = ReviewPermissionFacts {
            review_requested_of: vec![OTHER, CHECKER],
            in_plan_conversation: false,
            ..permission()
        };
        assert_eq!(review_permission(&asked_me), Ok(()));
        // Else any Bot of the plan's conversation.
        let outsider = ReviewPermissionFacts {
            in_plan_conversation: false,
            ..permission()
        };
        assert_eq!(
            review_permission(&outsider).unwrap_err().code(),
            "not_reviewer"
        );
    }

    fn own_owner(mut f: ReviewPermissionFacts) -> ReviewPermissionFacts {
        f.owner = Some(f.reviewer);
        f
    }

    #[test]
    fn same_model_rule() {
        assert_eq!(model_key(" OpenAI/GPT-4o "), "gpt-4o");
        assert_eq!(model_key("openrouter/anthropic/Claude-3"), "claude-3");
        assert_eq!(model_key("qwen-max"), "qwen-max");
        assert!(same_model(Some("openai/gpt-4o"), Some("GPT-4o")));
        assert!(!same_model(Some("gpt-4o"), Some("claude-3")));
        // Unknown counts as same.
        assert!(same_model(None, Some("gpt-4o")));
        assert!(same_model(Some("gpt-4o"), None));
        assert!(same_model(None, None));
        assert!(same_model(Some(""), Some("gpt-4o")));
    }

    fn req(id: &str, said: u32, picture: bool, backed: bool) -> Requirement {
        Requirement {
            id: id.into(),
            said_count: said,
            about_picture: picture,
            user_backed: backed,
        }
    }

    fn pass(id: &str, evidence: Option<&str>) -> ItemVerdict {
        ItemVerdict {
            requirement_id: id.into(),
            verdict: ReviewVerdict::Pass,
            evidence: evidence.map(str::to_string),
        }
    }

    fn approve() -> ApproveFacts {
        ApproveFacts {
            origin: SubmissionOrigin::Explicit,
            failing_gates: vec![],
            pending_gates: vec![],
            requirements: vec![],
            verdicts: vec![],
            read_image_after_submission: false,
            producer_model: Some("gpt-4o".into()),
            reviewer_model: Some("claude-3".into()),
            user_check_backs: true,
            large_job_last_ticket: false,
        }
    }

    fn refused(r: ApproveResult) -> Vec<ApproveReason> {
        match r {
            ApproveResult::Refused { reasons } => reasons,
            other => panic!("expected refused, got {other:?}"),
        }
    }

    fn awaiting(r: ApproveResult) -> Vec<ApproveReason> {
        match r {
            ApproveResult::AwaitingUser { reasons } => reasons,
            other => panic!("expected awaiting_user, got {other:?}"),
        }
    }

    #[test]
    fn process_approve_step1_refuses() {
        assert_eq!(process_approve(&approve()), ApproveResult::Effective);
        // (a) a failing gate (a review never overrides one).
        let gate = ApproveFacts {
            failing_gates: vec![CheckId(4)],
            ..approve()
        };
        assert_eq!(
            refused(process_approve(&gate)),
            [ApproveReason::GateFailed(CheckId(4))]
        );
        // (b) a required item (said twice) lacking pass or evidence; unknown/n/a block.
        let mut items = approve();
        items.requirements = vec![
            req("r1", 2, false, true),
            req("r2", 3, false, true),
            req("r3", 2, false, true),
        ];
        items.verdicts = vec![
            pass("r1", None),
            ItemVerdict {
                requirement_id: "r2".into(),
                verdict: ReviewVerdict::Unknown,
                evidence: Some("can't tell".into()),
            },
        ];
        assert_eq!(
            refused(process_approve(&items)),
            [
                ApproveReason::RequiredItemWithoutEvidence("r1".into()),
                ApproveReason::RequiredItemNotPassed("r2".into()),
                ApproveReason::RequiredItemNotPassed("r3".into()),
            ]
        );
        // Verdicts on unknown requirement ids count for nothing.
        let mut fake = approve();
        fake.requirements = vec![req("r1", 2, false, true)];
        fake.verdicts = vec![pass("made-up", Some("looks fine"))];
        assert_eq!(
            refused(process_approve(&fake)),
            [ApproveReason::RequiredItemNotPassed("r1".into())]
        );
        // Other items may be n/a.
        let mut optional = approve();
        optional.requirements = vec![req("r9", 1, false, false)];
        optional.verdicts = vec![ItemVerdict {
            requirement_id: "r9".into(),
            verdict: ReviewVerdict::NotApplicable,
            evidence: None,
        }];
        assert_eq!(process_approve(&optional), ApproveResult::Effective);
    }

    #[test]
    fn s_r6_picture_item_needs_an_image_read() {
        let mut f = approve();
        f.requirements = vec![req("shot", 1, true, true)];
        f.verdicts = vec![pass("shot", Some("frame 3 shows the wide shot"))];
        assert_eq!(
            refused(process_approve(&f)),
            [ApproveReason::PictureNotViewed("shot".into())]
        );
        f.read_image_after_submission = true;
        assert_eq!(process_approve(&f), ApproveResult::Effective);
    }

    #[test]
    fn s_r1_same_model_pass_on_unconfirmed_item_awaits_user() {
        let mut f = approve();
        f.reviewer_model = Some("openai/GPT-4o".into());
        f.requirements = vec![req("duration", 2, false, false)];
        f.verdicts = vec![pass("duration", Some("107 s, about 2 minutes"))];
        assert_eq!(
            awaiting(process_approve(&f)),
            [ApproveReason::SameModelUnbacked("duration".into())]
        );
        // A different model passes it (with evidence and a user check backing the files).
        f.reviewer_model = Some("claude-3".into());
        assert_eq!(process_approve(&f), ApproveResult::Effective);
        // Confirmed by the user: the same model's pass is fine.
        f.reviewer_model = None;
        f.requirements[0].user_backed = true;
        assert_eq!(process_approve(&f), ApproveResult::Effective);
    }

    #[test]
    fn step3_non_effective_approves() {
        for (origin, reason) in [
            (SubmissionOrigin::Answer, ApproveReason::WordsHandOver),
            (SubmissionOrigin::Organizer, ApproveReason::OrganizerReading),
        ] {
            let f = ApproveFacts {
                origin,
                ..approve()
            };
            assert_eq!(awaiting(process_approve(&f)), [reason]);
        }
        // Files no user check backs: same or unknown model, or no evidence.
        let unbacked = ApproveFacts {
            user_check_backs: false,
            ..approve()
        };
        assert_eq!(process_approve(&unbacked), ApproveResult::Effective);
        let unknown = ApproveFacts {
            producer_model: None,
            ..unbacked.clone()
        };
        assert_eq!(
            awaiting(process_approve(&unknown)),
            [ApproveReason::SameOrUnknownModel]
        );
        let mut no_evidence = unbacked.clone();
        no_evidence.requirements = vec![req("tone", 1, false, false)];
        no_evidence.verdicts = vec![pass("tone", Some("  "))];
        assert_eq!(
            awaiting(process_approve(&no_evidence)),
            [ApproveReason::NoEvidence("tone".into())]
        );
        // With a user check backing, the same model alone does not downgrade.
        let backed_same = ApproveFacts {
            reviewer_model: Some("gpt-4o".into()),
            ..approve()
        };
        assert_eq!(process_approve(&backed_same), ApproveResult::Effective);
        // LJ7: the last ticket of a large job waits on the user even after a clean approve.
        let last = ApproveFacts {
            large_job_last_ticket: true,
            ..approve()
        };
        assert_eq!(
            awaiting(process_approve(&last)),
            [ApproveReason::LargeJobLastTicket]
        );
    }

    #[test]
    fn reasons_read_as_sentences() {
        assert!(
            ApproveReason::PictureNotViewed("shot".into())
                .to_string()
                .contains("read_file")
        );
        assert!(
            ApproveReason::GateFailed(CheckId(2))
                .to_string()
                .contains("ck_2")
        );
    }

    #[test]
    fn stored_values_round_trip() {
        for v in ReviewVerdict::ALL {
            assert_eq!(ReviewVerdict::parse(v.as_str()), Ok(v));
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                format!("\"{}\"", v.as_str())
            );
        }
        assert_eq!(
            serde_json::from_str::<ReviewVerdict>("\"n/a\"").unwrap(),
            ReviewVerdict::NotApplicable
        );
        assert!(
            ReviewVerdict::parse("maybe")
                .unwrap_err()
                .contains("'maybe'")
        );
        assert_eq!(ReviewOutcome::parse("approve"), Ok(ReviewOutcome::Approve));
        assert_eq!(
            serde_json::to_string(&ReviewOutcome::Reject).unwrap(),
            "\"reject\""
        );
        assert!(ReviewOutcome::parse("ok").is_err());
    }

    #[test]
    fn clean_and_bullets() {
        assert_eq!(
            clean(vec![" a ".into(), "  ".into(), "b".into()]),
            ["a", "b"]
        );
        assert_eq!(bullets(&[], "none listed"), "- none listed");
        assert_eq!(bullets(&["a".into(), "b".into()], "x"), "- a\n- b");
    }
}
