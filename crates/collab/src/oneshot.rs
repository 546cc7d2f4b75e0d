//! One tool-free model call for the app's own readings (judgements, line reading): a single
//! attempt under a time limit that counts any wait for the endpoint, with the text as answer.

use std::time::Duration;
use tokio_util::sync::CancellationToken;
use troupe_core::conversation::Bot;
use troupe_core::thread::AgentBinding;
use troupe_engine::ModelResolver;
use troupe_llm::{ChatMessage, FinishReason, ModelRequest, ModelResponse, Provider};
use troupe_store::CallRecord;

/// The answer's text, or why there is none (no endpoint, the call failed, out of time). A
/// reading: it asks for the lightest thinking level the endpoint lists.
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
        true,
    )
    .await
    .map(|resp| (resp.text, model))
}

/// Where a Bot's own look back runs (the retrospective, the reflection): on `role` when one
/// is set, else on the Bot's own endpoint.
pub(crate) fn role_or_own(
    roles: &crate::roles::SharedRoles,
    role: &str,
    bot: &Bot,
) -> AgentBinding {
    match roles.get(role) {
        Some(_) => AgentBinding {
            name: format!("{role} of {}", bot.name),
            system_prompt: String::new(),
            role: role.into(),
            endpoint: None,
        },
        None => crate::bots::binding_for(bot),
    }
}

/// One tool-free call as a Bot, at its model's own thinking: the call as its record keeps it,
/// and the answer's text — or why there is none (no model, the call failed, or the answer was
/// cut off at its length limit, which is no whole answer).
pub(crate) async fn ask_as_bot(
    resolver: &dyn ModelResolver,
    agent: &AgentBinding,
    system: &str,
    prompt: String,
    max_tokens: u32,
    limit: Duration,
) -> (CallRecord, Result<String, String>) {
    let resolved = match resolver.resolve(agent) {
        Ok(r) => r,
        Err(e) => {
            let call = CallRecord {
                model: Some("none".into()),
                ..CallRecord::default()
            };
            return (call, Err(format!("no model to ask: {e}")));
        }
    };
    let mut call = CallRecord {
        model: Some(resolved.provider.model().to_string()),
        ..CallRecord::default()
    };
    let message = ChatMessage::user(prompt);
    let resp = call_once(
        resolved.provider.as_ref(),
        system,
        message,
        max_tokens,
        limit,
        false,
    )
    .await;
    let answer = match resp {
        Err(e) => Err(e),
        Ok(r) => {
            call.input_tokens = r.usage.input_tokens;
            call.output_tokens = r.usage.output_tokens;
            call.raw = Some(r.text.clone());
            if r.finish == FinishReason::Length {
                Err("the answer was cut off at its length limit".into())
            } else {
                Ok(r.text)
            }
        }
    };
    (call, answer)
}

/// One tool-free attempt with `message` on `provider`, within `limit`; `lightest_thinking`
/// asks for the lightest thinking level the endpoint lists (LR-11).
pub(crate) async fn call_once(
    provider: &dyn Provider,
    system: &str,
    message: ChatMessage,
    max_tokens: u32,
    limit: Duration,
    lightest_thinking: bool,
) -> Result<ModelResponse, String> {
    let req = ModelRequest {
        system: system.into(),
        messages: vec![message],
        tools: std::sync::Arc::from(Vec::new()),
        max_tokens: Some(max_tokens),
        lightest_thinking,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tokio::sync::mpsc::UnboundedSender;
    use troupe_engine::ResolvedModel;
    use troupe_llm::{FinishReason, LlmError, StreamEvent, Usage};

    /// Answers "{}" and keeps whether each request asked for the lightest thinking.
    #[derive(Default)]
    struct Recording(Mutex<Vec<bool>>);

    #[async_trait::async_trait]
    impl Provider for Recording {
        fn endpoint(&self) -> &str {
            "http://e"
        }
        fn model(&self) -> &str {
            "m"
        }
        async fn complete_once(
            &self,
            req: &ModelRequest,
            _: &UnboundedSender<StreamEvent>,
            _: &CancellationToken,
        ) -> Result<ModelResponse, LlmError> {
            self.0.lock().unwrap().push(req.lightest_thinking);
            Ok(ModelResponse {
                text: "{}".into(),
                tool_calls: Vec::new(),
                finish: FinishReason::Stop,
                usage: Usage::default(),
            })
        }
    }

    struct One(Arc<Recording>);

    impl ModelResolver for One {
        fn resolve(&self, _: &AgentBinding) -> Result<ResolvedModel, String> {
            Ok(ResolvedModel {
                provider: self.0.clone(),
                retry: Default::default(),
                role: "reading".into(),
            })
        }
    }

    #[tokio::test]
    async fn a_reading_asks_for_the_lightest_thinking_and_a_judged_picture_does_not() {
        let seen = Arc::new(Recording::default());
        let agent = AgentBinding::new("reader", "");
        let limit = Duration::from_secs(5);
        call_text(&One(seen.clone()), &agent, "a line".into(), limit)
            .await
            .unwrap();
        let message = ChatMessage::user("judge");
        call_once(seen.as_ref(), "s", message, 600, limit, false)
            .await
            .unwrap();
        assert_eq!(*seen.0.lock().unwrap(), [true, false]);
    }
}
