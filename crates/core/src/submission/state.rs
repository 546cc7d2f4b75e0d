//! A submission's origin, state and approver (digest B §4.1–4.2), and what supersedes it
//! (§4.10 SP1–SP3). The state is derived from the checks, reviews and the user's word; these
//! functions say which moves exist so the store never writes one that does not.

use crate::SubmissionId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How the hand-over was made.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubmissionOrigin {
    /// The producer called `submit`.
    Explicit,
    /// Files the producer left at its ending (IS1–IS6).
    Implicit,
    /// Words handed over with `end_turn({reason: "done", answer})` (W1–W5).
    Answer,
    /// The organizer reading a ticket as done (T5, OR1–OR3). This build has no organizer and
    /// never creates one; the value stays so stored rows and the API keep their meaning.
    Organizer,
}

impl SubmissionOrigin {
    pub const ALL: [SubmissionOrigin; 4] = [
        SubmissionOrigin::Explicit,
        SubmissionOrigin::Implicit,
        SubmissionOrigin::Answer,
        SubmissionOrigin::Organizer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SubmissionOrigin::Explicit => "explicit",
            SubmissionOrigin::Implicit => "implicit",
            SubmissionOrigin::Answer => "answer",
            SubmissionOrigin::Organizer => "organizer",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        SubmissionOrigin::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "submission origin '{s}' is not one of explicit, implicit, answer, organizer"
                )
            })
    }

    /// Nobody made files for these, so neither checks nor a reviewer can approve them (W5,
    /// OR2–OR3): they always end waiting on the user's word.
    pub fn has_no_files(self) -> bool {
        matches!(self, SubmissionOrigin::Answer | SubmissionOrigin::Organizer)
    }
}

impl fmt::Display for SubmissionOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a submission is (§4.2, derived; Q5).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubmissionState {
    /// Its checks are running.
    Checking,
    /// A gate failed when it was handed over; kept on record (SP3).
    FailedChecks,
    /// Its gates passed; not yet with a reviewer.
    Submitted,
    /// Queued to the ticket's reviewer.
    InReview,
    /// Waiting on the user's word (ADR 0084).
    AwaitingUser,
    Approved,
    /// Sent back to its maker after it had passed its gates.
    Rework,
    /// A newer hand-over or a board edit replaced it while undecided (SP1, SP2).
    Superseded,
}

impl SubmissionState {
    pub const ALL: [SubmissionState; 8] = [
        SubmissionState::Checking,
        SubmissionState::FailedChecks,
        SubmissionState::Submitted,
        SubmissionState::InReview,
        SubmissionState::AwaitingUser,
        SubmissionState::Approved,
        SubmissionState::Rework,
        SubmissionState::Superseded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SubmissionState::Checking => "checking",
            SubmissionState::FailedChecks => "failed_checks",
            SubmissionState::Submitted => "submitted",
            SubmissionState::InReview => "in_review",
            SubmissionState::AwaitingUser => "awaiting_user",
            SubmissionState::Approved => "approved",
            SubmissionState::Rework => "rework",
            SubmissionState::Superseded => "superseded",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        SubmissionState::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "submission state '{s}' is not one of checking, failed_checks, submitted, \
                     in_review, awaiting_user, approved, rework, superseded"
                )
            })
    }
}

impl fmt::Display for SubmissionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who approved a submission (`submission.approved {by}`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovedBy {
    /// The user's word let it through (with `approved_message_id`).
    User,
    /// Its gates passed and a user check backed it, with no reviewer (CK4).
    NoReviewer,
    /// A routine run's hand-over whose gates passed (RT-a).
    Routine,
    /// The one hand-over of a one-ticket job in one segment (OG-a).
    OneGo,
    /// A reviewer's approve that took effect (§5.3 step 4).
    Reviewer,
}

impl ApprovedBy {
    pub const ALL: [ApprovedBy; 5] = [
        ApprovedBy::User,
        ApprovedBy::NoReviewer,
        ApprovedBy::Routine,
        ApprovedBy::OneGo,
        ApprovedBy::Reviewer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovedBy::User => "user",
            ApprovedBy::NoReviewer => "no_reviewer",
            ApprovedBy::Routine => "routine",
            ApprovedBy::OneGo => "one_go",
            ApprovedBy::Reviewer => "reviewer",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        ApprovedBy::ALL
            .into_iter()
            .find(|b| b.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "approved_by '{s}' is not one of user, no_reviewer, routine, one_go, reviewer"
                )
            })
    }
}

