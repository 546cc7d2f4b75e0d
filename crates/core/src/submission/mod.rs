//! Submissions (digest B §4): hand-overs of a ticket's work, their state, supersession, the
//! approval with no reviewer, and the filter on words handed over.

pub mod answer_filter;
pub mod approval;
pub mod state;

pub use answer_filter::{AnswerFault, AnswerRefusal, answer_filter};
pub use approval::{
    ApprovalDecision, ApprovalFacts, BoundCheck, CheckResult, CheckSource, OneGoFacts, WaitReason,
    approval_decision,
};
pub use state::{
    ApprovedBy, EarlierSubmission, SubmissionEvent, SubmissionOrigin, SubmissionState,
    is_undecided, next_submission_state, superseded_by_board_edit, superseded_by_newer,
};
