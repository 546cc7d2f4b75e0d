//! OpenAI-compatible `/chat/completions` with streaming.

use std::collections::HashMap;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::http::{Body, HttpTarget, StreamHandler};
use crate::sse::SseEvent;
use crate::{
    ChatMessage, EndpointConfig, FinishReason, ImagePart, LlmError, ModelRequest, ModelResponse,
    Provider, StreamEvent, ToolCall, Usage,
};

pub struct OpenAiProvider {
    http: HttpTarget,
    takes_pictures: bool,
    cap_field: &'static str,
    /// The lightest of the endpoint's thinking levels, sent as `reasoning_effort` when a
    /// request asks for it.
    lightest_level: Option<String>,
    max_output_tokens: Option<u32>,
}

impl OpenAiProvider {
    pub fn new(cfg: &EndpointConfig) -> Result<Self, LlmError> {
        let http = HttpTarget::new(cfg)?;
        Ok(OpenAiProvider {
            cap_field: output_cap_field(&http.endpoint),
            http,
            takes_pictures: cfg.takes_pictures,
            lightest_level: cfg.thinking_levels.first().cloned(),
            max_output_tokens: cfg.max_output_tokens,
        })
    }

    async fn attempt(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, LlmError> {
        let url = format!("{}/chat/completions", self.http.endpoint);
        let mut body = request_body(&self.http.model, req, self.cap_field);
        if let Some(n) = crate::output_cap(req.max_tokens, self.max_output_tokens) {
            body[self.cap_field] = json!(n);
        }
        if req.lightest_thinking
            && let Some(level) = &self.lightest_level
        {
            body["reasoning_effort"] = json!(level);
        }
        let mut rb = self
            .http
            .client
            .post(url)
            .header("accept", "text/event-stream")
            .json(&body);
        if let Some(key) = &self.http.api_key {
            rb = rb.bearer_auth(key);
        }
        match self.http.send(rb).await? {
            Body::Json(v) => parse_full(&self.http, &v, events),
            Body::Stream(resp) => {
                let handler = Assembler::new(&self.http, events);
                self.http.read_stream(resp, handler).await
            }
        }
    }
}

#[async_trait::async_trait]
impl Provider for OpenAiProvider {
    fn endpoint(&self) -> &str {
        &self.http.endpoint
    }

    fn model(&self) -> &str {
        &self.http.model
    }

    fn takes_pictures(&self) -> bool {
        self.takes_pictures
    }

    fn output_cap(&self) -> Option<u32> {
        self.max_output_tokens
    }

    async fn complete_once(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, LlmError> {
        self.http.guard(cancel, self.attempt(req, events)).await
    }
}

/// The field that caps an answer's length. OpenAI's own service refuses `max_tokens` for its
/// reasoning models (o-series, GPT-5) and takes `max_completion_tokens` for all; servers that
/// speak its protocol (llama.cpp, Ollama, vLLM…) take `max_tokens`, and not all the other.
pub(crate) fn output_cap_field(endpoint: &str) -> &'static str {
    let host = reqwest::Url::parse(endpoint)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    match host.as_deref() {
        Some(h) if h == "api.openai.com" || h.ends_with(".openai.azure.com") => {
            "max_completion_tokens"
        }
        _ => "max_tokens",
    }
}

/// A past call's arguments as sent back: the model's own text when it is a JSON object (so the
/// server's prompt cache sees the same bytes), else the object it began closed where it
/// stopped, else `{}` ([`ToolCall::arguments_object`]).
fn replayed_arguments(c: &ToolCall) -> String {
    if serde_json::from_str::<serde_json::Map<String, Value>>(&c.arguments).is_ok() {
        return c.arguments.clone();
    }
    Value::Object(c.arguments_object().unwrap_or_default()).to_string()
}

/// The JSON body for a streaming chat completion request; `cap_field` from
/// [`output_cap_field`].
pub fn request_body(model: &str, req: &ModelRequest, cap_field: &str) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    // A tool message cannot carry pictures: those of a turn's tool results follow its tool
    // messages in one user message.
    let mut tool_pictures: Vec<Value> = Vec::new();
    for m in &req.messages {
        if !matches!(m, ChatMessage::ToolResult { .. }) && !tool_pictures.is_empty() {
            messages.push(json!({"role": "user", "content": std::mem::take(&mut tool_pictures)}));
        }
        messages.push(match m {
            ChatMessage::User { text, images } if images.is_empty() => {
                json!({"role": "user", "content": text})
            }
            ChatMessage::User { text, images } => {
                let mut parts = vec![json!({"type": "text", "text": text})];
                parts.extend(images.iter().map(image_part));
                json!({"role": "user", "content": parts})
            }
            ChatMessage::Assistant { text, tool_calls } => {
                // Strict servers want null content next to tool calls, not "".
                let content = if text.is_empty() && !tool_calls.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                };
                let mut msg = json!({"role": "assistant", "content": content});
                if !tool_calls.is_empty() {
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": replayed_arguments(c)},
                            })
                        })
                        .collect();
                }
                msg
            }
            ChatMessage::ToolResult {
                call_id,
                content,
                images,
                ..
            } => {
                if !images.is_empty() {
                    tool_pictures.push(json!({
                        "type": "text",
                        "text": format!("Pictures from the tool result {call_id}:"),
                    }));
                    tool_pictures.extend(images.iter().map(image_part));
                }
                // The chat API has no error flag for tool messages; the content says it.
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    if !tool_pictures.is_empty() {
        messages.push(json!({"role": "user", "content": tool_pictures}));
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                })
            })
            .collect();
    }
    if let Some(n) = req.max_tokens {
        body[cap_field] = json!(n);
    }
    body
}

