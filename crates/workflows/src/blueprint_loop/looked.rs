//! A BlueprintLoop's auditor approves only after a look at the work. The auditor (the
//! supervisor) is told to read the Blueprint in full and check every outcome itself in the
//! workspace; an approval made with no call but the verdict since the claim accepts the work on
//! the executor's say (the local Qwen's auditor approved a backup script that was never
//! written, in one call). Troupe's own rule: the seeds ask nothing of an auditor before its
//! verdict. A Light Loop's reviewer is not held to it: a Light Loop's task may be an answer in
//! words, with nothing in the workspace to look at.
//!
//! A look is a tool call of the auditor's thread since the claim that ran and answered without
//! an error: a note read, a file read, a listing, a command that succeeded. A call refused or
//! failed is none (a missing file is a finding, but one that calls for a rejection). Calls in
//! the same reply as the verdict are not recorded yet and do not count: their answers were not
//! seen.

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
const NOT_LOOKED: &str = "approve refused: you have not looked at the work yet — no call of this \
    audit since the claim has answered without an error, and approving on the executor's word \
    alone is no audit.";
const LOOK_NOW: &str = " Look now: read the Blueprint with note_read, read the files the claim \
    names, run the commands it rests on; then give your verdict.";
/// In a recovery turn nothing but a verdict may be called.
const REJECT_NOW: &str = " In this recovery turn only a verdict may be called: reject, naming \
    what is left to verify.";

/// Whether `auditor` made a call other than a verdict that answered, at or after `claimed_at`.
pub fn looked_since(tx: &Tx<'_>, auditor: ThreadId, claimed_at: i64) -> Result<bool, StoreError> {
    Ok(tx
        .answered_tool_calls_since(auditor, claimed_at)?
        .iter()
        .any(|n| !VERDICTS.contains(&n.as_str())))
}

/// The approval refused for want of a look: retryable once the auditor has looked; nothing
/// was recorded. In a recovery turn, where looking is refused, it says to reject.
pub fn not_looked(recovery: bool) -> ToolReply {
    let message = format!(
        "{NOT_LOOKED}{}",
        if recovery { REJECT_NOW } else { LOOK_NOW }
    );
    reply(
        json!({
            "ok": false,
            "code": "not_looked",
            "retryable": true,
            "persisted": false,
            "message": message,
            "required_agent_action": if recovery { "reject" } else { "look at the work, then give your verdict" },
        }),
        true,
        false,
    )
}
