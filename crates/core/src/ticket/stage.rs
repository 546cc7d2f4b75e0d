//! A ticket's stage and the status shown next to it (digest B §1.1–1.2). The stage is the
//! source of truth; the status is written alongside it from the mapping table. Only the
//! submission's checks, a review, the supervisor, the user's board edits, the lead's drop and
//! the app seeing work start move it (T3, T22), and every move names its source.

use crate::submission::ApprovedBy;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a ticket is in its hand-over and acceptance (B §1.1, L5+).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TicketStage {
    ToDo,
    InProgress,
    Submitted,
    InReview,
    Rework,
    Approved,
    /// Dropped by the lead (with a reason) or set aside by the user (no reason) — Q4.
    Dropped,
}

impl TicketStage {
    pub const ALL: [TicketStage; 7] = [
        TicketStage::ToDo,
        TicketStage::InProgress,
        TicketStage::Submitted,
        TicketStage::InReview,
        TicketStage::Rework,
        TicketStage::Approved,
        TicketStage::Dropped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TicketStage::ToDo => "to_do",
            TicketStage::InProgress => "in_progress",
            TicketStage::Submitted => "submitted",
            TicketStage::InReview => "in_review",
            TicketStage::Rework => "rework",
            TicketStage::Approved => "approved",
            TicketStage::Dropped => "dropped",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        TicketStage::ALL
            .into_iter()
            .find(|stage| stage.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "ticket stage '{s}' is not one of to_do, in_progress, submitted, in_review, \
                     rework, approved, dropped"
                )
            })
    }

    /// The status written together with this stage (B §1.1 mapping table). The database's
    /// CHECK on (stage, status) allows exactly these seven rows.
    pub fn status(self) -> TicketStatus {
        match self {
            TicketStage::ToDo => TicketStatus::ToDo,
            TicketStage::InProgress | TicketStage::Rework => TicketStatus::InProgress,
            TicketStage::Submitted | TicketStage::InReview => TicketStatus::InReview,
            TicketStage::Approved => TicketStatus::Done,
            TicketStage::Dropped => TicketStatus::Parked,
        }
    }
}

impl fmt::Display for TicketStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The five-value status shown on the board and edited there by the user (B §1.1).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TicketStatus {
    ToDo,
    InProgress,
    InReview,
    Done,
    Parked,
}

impl TicketStatus {
    pub const ALL: [TicketStatus; 5] = [
        TicketStatus::ToDo,
        TicketStatus::InProgress,
        TicketStatus::InReview,
        TicketStatus::Done,
        TicketStatus::Parked,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TicketStatus::ToDo => "to_do",
            TicketStatus::InProgress => "in_progress",
            TicketStatus::InReview => "in_review",
            TicketStatus::Done => "done",
            TicketStatus::Parked => "parked",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        TicketStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "ticket status '{s}' is not one of to_do, in_progress, in_review, done, parked"
                )
            })
    }

    /// The label the board shows ("To do", "In progress", "In review", "Done", "Parked").
    pub fn label(self) -> &'static str {
        match self {
            TicketStatus::ToDo => "To do",
            TicketStatus::InProgress => "In progress",
            TicketStatus::InReview => "In review",
            TicketStatus::Done => "Done",
            TicketStatus::Parked => "Parked",
        }
    }

    /// The stage a user's board status edit sets (T7). The database trigger
    /// `tickets_stage_follows_status` mirrors exactly this table:
    ///
    /// | status      | stage       |
    /// |-------------|-------------|
    /// | to_do       | to_do       |
    /// | in_progress | in_progress |
    /// | in_review   | in_review   |
    /// | done        | approved    |
    /// | parked      | dropped     |
    ///
    /// A status has several stages behind it (in_progress is also rework, in_review is also
    /// submitted); the board edit picks the plain one, since the user said where the ticket is,
    /// not how it got there.
    pub fn stage_for_board_edit(self) -> TicketStage {
        match self {
            TicketStatus::ToDo => TicketStage::ToDo,
            TicketStatus::InProgress => TicketStage::InProgress,
            TicketStatus::InReview => TicketStage::InReview,
            TicketStatus::Done => TicketStage::Approved,
            TicketStatus::Parked => TicketStage::Dropped,
        }
    }
}

