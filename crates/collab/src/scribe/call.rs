//! The scribe's one model call: tool-free, on the `scribe` role (the resolver falls back to
//! `default`), a single attempt within its time limit and output budget.

use std::time::Duration;
use tokio_util::sync::CancellationToken;
use troupe_core::thread::AgentBinding;
use troupe_engine::ModelResolver;
use troupe_llm::{ChatMessage, ModelRequest};

/// The answer's text and the model, or why there is none.
pub(crate) async fn ask(
    resolver: &dyn ModelResolver,
    prompt: String,
    max_tokens: u32,
    limit: Duration,
) -> Result<(String, String), String> {
    let agent = AgentBinding {
        name: "scribe".into(),
        system_prompt: String::new(),
        role: "scribe".into(),
        endpoint: None,
    };
    let resolved = resolver
        .resolve(&agent)
        .map_err(|e| format!("no scribe model: {e}"))?;
    let model = resolved.provider.model().to_string();
    let req = ModelRequest {
        system: "You keep a list of what a user asked for. You answer with JSON only.".into(),
        messages: vec![ChatMessage::User {
            text: prompt,
            images: Vec::new(),
        }],
        tools: std::sync::Arc::from(Vec::new()),
        max_tokens: Some(max_tokens),
        lightest_thinking: false,
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
