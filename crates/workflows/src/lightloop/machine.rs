//! The Light Loop as a pure state machine: `(slot, event) -> (slot, effects)`. The slot is the
//! only state (sub-states are derived: executing, stop intent pending, under review); `None`
//! after a step means the loop ended and its terminal record is among the effects, first.

use crate::review::clean;
use crate::slot::{LightLoopSlot, ReviewState, StopRequest};
use serde::{Deserialize, Serialize};
use troupe_core::{MessageId, ThreadId};

/// Recovery turns a reviewer that ended without a verdict may get before the loop fails.
pub const MAX_REVIEW_RECOVERIES: u32 = 2;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalStatus {
    Completed,
    Failed,
    Cancelled,
    TimedOut,
    IterationExhausted,
}

impl TerminalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalStatus::Completed => "completed",
            TerminalStatus::Failed => "failed",
            TerminalStatus::Cancelled => "cancelled",
            TerminalStatus::TimedOut => "timed_out",
            TerminalStatus::IterationExhausted => "iteration_exhausted",
        }
    }
}

/// Where an active loop stands (derived from the slot).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Executing,
    /// `loop_stop` recorded a claim; no reviewer is bound yet.
    StopPending,
    Reviewing(ThreadId),
}

pub fn phase(s: &LightLoopSlot) -> Phase {
    match &s.stop_request {
        None => Phase::Executing,
        Some(StopRequest {
            reviewer_thread_id: Some(r),
            ..
        }) => Phase::Reviewing(*r),
        Some(_) => Phase::StopPending,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopClaim {
    pub summary: String,
    pub completed: Vec<String>,
    pub evidence: Vec<String>,
    pub limitations: Vec<String>,
}

pub use crate::review::Rejection;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopEvent {
    /// The executor claims completion. `waits` are blocking waits (one-shot watches) found now.
    LoopStop {
        claim: StopClaim,
        requester: MessageId,
        at: i64,
        waits: Vec<String>,
    },
    /// A reviewer child was created for the pending claim of `requester` (before it starts).
    ReviewerBound {
        reviewer: ThreadId,
        requester: MessageId,
    },
    Approve {
        caller: ThreadId,
        summary: String,
    },
    Reject {
        caller: ThreadId,
        rejection: Rejection,
        at: i64,
    },
    /// The bound reviewer's turn ended and no verdict tool settled the claim.
    ReviewerEndedWithoutVerdict {
        reviewer: ThreadId,
    },
    /// The bound reviewer was cut off by a restart: replaced, budget untouched.
    ReviewerInterrupted {
        reviewer: ThreadId,
    },
    /// The reviewer could not start (e.g. no model).
    ReviewerLaunchFailed {
        reviewer: ThreadId,
        error: String,
    },
    UpdateInstructions {
        instructions: String,
        max_iterations: Option<u32>,
    },
    Cancel,
}

/// What delivering a verdict tells the executor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mail {
    Approved { summary: String },
    Rejected(Rejection),
    Exhausted(Rejection),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopEffect {
    /// Written before the slot is cleared.
    RecordTerminal {
        status: TerminalStatus,
        error: Option<String>,
    },
    /// Deliver to the executor's inbox.
    MailExecutor(Mail),
    /// Give the bound reviewer one more turn with only the verdict tools.
    RecoveryTurn { reviewer: ThreadId },
    /// Stop the executor's turn and the reviewer's (domain cancel: no latch).
    AbortWork { reviewer: Option<ThreadId> },
    /// A visible notice that the review could not finish.
    ReviewFailedNotice { requester: MessageId, error: String },
}

/// What the caller is told when nothing new was recorded but the call succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ack {
    Recorded,
    /// A claim was already pending; no second claim or reviewer.
    AlreadyPending {
        reviewer: Option<ThreadId>,
    },
    /// Nothing to do (e.g. cancelling an ended loop).
    Unchanged,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub next: Option<LightLoopSlot>,
    pub effects: Vec<LoopEffect>,
    pub ack: Ack,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoopRefusal {
    #[error("no Light Loop is active on this session")]
    NotActive,
    /// Repairable: nothing was recorded.
    #[error("{0}")]
    InvalidArguments(String),
    #[error("blocking waits must be cleared first: {}", .0.join("; "))]
    Waits(Vec<String>),
    #[error("a completion review is pending; instructions cannot change until it is decided")]
    ReviewPending,
    #[error("no completion claim is under review")]
    NoPendingReview,
    #[error("only the recorded reviewer session may approve or reject")]
    NotReviewer,
}

fn trimmed(s: &str) -> String {
    s.trim().to_string()
}

fn keep(s: &LightLoopSlot, ack: Ack) -> Step {
    Step {
        next: Some(s.clone()),
        effects: vec![],
        ack,
    }
}

fn end(status: TerminalStatus, error: Option<String>, mut extra: Vec<LoopEffect>) -> Step {
    let mut effects = vec![LoopEffect::RecordTerminal { status, error }];
    effects.append(&mut extra);
    Step {
        next: None,
        effects,
        ack: Ack::Recorded,
    }
}

/// The recorded reviewer, when `caller` is it.
fn check_reviewer(s: &LightLoopSlot, caller: ThreadId) -> Result<&StopRequest, LoopRefusal> {
    let stop = s
        .stop_request
        .as_ref()
        .ok_or(LoopRefusal::NoPendingReview)?;
    match stop.reviewer_thread_id {
        None => Err(LoopRefusal::NoPendingReview),
        Some(r) if r != caller => Err(LoopRefusal::NotReviewer),
        Some(_) => Ok(stop),
    }
}

pub fn step(state: Option<&LightLoopSlot>, event: LoopEvent) -> Result<Step, LoopRefusal> {
    let Some(s) = state else {
        return match event {
            // Cancelling an ended loop is a no-op: cancel is idempotent.
            LoopEvent::Cancel => Ok(Step {
                next: None,
                effects: vec![],
                ack: Ack::Unchanged,
            }),
            _ => Err(LoopRefusal::NotActive),
        };
    };
    match event {
        LoopEvent::LoopStop {
            claim,
            requester,
            at,
            waits,
        } => {
            let summary = trimmed(&claim.summary);
            if summary.is_empty() {
                return Err(LoopRefusal::InvalidArguments(
                    "summary: required, a non-empty account of what was done".into(),
                ));
            }
            if let Some(m) = placeholder_in(&claim) {
                return Err(LoopRefusal::InvalidArguments(m));
            }
            if let Some(stop) = &s.stop_request {
                return Ok(keep(
                    s,
                    Ack::AlreadyPending {
                        reviewer: stop.reviewer_thread_id,
                    },
                ));
            }
            if !waits.is_empty() {
                return Err(LoopRefusal::Waits(waits));
            }
            let mut next = s.clone();
            next.stop_request = Some(StopRequest {
                summary,
                completed: clean(claim.completed),
                evidence: clean(claim.evidence),
                limitations: clean(claim.limitations),
                requested_at: at,
                requester_message_id: requester,
                reviewer_thread_id: None,
                review_recovery_attempts: 0,
            });
            Ok(Step {
                next: Some(next),
                effects: vec![],
                ack: Ack::Recorded,
            })
        }
        LoopEvent::ReviewerBound {
            reviewer,
            requester,
        } => {
            let Some(stop) = &s.stop_request else {
                return Err(LoopRefusal::NoPendingReview);
            };
            // Bind only the claim it was prepared for, and only once.
            if stop.requester_message_id != requester || stop.reviewer_thread_id.is_some() {
                return Ok(keep(s, Ack::Unchanged));
            }
            let mut next = s.clone();
            if let Some(stop) = next.stop_request.as_mut() {
                stop.reviewer_thread_id = Some(reviewer);
            }
            Ok(Step {
                next: Some(next),
                effects: vec![],
                ack: Ack::Recorded,
            })
        }
        LoopEvent::Approve { caller, summary } => {
            if summary.trim().is_empty() {
                return Err(LoopRefusal::InvalidArguments(
                    "summary: required, what was verified".into(),
                ));
            }
            check_reviewer(s, caller)?;
            Ok(end(
                TerminalStatus::Completed,
                None,
                vec![LoopEffect::MailExecutor(Mail::Approved {
                    summary: trimmed(&summary),
                })],
            ))
        }
        LoopEvent::Reject {
            caller,
            rejection,
            at,
        } => {
            let rejection = rejection
                .validated()
                .map_err(LoopRefusal::InvalidArguments)?;
            check_reviewer(s, caller)?;
            let attempts = s.review.attempts + 1;
            if s.max_iterations.is_some_and(|max| attempts >= max) {
                return Ok(end(
                    TerminalStatus::IterationExhausted,
                    Some(format!(
                        "iteration_exhausted: rejected {attempts} time(s); last reason: {}",
                        rejection.reason
                    )),
                    vec![LoopEffect::MailExecutor(Mail::Exhausted(rejection))],
                ));
            }
            let mut next = s.clone();
            next.stop_request = None;
            next.review = ReviewState {
                attempts,
                last_reason: Some(rejection.reason.clone()),
                last_reviewed_at: Some(at),
                last_remaining: rejection.remaining.clone(),
                last_instructions: Some(rejection.instructions.clone()),
            };
            Ok(Step {
                next: Some(next),
                effects: vec![LoopEffect::MailExecutor(Mail::Rejected(rejection))],
                ack: Ack::Recorded,
            })
        }
        LoopEvent::ReviewerEndedWithoutVerdict { reviewer } => {
            let Ok(stop) = check_reviewer(s, reviewer) else {
                return Ok(keep(s, Ack::Unchanged));
            };
            if stop.review_recovery_attempts >= MAX_REVIEW_RECOVERIES {
                let error = format!(
                    "review_terminal_tool_missing: the reviewer ended {} times without approving or rejecting",
                    stop.review_recovery_attempts + 1
                );
                let requester = stop.requester_message_id;
                return Ok(end(
                    TerminalStatus::Failed,
                    Some(error.clone()),
                    vec![LoopEffect::ReviewFailedNotice { requester, error }],
                ));
            }
            let mut next = s.clone();
            if let Some(stop) = next.stop_request.as_mut() {
                stop.review_recovery_attempts += 1;
            }
            Ok(Step {
                next: Some(next),
                effects: vec![LoopEffect::RecoveryTurn { reviewer }],
                ack: Ack::Recorded,
            })
        }
        LoopEvent::ReviewerInterrupted { reviewer } => {
            if check_reviewer(s, reviewer).is_err() {
                return Ok(keep(s, Ack::Unchanged));
            }
            let mut next = s.clone();
            if let Some(stop) = next.stop_request.as_mut() {
                stop.reviewer_thread_id = None;
            }
            Ok(Step {
                next: Some(next),
                effects: vec![],
                ack: Ack::Recorded,
            })
        }
        LoopEvent::ReviewerLaunchFailed { reviewer, error } => {
            let Ok(stop) = check_reviewer(s, reviewer) else {
                return Ok(keep(s, Ack::Unchanged));
            };
            let error = format!("reviewer_launch_failed: {error}");
            let requester = stop.requester_message_id;
            Ok(end(
                TerminalStatus::Failed,
                Some(error.clone()),
                vec![LoopEffect::ReviewFailedNotice { requester, error }],
            ))
        }
        LoopEvent::UpdateInstructions {
            instructions,
            max_iterations,
        } => {
            let instructions = trimmed(&instructions);
            if instructions.is_empty() {
                return Err(LoopRefusal::InvalidArguments(
                    "instructions: required and non-empty".into(),
                ));
            }
            if max_iterations == Some(0) {
                return Err(LoopRefusal::InvalidArguments(
                    "max_iterations: must be at least 1".into(),
                ));
            }
            if s.stop_request.is_some() {
                return Err(LoopRefusal::ReviewPending);
            }
            let mut next = s.clone();
            next.instructions = instructions;
            next.max_iterations = max_iterations;
            let ack = if next == *s {
                Ack::Unchanged
            } else {
                Ack::Recorded
            };
            Ok(Step {
                next: Some(next),
                effects: vec![],
                ack,
            })
        }
        LoopEvent::Cancel => {
            // Live work stops first, then the single terminal path runs.
            let reviewer = s.stop_request.as_ref().and_then(|r| r.reviewer_thread_id);
            Ok(Step {
                next: None,
                effects: vec![
                    LoopEffect::AbortWork { reviewer },
                    LoopEffect::RecordTerminal {
                        status: TerminalStatus::Cancelled,
                        error: None,
                    },
                ],
                ack: Ack::Recorded,
            })
        }
    }
}

/// A claim copied from a template: an item that is only `<…>` (a small model claimed
/// `"evidence": ["<list of evidence here>"]` before doing anything). A reviewer would reject
/// it; refusing it costs the model one call instead of a review.
fn placeholder_in(claim: &StopClaim) -> Option<String> {
    let fields = [
        ("summary", std::slice::from_ref(&claim.summary)),
        ("completed", &claim.completed[..]),
        ("evidence", &claim.evidence[..]),
        ("limitations", &claim.limitations[..]),
    ];
    for (field, items) in fields {
        for (i, item) in items.iter().enumerate() {
            let t = item.trim();
            let inner = t.strip_prefix('<').and_then(|r| r.strip_suffix('>'));
            if inner.is_some_and(|x| !x.contains(['<', '>'])) {
                let at = if field == "summary" {
                    field.to_string()
                } else {
                    format!("{field}[{i}]")
                };
                return Some(format!(
                    "{at}: {t:?} is a template's placeholder, not a claim: say what you did, \
                     ran and saw, or leave the item out"
                ));
            }
        }
    }
    None
}