impl fmt::Display for TicketStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who moved the stage (T3): logged on every `ticket.stage_changed`, and required on every
/// stage write in the database.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageSource {
    /// The checks of a submission, run when it was handed over (or rerun at the user's word).
    Check,
    /// A reviewer's approve that took effect, or a reject.
    Review,
    /// The supervisor's tick (SV-20).
    Supervisor,
    /// The user: a board edit, their word letting a hand-over through, a complaint.
    User,
    /// The lead dropping the ticket through layout.
    LeadDrop,
    /// The app seeing a turn on the ticket start writing files or running commands (T6, Q3).
    AppStarted,
}

impl StageSource {
    pub const ALL: [StageSource; 6] = [
        StageSource::Check,
        StageSource::Review,
        StageSource::Supervisor,
        StageSource::User,
        StageSource::LeadDrop,
        StageSource::AppStarted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StageSource::Check => "check",
            StageSource::Review => "review",
            StageSource::Supervisor => "supervisor",
            StageSource::User => "user",
            StageSource::LeadDrop => "lead_drop",
            StageSource::AppStarted => "app_started",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        StageSource::ALL
            .into_iter()
            .find(|source| source.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "stage source '{s}' is not one of check, review, supervisor, user, \
                     lead_drop, app_started"
                )
            })
    }
}

impl fmt::Display for StageSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which app pass made a move: the submission's checks finishing, or the supervisor's tick.
/// The same decision (no reviewer, routine, one-go, routing to a reviewer) runs at both.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AppPass {
    Checks,
    Tick,
}

impl AppPass {
    fn source(self) -> StageSource {
        match self {
            AppPass::Checks => StageSource::Check,
            AppPass::Tick => StageSource::Supervisor,
        }
    }
}

/// Why a ticket goes back to its maker.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SendBack {
    /// A submission's gate failed when it was handed over (or rerun at the user's word).
    /// Only moves a ticket that had been handed over before (§4.3: "back to rework if it had
    /// been handed over"); otherwise the ticket does not move.
    GateFailed { handed_over_before: bool },
    /// A reviewer rejected (§5.3 step 5).
    Rejected,
    /// The user found fault or complained (§5.4 UW3, §5.5 CP1–CP3), also on an approved ticket.
    UserFault,
    /// The supervisor's tick found a failing gate (SV-20 b, a confirmed check failing).
    Supervisor,
}

/// How an approval came about (§1.2 approval arrow).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Approval {
    /// A reviewer's approve that took effect (§5.3 step 4).
    Reviewer,
    /// The user's word let it through (WU2), or "Take it as it is".
    User,
    /// The app approved it with no reviewer (CK4 `no_reviewer`, RT-a `routine`, OG-a `one_go`),
    /// when its checks finished or at the supervisor's tick.
    OnChecks { by: AutoApproval, pass: AppPass },
}

/// The approvals the app gives itself, with no reviewer and without the user's word.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AutoApproval {
    NoReviewer,
    Routine,
    OneGo,
}

impl Approval {
    /// The `approved_by` recorded on the submission.
    pub fn approved_by(self) -> ApprovedBy {
        match self {
            Approval::Reviewer => ApprovedBy::Reviewer,
            Approval::User => ApprovedBy::User,
            Approval::OnChecks { by, .. } => match by {
                AutoApproval::NoReviewer => ApprovedBy::NoReviewer,
                AutoApproval::Routine => ApprovedBy::Routine,
                AutoApproval::OneGo => ApprovedBy::OneGo,
            },
        }
    }
}