/// One picture as a chat content part: a `data:` URL in an `image_url` part.
fn image_part(image: &ImagePart) -> Value {
    json!({"type": "image_url", "image_url": {"url": image.data_url()}})
}

fn finish_reason(s: &str) -> FinishReason {
    match s {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::Refusal,
        other => FinishReason::Other(other.to_string()),
    }
}

fn usage_of(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        input_tokens: n("prompt_tokens"),
        cached_input_tokens: u
            .get("prompt_tokens_details")
            .and_then(|d| d.get("cached_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0),
        output_tokens: n("completion_tokens"),
    })
}

/// Some servers put tool arguments as an object instead of a JSON string.
fn args_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Tool calls are reported as ToolCalls even if the server said "stop".
fn normalize_finish(finish: FinishReason, tool_calls: &[ToolCall]) -> FinishReason {
    if !tool_calls.is_empty() && finish == FinishReason::Stop {
        FinishReason::ToolCalls
    } else {
        finish
    }
}

/// An `{"error": ...}` object inside a 200 response or stream chunk.
fn embedded_error(http: &HttpTarget, v: &Value) -> Option<LlmError> {
    let err = v.get("error").filter(|e| !e.is_null())?;
    let msg = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| err.to_string());
    let status = err
        .get("code")
        .and_then(|c| {
            c.as_u64()
                .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
        })
        .filter(|c| (400..600).contains(c))
        .map(|c| c as u16)
        .unwrap_or(500);
    Some(http.status_error(status, &msg, None))
}

/// Parse a non-streamed completion, emitting the events a stream would have.
fn parse_full(
    http: &HttpTarget,
    v: &Value,
    events: &UnboundedSender<StreamEvent>,
) -> Result<ModelResponse, LlmError> {
    if let Some(e) = embedded_error(http, v) {
        return Err(e);
    }
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| http.protocol(format!("completion without choices: {v}")))?;
    let msg = choice.get("message").cloned().unwrap_or(Value::Null);
    // A refusal comes in its own field, with no content; it is the reply's text.
    let refusal = msg
        .get("refusal")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty());
    let text = msg
        .get("content")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .or(refusal)
        .unwrap_or("")
        .to_string();
    if !text.is_empty() {
        let _ = events.send(StreamEvent::TextDelta(text.clone()));
    }
    let mut tool_calls = Vec::new();
    for (i, c) in msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = c.get("function").cloned().unwrap_or(Value::Null);
        let call = ToolCall {
            id: c
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{i}")),
            name: f
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            arguments: args_text(f.get("arguments")),
        };
        let _ = events.send(StreamEvent::ToolCallStart {
            index: i,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        if !call.arguments.is_empty() {
            let _ = events.send(StreamEvent::ToolCallArgsDelta {
                index: i,
                delta: call.arguments.clone(),
            });
        }
        tool_calls.push(call);
    }
    let finish = match choice.get("finish_reason").and_then(Value::as_str) {
        _ if refusal.is_some() => FinishReason::Refusal,
        Some(r) => finish_reason(r),
        None => FinishReason::Stop,
    };
    Ok(ModelResponse {
        text,
        finish: normalize_finish(finish, &tool_calls),
        tool_calls,
        usage: usage_of(v).unwrap_or_default(),
    })
}

