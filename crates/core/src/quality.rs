//! Quality events (digest 003-B §9): their types, the causes each writer names, and which a
//! turn's end or a send-back is — classified by what happened alone, never by asking a model
//! whose fault it was (QE2). A stall, a crash or a broken stop is the app's (`orchestration`),
//! never the model's (QE4).

use crate::run::EndReason;
use crate::ticket::SendBack;
use serde::Serialize;
use std::fmt;

/// A quality event's type (§9.1).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QualityType {
    /// Checks failed, a review's reject, a user send-back, a complaint's rework, a command
    /// timing out.
    Execution,
    /// A check defined, or a requirement first said, after the hand-over.
    Unclear,
    /// A reply that loops, declines, hits its cap or comes back incomplete; or a turn the user
    /// marked as the model's problem.
    Model,
    /// A failed render; a part at the capability ceiling.
    Pipeline,
    /// An approval the user overturned.
    ReviewMiss,
    /// A stall, a crash, a broken stop: the app's, shown to maintainers only.
    Orchestration,
}

impl QualityType {
    pub const ALL: [QualityType; 6] = [
        QualityType::Execution,
        QualityType::Unclear,
        QualityType::Model,
        QualityType::Pipeline,
        QualityType::ReviewMiss,
        QualityType::Orchestration,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            QualityType::Execution => "execution",
            QualityType::Unclear => "unclear",
            QualityType::Model => "model",
            QualityType::Pipeline => "pipeline",
            QualityType::ReviewMiss => "review_miss",
            QualityType::Orchestration => "orchestration",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "type '{s}' is not one of execution, unclear, model, pipeline, review_miss, \
                     orchestration"
                )
            })
    }
}

impl fmt::Display for QualityType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The causes each writer names, so the report counts them by one spelling.
pub mod cause {
    /// execution: a hand-over's gate failed (at hand-over or rerun).
    pub const CHECKS_FAILED: &str = "checks_failed";
    /// execution: a reviewer's reject.
    pub const REVIEW_REJECTED: &str = "review_rejected";
    /// execution: the user sent the work back (a board edit out of review or approval).
    pub const USER_SENT_BACK: &str = "user_sent_back";
    /// execution: a complaint sent the work back (§5.5).
    pub const COMPLAINT: &str = "complaint";
    /// execution: a shell command was killed by its timeout.
    pub const COMMAND_TIMED_OUT: &str = "command_timed_out";
    /// unclear: a check written after the hand-over it now judges.
    pub const CHECK_AFTER_HANDOVER: &str = "check_after_handover";
    /// unclear: a requirement first said after the hand-over.
    pub const REQUIREMENT_AFTER_HANDOVER: &str = "requirement_after_handover";
    /// model: a model call failed after its retries (incomplete, refused by the endpoint).
    pub const MODEL_ERROR: &str = "model_error";
    /// model: the turn hit its hop cap (a reply that loops).
    pub const HOP_LIMIT: &str = "hop_limit";
    /// model: a reply cut off at the model's length cap.
    pub const CUT_OFF: &str = "cut_off";
    /// model: the model declined to answer (the provider said it refused).
    pub const DECLINED: &str = "declined";
    /// model: the user marked the turn as the model's problem (QE3); one per turn.
    pub const MARKED: &str = "marked";
    /// pipeline: a part (or ticket) reached the capability ceiling.
    pub const CEILING: &str = "ceiling";
    /// pipeline: a render (an external job) failed.
    pub const RENDER_FAILED: &str = "render_failed";
    /// review_miss: an approval a complaint overturned.
    pub const REVIEW_MISS: &str = "review_miss";
    /// orchestration: a turn stalled and was picked up.
    pub const STALL: &str = "stall";
    /// orchestration: the process died under a running turn.
    pub const CRASH: &str = "crash";
    /// orchestration: a stop that did not end what it stopped.
    pub const BROKEN_STOP: &str = "broken_stop";
}

