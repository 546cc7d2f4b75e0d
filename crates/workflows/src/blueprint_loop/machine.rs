//! The BlueprintLoop as a pure state machine: `(loop, event) -> (loop, effects)`. Every status
//! change it makes is one the core's transition table allows; the store checks that again when
//! the step is saved. Effects name what the caller writes in the same transaction (deliveries,
//! notices) or does once it has committed (stopping work).

use crate::review::clean;
use troupe_core::blueprint_loop::{BlueprintLoop, LoopSource, LoopStatus, LoopStopRequest};
use troupe_core::{MessageId, ThreadId};

/// Recovery turns an auditor that ended without a verdict may get before the loop fails.
pub const MAX_REVIEW_RECOVERIES: u32 = 2;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopClaim {
    pub summary: String,
    pub completed: Vec<String>,
    pub evidence: Vec<String>,
    pub remaining: Vec<String>,
}

pub use crate::review::Rejection;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Start,
    /// The first prompt could not be delivered.
    StartFailed {
        error: String,
    },
    /// The executor claims the Blueprint is carried out. `waits` are blocking one-shot watches.
    Stop {
        caller: ThreadId,
        claim: StopClaim,
        requester: MessageId,
        at: i64,
        waits: Vec<String>,
    },
    /// An auditor child was created for the pending claim (before it starts).
    AuditorBound {
        auditor: ThreadId,
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
    AuditorEndedWithoutVerdict {
        auditor: ThreadId,
    },
    /// The bound auditor was cut off by a restart: replaced, recovery budget untouched.
    AuditorInterrupted {
        auditor: ThreadId,
    },
    AuditorLaunchFailed {
        error: String,
    },
    /// A person cancelled (route or Abandon).
    Cancel,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Queue the first prompt for the executor (a task).
    FirstPrompt,
    /// Queue the audit task for the newly bound auditor.
    AuditTask { auditor: ThreadId },
    /// One more auditor turn with only the verdict tools.
    RecoveryTurn { auditor: ThreadId, attempt: u32 },
    /// Tell the executor the loop completed (context; it does not wake the session).
    MailApproved { summary: String },
    /// Send the rejection back to the executor (a steer that wakes it).
    MailRejected(Rejection),
    /// A line in the execution session for the person.
    Notice(String),
    /// Stop live work once committed (domain cancellation: no latch).
    AbortWork {
        execution: ThreadId,
        auditor: Option<ThreadId>,
    },
}

/// What the caller of a tool is told when nothing new was recorded but the call succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ack {
    Recorded,
    /// A claim already exists: no second claim, no second auditor.
    AlreadyQueued {
        audit_started: bool,
    },
    Unchanged,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub next: BlueprintLoop,
    pub effects: Vec<Effect>,
    pub ack: Ack,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Repairable: nothing was recorded.
    #[error("{0}")]
    InvalidArguments(String),
    #[error("only the loop's execution session may call blueprint_loop_stop")]
    NotExecution,
    #[error("only the recorded audit session may approve or reject")]
    NotAuditor,
    #[error("blocking waits must be cleared first: {}", .0.join("; "))]
    Waits(Vec<String>),
    #[error("the loop is {current}; this needs it {required}")]
    State {
        current: &'static str,
        required: &'static str,
    },
}

fn state(l: &BlueprintLoop, required: &'static str) -> Refusal {
    Refusal::State {
        current: l.status.as_str(),
        required,
    }
}

fn to(l: &BlueprintLoop, status: LoopStatus, effects: Vec<Effect>) -> Step {
    let mut next = l.clone();
    next.status = status;
    Step {
        next,
        effects,
        ack: Ack::Recorded,
    }
}

fn keep(l: &BlueprintLoop, ack: Ack) -> Step {
    Step {
        next: l.clone(),
        effects: vec![],
        ack,
    }
}

fn fail(l: &BlueprintLoop, error: String, effects: Vec<Effect>) -> Step {
    let mut s = to(l, LoopStatus::Failed, effects);
    s.next.error = Some(error);
    s
}

/// The recorded auditor, when `caller` is it and the loop is under audit.
fn check_auditor(l: &BlueprintLoop, caller: ThreadId) -> Result<&LoopStopRequest, Refusal> {
    if l.status != LoopStatus::Auditing {
        return Err(state(l, "auditing"));
    }
    if l.audit_thread_id != Some(caller) {
        return Err(Refusal::NotAuditor);
    }
    l.stop_request.as_ref().ok_or(state(l, "auditing"))
}