/// Something that may move a ticket's stage (B §1.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StageEvent {
    /// A turn on the ticket started writing files or running commands (T6).
    StartedWriting,
    /// A submission passed its gates (the ticket is handed over).
    HandedOver,
    /// The passing submission was queued to the ticket's reviewer (Q16: on queueing).
    QueuedToReviewer {
        pass: AppPass,
    },
    /// Sent back to its maker.
    SentBack(SendBack),
    Approved(Approval),
    /// The user changed the status on the board (T7).
    BoardEdit(TicketStatus),
    /// The lead dropped the ticket through layout, with a reason.
    LeadDrop,
}

impl StageEvent {
    fn describe(self) -> String {
        match self {
            StageEvent::StartedWriting => "work starting".into(),
            StageEvent::HandedOver => "a hand-over passing its gates".into(),
            StageEvent::QueuedToReviewer { .. } => "queueing to the reviewer".into(),
            StageEvent::SentBack(SendBack::GateFailed { .. }) => "a failing gate".into(),
            StageEvent::SentBack(SendBack::Rejected) => "a reviewer's reject".into(),
            StageEvent::SentBack(SendBack::UserFault) => "the user finding fault".into(),
            StageEvent::SentBack(SendBack::Supervisor) => "the supervisor sending back".into(),
            StageEvent::Approved(a) => format!("an approval ({})", a.approved_by().as_str()),
            StageEvent::BoardEdit(s) => format!("a board edit to {s}"),
            StageEvent::LeadDrop => "the lead's drop".into(),
        }
    }
}

/// The source a stage move made by this event is logged with (T3).
pub fn stage_source(event: StageEvent) -> StageSource {
    match event {
        StageEvent::StartedWriting => StageSource::AppStarted,
        StageEvent::HandedOver => StageSource::Check,
        StageEvent::QueuedToReviewer { pass } => pass.source(),
        StageEvent::SentBack(SendBack::GateFailed { .. }) => StageSource::Check,
        StageEvent::SentBack(SendBack::Rejected) => StageSource::Review,
        StageEvent::SentBack(SendBack::UserFault) => StageSource::User,
        StageEvent::SentBack(SendBack::Supervisor) => StageSource::Supervisor,
        StageEvent::Approved(Approval::Reviewer) => StageSource::Review,
        StageEvent::Approved(Approval::User) => StageSource::User,
        StageEvent::Approved(Approval::OnChecks { pass, .. }) => pass.source(),
        StageEvent::BoardEdit(_) => StageSource::User,
        StageEvent::LeadDrop => StageSource::LeadDrop,
    }
}

/// An event that cannot happen to a ticket at this stage: a caller's bug or a race the caller
/// should report, never a silent no-op.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a ticket at stage {from} cannot be moved by {event}")]
pub struct StageRefusal {
    pub from: TicketStage,
    pub event: String,
}

impl StageRefusal {
    pub fn code(&self) -> &'static str {
        "stage_move_refused"
    }
}