/// Accumulates streamed chunks into a response.
struct Assembler<'a> {
    http: &'a HttpTarget,
    events: &'a UnboundedSender<StreamEvent>,
    text: String,
    calls: Vec<ToolCall>,
    /// Wire `index` -> position in `calls`.
    slots: HashMap<u64, usize>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    /// The stream carried a `refusal`: the model declined, whatever finish it reports.
    refused: bool,
}

impl<'a> Assembler<'a> {
    fn new(http: &'a HttpTarget, events: &'a UnboundedSender<StreamEvent>) -> Self {
        Assembler {
            http,
            events,
            text: String::new(),
            calls: Vec::new(),
            slots: HashMap::new(),
            finish: None,
            usage: None,
            refused: false,
        }
    }

    fn tool_piece(&mut self, pos_in_chunk: usize, piece: &Value) {
        let wire = piece
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(pos_in_chunk as u64);
        let f = piece.get("function").cloned().unwrap_or(Value::Null);
        let id = piece.get("id").and_then(Value::as_str).unwrap_or("");
        let name = f.get("name").and_then(Value::as_str).unwrap_or("");
        let slot = match self.slots.get(&wire) {
            Some(&s) => {
                // Late id/name pieces fill gaps left by the first piece.
                let call = &mut self.calls[s];
                if !id.is_empty() && call.id.starts_with("call_auto_") {
                    call.id = id.to_string();
                }
                if call.name.is_empty() {
                    call.name = name.to_string();
                }
                s
            }
            None => {
                let s = self.calls.len();
                let id = if id.is_empty() {
                    format!("call_auto_{s}")
                } else {
                    id.to_string()
                };
                self.calls.push(ToolCall {
                    id: id.clone(),
                    name: name.to_string(),
                    arguments: String::new(),
                });
                self.slots.insert(wire, s);
                let _ = self.events.send(StreamEvent::ToolCallStart {
                    index: s,
                    id,
                    name: name.to_string(),
                });
                s
            }
        };
        let delta = args_text(f.get("arguments"));
        if !delta.is_empty() {
            self.calls[slot].arguments.push_str(&delta);
            let _ = self
                .events
                .send(StreamEvent::ToolCallArgsDelta { index: slot, delta });
        }
    }
}

impl Assembler<'_> {
    /// At least one tool call streamed, and each has its name.
    fn calls_are_named(&self) -> bool {
        !self.calls.is_empty() && self.calls.iter().all(|c| !c.name.is_empty())
    }

    /// At least one tool call streamed, each named and with arguments that are a whole JSON
    /// object (a call cut short is never whole: its object is not closed).
    fn calls_are_whole(&self) -> bool {
        !self.calls.is_empty()
            && self.calls.iter().all(|c| {
                !c.name.is_empty()
                    && serde_json::from_str::<serde_json::Map<String, Value>>(&c.arguments).is_ok()
            })
    }
}

/// Text that is only code-fence lines (the ```` ```json ```` a model put before its call).
fn fence_only(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .all(|l| l.starts_with("```") && !l.contains(' '))
}

