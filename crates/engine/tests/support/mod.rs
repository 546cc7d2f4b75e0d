//! A small test consumer of the kernel: a provider that answers from a queue and records every
//! request, and helpers to build an engine on a real SQLite file.
#![allow(dead_code)]

use async_trait::async_trait;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tempfile::TempDir;
use tokio::sync::Notify;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{ManualClock, ThreadId};
use troupe_engine::models::FixedModel;
use troupe_engine::{Engine, EngineBuilder, EngineConfig};
use troupe_llm::{
    FinishReason, LlmError, ModelRequest, ModelResponse, Provider, RetryPolicy, StreamEvent,
    ToolCall, Usage,
};
use troupe_store::NewThread;

pub enum Reply {
    Text(String),
    Tools(String, Vec<ToolCall>),
    /// A reply the output cap ended (`length`) with these calls, the last perhaps cut.
    CutTools(Vec<ToolCall>),
    /// Calls the model server stopped inside, unable to read the last one (finish `unreadable`).
    UnreadableTools(Vec<ToolCall>),
    /// Tool calls whose arguments stream in three pieces, as a provider's do.
    StreamedTools(Vec<ToolCall>),
    Error(LlmError),
    /// Streams `partial`, tells the test it is in flight, then waits until cancelled.
    Hang {
        partial: String,
        started: Arc<Notify>,
    },
}

pub fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
    }
}

#[derive(Default)]
pub struct QueueProvider {
    replies: Mutex<VecDeque<Reply>>,
    pub requests: Mutex<Vec<ModelRequest>>,
    /// What `Provider::takes_pictures` answers (false unless a test sets it).
    pub pictures: AtomicBool,
    /// What `Provider::output_cap` answers; 0: none.
    pub cap: std::sync::atomic::AtomicU32,
}

impl QueueProvider {
    pub fn new(replies: Vec<Reply>) -> Arc<Self> {
        Arc::new(QueueProvider {
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
            pictures: AtomicBool::new(false),
            cap: Default::default(),
        })
    }
    pub fn push(&self, r: Reply) {
        self.replies.lock().unwrap().push_back(r);
    }
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
    /// Mark the model as taking pictures (or not).
    pub fn set_takes_pictures(&self, on: bool) {
        self.pictures.store(on, Ordering::SeqCst);
    }
    pub fn calls(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

fn response(text: String, tool_calls: Vec<ToolCall>) -> ModelResponse {
    let finish = if tool_calls.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolCalls
    };
    ModelResponse {
        text,
        tool_calls,
        usage: Usage {
            input_tokens: 10,
            cached_input_tokens: 4,
            output_tokens: 5,
        },
        finish,
    }
}

#[async_trait]
impl Provider for QueueProvider {
    fn endpoint(&self) -> &str {
        "test:queue"
    }
    fn model(&self) -> &str {
        "queue-model"
    }
    fn takes_pictures(&self) -> bool {
        self.pictures.load(Ordering::SeqCst)
    }
    fn output_cap(&self) -> Option<u32> {
        Some(self.cap.load(Ordering::SeqCst)).filter(|n| *n > 0)
    }
    async fn complete_once(
        &self,
        req: &ModelRequest,
        events: &UnboundedSender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, LlmError> {
        self.requests.lock().unwrap().push(req.clone());
        let next = self.replies.lock().unwrap().pop_front();
        match next {
            None => Ok(response("done".into(), vec![])),
            Some(Reply::Text(t)) => {
                let _ = events.send(StreamEvent::TextDelta(t.clone()));
                Ok(response(t, vec![]))
            }
            Some(Reply::Tools(t, calls)) => Ok(response(t, calls)),
            Some(Reply::CutTools(calls)) => Ok(ModelResponse {
                finish: FinishReason::Length,
                ..response(String::new(), calls)
            }),
            Some(Reply::UnreadableTools(calls)) => Ok(ModelResponse {
                finish: FinishReason::Unreadable,
                ..response(String::new(), calls)
            }),
            Some(Reply::StreamedTools(calls)) => {
                for (index, c) in calls.iter().enumerate() {
                    let _ = events.send(StreamEvent::ToolCallStart {
                        index,
                        id: c.id.clone(),
                        name: c.name.clone(),
                    });
                    let chars: Vec<char> = c.arguments.chars().collect();
                    for piece in chars.chunks(chars.len().div_ceil(3).max(1)) {
                        let _ = events.send(StreamEvent::ToolCallArgsDelta {
                            index,
                            delta: piece.iter().collect(),
                        });
                    }
                }
                Ok(response(String::new(), calls))
            }
            Some(Reply::Error(e)) => Err(e),
            Some(Reply::Hang { partial, started }) => {
                let _ = events.send(StreamEvent::TextDelta(partial));
                started.notify_one();
                cancel.cancelled().await;
                Err(LlmError::Cancelled)
            }
        }
    }
}

pub struct Harness {
    pub engine: Engine,
    pub provider: Arc<QueueProvider>,
    pub dir: TempDir,
    pub workspace: std::path::PathBuf,
    pub clock: ManualClock,
}

pub fn build(replies: Vec<Reply>, extend: impl FnOnce(EngineBuilder) -> EngineBuilder) -> Harness {
    build_with_retry(RetryPolicy::none(), replies, extend)
}

pub fn build_with_retry(
    retry: RetryPolicy,
    replies: Vec<Reply>,
    extend: impl FnOnce(EngineBuilder) -> EngineBuilder,
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let clock = ManualClock::new(1_700_000_000_000);
    let store = troupe_store::testing::open_in(dir.path(), Arc::new(clock.clone()));
    let provider = QueueProvider::new(replies);
    let models = Arc::new(FixedModel {
        provider: provider.clone(),
        retry,
    });
    let config = EngineConfig {
        kill_grace: std::time::Duration::from_millis(500),
        boot_id: "test-boot".into(),
        limits: troupe_core::run::RunLimits {
            max_hops: 100,
            ..Default::default()
        },
        ..Default::default()
    };
    let engine = extend(Engine::builder(store, models).config(config)).build();
    Harness {
        engine,
        provider,
        dir,
        workspace,
        clock,
    }
}

impl Harness {
    pub fn thread(&self, interaction: Interaction) -> ThreadId {
        self.engine
            .create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: "test".into(),
                agent: AgentBinding::new("tester", "You are a test agent."),
                workspace: self.workspace.display().to_string(),
                interaction,
            })
            .unwrap()
            .id
    }
}

pub fn last_run(h: &Harness, t: troupe_core::ThreadId) -> troupe_store::RunRecord {
    h.engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 1))
        .unwrap()
        .remove(0)
}

/// A task given to a new interactive thread, run to its end: the thread and its run.
pub async fn run_task(h: &Harness, task: &str) -> (troupe_core::ThreadId, troupe_store::RunRecord) {
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, troupe_core::inbox::Delivery::user_task(task))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    (t, last_run(h, t))
}

/// The results of a run's tool calls, as stored, in order.
pub fn call_results(h: &Harness, run: &troupe_store::RunRecord) -> Vec<String> {
    h.engine
        .store()
        .read(|tx| tx.tool_calls(run.id))
        .unwrap()
        .into_iter()
        .map(|c| c.result)
        .collect()
}