pub fn step(l: &BlueprintLoop, event: Event) -> Result<Step, Refusal> {
    match event {
        Event::Start => {
            if l.status != LoopStatus::Armed {
                return Err(state(l, "armed"));
            }
            Ok(to(l, LoopStatus::Running, vec![Effect::FirstPrompt]))
        }
        Event::StartFailed { error } => {
            if l.status != LoopStatus::Armed {
                return Ok(keep(l, Ack::Unchanged));
            }
            Ok(fail(l, format!("start_failed: {error}"), vec![]))
        }
        Event::Stop {
            caller,
            claim,
            requester,
            at,
            waits,
        } => {
            if caller != l.thread_id {
                return Err(Refusal::NotExecution);
            }
            let summary = claim.summary.trim().to_string();
            if summary.is_empty() {
                return Err(Refusal::InvalidArguments(
                    "summary: required, a non-empty account of what was carried out".into(),
                ));
            }
            if l.stop_request.is_some() {
                return Ok(keep(
                    l,
                    Ack::AlreadyQueued {
                        audit_started: l.audit_thread_id.is_some(),
                    },
                ));
            }
            if l.status != LoopStatus::Running {
                return Err(state(l, "running"));
            }
            if !waits.is_empty() {
                return Err(Refusal::Waits(waits));
            }
            let mut next = l.clone();
            next.stop_request = Some(LoopStopRequest {
                summary,
                completed: clean(claim.completed),
                evidence: clean(claim.evidence),
                remaining: clean(claim.remaining),
                requested_at: at,
                requester_thread_id: caller,
                requester_message_id: requester,
                review_recovery_attempts: 0,
            });
            Ok(Step {
                next,
                effects: vec![],
                ack: Ack::Recorded,
            })
        }
        Event::AuditorBound { auditor, requester } => {
            let pending = l.status == LoopStatus::Running
                && l.audit_thread_id.is_none()
                && l.stop_request
                    .as_ref()
                    .is_some_and(|s| s.requester_message_id == requester);
            if !pending {
                return Ok(keep(l, Ack::Unchanged));
            }
            let mut s = to(
                l,
                LoopStatus::Auditing,
                vec![
                    Effect::AuditTask { auditor },
                    Effect::Notice(format!(
                        "BlueprintLoop {}: the executor claims the Blueprint is carried out; an independent audit started.",
                        l.id
                    )),
                ],
            );
            s.next.audit_thread_id = Some(auditor);
            Ok(s)
        }
        Event::Approve { caller, summary } => {
            let summary = summary.trim().to_string();
            if summary.is_empty() {
                return Err(Refusal::InvalidArguments(
                    "summary: required, what you verified and the evidence for it".into(),
                ));
            }
            check_auditor(l, caller)?;
            // A Lattice loop's approval mails nothing: the record is what Lattice reads (BL-10).
            let mail = match l.source {
                LoopSource::Lattice => vec![],
                LoopSource::User => vec![Effect::MailApproved {
                    summary: summary.clone(),
                }],
            };
            let mut s = to(l, LoopStatus::Completed, mail);
            s.next.summary = Some(summary);
            Ok(s)
        }
        Event::Reject {
            caller,
            rejection,
            at,
        } => {
            let rejection = rejection.validated().map_err(Refusal::InvalidArguments)?;
            check_auditor(l, caller)?;
            let attempts = l.audit.attempts + 1;
            if l.max_iterations.is_some_and(|max| attempts >= max) {
                // No mail back to execution: the loop is over.
                let error = format!(
                    "iteration_exhausted: rejected {attempts} time(s); last reason: {}",
                    rejection.reason
                );
                let mut s = fail(
                    l,
                    error.clone(),
                    vec![Effect::Notice(format!(
                        "BlueprintLoop {} failed ({error}).",
                        l.id
                    ))],
                );
                s.next.audit.attempts = attempts;
                s.next.audit.last_reason = Some(rejection.reason);
                s.next.audit.last_audited_at = Some(at);
                return Ok(s);
            }
            let mut s = to(
                l,
                LoopStatus::Running,
                vec![
                    Effect::Notice(format!(
                        "BlueprintLoop {} audit {attempts}: rejected ({}); execution goes on.",
                        l.id, rejection.reason
                    )),
                    Effect::MailRejected(rejection.clone()),
                ],
            );
            s.next.stop_request = None;
            s.next.audit_thread_id = None;
            s.next.audit.attempts = attempts;
            s.next.audit.last_reason = Some(rejection.reason);
            s.next.audit.last_audited_at = Some(at);
            Ok(s)
        }
        Event::AuditorEndedWithoutVerdict { auditor } => {
            let Ok(stop) = check_auditor(l, auditor) else {
                return Ok(keep(l, Ack::Unchanged));
            };
            if stop.review_recovery_attempts >= MAX_REVIEW_RECOVERIES {
                let error = format!(
                    "review_terminal_tool_missing: the auditor ended {} times without approving or rejecting",
                    stop.review_recovery_attempts + 1
                );
                let notice = Effect::Notice(format!("BlueprintLoop {} failed ({error}).", l.id));
                return Ok(fail(l, error, vec![notice]));
            }
            let attempt = stop.review_recovery_attempts + 1;
            let mut next = l.clone();
            if let Some(s) = next.stop_request.as_mut() {
                s.review_recovery_attempts = attempt;
            }
            Ok(Step {
                next,
                effects: vec![Effect::RecoveryTurn { auditor, attempt }],
                ack: Ack::Recorded,
            })
        }
        Event::AuditorInterrupted { auditor } => {
            if check_auditor(l, auditor).is_err() {
                return Ok(keep(l, Ack::Unchanged));
            }
            // The claim and its recovery count stay; a replacement is bound by the policy.
            let mut s = to(l, LoopStatus::Running, vec![]);
            s.next.audit_thread_id = None;
            Ok(s)
        }
        Event::AuditorLaunchFailed { error } => {
            if !l.status.is_active() {
                return Ok(keep(l, Ack::Unchanged));
            }
            let error = format!("reviewer_launch_failed: {error}");
            let notice = Effect::Notice(format!("BlueprintLoop {} failed ({error}).", l.id));
            Ok(fail(l, error, vec![notice]))
        }
        Event::Cancel => {
            if !l.status.is_active() {
                return Ok(keep(l, Ack::Unchanged));
            }
            let mut s = to(
                l,
                LoopStatus::Cancelled,
                vec![
                    Effect::AbortWork {
                        execution: l.thread_id,
                        auditor: l.audit_thread_id,
                    },
                    Effect::Notice(format!("BlueprintLoop {} cancelled.", l.id)),
                ],
            );
            s.next.error = Some("stopped by user request".into());
            Ok(s)
        }
    }
}
