//! Offline provider replaying a `Script`. Step choice depends only on the
//! request, so a resumed run after a restart sees the same answers.

use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::script::{OnExhausted, Script, ScriptError, ScriptErrorKind, ScriptStep};
use crate::{
    ChatMessage, FinishReason, LlmError, ModelRequest, ModelResponse, Provider, StreamEvent,
    ToolCall, Usage,
};

pub struct ScriptedProvider {
    script: Script,
    endpoint: String,
    model: String,
    takes_pictures: bool,
    output_cap: Option<u32>,
}

impl ScriptedProvider {
    pub fn new(script: Script) -> Self {
        let label = match &script.source {
            Some(p) => p.display().to_string(),
            None => script.name.clone(),
        };
        ScriptedProvider {
            endpoint: format!("scripted:{label}"),
            model: "scripted".to_string(),
            takes_pictures: false,
            output_cap: None,
            script,
        }
    }

    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Mark the scripted model as taking pictures (its replies still ignore them).
    pub fn with_takes_pictures(mut self, takes_pictures: bool) -> Self {
        self.takes_pictures = takes_pictures;
        self
    }

    /// The endpoint's output cap, reported as a real provider's is (the script's replies are
    /// what they are: a step ends `length` only where the script says so).
    pub fn with_output_cap(mut self, cap: Option<u32>) -> Self {
        self.output_cap = cap;
        self
    }

    pub fn script(&self) -> &Script {
        &self.script
    }

    /// The step index (number of assistant messages so far) and the step to play.
    pub fn select(&self, req: &ModelRequest) -> Result<(usize, &ScriptStep), LlmError> {
        let step = req
            .messages
            .iter()
            .filter(|m| matches!(m, ChatMessage::Assistant { .. }))
            .count();
        // Rules only answer the first call after a user message.
        if let Some(ChatMessage::User { text, .. }) = req.messages.last() {
            let lower = text.to_lowercase();
            if let Some(rule) = self
                .script
                .rules
                .iter()
                .find(|r| lower.contains(&r.when_user_contains.to_lowercase()))
            {
                return Ok((step, &rule.reply));
            }
        }
        if let Some(s) = self.script.steps.get(step) {
            return Ok((step, s));
        }
        match (self.script.on_exhausted, self.script.steps.last()) {
            (OnExhausted::RepeatLast, Some(last)) => Ok((step, last)),
            _ => Err(LlmError::ScriptExhausted {
                endpoint: self.endpoint.clone(),
                model: self.model.clone(),
                script: self.script.name.clone(),
                step,
            }),
        }
    }

    fn error(&self, e: &ScriptError) -> LlmError {
        let endpoint = self.endpoint.clone();
        let model = self.model.clone();
        let detail = e.message.clone();
        let status = |default: u16| e.status.unwrap_or(default);
        match e.kind {
            ScriptErrorKind::Auth => LlmError::Auth {
                status: status(401),
                endpoint,
                model,
                detail,
            },
            ScriptErrorKind::NotFound => LlmError::NotFound {
                status: status(404),
                endpoint,
                model,
                detail,
            },
            ScriptErrorKind::BadRequest => LlmError::BadRequest {
                status: status(400),
                endpoint,
                model,
                detail,
            },
            ScriptErrorKind::RateLimited => LlmError::RateLimited {
                endpoint,
                model,
                detail,
                retry_after: e.retry_after_ms.map(Duration::from_millis),
            },
            ScriptErrorKind::Server => LlmError::Server {
                status: status(500),
                endpoint,
                model,
                detail,
            },
            ScriptErrorKind::Connection => LlmError::Connection {
                endpoint,
                model,
                detail,
            },
            ScriptErrorKind::Timeout => LlmError::Timeout {
                endpoint,
                model,
                after: Duration::ZERO,
            },
            ScriptErrorKind::Protocol => LlmError::Protocol {
                endpoint,
                model,
                detail,
            },
        }
    }
}

async fn pause(ms: u64, cancel: &CancellationToken) -> Result<(), LlmError> {
    if ms == 0 {
        return if cancel.is_cancelled() {
            Err(LlmError::Cancelled)
        } else {
            Ok(())
        };
    }
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(LlmError::Cancelled),
        _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
    }
}

/// Split `text` into `n` pieces of near-equal char count (fewer if short).
pub(crate) fn split_chunks(text: &str, n: u32) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let n = (n.max(1) as usize).min(chars.len());
    (0..n)
        .map(|i| {
            let (a, b) = (i * chars.len() / n, (i + 1) * chars.len() / n);
            chars[a..b].iter().collect()
        })
        .collect()
}

/// Rough token estimate: a quarter of the characters, rounded up.
fn tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

fn request_chars(req: &ModelRequest) -> usize {
    let msgs: usize = req
        .messages
        .iter()
        .map(|m| match m {
            ChatMessage::User { text, .. } => text.chars().count(),
            ChatMessage::Assistant { text, tool_calls } => {
                text.chars().count()
                    + tool_calls
                        .iter()
                        .map(|c| c.name.len() + c.arguments.chars().count())
                        .sum::<usize>()
            }
            ChatMessage::ToolResult { content, .. } => content.chars().count(),
        })
        .sum();
    req.system.chars().count() + msgs
}

#[async_trait::async_trait]
impl Provider for ScriptedProvider {
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn takes_pictures(&self) -> bool {
        self.takes_pictures
    }

    fn output_cap(&self) -> Option<u32> {
        self.output_cap
    }

    async fn complete_once(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, LlmError> {
        let (step_index, step) = self.select(req)?;
        pause(step.delay_ms, cancel).await?;
        if let Some(e) = &step.error {
            return Err(self.error(e));
        }
        for (i, piece) in split_chunks(&step.text, step.chunks)
            .into_iter()
            .enumerate()
        {
            if i > 0 {
                pause(step.chunk_delay_ms, cancel).await?;
            }
            let _ = events.send(StreamEvent::TextDelta(piece));
        }
        let tool_calls: Vec<ToolCall> = step
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: format!("call_{step_index}_{i}"),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect();
        for (index, c) in tool_calls.iter().enumerate() {
            let _ = events.send(StreamEvent::ToolCallStart {
                index,
                id: c.id.clone(),
                name: c.name.clone(),
            });
            // A call's arguments stream like the text: in `chunks` pieces, paced alike.
            for (i, piece) in split_chunks(&c.arguments, step.chunks)
                .into_iter()
                .enumerate()
            {
                if i > 0 {
                    pause(step.chunk_delay_ms, cancel).await?;
                }
                let _ = events.send(StreamEvent::ToolCallArgsDelta {
                    index,
                    delta: piece,
                });
            }
        }
        let out_chars = step.text.chars().count()
            + tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.chars().count())
                .sum::<usize>();
        Ok(ModelResponse {
            text: step.text.clone(),
            finish: if tool_calls.is_empty() {
                step.finish.clone().unwrap_or(FinishReason::Stop)
            } else {
                FinishReason::ToolCalls
            },
            tool_calls,
            usage: Usage {
                input_tokens: tokens(request_chars(req)),
                cached_input_tokens: 0,
                output_tokens: tokens(out_chars),
            },
        })
    }
}
