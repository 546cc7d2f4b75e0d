//! Provider-neutral request/response types and endpoint configuration.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which wire protocol an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
    Scripted,
}

impl ProviderKind {
    /// Base URL used when the config leaves `base_url` empty (none for scripted).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("https://api.openai.com/v1"),
            ProviderKind::Anthropic => Some("https://api.anthropic.com"),
            ProviderKind::Scripted => None,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Scripted => "scripted",
        })
    }
}

/// Exponential backoff: attempt n waits `base_delay * 2^(n-1)`, capped at `max_delay`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts including the first; 0 is treated as 1.
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// Delay after the `failed_attempt`-th failure (1-based), ignoring Retry-After.
    pub fn backoff(&self, failed_attempt: u32) -> Duration {
        let shift = failed_attempt.saturating_sub(1).min(20);
        self.base_delay
            .saturating_mul(1u32 << shift)
            .min(self.max_delay)
    }
}

/// Everything needed to talk to one model endpoint.
#[derive(Clone)]
pub struct EndpointConfig {
    pub kind: ProviderKind,
    /// HTTP base URL; for `Scripted` the path of the script file.
    pub base_url: Option<String>,
    pub model: String,
    /// The resolved secret. Redacted in Debug and never put into errors.
    pub api_key: Option<String>,
    /// How long an attempt may hear nothing from the server: before its answer begins, or
    /// between the parts of a streamed answer. A slow answer that keeps coming is not cut.
    pub timeout: Duration,
    pub retry: RetryPolicy,
    /// The endpoint's model is marked as taking pictures (OpenAI-compatible and scripted
    /// providers answer `Provider::takes_pictures` with this; Anthropic always takes them).
    pub takes_pictures: bool,
    /// The thinking levels the model lists, lightest first; a request asking for the lightest
    /// ([`ModelRequest::lightest_thinking`]) sends the first as `reasoning_effort`.
    pub thinking_levels: Vec<String>,
    /// The most tokens one reply may run to: sent as every request's cap, or as a smaller
    /// cap a request names itself ([`output_cap`]).
    pub max_output_tokens: Option<u32>,
}

impl EndpointConfig {
    /// A config with default base URL, timeout (300 s) and retry policy.
    pub fn new(kind: ProviderKind, model: impl Into<String>) -> Self {
        EndpointConfig {
            kind,
            base_url: None,
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
            takes_pictures: false,
            thinking_levels: Vec::new(),
            max_output_tokens: None,
        }
    }

    /// The base URL in effect (explicit one, else the kind's default).
    pub fn effective_base_url(&self) -> Option<String> {
        self.base_url
            .clone()
            .filter(|s| !s.trim().is_empty())
            .or_else(|| self.kind.default_base_url().map(str::to_string))
    }
}

impl fmt::Debug for EndpointConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointConfig")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("takes_pictures", &self.takes_pictures)
            .field("thinking_levels", &self.thinking_levels)
            .finish()
    }
}

/// One model call's input.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<ChatMessage>,
    /// Shared: the same list goes with every call of a run, so a call does not copy schemas.
    #[serde(default)]
    pub tools: std::sync::Arc<[ToolSpec]>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Ask for the lightest thinking level the endpoint lists (the app's own short readings);
    /// false leaves the server's default.
    #[serde(default)]
    pub lightest_thinking: bool,
}

/// One picture sent to a model: its media type (`image/png`, `image/jpeg`, `image/gif`, `image/webp`) and its bytes in standard base64 (no `data:` prefix).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImagePart {
    pub media_type: String,
    pub data: String,
}

impl ImagePart {
    /// The picture as a `data:` URL (`data:<media_type>;base64,<data>`).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    User {
        text: String,
        /// Pictures sent with the text (only to models that take pictures).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImagePart>,
    },
    Assistant {
        text: String,
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        content: String,
        #[serde(default)]
        is_error: bool,
        /// Pictures the tool returned (only to models that take pictures).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImagePart>,
    },
}

impl ChatMessage {
    pub fn user(text: impl Into<String>) -> Self {
        ChatMessage::User {
            text: text.into(),
            images: Vec::new(),
        }
    }

    /// A user message carrying pictures with its text.
    pub fn user_with_images(text: impl Into<String>, images: Vec<ImagePart>) -> Self {
        ChatMessage::User {
            text: text.into(),
            images,
        }
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        ChatMessage::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }

    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage::ToolResult {
            call_id: call_id.into(),
            content: content.into(),
            is_error: false,
            images: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Raw JSON text exactly as the model produced it; may be malformed.
    pub arguments: String,
}

impl ToolCall {
    /// The arguments as a JSON object, as a past call goes back to a provider: as sent, or,
    /// when the model's text stopped early, closed where it stops (`crate::cut_json`); `None`
    /// when they are malformed some other way or not an object. Servers parse a history's
    /// arguments again (llama.cpp refuses the whole request otherwise, on every retry;
    /// Anthropic's `input` must be an object), so such a call goes back as `{}`: its result
    /// already says what was wrong, and the stored message keeps what the model sent.
    pub fn arguments_object(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        serde_json::from_str(&self.arguments)
            .ok()
            .or_else(|| crate::cut_json::closed(&self.arguments))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// The whole prompt, including any part served from the provider's prompt cache.
    pub input_tokens: u64,
    /// The part of `input_tokens` the provider served from its prompt cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        self.input_tokens += rhs.input_tokens;
        self.cached_input_tokens += rhs.cached_input_tokens;
        self.output_tokens += rhs.output_tokens;
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    /// The model declined to answer (OpenAI's `content_filter` or a `refusal`, Anthropic's
    /// `refusal`); its text, if any, is the refusal.
    Refusal,
    /// The server stopped the answer inside a tool call it could not read (llama.cpp's and
    /// Ollama's tool-call parsers): the calls streamed until then are kept, the last one with
    /// its arguments unfinished, so the model can be told what went wrong.
    Unreadable,
    Other(String),
}

impl FinishReason {
    /// The word stored for it; a provider's unknown reason as the provider said it.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::Refusal => "refusal",
            FinishReason::Unreadable => "unreadable",
            FinishReason::Other(s) => s,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelResponse {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish: FinishReason,
}

/// Incremental output of one attempt. `index` is the position of the call in
/// the final `ModelResponse::tool_calls`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum StreamEvent {
    TextDelta(String),
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallArgsDelta {
        index: usize,
        delta: String,
    },
}

/// The cap a request goes out with: the smaller of the request's own (the app's short
/// readings name one) and the endpoint's; either alone when the other is unset.
pub fn output_cap(asked: Option<u32>, endpoint: Option<u32>) -> Option<u32> {
    match (asked, endpoint) {
        (Some(a), Some(e)) => Some(a.min(e)),
        (a, e) => a.or(e),
    }
}
