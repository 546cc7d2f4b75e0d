//! A server's live status, as the API shows it and the `mcp_server_status` events carry it.

use serde::Serialize;
use serde_json::Value;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Starting,
    Ready,
    Failed,
    Disabled,
}

/// One tool a ready server offers.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolInfo {
    /// The name the model calls it by: `<server>__<tool>`.
    pub name: String,
    /// The server's own name for it.
    pub tool: String,
    pub description: String,
    /// The server marks it `readOnlyHint: true`: no effect, allowed where effects are refused.
    pub read_only: bool,
    /// The input schema as sent to the provider.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub input_schema: Value,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerStatus {
    pub name: String,
    pub state: State,
    pub tool_count: usize,
    pub tools: Vec<ToolInfo>,
    /// Tools the server offers that are not offered to the model, each with its reason.
    pub left_out: Vec<String>,
    pub last_error: Option<String>,
    /// The last of what the server wrote to stderr.
    pub stderr_tail: String,
    /// How many times its process was started again after it ended.
    pub restarts: u32,
    /// The server offers resources or prompts (not used by Troupe yet; shown so people know).
    pub offers_resources: bool,
    pub offers_prompts: bool,
    /// When the state last changed, in ms since the epoch.
    pub updated_at: i64,
}

impl ServerStatus {
    pub fn new(name: &str, state: State, now: i64) -> Self {
        ServerStatus {
            name: name.to_string(),
            state,
            tool_count: 0,
            tools: Vec::new(),
            left_out: Vec::new(),
            last_error: None,
            stderr_tail: String::new(),
            restarts: 0,
            offers_resources: false,
            offers_prompts: false,
            updated_at: now,
        }
    }

    /// The event's payload: the status without the tools' schemas (they can be large).
    pub fn event_payload(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(tools) = v.get_mut("tools").and_then(Value::as_array_mut) {
            for t in tools {
                if let Some(o) = t.as_object_mut() {
                    o.remove("input_schema");
                }
            }
        }
        if let Some(tail) = v.get_mut("stderr_tail") {
            // The whole tail (64 KiB) is for the status route; an event carries its end.
            *tail = Value::String(last_chars(&self.stderr_tail, 2000));
        }
        v
    }
}

fn last_chars(s: &str, n: usize) -> String {
    let count = s.chars().count();
    s.chars().skip(count.saturating_sub(n)).collect()
}
