//! Anthropic Messages API (`/v1/messages`) with streaming.

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

pub const API_VERSION: &str = "2023-06-01";
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

pub struct AnthropicProvider {
    http: HttpTarget,
    /// Every request names a cap (the API requires one): the endpoint's, else the default.
    max_output_tokens: u32,
    url: String,
}

impl AnthropicProvider {
    pub fn new(cfg: &EndpointConfig) -> Result<Self, LlmError> {
        let http = HttpTarget::new(cfg)?;
        // Tolerate a base URL that already ends in /v1.
        let url = if http.endpoint.ends_with("/v1") {
            format!("{}/messages", http.endpoint)
        } else {
            format!("{}/v1/messages", http.endpoint)
        };
        Ok(AnthropicProvider {
            http,
            url,
            max_output_tokens: cfg.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        })
    }

    async fn attempt(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, LlmError> {
        let mut body = request_body(&self.http.model, req);
        let cap = self.max_output_tokens;
        body["max_tokens"] = json!(req.max_tokens.map_or(cap, |asked| asked.min(cap)));
        let mut rb = self
            .http
            .client
            .post(&self.url)
            .header("anthropic-version", API_VERSION)
            .header("accept", "text/event-stream")
            .json(&body);
        if let Some(key) = &self.http.api_key {
            rb = rb.header("x-api-key", key);
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
impl Provider for AnthropicProvider {
    fn endpoint(&self) -> &str {
        &self.http.endpoint
    }

    fn model(&self) -> &str {
        &self.http.model
    }

    /// Claude models take pictures.
    fn takes_pictures(&self) -> bool {
        true
    }

    fn output_cap(&self) -> Option<u32> {
        Some(self.max_output_tokens)
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

/// One picture as an `image` content block with a base64 source.
fn image_block(image: &ImagePart) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
    })
}

/// The JSON body for a streaming Messages request. Consecutive same-role
/// messages are merged because the API requires strict alternation.
pub fn request_body(model: &str, req: &ModelRequest) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in &req.messages {
        let (role, blocks) = match m {
            ChatMessage::User { text, images } => {
                // Pictures go before the text; empty text blocks are rejected by the API.
                let mut blocks: Vec<Value> = images.iter().map(image_block).collect();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                ("user", blocks)
            }
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use", "id": c.id, "name": c.name, "input": Value::Object(c.arguments_object().unwrap_or_default()),
                    }));
                }
                ("assistant", blocks)
            }
            ChatMessage::ToolResult {
                call_id,
                content,
                is_error,
                images,
            } => {
                // With pictures the content is a list of blocks: the text, then the pictures.
                let content = if images.is_empty() {
                    json!(content)
                } else {
                    let mut parts = Vec::with_capacity(images.len() + 1);
                    if !content.is_empty() {
                        parts.push(json!({"type": "text", "text": content}));
                    }
                    parts.extend(images.iter().map(image_block));
                    Value::Array(parts)
                };
                (
                    "user",
                    vec![json!({
                        "type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error,
                    })],
                )
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
        "stream": true,
    });
    if !req.system.is_empty() {
        body["system"] = json!(req.system);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

fn stop_reason(s: &str) -> FinishReason {
    match s {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        "refusal" => FinishReason::Refusal,
        other => FinishReason::Other(other.to_string()),
    }
}

/// Anthropic's `input_tokens` leaves out the prompt tokens read from or written to its cache;
/// they are added here so `Usage::input_tokens` is always the whole prompt.
fn input_tokens(u: &Value) -> u64 {
    [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .filter_map(|k| u.get(*k).and_then(Value::as_u64))
    .sum()
}

/// The part of `input_tokens` served from the cache: Anthropic's cache reads.
fn cached_input_tokens(u: &Value) -> Option<u64> {
    u.get("cache_read_input_tokens").and_then(Value::as_u64)
}

/// Map an `error` event / body (`{"type":"error","error":{"type":..,"message":..}}`).
fn api_error(http: &HttpTarget, v: &Value) -> LlmError {
    let err = v.get("error").unwrap_or(v);
    let kind = err.get("type").and_then(Value::as_str).unwrap_or("");
    let msg = err.get("message").and_then(Value::as_str).unwrap_or(kind);
    let detail = format!("{kind}: {msg}");
    let status = match kind {
        "overloaded_error" => 529,
        "rate_limit_error" => 429,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "invalid_request_error" => 400,
        "request_too_large" => 413,
        _ => 500,
    };
    http.status_error(status, &detail, None)
}

/// Parse a non-streamed Messages response, emitting equivalent events.
fn parse_full(
    http: &HttpTarget,
    v: &Value,
    events: &UnboundedSender<StreamEvent>,
) -> Result<ModelResponse, LlmError> {
    if v.get("type").and_then(Value::as_str) == Some("error") {
        return Err(api_error(http, v));
    }
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| http.protocol(format!("message without content: {v}")))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let t = block.get("text").and_then(Value::as_str).unwrap_or("");
                if !t.is_empty() {
                    text.push_str(t);
                    let _ = events.send(StreamEvent::TextDelta(t.to_string()));
                }
            }
            Some("tool_use") => {
                let index = tool_calls.len();
                let call = ToolCall {
                    id: block
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    name: block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    arguments: block
                        .get("input")
                        .map(Value::to_string)
                        .unwrap_or_else(|| "{}".into()),
                };
                let _ = events.send(StreamEvent::ToolCallStart {
                    index,
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                let _ = events.send(StreamEvent::ToolCallArgsDelta {
                    index,
                    delta: call.arguments.clone(),
                });
                tool_calls.push(call);
            }
            _ => {}
        }
    }
    let usage = v.get("usage").cloned().unwrap_or(Value::Null);
    Ok(ModelResponse {
        text,
        tool_calls,
        usage: Usage {
            input_tokens: input_tokens(&usage),
            cached_input_tokens: cached_input_tokens(&usage).unwrap_or(0),
            output_tokens: usage
                .get("output_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        },
        finish: v
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(stop_reason)
            .unwrap_or(FinishReason::Stop),
    })
}

struct Assembler<'a> {
    http: &'a HttpTarget,
    events: &'a UnboundedSender<StreamEvent>,
    text: String,
    calls: Vec<ToolCall>,
    /// Content block index -> position in `calls` (tool_use blocks only).
    tool_blocks: HashMap<u64, usize>,
    usage: Usage,
    finish: Option<FinishReason>,
}

impl<'a> Assembler<'a> {
    fn new(http: &'a HttpTarget, events: &'a UnboundedSender<StreamEvent>) -> Self {
        Assembler {
            http,
            events,
            text: String::new(),
            calls: Vec::new(),
            tool_blocks: HashMap::new(),
            usage: Usage::default(),
            finish: None,
        }
    }

    fn push_text(&mut self, t: &str) {
        if !t.is_empty() {
            self.text.push_str(t);
            let _ = self.events.send(StreamEvent::TextDelta(t.to_string()));
        }
    }
}

impl StreamHandler for Assembler<'_> {
    fn on_event(&mut self, ev: SseEvent) -> Result<bool, LlmError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            self.http
                .protocol(format!("non-JSON data line ({e}): {data}"))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .or(ev.event.as_deref())
            .unwrap_or("");
        let block_index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(u) = v.get("message").and_then(|m| m.get("usage")) {
                    self.usage.input_tokens = input_tokens(u);
                    self.usage.cached_input_tokens = cached_input_tokens(u).unwrap_or(0);
                    if let Some(o) = u.get("output_tokens").and_then(Value::as_u64) {
                        self.usage.output_tokens = o;
                    }
                }
            }
            "content_block_start" => {
                let block = v.get("content_block").cloned().unwrap_or(Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        self.push_text(block.get("text").and_then(Value::as_str).unwrap_or(""))
                    }
                    Some("tool_use") => {
                        let index = self.calls.len();
                        let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                        let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                        self.calls.push(ToolCall {
                            id: id.to_string(),
                            name: name.to_string(),
                            arguments: String::new(),
                        });
                        self.tool_blocks.insert(block_index, index);
                        let _ = self.events.send(StreamEvent::ToolCallStart {
                            index,
                            id: id.to_string(),
                            name: name.to_string(),
                        });
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        self.push_text(delta.get("text").and_then(Value::as_str).unwrap_or(""))
                    }
                    Some("input_json_delta") => {
                        let part = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        let Some(&index) = self.tool_blocks.get(&block_index) else {
                            return Err(self.http.protocol(format!(
                                "input_json_delta for unknown block {block_index}"
                            )));
                        };
                        if !part.is_empty() {
                            self.calls[index].arguments.push_str(part);
                            let _ = self.events.send(StreamEvent::ToolCallArgsDelta {
                                index,
                                delta: part.to_string(),
                            });
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                // A tool with no input streams no deltas; its arguments are `{}`.
                if let Some(&index) = self.tool_blocks.get(&block_index)
                    && self.calls[index].arguments.is_empty()
                {
                    self.calls[index].arguments = "{}".into();
                    let _ = self.events.send(StreamEvent::ToolCallArgsDelta {
                        index,
                        delta: "{}".into(),
                    });
                }
            }
            "message_delta" => {
                if let Some(r) = v
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.finish = Some(stop_reason(r));
                }
                if let Some(u) = v.get("usage") {
                    if let Some(o) = u.get("output_tokens").and_then(Value::as_u64) {
                        self.usage.output_tokens = o;
                    }
                    let i = input_tokens(u);
                    if i > 0 {
                        self.usage.input_tokens = i;
                    }
                    if let Some(c) = cached_input_tokens(u) {
                        self.usage.cached_input_tokens = c;
                    }
                }
            }
            "message_stop" => return Ok(true),
            "error" => return Err(api_error(self.http, &v)),
            _ => {} // ping and future event types
        }
        Ok(false)
    }

    fn finish(self, done: bool) -> Result<ModelResponse, LlmError> {
        if !done {
            return Err(self.http.protocol("stream dropped mid-answer"));
        }
        Ok(ModelResponse {
            text: self.text,
            tool_calls: self.calls,
            usage: self.usage,
            finish: self.finish.unwrap_or(FinishReason::Stop),
        })
    }
}

#[cfg(test)]
mod prop_stream;
