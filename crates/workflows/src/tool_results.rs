//! The shared shape of lifecycle tool results (the seeds' tool contract): argument errors are
//! repairable and persist nothing; ownership and state conflicts are not retryable and say
//! what state is required; a recorded intent says it is durably queued, names the host as the
//! owner of the transition and ends the turn.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use troupe_engine::extension::ToolReply;

pub fn reply(v: Value, is_error: bool, ends_turn: bool) -> ToolReply {
    ToolReply {
        content: v.to_string(),
        is_error,
        ends_turn,
        ends_run: None,
        outcome_unknown: false,
    }
}

/// Repairable: nothing was persisted; the contract is repeated with an example.
pub fn invalid(message: String, contract: &str) -> ToolReply {
    reply(
        json!({
            "ok": false,
            "code": "invalid_arguments",
            "retryable": true,
            "persisted": false,
            "message": message,
            "contract": contract,
            "required_agent_action": "repair the arguments and call the tool again once",
        }),
        true,
        false,
    )
}

/// Parse a tool's arguments, or the repairable error that says what is wrong.
pub fn args<T: DeserializeOwned>(raw: &str, contract: &str) -> Result<T, ToolReply> {
    serde_json::from_str(raw).map_err(|e| invalid(e.to_string(), contract))
}

/// A non-retryable state or ownership conflict.
pub fn unavailable(reason: &str, current: &str, required: &str, action: &str) -> ToolReply {
    reply(
        json!({
            "ok": false,
            "code": "tool_unavailable",
            "submitted": false,
            "retryable": false,
            "current_state": current,
            "required_state": required,
            "valid_action_for_current_state": action,
            "required_agent_action": action,
            "reason": reason,
        }),
        true,
        false,
    )
}

/// A stop refused while one-shot watches hold the session: retryable once they are cancelled.
pub fn waits_refusal(message: String, waits: &[String]) -> ToolReply {
    reply(
        json!({
            "ok": false,
            "code": "blocking_waits",
            "retryable": true,
            "persisted": false,
            "message": message,
            "waits": waits,
            "required_agent_action": "cancel each listed wait with the given agenda_cancel call, then call the stop tool again",
        }),
        true,
        false,
    )
}