/// The stage after `event` (B §1.2). `Ok(from)` means the event is allowed and leaves the
/// stage where it is (e.g. work starting on a rework ticket); the caller then writes nothing.
pub fn next_stage(from: TicketStage, event: StageEvent) -> Result<TicketStage, StageRefusal> {
    use TicketStage::*;
    let refuse = || {
        Err(StageRefusal {
            from,
            event: event.describe(),
        })
    };
    match event {
        // T6: only the first start moves; later writing (rework, a new version) does not,
        // and writing into a dropped ticket's folder does not revive it.
        StageEvent::StartedWriting => Ok(if from == ToDo { InProgress } else { from }),
        StageEvent::HandedOver => match from {
            // From submitted/in_review a newer hand-over supersedes the undecided one (SP1)
            // and starts over; from approved it reopens the ticket (T10).
            ToDo | InProgress | Rework | Approved | Submitted | InReview => Ok(Submitted),
            Dropped => refuse(),
        },
        StageEvent::QueuedToReviewer { .. } => match from {
            Submitted | InReview => Ok(InReview),
            _ => refuse(),
        },
        StageEvent::SentBack(SendBack::GateFailed { handed_over_before }) => match from {
            Submitted | InReview | Rework | Approved => Ok(Rework),
            ToDo | InProgress if handed_over_before => Ok(Rework),
            ToDo | InProgress => Ok(from),
            Dropped => refuse(),
        },
        StageEvent::SentBack(SendBack::Rejected) | StageEvent::SentBack(SendBack::Supervisor) => {
            match from {
                Submitted | InReview => Ok(Rework),
                _ => refuse(),
            }
        }
        // CP1: a complaint acts on submitted, in_review or approved work.
        StageEvent::SentBack(SendBack::UserFault) => match from {
            Submitted | InReview | Approved => Ok(Rework),
            _ => refuse(),
        },
        StageEvent::Approved(_) => match from {
            Submitted | InReview => Ok(Approved),
            _ => refuse(),
        },
        StageEvent::BoardEdit(status) => Ok(status.stage_for_board_edit()),
        StageEvent::LeadDrop => Ok(Dropped),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TicketStage::*;

    fn all_events() -> Vec<StageEvent> {
        let mut events = vec![
            StageEvent::StartedWriting,
            StageEvent::HandedOver,
            StageEvent::QueuedToReviewer {
                pass: AppPass::Checks,
            },
            StageEvent::QueuedToReviewer {
                pass: AppPass::Tick,
            },
            StageEvent::SentBack(SendBack::GateFailed {
                handed_over_before: false,
            }),
            StageEvent::SentBack(SendBack::GateFailed {
                handed_over_before: true,
            }),
            StageEvent::SentBack(SendBack::Rejected),
            StageEvent::SentBack(SendBack::UserFault),
            StageEvent::SentBack(SendBack::Supervisor),
            StageEvent::Approved(Approval::Reviewer),
            StageEvent::Approved(Approval::User),
            StageEvent::LeadDrop,
        ];
        for by in [
            AutoApproval::NoReviewer,
            AutoApproval::Routine,
            AutoApproval::OneGo,
        ] {
            for pass in [AppPass::Checks, AppPass::Tick] {
                events.push(StageEvent::Approved(Approval::OnChecks { by, pass }));
            }
        }
        events.extend(TicketStatus::ALL.map(StageEvent::BoardEdit));
        events
    }

    /// The expected outcome of every (from, event) pair, written out as the §1.2 table says
    /// it, independently of `next_stage`'s match arms. `None` = refused.
    fn expected(from: TicketStage, event: StageEvent) -> Option<TicketStage> {
        let handed_over_stage = matches!(from, Submitted | InReview | Rework | Approved);
        match event {
            StageEvent::StartedWriting => Some(if from == ToDo { InProgress } else { from }),
            StageEvent::HandedOver => (from != Dropped).then_some(Submitted),
            StageEvent::QueuedToReviewer { .. } => {
                matches!(from, Submitted | InReview).then_some(InReview)
            }
            StageEvent::SentBack(SendBack::GateFailed { handed_over_before }) => {
                if from == Dropped {
                    None
                } else if handed_over_stage || handed_over_before {
                    Some(Rework)
                } else {
                    Some(from)
                }
            }
            StageEvent::SentBack(SendBack::Rejected | SendBack::Supervisor) => {
                matches!(from, Submitted | InReview).then_some(Rework)
            }
            StageEvent::SentBack(SendBack::UserFault) => {
                matches!(from, Submitted | InReview | Approved).then_some(Rework)
            }
            StageEvent::Approved(_) => matches!(from, Submitted | InReview).then_some(Approved),
            StageEvent::BoardEdit(status) => Some(match status {
                TicketStatus::ToDo => ToDo,
                TicketStatus::InProgress => InProgress,
                TicketStatus::InReview => InReview,
                TicketStatus::Done => Approved,
                TicketStatus::Parked => Dropped,
            }),
            StageEvent::LeadDrop => Some(Dropped),
        }
    }

    #[test]
    fn ticket_stage_table() {
        let mut pairs = 0;
        for from in TicketStage::ALL {
            for event in all_events() {
                pairs += 1;
                let got = next_stage(from, event);
                match expected(from, event) {
                    Some(to) => assert_eq!(got, Ok(to), "{from} + {event:?}"),
                    None => {
                        let refusal = got.expect_err(&format!("{from} + {event:?} must refuse"));
                        assert_eq!(refusal.from, from);
                        assert_eq!(refusal.code(), "stage_move_refused");
                    }
                }
            }
        }
        assert_eq!(pairs, 7 * 23);
        // Spot checks of the table's headline moves.
        assert_eq!(next_stage(ToDo, StageEvent::StartedWriting), Ok(InProgress));
        assert_eq!(next_stage(Approved, StageEvent::HandedOver), Ok(Submitted));
        assert_eq!(
            next_stage(Approved, StageEvent::SentBack(SendBack::UserFault)),
            Ok(Rework)
        );
        assert!(next_stage(ToDo, StageEvent::Approved(Approval::User)).is_err());
        assert!(next_stage(Rework, StageEvent::Approved(Approval::Reviewer)).is_err());
        assert_eq!(
            next_stage(Approved, StageEvent::BoardEdit(TicketStatus::ToDo)),
            Ok(ToDo)
        );
    }

    #[test]
    fn stage_source_of_every_event() {
        assert_eq!(
            stage_source(StageEvent::StartedWriting),
            StageSource::AppStarted
        );
        assert_eq!(stage_source(StageEvent::HandedOver), StageSource::Check);
        assert_eq!(
            stage_source(StageEvent::QueuedToReviewer {
                pass: AppPass::Tick
            }),
            StageSource::Supervisor
        );
        assert_eq!(
            stage_source(StageEvent::SentBack(SendBack::Rejected)),
            StageSource::Review
        );
        assert_eq!(
            stage_source(StageEvent::SentBack(SendBack::UserFault)),
            StageSource::User
        );
        assert_eq!(
            stage_source(StageEvent::SentBack(SendBack::Supervisor)),
            StageSource::Supervisor
        );
        assert_eq!(
            stage_source(StageEvent::Approved(Approval::OnChecks {
                by: AutoApproval::Routine,
                pass: AppPass::Checks
            })),
            StageSource::Check
        );
        assert_eq!(
            stage_source(StageEvent::Approved(Approval::Reviewer)),
            StageSource::Review
        );
        assert_eq!(
            stage_source(StageEvent::BoardEdit(TicketStatus::Done)),
            StageSource::User
        );
        assert_eq!(stage_source(StageEvent::LeadDrop), StageSource::LeadDrop);
    }

    #[test]
    fn stage_status_mapping_rows() {
        let rows: Vec<(&str, &str)> = TicketStage::ALL
            .iter()
            .map(|s| (s.as_str(), s.status().as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                ("to_do", "to_do"),
                ("in_progress", "in_progress"),
                ("submitted", "in_review"),
                ("in_review", "in_review"),
                ("rework", "in_progress"),
                ("approved", "done"),
                ("dropped", "parked"),
            ]
        );
        // A board edit's stage always maps back to the status the user chose.
        for status in TicketStatus::ALL {
            assert_eq!(status.stage_for_board_edit().status(), status);
        }
    }

    #[test]
    fn stored_values_round_trip() {
        for s in TicketStage::ALL {
            assert_eq!(TicketStage::parse(s.as_str()), Ok(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        for s in TicketStatus::ALL {
            assert_eq!(TicketStatus::parse(s.as_str()), Ok(s));
        }
        for s in StageSource::ALL {
            assert_eq!(StageSource::parse(s.as_str()), Ok(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert!(TicketStage::parse("done").unwrap_err().contains("'done'"));
        assert!(TicketStatus::parse("approved").is_err());
        assert!(StageSource::parse("bot").is_err());
    }

    #[test]
    fn approval_names_its_approved_by() {
        assert_eq!(Approval::User.approved_by(), ApprovedBy::User);
        assert_eq!(Approval::Reviewer.approved_by(), ApprovedBy::Reviewer);
        assert_eq!(
            Approval::OnChecks {
                by: AutoApproval::OneGo,
                pass: AppPass::Tick
            }
            .approved_by(),
            ApprovedBy::OneGo
        );
    }
}
