//! troupe-llm: provider-neutral model calls for Troupe.
//!
//! Providers: OpenAI-compatible chat completions, Anthropic Messages, and a
//! deterministic scripted provider for tests and offline demos. Each attempt
//! streams deltas to a channel and returns the assembled response;
//! [`complete_with_retry`] adds retries with backoff.

mod anthropic;
mod cut_json;
mod error;
mod http;
mod openai;
#[cfg(test)]
mod prop_sse;
mod retry;
mod script;
mod scripted;
mod sse;
mod types;

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub use anthropic::AnthropicProvider;
pub use error::LlmError;
pub use openai::OpenAiProvider;
pub use retry::{CallOutcome, complete_with_retry, retry_delay};
pub use script::{
    OnExhausted, Script, ScriptError, ScriptErrorKind, ScriptRule, ScriptStep, ScriptToolCall,
};
pub use scripted::ScriptedProvider;
pub use types::{
    ChatMessage, EndpointConfig, FinishReason, ImagePart, ModelRequest, ModelResponse,
    ProviderKind, RetryPolicy, StreamEvent, ToolCall, ToolSpec, Usage, output_cap,
};

/// Request bodies as sent on the wire (useful for records and debugging).
pub mod wire {
    pub use crate::anthropic::request_body as anthropic_request_body;
    pub use crate::openai::request_body as openai_request_body;
}

#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// Base URL, or `scripted:<path or name>`; for records and error messages.
    fn endpoint(&self) -> &str;
    fn model(&self) -> &str;
    /// Whether the model takes pictures (`ImagePart`s on user messages and tool results).
    /// Pictures should only be sent to a provider that answers true.
    fn takes_pictures(&self) -> bool {
        false
    }
    /// The most tokens a reply may run to when the request names no cap of its own, where
    /// the endpoint or its protocol sets one; `None`: the server's own default.
    fn output_cap(&self) -> Option<u32> {
        None
    }
    /// One model call attempt (no retries). Streams deltas into `events` as
    /// they arrive and returns the assembled response. Returns
    /// `LlmError::Cancelled` promptly when `cancel` fires.
    async fn complete_once(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, LlmError>;
}

/// Build the provider for `cfg`. For `Scripted`, `base_url` is the script
/// file path (an optional `scripted:` prefix is accepted) and is loaded now.
pub fn build_provider(cfg: EndpointConfig) -> Result<Arc<dyn Provider>, LlmError> {
    Ok(match cfg.kind {
        ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(&cfg)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(&cfg)?),
        ProviderKind::Scripted => {
            let path = cfg
                .base_url
                .as_deref()
                .map(|p| p.trim().trim_start_matches("scripted:"))
                .filter(|p| !p.is_empty())
                .ok_or_else(|| {
                    LlmError::InvalidConfig(
                        "scripted endpoint needs base_url set to the script file path".into(),
                    )
                })?;
            let mut p = ScriptedProvider::new(Script::load(path)?);
            if !cfg.model.trim().is_empty() {
                p = p.with_model(cfg.model);
            }
            p = p
                .with_takes_pictures(cfg.takes_pictures)
                .with_output_cap(cfg.max_output_tokens);
            Arc::new(p)
        }
    })
}
