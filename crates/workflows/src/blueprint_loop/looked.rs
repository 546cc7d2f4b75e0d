//! A BlueprintLoop's auditor approves only after a look at the work. The auditor (the
//! supervisor) is told to read the Blueprint in full and check every outcome itself in the
//! workspace; an approval made with no call but the verdict since the claim accepts the work on
//! the executor's say (the local Qwen's auditor approved a backup script that was never
//! written, in one call). Troupe's own rule: the seeds ask nothing of an auditor before its
//! verdict. A Light Loop's reviewer is not held to it: a Light Loop's task may be an answer in
//! words, with nothing in the workspace to look at.
//!
//! A look is any tool call of the auditor's thread recorded since the claim: a note read, a file
//! read, a command, even one that failed (a missing file is a finding). Calls in the same reply
//! as the verdict are not recorded yet and do not count: their answers were not seen.

use crate::tool_results::reply;
use serde_json::json;
use troupe_core::ThreadId;
use troupe_engine::extension::ToolReply;
use troupe_store::{StoreError, Tx};

/// The tools that give a verdict, which are no look.
const VERDICTS: [&str; 2] = [
    crate::blueprint_loop::tools::APPROVE,
    crate::blueprint_loop::tools::REJECT,
];

/// What an auditor that has not looked is told when it approves.
const NOT_LOOKED: &str = "approve refused: you have not looked at the work — this audit has \
    made no call but the verdict since the claim, so approving would take the claim on the \
    executor's word. Check it yourself first (read the Blueprint with note_read, read the \
    files, run the tests or commands the claim rests on), then give your verdict; if you \
    cannot look now, reject with what is left to verify.";

/// Whether `auditor` made a call other than a verdict at or after `claimed_at`.
pub fn looked_since(tx: &Tx<'_>, auditor: ThreadId, claimed_at: i64) -> Result<bool, StoreError> {
    Ok(tx
        .tool_call_names_since(auditor, claimed_at)?
        .iter()
        .any(|n| !VERDICTS.contains(&n.as_str())))
}

/// The approval refused for want of a look: retryable once the auditor has looked; nothing
/// was recorded.
pub fn not_looked() -> ToolReply {
    reply(
        json!({
            "ok": false,
            "code": "not_looked",
            "retryable": true,
            "persisted": false,
            "message": NOT_LOOKED,
            "required_agent_action": "look at the work, then give your verdict",
        }),
        true,
        false,
    )
}