impl StreamHandler for Assembler<'_> {
    fn on_event(&mut self, ev: SseEvent) -> Result<bool, LlmError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            self.http
                .protocol(format!("non-JSON data line ({e}): {data}"))
        })?;
        if let Some(e) = embedded_error(self.http, &v) {
            // llama.cpp streams a tool call as it parses it, then fails the whole answer on
            // what follows it (a model that wrapped the call in a code fence): the calls it
            // streamed whole are what the model meant, and asking again gets the same answer.
            // A call the parser gave up on partway (a quote left unescaped inside a string) is
            // kept as far as it came, the answer ended `unreadable`, so the model is told why it
            // was not run: asking again sends the same words and gets the same call.
            if e.is_unreadable_answer() && self.calls_are_named() {
                tracing::warn!(error = %e, "kept the tool calls streamed before the server's parse error");
                if !self.calls_are_whole() {
                    self.finish = Some(FinishReason::Unreadable);
                }
                if fence_only(&self.text) {
                    self.text.clear();
                }
                return Ok(true);
            }
            return Err(e);
        }
        if let Some(u) = usage_of(&v) {
            self.usage = Some(u);
        }
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            return Ok(false);
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(t) = delta.get("content").and_then(Value::as_str)
                && !t.is_empty()
            {
                self.text.push_str(t);
                let _ = self.events.send(StreamEvent::TextDelta(t.to_string()));
            }
            if let Some(t) = delta.get("refusal").and_then(Value::as_str)
                && !t.is_empty()
            {
                self.refused = true;
                self.text.push_str(t);
                let _ = self.events.send(StreamEvent::TextDelta(t.to_string()));
            }
            if let Some(pieces) = delta.get("tool_calls").and_then(Value::as_array) {
                for (i, piece) in pieces.iter().enumerate() {
                    self.tool_piece(i, piece);
                }
            }
        }
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(finish_reason(r));
        }
        Ok(false)
    }

    fn finish(self, done: bool) -> Result<ModelResponse, LlmError> {
        // Without [DONE] we still accept a stream that reported its finish
        // reason; usage may then be missing.
        let finish = match (self.finish, done) {
            (Some(_), _) | (None, true) if self.refused => FinishReason::Refusal,
            (Some(f), _) => f,
            (None, true) => FinishReason::Stop,
            (None, false) => return Err(self.http.protocol("stream dropped mid-answer")),
        };
        Ok(ModelResponse {
            finish: normalize_finish(finish, &self.calls),
            text: self.text,
            tool_calls: self.calls,
            usage: self.usage.unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod prop_stream;

#[cfg(test)]
mod cap_tests {
    use super::*;

    #[test]
    fn openais_own_service_gets_max_completion_tokens_other_servers_max_tokens() {
        for (endpoint, field) in [
            ("https://api.openai.com/v1", "max_completion_tokens"),
            ("https://API.OpenAI.com/v1/", "max_completion_tokens"),
            (
                "https://team.openai.azure.com/openai",
                "max_completion_tokens",
            ),
            ("http://127.0.0.1:11434/v1", "max_tokens"),
            ("https://openrouter.ai/api/v1", "max_tokens"),
            ("https://api.openai.com.example.net/v1", "max_tokens"),
        ] {
            assert_eq!(output_cap_field(endpoint), field, "{endpoint}");
        }
        let req = ModelRequest {
            system: String::new(),
            messages: vec![ChatMessage::user("hi")],
            tools: std::sync::Arc::from(Vec::new()),
            max_tokens: Some(400),
            lightest_thinking: false,
        };
        let b = request_body("gpt-5-mini", &req, "max_completion_tokens");
        assert_eq!(b["max_completion_tokens"], 400);
        assert!(b.get("max_tokens").is_none());
    }

    #[test]
    fn a_past_call_cut_off_goes_back_closed_and_one_malformed_otherwise_as_an_empty_object() {
        let call = |id: &str, arguments: &str| crate::ToolCall {
            id: id.into(),
            name: "review".into(),
            arguments: arguments.into(),
        };
        let req = ModelRequest {
            messages: vec![
                ChatMessage::user("fix the tests"),
                ChatMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![
                        call("a", r#"{"outcome": "reject", "note": "The bug is"#),
                        call("d", r#"{"outcome" "reject"}"#),
                        call("b", r#"["not", "an", "object"]"#),
                        call("c", r#"{"outcome": "approve"}"#),
                    ],
                },
            ],
            ..ModelRequest::default()
        };
        let b = request_body("qwen", &req, "max_tokens");
        let sent: Vec<&str> = b["messages"][1]["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["function"]["arguments"].as_str().unwrap())
            .collect();
        // Cut off: closed where it stopped, so the model does not learn to send `{}`.
        assert_eq!(
            sent,
            [
                r#"{"note":"The bug is","outcome":"reject"}"#,
                "{}",
                "{}",
                r#"{"outcome": "approve"}"#
            ]
        );
    }
}
