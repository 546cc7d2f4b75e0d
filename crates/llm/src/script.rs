//! The scripted-provider file format (see SCRIPT_FORMAT.md). Parsed by hand
//! from `serde_json::Value` so errors can say exactly which field is wrong.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::{FinishReason, LlmError};

#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub name: String,
    pub steps: Vec<ScriptStep>,
    pub on_exhausted: OnExhausted,
    pub rules: Vec<ScriptRule>,
    /// File the script was loaded from, if any (used in the endpoint label).
    pub source: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnExhausted {
    #[default]
    Error,
    RepeatLast,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScriptRule {
    /// Matched case-insensitively against the latest user message.
    pub when_user_contains: String,
    pub reply: ScriptStep,
}

/// One canned model answer (or failure).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScriptStep {
    pub text: String,
    pub tool_calls: Vec<ScriptToolCall>,
    /// Number of TextDelta pieces the text is streamed as (at least 1).
    pub chunks: u32,
    /// Pause between consecutive text pieces.
    pub chunk_delay_ms: u64,
    /// Pause before anything is emitted.
    pub delay_ms: u64,
    /// When set, the step fails with this error instead of answering.
    pub error: Option<ScriptError>,
    /// How a text answer says it ended: `stop` (the default), `length` (cut off at the cap)
    /// or `refusal` (the model declined). A step with tool calls ends with `tool_calls`.
    pub finish: Option<FinishReason>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptToolCall {
    pub name: String,
    /// Raw argument text, passed through verbatim (may be malformed JSON).
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    pub kind: ScriptErrorKind,
    pub status: Option<u16>,
    pub message: String,
    pub retry_after_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptErrorKind {
    Auth,
    NotFound,
    BadRequest,
    RateLimited,
    Server,
    Connection,
    Timeout,
    Protocol,
}

impl ScriptErrorKind {
    const NAMES: &'static [(&'static str, ScriptErrorKind)] = &[
        ("auth", ScriptErrorKind::Auth),
        ("not_found", ScriptErrorKind::NotFound),
        ("bad_request", ScriptErrorKind::BadRequest),
        ("rate_limited", ScriptErrorKind::RateLimited),
        ("server", ScriptErrorKind::Server),
        ("connection", ScriptErrorKind::Connection),
        ("timeout", ScriptErrorKind::Timeout),
        ("protocol", ScriptErrorKind::Protocol),
    ];
}

impl ScriptStep {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        ScriptStep {
            text: text.into(),
            chunks: 1,
            ..Default::default()
        }
    }

    /// Add a tool call with raw argument text.
    pub fn with_tool_call(mut self, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        self.tool_calls.push(ScriptToolCall {
            name: name.into(),
            arguments: arguments.into(),
        });
        self
    }
}

impl Script {
    /// A script with the given steps, `on_exhausted: error` and no rules.
    pub fn new(name: impl Into<String>, steps: Vec<ScriptStep>) -> Self {
        Script {
            name: name.into(),
            steps,
            on_exhausted: OnExhausted::Error,
            rules: Vec::new(),
            source: None,
        }
    }

    /// Read and validate a script file; errors name the file and the problem.
    pub fn load(path: impl AsRef<Path>) -> Result<Script, LlmError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            LlmError::InvalidConfig(format!("script {}: cannot read: {e}", path.display()))
        })?;
        let mut script = parse(&text)
            .map_err(|e| LlmError::InvalidConfig(format!("script {}: {e}", path.display())))?;
        script.source = Some(path.to_path_buf());
        Ok(script)
    }

    pub fn from_json_str(text: &str) -> Result<Script, LlmError> {
        parse(text).map_err(|e| LlmError::InvalidConfig(format!("script: {e}")))
    }
}

type Fields<'a> = &'a Map<String, Value>;

fn parse(text: &str) -> Result<Script, String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let obj = root.as_object().ok_or("top level must be a JSON object")?;
    reject_unknown(
        obj,
        "top level",
        &["name", "steps", "on_exhausted", "rules"],
    )?;
    let name = match obj.get("name") {
        None => "script".to_string(),
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(_) => return Err("name must be a non-empty string".into()),
    };
    let steps = match obj.get("steps") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, s)| parse_step(s, &format!("step {i}")))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("steps must be an array".into()),
    };
    let on_exhausted = match obj.get("on_exhausted") {
        None => OnExhausted::Error,
        Some(Value::String(s)) if s == "error" => OnExhausted::Error,
        Some(Value::String(s)) if s == "repeat_last" => OnExhausted::RepeatLast,
        Some(other) => {
            return Err(format!(
                "on_exhausted must be \"error\" or \"repeat_last\", got {other}"
            ));
        }
    };
    let rules = match obj.get("rules") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, r)| parse_rule(r, i))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("rules must be an array".into()),
    };
    if steps.is_empty() && rules.is_empty() {
        return Err("script needs at least one step or rule".into());
    }
    if steps.is_empty() && on_exhausted == OnExhausted::RepeatLast {
        return Err("on_exhausted \"repeat_last\" needs at least one step".into());
    }
    Ok(Script {
        name,
        steps,
        on_exhausted,
        rules,
        source: None,
    })
}

