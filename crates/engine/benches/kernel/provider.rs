//! The bench's model: zero latency and stateless. It reads which bench thread is asking from
//! the first user message ("bench task <i>"), counts the assistant messages already in the
//! request, and asks for the no-op tool until `steps` tool steps are done, then answers.
//!
//! It also keeps the timestamps the report is made of: for each bench thread, the gap between
//! one call returning and the next call of the same thread beginning. The model costs nothing,
//! so that gap is one whole engine step (records, the assistant message, tool dispatch, the
//! tool result, the inbox check, history load and context assembly), plus any wait for a
//! worker or for the store under load.

use async_trait::async_trait;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use troupe_llm::{
    ChatMessage, FinishReason, LlmError, ModelRequest, ModelResponse, Provider, StreamEvent,
    ToolCall, Usage,
};

pub const TASK_PREFIX: &str = "bench task ";
pub const NOOP_TOOL: &str = "bench_noop";

#[derive(Default)]
struct Slot {
    last_end: Option<Instant>,
    gaps_ns: Vec<u64>,
}

pub struct BenchProvider {
    steps: usize,
    slots: Vec<Mutex<Slot>>,
    calls: AtomicU64,
    inside_ns: AtomicU64,
}

impl BenchProvider {
    /// `threads` slots are kept for timing; threads with a higher index are answered untimed.
    pub fn new(steps: usize, threads: usize) -> Self {
        BenchProvider {
            steps,
            slots: (0..threads).map(|_| Mutex::new(Slot::default())).collect(),
            calls: AtomicU64::new(0),
            inside_ns: AtomicU64::new(0),
        }
    }

    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Total time spent inside `complete_once`, in nanoseconds.
    pub fn inside_ns(&self) -> u64 {
        self.inside_ns.load(Ordering::Relaxed)
    }

    /// Every recorded gap (nanoseconds), all threads together.
    pub fn gaps_ns(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for s in &self.slots {
            out.extend_from_slice(&s.lock().unwrap_or_else(|p| p.into_inner()).gaps_ns);
        }
        out
    }

    fn answer(&self, req: &ModelRequest) -> (Option<usize>, ModelResponse) {
        let index = req.messages.iter().find_map(|m| match m {
            ChatMessage::User { text, .. } => text.strip_prefix(TASK_PREFIX)?.trim().parse().ok(),
            _ => None,
        });
        let done = req
            .messages
            .iter()
            .filter(|m| matches!(m, ChatMessage::Assistant { .. }))
            .count();
        let response = if done < self.steps {
            ModelResponse {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: format!("call-{done}"),
                    name: NOOP_TOOL.to_string(),
                    arguments: "{}".to_string(),
                }],
                usage: Usage {
                    input_tokens: 100,
                    cached_input_tokens: 0,
                    output_tokens: 10,
                },
                finish: FinishReason::ToolCalls,
            }
        } else {
            ModelResponse {
                text: "done".to_string(),
                tool_calls: Vec::new(),
                usage: Usage {
                    input_tokens: 100,
                    cached_input_tokens: 0,
                    output_tokens: 1,
                },
                finish: FinishReason::Stop,
            }
        };
        (index, response)
    }
}

#[async_trait]
impl Provider for BenchProvider {
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
        let (index, response) = self.answer(req);
        let slot = index.and_then(|i| self.slots.get(i));
        let end = Instant::now();
        if let Some(slot) = slot {
            let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(prev) = s.last_end {
                s.gaps_ns.push(start.duration_since(prev).as_nanos() as u64);
            }
            s.last_end = Some(end);
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inside_ns.fetch_add(
            end.duration_since(start).as_nanos() as u64,
            Ordering::Relaxed,
        );
        Ok(response)
    }
}
