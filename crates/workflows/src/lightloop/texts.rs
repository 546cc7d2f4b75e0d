//! What the Light Loop says to its models and to the person: the continuation, the review
//! task, the recovery turn, and the notices shown in the conversation.

use crate::review::bullets;
use crate::slot::{LightLoopSlot, StopRequest};
use troupe_core::ThreadId;

/// The reviewer agent's name; its model comes from the `review` role.
pub const REVIEWER_AGENT: &str = "lightloop-reviewer";
pub const REVIEW_ROLE: &str = "review";

pub const REVIEWER_PROMPT: &str = "You are an independent reviewer of a Light Loop. Another agent (the executor) worked on a task and now claims it is complete. Decide whether the claim holds.

How to review:
- Read the task and the claim. Then check the work itself in the shared workspace: read the files, run the tests or commands that show whether each deliverable exists and works. Do not trust the claim's wording; verify it.
- Do not do the work yourself and do not change the executor's files.
- End the review with exactly one verdict tool call: light_loop_approve when every requested deliverable is done and verified, or light_loop_reject with the reason, the remaining items (each marked BLOCKING or NON-BLOCKING) and concrete instructions for the executor.
- Your verdict is the only thing that decides the review: prose alone decides nothing.";

/// The continuation a policy proposes when the executor ends a turn without a stop claim.
pub fn continuation(ll: &LightLoopSlot) -> String {
    let mut out = format!(
        "[Light Loop] Continue the task:\n\n{}\n\nCheck the requested deliverables one by one against what exists now, the evidence you have (tests run, output seen), errors you hit and edge cases. Then either keep working, or call loop_stop with your `summary`, `completed` items, `evidence` and `limitations` and end your turn.",
        ll.instructions
    );
    if let Some(reason) = &ll.review.last_reason {
        out.push_str(&format!(
            "\n\nThe last review (rejection {}) said: {reason}",
            ll.review.attempts
        ));
        if !ll.review.last_remaining.is_empty() {
            out.push_str(&format!(
                "\nRemaining:\n{}",
                bullets(&ll.review.last_remaining, "none")
            ));
        }
        if let Some(i) = &ll.review.last_instructions {
            out.push_str(&format!("\nInstructions: {i}"));
        }
    }
    out
}

/// What a rejection delivers to the executor.
pub fn rejection(
    reason: &str,
    remaining: &[String],
    instructions: &str,
    completed: &[String],
    attempts: u32,
) -> String {
    format!(
        "[Light Loop] The reviewer rejected your completion claim (rejection {attempts}).\n\nReason: {reason}\n\nRemaining:\n{}\n\nAccepted as done:\n{}\n\nInstructions: {instructions}\n\nContinue from these, and call loop_stop again when they are done.",
        bullets(remaining, "none listed"),
        bullets(completed, "none listed"),
    )
}

/// The review task a reviewer child starts with.
pub fn review_task(executor: ThreadId, ll: &LightLoopSlot, stop: &StopRequest) -> String {
    format!(
        "Review a Light Loop completion claim.\n\nExecutor thread: {executor}\n\n## The task\n\n{}\n\n## The claim\n\nSummary: {}\n\nCompleted:\n{}\n\nEvidence:\n{}\n\nLimitations:\n{}\n\n## Your verdict\n\nVerify the work in the workspace, then call exactly one of:\n- light_loop_approve {{\"summary\": what you verified}}\n- light_loop_reject {{\"reason\", \"remaining\": [items marked BLOCKING or NON-BLOCKING], \"instructions\", \"completed\"?: [...]}}",
        ll.instructions,
        stop.summary,
        bullets(&stop.completed, "none claimed"),
        bullets(&stop.evidence, "none given"),
        bullets(&stop.limitations, "none claimed"),
    )
}

/// The turn a reviewer gets after ending without a verdict.
pub fn recovery_turn(executor: ThreadId, attempt: u32, max: u32) -> String {
    format!(
        "[Light Loop] Your review ended without a verdict (recovery {attempt} of {max}). The review of executor thread {executor} is still open. Call light_loop_approve or light_loop_reject now; no other tool may be used in this turn. Ending again without a verdict fails the loop."
    )
}

pub fn approved_notice(summary: &str) -> String {
    format!("Light Loop completed: the reviewer approved the work. {summary}")
}

pub fn rejected_notice(reason: &str, attempts: u32) -> String {
    format!(
        "Light Loop review {attempts}: the reviewer rejected the claim ({reason}); work goes on."
    )
}

pub fn exhausted_notice(reason: &str) -> String {
    format!(
        "Light Loop ended (iteration_exhausted): the reviewer rejected the claim again and no iterations are left. Last reason: {reason}"
    )
}

pub fn failed_notice(error: &str) -> String {
    format!("Light Loop failed: the review could not finish ({error}).")
}