/// How a turn's replies came back, beyond how the turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyShape {
    Whole,
    /// A reply was cut off at the model's length cap.
    CutOff,
    /// The provider said the model declined to answer.
    Declined,
}

/// What a Bot's turn's end says about quality: a failed model call, the hop cap (a reply that
/// loops), a reply cut off at the length cap or a declined one are the model's; a turn the
/// process died under or the kernel broke off is the app's. Anything else says nothing.
pub fn turn_end_quality(end: &EndReason, shape: ReplyShape) -> Option<(QualityType, &'static str)> {
    match (end, shape) {
        (EndReason::ModelError(_), _) => Some((QualityType::Model, cause::MODEL_ERROR)),
        (EndReason::HopLimit(_), _) => Some((QualityType::Model, cause::HOP_LIMIT)),
        (EndReason::Interrupted, _) => Some((QualityType::Orchestration, cause::CRASH)),
        (EndReason::Internal(_), _) => Some((QualityType::Orchestration, cause::STALL)),
        (_, ReplyShape::Declined) => Some((QualityType::Model, cause::DECLINED)),
        (_, ReplyShape::CutOff) => Some((QualityType::Model, cause::CUT_OFF)),
        (_, ReplyShape::Whole) => None,
    }
}

/// The `execution` cause of a hand-over sent back.
pub fn send_back_cause(why: SendBack) -> &'static str {
    match why {
        SendBack::GateFailed { .. } | SendBack::Supervisor => cause::CHECKS_FAILED,
        SendBack::Rejected => cause::REVIEW_REJECTED,
        SendBack::UserFault => cause::COMPLAINT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_read_back_as_written() {
        for t in QualityType::ALL {
            assert_eq!(QualityType::parse(t.as_str()), Ok(t));
        }
        assert!(QualityType::parse("blame").is_err());
    }

    #[test]
    fn a_stall_or_crash_is_the_apps_never_the_models() {
        assert_eq!(
            turn_end_quality(&EndReason::Interrupted, ReplyShape::Whole),
            Some((QualityType::Orchestration, cause::CRASH))
        );
        assert_eq!(
            turn_end_quality(&EndReason::Internal("store".into()), ReplyShape::CutOff),
            Some((QualityType::Orchestration, cause::STALL))
        );
    }

    #[test]
    fn loops_caps_and_failed_calls_are_the_models() {
        assert_eq!(
            turn_end_quality(&EndReason::HopLimit(40), ReplyShape::Whole),
            Some((QualityType::Model, cause::HOP_LIMIT))
        );
        assert_eq!(
            turn_end_quality(&EndReason::ModelError("503".into()), ReplyShape::Declined),
            Some((QualityType::Model, cause::MODEL_ERROR))
        );
        assert_eq!(
            turn_end_quality(&EndReason::Completed, ReplyShape::CutOff),
            Some((QualityType::Model, cause::CUT_OFF))
        );
        assert_eq!(
            turn_end_quality(&EndReason::Completed, ReplyShape::Declined),
            Some((QualityType::Model, cause::DECLINED))
        );
    }

    #[test]
    fn a_finished_or_stopped_turn_says_nothing() {
        for end in [EndReason::Completed, EndReason::Stopped, EndReason::NoWork] {
            assert_eq!(turn_end_quality(&end, ReplyShape::Whole), None, "{end:?}");
        }
    }

    #[test]
    fn each_send_back_has_its_cause() {
        assert_eq!(
            send_back_cause(SendBack::GateFailed {
                handed_over_before: true
            }),
            cause::CHECKS_FAILED
        );
        assert_eq!(send_back_cause(SendBack::Supervisor), cause::CHECKS_FAILED);
        assert_eq!(send_back_cause(SendBack::Rejected), cause::REVIEW_REJECTED);
        assert_eq!(send_back_cause(SendBack::UserFault), cause::COMPLAINT);
    }
}