impl fmt::Display for ApprovedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Not yet decided: still being checked, or passed and waiting on a reviewer or the user.
/// Only these are superseded (SP1, SP2); a decided one (failed, approved, sent back) stays as
/// it was decided (SP3).
pub fn is_undecided(state: SubmissionState) -> bool {
    matches!(
        state,
        SubmissionState::Checking
            | SubmissionState::Submitted
            | SubmissionState::InReview
            | SubmissionState::AwaitingUser
    )
}

/// Something that moves a submission (§4.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SubmissionEvent {
    /// Its checks finished: every gate passed (or none failed and none is pending).
    ChecksPassed,
    /// A gate failed when it was handed over.
    ChecksFailed,
    /// Queued to the ticket's reviewer.
    QueuedToReviewer,
    /// An approval took effect (reviewer, no reviewer, routine, one-go, the user's word).
    Approved,
    /// It now waits on the user's word (no backing, words, a non-effective approve…).
    AwaitingUser,
    /// Sent back: a reject, a gate failing on a rerun, the user finding fault.
    SentBack,
    /// A newer hand-over or a board edit replaced it.
    Superseded,
}

/// The state after `event`, or an error naming the move that does not exist.
pub fn next_submission_state(
    from: SubmissionState,
    event: SubmissionEvent,
) -> Result<SubmissionState, String> {
    use SubmissionEvent as E;
    use SubmissionState as S;
    let to = match (from, event) {
        (S::Checking, E::ChecksPassed) => S::Submitted,
        (S::Checking, E::ChecksFailed) => S::FailedChecks,
        (S::Submitted | S::InReview, E::QueuedToReviewer) => S::InReview,
        (S::Submitted | S::InReview | S::AwaitingUser, E::Approved) => S::Approved,
        (S::Submitted | S::InReview | S::AwaitingUser, E::AwaitingUser) => S::AwaitingUser,
        (S::Submitted | S::InReview | S::AwaitingUser, E::SentBack) => S::Rework,
        // A complaint on approved work sends that hand-over back too (CP3).
        (S::Approved, E::SentBack) => S::Rework,
        (state, E::Superseded) if is_undecided(state) => S::Superseded,
        _ => {
            return Err(format!(
                "a submission in state {from} cannot take {event:?}"
            ));
        }
    };
    Ok(to)
}

/// A ticket's earlier submission, as the supersession rules see it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EarlierSubmission {
    pub id: SubmissionId,
    pub state: SubmissionState,
}

/// SP1: the earlier submissions of the same ticket a new one supersedes when it is recorded —
/// every undecided one but itself. Failed, approved and sent-back ones stay on record (SP3).
pub fn superseded_by_newer(
    earlier: &[EarlierSubmission],
    newer: SubmissionId,
) -> Vec<SubmissionId> {
    earlier
        .iter()
        .filter(|s| s.id != newer && is_undecided(s.state))
        .map(|s| s.id)
        .collect()
}