fn reject_unknown(obj: Fields, ctx: &str, allowed: &[&str]) -> Result<(), String> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "{ctx}: unknown field {k:?} (expected one of: {})",
            allowed.join(", ")
        )),
        None => Ok(()),
    }
}

fn parse_rule(v: &Value, i: usize) -> Result<ScriptRule, String> {
    let ctx = format!("rules[{i}]");
    let obj = v
        .as_object()
        .ok_or_else(|| format!("{ctx} must be an object"))?;
    reject_unknown(obj, &ctx, &["when_user_contains", "reply"])?;
    let when = match obj.get("when_user_contains") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => {
            return Err(format!(
                "{ctx}.when_user_contains must be a non-empty string"
            ));
        }
    };
    let reply = obj
        .get("reply")
        .ok_or_else(|| format!("{ctx}.reply is missing"))?;
    Ok(ScriptRule {
        when_user_contains: when,
        reply: parse_step(reply, &format!("{ctx}.reply"))?,
    })
}

fn opt_u64(obj: Fields, ctx: &str, key: &str) -> Result<Option<u64>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{ctx}: {key} must be a non-negative integer")),
    }
}

fn parse_step(v: &Value, ctx: &str) -> Result<ScriptStep, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| format!("{ctx} must be an object"))?;
    reject_unknown(
        obj,
        ctx,
        &[
            "text",
            "tool_calls",
            "chunks",
            "chunk_delay_ms",
            "delay_ms",
            "error",
            "finish",
        ],
    )?;
    let text = match obj.get("text") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(format!("{ctx}: text must be a string")),
    };
    let chunks = match opt_u64(obj, ctx, "chunks")? {
        None => 1,
        Some(0) => return Err(format!("{ctx}: chunks must be at least 1")),
        Some(n) => u32::try_from(n).map_err(|_| format!("{ctx}: chunks is too large"))?,
    };
    let chunk_delay_ms = opt_u64(obj, ctx, "chunk_delay_ms")?.unwrap_or(0);
    let delay_ms = opt_u64(obj, ctx, "delay_ms")?.unwrap_or(0);
    let tool_calls = match obj.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, c)| parse_tool_call(c, &format!("{ctx}: tool_calls[{i}]")))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{ctx}: tool_calls must be an array")),
    };
    let error = match obj.get("error") {
        None | Some(Value::Null) => None,
        Some(e) => Some(parse_error(e, ctx)?),
    };
    if error.is_some() && (!text.is_empty() || !tool_calls.is_empty()) {
        return Err(format!(
            "{ctx}: an error step cannot also have text or tool_calls"
        ));
    }
    let finish = match obj.get("finish") {
        None | Some(Value::Null) => None,
        Some(Value::String(f)) => Some(match f.as_str() {
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "refusal" => FinishReason::Refusal,
            _ => {
                return Err(format!(
                    "{ctx}: finish must be \"stop\", \"length\" or \"refusal\", not {f:?}"
                ));
            }
        }),
        Some(_) => return Err(format!("{ctx}: finish must be a string")),
    };
    if finish.is_some() && (error.is_some() || !tool_calls.is_empty()) {
        return Err(format!(
            "{ctx}: finish is for a text answer (a step with tool_calls or an error has none)"
        ));
    }
    Ok(ScriptStep {
        text,
        tool_calls,
        chunks,
        chunk_delay_ms,
        delay_ms,
        error,
        finish,
    })
}

fn parse_tool_call(v: &Value, ctx: &str) -> Result<ScriptToolCall, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| format!("{ctx} must be an object"))?;
    reject_unknown(obj, ctx, &["name", "arguments"])?;
    let name = match obj.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => return Err(format!("{ctx}.name must be a non-empty string")),
    };
    let arguments = match obj.get("arguments") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(raw)) => raw.clone(),
        Some(other) => other.to_string(),
    };
    Ok(ScriptToolCall { name, arguments })
}

fn parse_error(v: &Value, ctx: &str) -> Result<ScriptError, String> {
    let ctx = format!("{ctx}: error");
    let obj = v
        .as_object()
        .ok_or_else(|| format!("{ctx} must be an object"))?;
    reject_unknown(obj, &ctx, &["kind", "status", "message", "retry_after_ms"])?;
    let names = || {
        ScriptErrorKind::NAMES
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let kind = match obj.get("kind") {
        Some(Value::String(s)) => ScriptErrorKind::NAMES
            .iter()
            .find(|(n, _)| n == s)
            .map(|(_, k)| *k)
            .ok_or_else(|| format!("{ctx}.kind {s:?} is not one of: {}", names()))?,
        _ => return Err(format!("{ctx}.kind must be one of: {}", names())),
    };
    let status = match opt_u64(obj, &ctx, "status")? {
        None => None,
        Some(s) if (100..600).contains(&s) => Some(s as u16),
        Some(s) => return Err(format!("{ctx}.status {s} is not an HTTP status")),
    };
    let message = match obj.get("message") {
        None | Some(Value::Null) => "scripted failure".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(format!("{ctx}.message must be a string")),
    };
    Ok(ScriptError {
        kind,
        status,
        message,
        retry_after_ms: opt_u64(obj, &ctx, "retry_after_ms")?,
    })
}
