//! One tool-free model call for the app's own readings (judgements, line reading): a single
//! attempt under a time limit that counts any wait for the endpoint, with the text as answer.

use std::time::Duration;
use tokio_util::sync::CancellationToken;
use troupe_core::thread::AgentBinding;
use troupe_engine::ModelResolver;
use troupe_llm::{ChatMessage, ModelRequest, ModelResponse, Provider};

/// The answer's text, or why there is none (no endpoint, the call failed, out of time).
pub(crate) async fn call_text(
    resolver: &dyn ModelResolver,
    agent: &AgentBinding,
    prompt: String,
    limit: Duration,
) -> Result<(String, String), String> {
    let resolved = resolver.resolve(agent)?;
    let model = resolved.provider.model().to_string();
    call_once(
        resolved.provider.as_ref(),
        "You read one line for a team chat app and answer with JSON only.",
        ChatMessage::user(prompt),
        400,
        limit,
    )
    .await
    .map(|resp| (resp.text, model))
}

/// One tool-free attempt with `message` on `provider`, within `limit`.
pub(crate) async fn call_once(
    provider: &dyn Provider,
    system: &str,
    message: ChatMessage,
    max_tokens: u32,
    limit: Duration,
) -> Result<ModelResponse, String> {
    let req = ModelRequest {
        system: system.into(),
        messages: vec![message],
        tools: std::sync::Arc::from(Vec::new()),
        max_tokens: Some(max_tokens),
    };
    let (events, _drain) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    match tokio::time::timeout(limit, provider.complete_once(&req, &events, &cancel)).await {
        Ok(Ok(resp)) => Ok(resp),
        Ok(Err(e)) => Err(format!("the call failed: {e}")),
        Err(_) => {
            cancel.cancel();
            Err(format!("no answer within {} s", limit.as_secs()))
        }
    }
}