/// SP2 / T7: a user's board status edit supersedes every undecided submission of the ticket.
pub fn superseded_by_board_edit(submissions: &[EarlierSubmission]) -> Vec<SubmissionId> {
    submissions
        .iter()
        .filter(|s| is_undecided(s.state))
        .map(|s| s.id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use SubmissionState as S;

    fn sub(id: i64, state: SubmissionState) -> EarlierSubmission {
        EarlierSubmission {
            id: SubmissionId(id),
            state,
        }
    }

    #[test]
    fn stored_values_round_trip() {
        for o in SubmissionOrigin::ALL {
            assert_eq!(SubmissionOrigin::parse(o.as_str()), Ok(o));
            assert_eq!(
                serde_json::to_string(&o).unwrap(),
                format!("\"{}\"", o.as_str())
            );
        }
        for s in SubmissionState::ALL {
            assert_eq!(SubmissionState::parse(s.as_str()), Ok(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        for b in ApprovedBy::ALL {
            assert_eq!(ApprovedBy::parse(b.as_str()), Ok(b));
            assert_eq!(
                serde_json::to_string(&b).unwrap(),
                format!("\"{}\"", b.as_str())
            );
        }
        assert!(
            SubmissionOrigin::parse("bot")
                .unwrap_err()
                .contains("'bot'")
        );
        assert!(SubmissionState::parse("done").is_err());
        assert!(ApprovedBy::parse("organizer").is_err());
    }

    #[test]
    fn undecided_states() {
        let undecided: Vec<_> = S::ALL.into_iter().filter(|s| is_undecided(*s)).collect();
        assert_eq!(
            undecided,
            [S::Checking, S::Submitted, S::InReview, S::AwaitingUser]
        );
    }

    #[test]
    fn submission_state_machine() {
        use SubmissionEvent as E;
        assert_eq!(
            next_submission_state(S::Checking, E::ChecksPassed),
            Ok(S::Submitted)
        );
        assert_eq!(
            next_submission_state(S::Checking, E::ChecksFailed),
            Ok(S::FailedChecks)
        );
        assert_eq!(
            next_submission_state(S::Submitted, E::QueuedToReviewer),
            Ok(S::InReview)
        );
        assert_eq!(
            next_submission_state(S::InReview, E::AwaitingUser),
            Ok(S::AwaitingUser)
        );
        assert_eq!(
            next_submission_state(S::AwaitingUser, E::Approved),
            Ok(S::Approved)
        );
        assert_eq!(
            next_submission_state(S::AwaitingUser, E::SentBack),
            Ok(S::Rework)
        );
        assert_eq!(
            next_submission_state(S::Approved, E::SentBack),
            Ok(S::Rework)
        );
        // Nothing is approved before its checks ran, and decided ones are never superseded.
        assert!(next_submission_state(S::Checking, E::Approved).is_err());
        assert!(next_submission_state(S::FailedChecks, E::Superseded).is_err());
        assert!(next_submission_state(S::Approved, E::Superseded).is_err());
        assert!(
            next_submission_state(S::Rework, E::Approved)
                .unwrap_err()
                .contains("rework")
        );
        for s in S::ALL {
            assert_eq!(
                next_submission_state(s, E::Superseded).is_ok(),
                is_undecided(s),
                "{s}"
            );
        }
    }

    #[test]
    fn sp1_newer_supersedes_undecided_only() {
        let earlier = [
            sub(1, S::FailedChecks),
            sub(2, S::Approved),
            sub(3, S::AwaitingUser),
            sub(4, S::InReview),
            sub(5, S::Rework),
            sub(6, S::Superseded),
            sub(7, S::Checking),
        ];
        assert_eq!(
            superseded_by_newer(&earlier, SubmissionId(7)),
            [SubmissionId(3), SubmissionId(4)]
        );
    }

    #[test]
    fn sp2_board_edit_supersedes_undecided() {
        let all = [
            sub(1, S::Submitted),
            sub(2, S::FailedChecks),
            sub(3, S::Checking),
        ];
        assert_eq!(
            superseded_by_board_edit(&all),
            [SubmissionId(1), SubmissionId(3)]
        );
    }

    #[test]
    fn sp3_failed_checks_stay_on_record() {
        let all = [sub(1, S::FailedChecks)];
        assert!(superseded_by_board_edit(&all).is_empty());
        assert!(superseded_by_newer(&all, SubmissionId(2)).is_empty());
    }
}
