//! The bench's model: zero latency and stateless. The task text names the variant and the
//! number of steps ("bench task mcp_echo 200"); the model counts the assistant messages in the
//! request and asks for one call of that variant's tool per step, then answers. Before each
//! step it checks that the previous call's result is the one that tool gives, so a broken path
//! (a refused call, an error, a server that is not there) cannot pass as a fast one.
//!
//! It also keeps the timestamps the report is made of: the gap between one model call returning
//! and the next one beginning. Runs go one at a time, so one clock serves them all; the model
//! costs nothing, so that gap is one whole engine step including the tool call.

use crate::setup::Variant;
use async_trait::async_trait;
use std::sync::Mutex;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use troupe_llm::{
    ChatMessage, FinishReason, LlmError, ModelRequest, ModelResponse, Provider, StreamEvent,
    ToolCall, Usage,
};

pub const TASK_PREFIX: &str = "bench task ";

#[derive(Default)]
struct Clock {
    last_end: Option<Instant>,
    gaps_ns: Vec<u64>,
    calls: u64,
    /// What went wrong, in the model's view (a wrong or missing tool result).
    faults: Vec<String>,
}

#[derive(Default)]
pub struct BenchModel {
    clock: Mutex<Clock>,
}

/// What one run left in the model's clock.
pub struct Taken {
    pub gaps_ns: Vec<u64>,
    pub calls: u64,
    pub faults: Vec<String>,
}

impl BenchModel {
    /// Everything recorded since the last take, and a fresh clock for the next run.
    pub fn take(&self) -> Taken {
        let mut c = self.clock.lock().unwrap_or_else(|p| p.into_inner());
        let old = std::mem::take(&mut *c);
        Taken {
            gaps_ns: old.gaps_ns,
            calls: old.calls,
            faults: old.faults,
        }
    }

    fn answer(req: &ModelRequest) -> Result<ModelResponse, String> {
        let task = req
            .messages
            .iter()
            .find_map(|m| match m {
                ChatMessage::User { text, .. } => text.strip_prefix(TASK_PREFIX),
                _ => None,
            })
            .ok_or("no bench task in the request")?;
        let mut words = task.split_whitespace();
        let (Some(label), Some(steps)) = (words.next(), words.next()) else {
            return Err(format!(
                "bench task '{task}' lacks a variant or a step count"
            ));
        };
        let v = Variant::from_label(label).ok_or_else(|| format!("no variant '{label}'"))?;
        let steps: usize = steps
            .parse()
            .map_err(|_| format!("bad step count '{steps}'"))?;
        let done = req
            .messages
            .iter()
            .filter(|m| matches!(m, ChatMessage::Assistant { .. }))
            .count();
        if done > 0 {
            // The kernel may add a reminder after the result; the result is the last one.
            let last = req.messages.iter().rev().find_map(|m| match m {
                ChatMessage::ToolResult {
                    content, is_error, ..
                } => Some((content, *is_error)),
                _ => None,
            });
            let expected = v.expected_result(done - 1);
            match last {
                Some((content, false)) if *content == expected => {}
                other => {
                    return Err(format!(
                        "{} step {}: expected the result '{expected}', read {other:?}",
                        v.label(),
                        done - 1
                    ));
                }
            }
        }
        let usage = Usage {
            input_tokens: 100,
            cached_input_tokens: 0,
            output_tokens: 10,
        };
        Ok(if done < steps {
            ModelResponse {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: format!("call-{done}"),
                    name: v.tool().to_string(),
                    arguments: v.arguments(done),
                }],
                usage,
                finish: FinishReason::ToolCalls,
            }
        } else {
            ModelResponse {
                text: "done".to_string(),
                tool_calls: Vec::new(),
                usage,
                finish: FinishReason::Stop,
            }
        })
    }
}

#[async_trait]
impl Provider for BenchModel {
    fn endpoint(&self) -> &str {
        "bench:zero-latency"
    }
    fn model(&self) -> &str {
        "bench"
    }
    async fn complete_once(
        &self,
        req: &ModelRequest,
        _events: &UnboundedSender<StreamEvent>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, LlmError> {
        let start = Instant::now();
        let answer = Self::answer(req);
        let end = Instant::now();
        let mut c = self.clock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(prev) = c.last_end {
            c.gaps_ns.push(start.duration_since(prev).as_nanos() as u64);
        }
        c.last_end = Some(end);
        c.calls += 1;
        match answer {
            Ok(r) => Ok(r),
            Err(why) => {
                c.faults.push(why.clone());
                // Answer so the run ends; the fault fails the bench afterwards.
                Ok(ModelResponse {
                    text: format!("bench fault: {why}"),
                    tool_calls: Vec::new(),
                    usage: Usage {
                        input_tokens: 1,
                        cached_input_tokens: 0,
                        output_tokens: 1,
                    },
                    finish: FinishReason::Stop,
                })
            }
        }
    }
}
