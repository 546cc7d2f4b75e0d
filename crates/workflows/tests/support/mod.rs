//! A conversation layer with the workflow layer installed, on a real SQLite file, whose model
//! answers from a queue and records every request.
#![allow(dead_code)]

use async_trait::async_trait;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use troupe_collab::{Collab, NewBotRequest, NewSessionRequest, SessionProjector, SharedRoles};
use troupe_core::continuation_guard::GuardLimits;
use troupe_core::{SessionId, ThreadId};
use troupe_engine::models::FixedModel;
use troupe_engine::{Engine, EngineConfig, RoleTable};
use troupe_llm::{
    ChatMessage, FinishReason, LlmError, ModelRequest, ModelResponse, Provider, RetryPolicy,
    StreamEvent, ToolCall, Usage,
};
use troupe_workflows::Workflows;

pub enum Reply {
    Text(String),
    Tools(Vec<ToolCall>),
    /// Streams a little, tells the test it is in flight, then waits until cancelled.
    Hang(Arc<Notify>),
    /// The model refuses the call (as an endpoint that rejects the key would).
    Fail(String),
}

pub fn call(id: &str, name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.to_string(),
    }
}

#[derive(Default)]
pub struct QueueProvider {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl QueueProvider {
    pub fn push(&self, r: Reply) {
        self.replies.lock().unwrap().push_back(r);
    }
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
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
            input_tokens: 1,
            cached_input_tokens: 0,
            output_tokens: 1,
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
            Some(Reply::Text(t)) => Ok(response(t, vec![])),
            Some(Reply::Tools(calls)) => Ok(response(String::new(), calls)),
            Some(Reply::Fail(detail)) => Err(LlmError::Auth {
                status: 401,
                endpoint: "test:queue".into(),
                model: "queue-model".into(),
                detail,
            }),
            Some(Reply::Hang(started)) => {
                let _ = events.send(StreamEvent::TextDelta("working on it".into()));
                started.notify_one();
                cancel.cancelled().await;
                Err(LlmError::Cancelled)
            }
        }
    }
}

pub struct World {
    pub wf: Workflows,
    pub provider: Arc<QueueProvider>,
    pub dir: Arc<tempfile::TempDir>,
}

pub fn world() -> World {
    world_on(Arc::new(tempfile::tempdir().unwrap()), "test-boot")
}

/// A world on an existing data directory, as a process with its own boot id would open it.
pub fn world_on(dir: Arc<tempfile::TempDir>, boot_id: &str) -> World {
    world_clocked(dir, boot_id, Arc::new(troupe_core::SystemClock))
}

/// A world whose store reads the given clock. Loops continue without spacing (no tick runs
/// here); the budget and the no-progress streak keep their defaults.
pub fn world_clocked(
    dir: Arc<tempfile::TempDir>,
    boot_id: &str,
    clock: Arc<dyn troupe_core::Clock>,
) -> World {
    let loops = GuardLimits {
        spacing_ms: 0,
        ..GuardLimits::default()
    };
    world_guarded(dir, boot_id, clock, loops)
}

/// The daemon's layers as `troupe serve` stacks them (the conversation layer with its
/// extensions: work items, holds, tickets; then the workflows), on a store reading `clock`,
/// the model answering from a queue.
pub fn world_as_served(clock: Arc<dyn troupe_core::Clock>) -> World {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let store = troupe_store::testing::open_in(dir.path(), clock);
    let provider = Arc::new(QueueProvider::default());
    let models = Arc::new(FixedModel {
        provider: provider.clone(),
        retry: RetryPolicy::none(),
    });
    let builder = Engine::builder(store, models).config(EngineConfig {
        kill_grace: std::time::Duration::from_millis(300),
        boot_id: "served".into(),
        ..EngineConfig::default()
    });
    let host = troupe_collab::tools::ToolHost::new();
    let builder = troupe_collab::extend(builder, &host).unwrap();
    let engine = troupe_workflows::build_engine(builder).unwrap();
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let collab = Collab::new(engine, roles, dir.path().join("workspaces"));
    host.attach(&collab);
    World {
        wf: Workflows::new(collab),
        provider,
        dir,
    }
}

/// A world whose loops start with the given continuation guard limits.
pub fn world_guarded(
    dir: Arc<tempfile::TempDir>,
    boot_id: &str,
    clock: Arc<dyn troupe_core::Clock>,
    loops: GuardLimits,
) -> World {
    let store = troupe_store::testing::open_in(dir.path(), clock);
    let provider = Arc::new(QueueProvider::default());
    let models = Arc::new(FixedModel {
        provider: provider.clone(),
        retry: RetryPolicy::none(),
    });
    let builder = Engine::builder(store, models)
        .config(EngineConfig {
            kill_grace: std::time::Duration::from_millis(300),
            boot_id: boot_id.into(),
            loops,
            ..EngineConfig::default()
        })
        .message_observer(Arc::new(SessionProjector::default()));
    let engine = troupe_workflows::build_engine(builder).unwrap();
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let collab = Collab::new(engine, roles, dir.path().join("workspaces"));
    World {
        wf: Workflows::new(collab),
        provider,
        dir,
    }
}

impl World {
    pub fn session(&self) -> SessionId {
        let bot = self
            .wf
            .collab()
            .create_bot(NewBotRequest {
                name: format!("bot{}", self.provider.calls() + rand_suffix()),
                persona: None,
                endpoint: None,
            })
            .unwrap();
        self.wf
            .collab()
            .create_session(NewSessionRequest {
                workspace: None,
                kind: "direct".into(),
                bot_ids: vec![bot.id],
                title: None,
            })
            .unwrap()
            .session
            .id
    }

    pub fn thread(&self, s: SessionId) -> ThreadId {
        self.wf.collab().direct_thread(s).unwrap()
    }

    pub async fn say(&self, s: SessionId, text: &str) {
        self.wf
            .collab()
            .post_line(s, text.into(), None)
            .await
            .unwrap();
    }

    pub async fn idle(&self, s: SessionId) {
        let t = self.thread(s);
        tokio::time::timeout(
            std::time::Duration::from_secs(20),
            self.wf.engine().wait_idle(t),
        )
        .await
        .expect("the turn did not end within 20 s");
    }

    /// Say something and wait for the turn it starts to end.
    pub async fn turn(&self, s: SessionId, text: &str) {
        self.say(s, text).await;
        self.idle(s).await;
    }

    /// Start a turn whose model call hangs until stopped; returns once it is in flight.
    pub async fn hanging_turn(&self, s: SessionId, text: &str) {
        let started = Arc::new(Notify::new());
        self.provider.push(Reply::Hang(started.clone()));
        self.say(s, text).await;
        tokio::time::timeout(std::time::Duration::from_secs(20), started.notified())
            .await
            .expect("the model call did not start");
    }

    pub fn set_slot(&self, s: SessionId, slot: serde_json::Value) {
        let t = self.thread(s);
        self.wf
            .store()
            .write(|tx| tx.set_workflow(t, Some(&slot)))
            .unwrap();
    }
}

fn rand_suffix() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}

/// The user-role texts of a request, in order.
pub fn user_texts(req: &ModelRequest) -> Vec<String> {
    req.messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// The tool results of a request, in order.
pub fn tool_results(req: &ModelRequest) -> Vec<String> {
    req.messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}
