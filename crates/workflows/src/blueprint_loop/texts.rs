//! What a BlueprintLoop says to its executor and its auditor. Every text that follows a
//! successful stop says execution is closed (BL-12).

use crate::review::bullets;
use troupe_core::ThreadId;
use troupe_core::blueprint_loop::{BlueprintLoop, LoopStopRequest};

/// The host-selected auditor; its model comes from the `review` role.
pub const AUDIT_AGENT: &str = "supervisor";
pub const REVIEW_ROLE: &str = "review";

pub const AUDITOR_PROMPT: &str = "You are the supervisor: an independent auditor of a BlueprintLoop. Another agent (the executor) carried out a Blueprint — a decision-complete execution contract kept as a note — and now claims it is done. Decide whether the claim holds.

How to audit:
- Read the Blueprint in full (note_read with its id) and the run instruction. Its outcomes, change scope and non-goals are requirements: work outside the change scope is a defect, not a bonus.
- Map every required outcome to evidence you checked yourself in the shared workspace: read the files, run the tests and commands. Evidence must match the strength of the claim: a build or a type check does not prove behaviour, integration, experience or end-to-end success.
- An outcome you cannot verify is a blocking gap; it is never deferred implicitly. Classify every gap as BLOCKING or NON-BLOCKING.
- Any tool call or artifact change the executor made after its first successful blueprint_loop_stop is a lifecycle violation: reject it.
- Do not do the work yourself and do not change the executor's files.
- End with exactly one verdict tool call: blueprint_loop_approve when every required outcome is verified, or blueprint_loop_reject with the reason, the remaining items and concrete instructions. Prose alone decides nothing.";

fn instruction(l: &BlueprintLoop) -> String {
    l.user_prompt
        .as_deref()
        .map_or("(none given)".into(), str::to_string)
}

/// The executor's first prompt: the Blueprint is the contract.
pub fn first_prompt(l: &BlueprintLoop) -> String {
    format!(
        "[BlueprintLoop {id}] Carry out the Blueprint \"{title}\" (note_{note}, version {version}).\n\nRun instruction: {instr}\n\n1. Read the note in full with note_read before anything else.\n2. Treat the Blueprint and the run instruction as the contract: its outcomes, change scope and non-goals bind you; adjacent work outside the scope is a defect.\n3. Verify every outcome with evidence of matching strength (tests that exercise the behaviour, commands whose output shows it), not only builds or type checks.\n4. When every outcome is done and verified, call blueprint_loop_stop with your summary, completed items, evidence and anything remaining, then end the turn. Execution is closed after a successful stop: an independent supervisor audits the work and decides.",
        id = l.id,
        title = l.title,
        note = l.note_id,
        version = l.note_version,
        instr = instruction(l),
    )
}

/// The continuation proposed when the executor ends a turn without a stop.
pub fn continuation(l: &BlueprintLoop) -> String {
    let mut out = format!(
        "[BlueprintLoop {id}] A normal final answer does not end this loop. Inspect the Blueprint (note_{note}), the run instruction ({instr}) and the evidence you have: if outcomes remain, continue working on them; if every outcome is done and verified, call blueprint_loop_stop and end the turn — execution is closed after a successful stop.",
        id = l.id,
        note = l.note_id,
        instr = instruction(l),
    );
    if let Some(reason) = &l.audit.last_reason {
        out.push_str(&format!(
            "\n\nThe last audit (rejection {}) said: {reason}",
            l.audit.attempts
        ));
    }
    out
}

/// What a rejection sends back to the executor.
pub fn rejection(
    id: impl std::fmt::Display,
    r: &super::machine::Rejection,
    attempts: u32,
) -> String {
    format!(
        "[BlueprintLoop {id}] The supervisor rejected your stop (rejection {attempts}).\n\nReason: {}\n\nRemaining:\n{}\n\nAccepted as done:\n{}\n\nInstructions: {}\n\nExecution is open again: do the remaining items within the Blueprint's scope, then call blueprint_loop_stop again and end the turn.",
        r.reason,
        bullets(&r.remaining, "none listed"),
        bullets(&r.completed, "none listed"),
        r.instructions,
    )
}

/// The audit task a supervisor child starts with.
pub fn audit_task(l: &BlueprintLoop, stop: &LoopStopRequest, executor: ThreadId) -> String {
    format!(
        "Audit BlueprintLoop {id}.\n\nBlueprint: note_{note} (\"{title}\", version {version}) — read it in full with note_read.\nRun instruction: {instr}\nExecution thread: {executor}\n\n## The stop claim\n\nSummary: {summary}\n\nCompleted:\n{completed}\n\nEvidence:\n{evidence}\n\nRemaining (declared by the executor):\n{remaining}\n\n## Your verdict\n\nMap every required outcome of the Blueprint to evidence you verified yourself, classify each gap as BLOCKING or NON-BLOCKING, then call exactly one of:\n- blueprint_loop_approve {{\"summary\": what you verified}}\n- blueprint_loop_reject {{\"reason\", \"remaining\": [items marked BLOCKING or NON-BLOCKING], \"instructions\", \"completed\"?: [...]}}",
        id = l.id,
        note = l.note_id,
        title = l.title,
        version = l.note_version,
        instr = instruction(l),
        summary = stop.summary,
        completed = bullets(&stop.completed, "none claimed"),
        evidence = bullets(&stop.evidence, "none given"),
        remaining = bullets(&stop.remaining, "none declared"),
    )
}

/// The turn an auditor gets after ending without a verdict.
pub fn recovery_turn(l: &BlueprintLoop, attempt: u32, max: u32) -> String {
    format!(
        "[BlueprintLoop {}] Your audit ended without a verdict (recovery {attempt} of {max}). Call blueprint_loop_approve or blueprint_loop_reject now; no other effectful tool may be used in this turn. Ending again without a verdict fails the loop.",
        l.id
    )
}

pub fn approved(l: &BlueprintLoop, summary: &str) -> String {
    format!(
        "BlueprintLoop {} completed: the supervisor approved the work on \"{}\". {summary}",
        l.id, l.title
    )
}

pub fn started(l: &BlueprintLoop) -> String {
    format!(
        "BlueprintLoop {} started: carrying out the Blueprint \"{}\" (note_{}, version {}).",
        l.id, l.title, l.note_id, l.note_version
    )
}
