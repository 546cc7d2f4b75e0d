//! One tool-free model call for the app's own readings (judgements, line reading): a single
//! attempt under a time limit that counts any wait for the endpoint, with the text as answer.

use std::time::Duration;
use tokio_util::sync::CancellationToken;
use troupe_core::thread::AgentBinding;
use troupe_engine::ModelResolver;
use troupe_llm::{ChatMessage, ModelRequest};

/// The answer's text, or why there is none (no endpoint, the call failed, out of time).
pub(crate) async fn call_text(
    resolver: &dyn ModelResolver,
    agent: &AgentBinding,
    prompt: String,
    limit: Duration,
) -> Result<(String, String), String> {
    let resolved = resolver.resolve(agent)?;
    let model = resolved.provider.model().to_string();
    let req = ModelRequest {
        system: "You read one line for a team chat app and answer with JSON only.".into(),
        messages: vec![ChatMessage::User {
            text: prompt,
            images: Vec::new(),
        }],
        tools: std::sync::Arc::from(Vec::new()),
        max_tokens: Some(400),
    };
    let (events, _drain) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    match tokio::time::timeout(
        limit,
        resolved.provider.complete_once(&req, &events, &cancel),
    )
    .await
    {
        Ok(Ok(resp)) => Ok((resp.text, model)),
        Ok(Err(e)) => Err(format!("the call failed: {e}")),
        Err(_) => {
            cancel.cancel();
            Err(format!("no answer within {} s", limit.as_secs()))
        }
    }
}
