//! The harness of the child-task scenarios: a model that answers each thread by a marker in
//! its first user text and can hold a child in flight, a policy that shows when the gate opens,
//! and a world on a real SQLite file.
#![allow(dead_code)]

use async_trait::async_trait;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;
use troupe_collab::{Collab, NewBotRequest, NewSessionRequest, SessionProjector, SharedRoles};
use troupe_core::inbox::Delivery;
use troupe_core::message::Origin;
use troupe_core::{MessageId, RunId, SessionId, ThreadId};
use troupe_engine::extension::{ContinuationPolicy, Gate, Proposal, ToolCallContext};
use troupe_engine::models::FixedModel;
use troupe_engine::{Engine, EngineConfig, RoleTable};
use troupe_llm::{
    ChatMessage, FinishReason, LlmError, ModelRequest, ModelResponse, Provider, RetryPolicy,
    StreamEvent, ToolCall, Usage,
};
use troupe_store::{TaskId, TaskRecord, TaskStatus};
use troupe_workflows::Workflows;
use troupe_workflows::lightloop::host::LoopHost;

pub enum Step {
    Text(String),
    Tools(Vec<ToolCall>),
    /// A model failure that is not retried.
    Fail(String),
    /// Stay in flight until the test releases this marker, then answer.
    Hold(String),
}

pub fn text(t: &str) -> Step {
    Step::Text(t.into())
}

pub fn task_call(id: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "task".into(),
        arguments: args.to_string(),
    }
}

/// Answers a request by the longest route marker found in the thread's first user text.
#[derive(Default)]
pub struct Routed {
    routes: Mutex<Vec<(String, VecDeque<Step>)>>,
    gates: Mutex<HashMap<String, Arc<Semaphore>>>,
    requests: Mutex<Vec<(String, ModelRequest)>>,
    in_flight: Mutex<Vec<String>>,
    ticks: Mutex<Option<watch::Sender<u64>>>,
}

impl Routed {
    pub fn new() -> Arc<Self> {
        let r = Routed::default();
        *r.ticks.lock().unwrap() = Some(watch::channel(0).0);
        Arc::new(r)
    }
    pub fn route(&self, marker: &str, steps: Vec<Step>) {
        self.routes
            .lock()
            .unwrap()
            .push((marker.into(), steps.into()));
    }
    pub fn gate(&self, marker: &str) -> Arc<Semaphore> {
        self.gates
            .lock()
            .unwrap()
            .entry(marker.into())
            .or_insert_with(|| Arc::new(Semaphore::new(0)))
            .clone()
    }
    pub fn release(&self, marker: &str) {
        self.gate(marker).add_permits(1);
    }
    pub fn tick(&self) {
        if let Some(t) = self.ticks.lock().unwrap().as_ref() {
            t.send_modify(|n| *n += 1);
        }
    }
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.ticks.lock().unwrap().as_ref().unwrap().subscribe()
    }
    /// Requests answered for a marker, in order.
    pub fn requests_for(&self, marker: &str) -> Vec<ModelRequest> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == marker)
            .map(|(_, r)| r.clone())
            .collect()
    }
    pub fn calls(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
    pub fn holding(&self) -> Vec<String> {
        self.in_flight.lock().unwrap().clone()
    }
}

pub fn user_texts(req: &ModelRequest) -> Vec<String> {
    req.messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

pub fn response(text: String, tool_calls: Vec<ToolCall>) -> ModelResponse {
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
impl Provider for Routed {
    fn endpoint(&self) -> &str {
        "test:routed"
    }
    fn model(&self) -> &str {
        "routed-model"
    }
    async fn complete_once(
        &self,
        req: &ModelRequest,
        _events: &UnboundedSender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, LlmError> {
        let first = user_texts(req).into_iter().next().unwrap_or_default();
        let (marker, step) = {
            let mut routes = self.routes.lock().unwrap();
            // The longest marker wins: a child's prompt may quote its parent's marker.
            match routes
                .iter_mut()
                .filter(|(m, _)| first.contains(m.as_str()))
                .max_by_key(|(m, _)| m.len())
            {
                Some((m, steps)) => (m.clone(), steps.pop_front()),
                None => (String::new(), None),
            }
        };
        self.requests
            .lock()
            .unwrap()
            .push((marker.clone(), req.clone()));
        let out = match step {
            None => Ok(response("done".into(), vec![])),
            Some(Step::Text(t)) => Ok(response(t, vec![])),
            Some(Step::Tools(calls)) => Ok(response(String::new(), calls)),
            Some(Step::Fail(e)) => Err(LlmError::BadRequest {
                status: 400,
                endpoint: "test:routed".into(),
                model: "routed-model".into(),
                detail: e,
            }),
            Some(Step::Hold(answer)) => {
                let gate = self.gate(&marker);
                self.in_flight.lock().unwrap().push(marker.clone());
                self.tick();
                let got = tokio::select! {
                    p = gate.acquire() => { p.unwrap().forget(); true }
                    () = cancel.cancelled() => false,
                };
                self.in_flight.lock().unwrap().retain(|m| *m != marker);
                if got {
                    Ok(response(answer, vec![]))
                } else {
                    Err(LlmError::Cancelled)
                }
            }
        };
        self.tick();
        out
    }
}

/// A policy that proposes one nudge to a top-level thread once armed: it shows when the
/// shared gate lets continuation through.
#[derive(Default)]
pub struct Nudge {
    pub armed: AtomicBool,
    pub proposals: AtomicUsize,
}

impl ContinuationPolicy for Nudge {
    fn id(&self) -> &str {
        "test_nudge"
    }
    fn priority(&self) -> i32 {
        1
    }
    fn propose(&self, gate: &Gate<'_>) -> Result<Proposal, String> {
        if gate.thread.parent_id.is_some() || !self.armed.swap(false, Ordering::SeqCst) {
            return Ok(Proposal::None);
        }
        self.proposals.fetch_add(1, Ordering::SeqCst);
        Ok(Proposal::Inbox(
            Delivery::user_task("[nudge] keep going")
                .with_origin(Origin::Continuation("test_nudge".into())),
        ))
    }
}

pub struct W {
    pub wf: Workflows,
    pub model: Arc<Routed>,
    pub nudge: Arc<Nudge>,
    pub dir: Arc<tempfile::TempDir>,
}

pub fn world() -> W {
    world_on(Arc::new(tempfile::tempdir().unwrap()), "boot-a")
}

pub fn world_on(dir: Arc<tempfile::TempDir>, boot: &str) -> W {
    world_clocked(dir, boot, Arc::new(troupe_core::SystemClock))
}

/// A world whose store reads `clock` (a `ManualClock` moves deadlines without waiting).
pub fn world_clocked(
    dir: Arc<tempfile::TempDir>,
    boot: &str,
    clock: Arc<dyn troupe_core::Clock>,
) -> W {
    let store = troupe_store::testing::open_in(dir.path(), clock);
    let model = Routed::new();
    let nudge = Arc::new(Nudge::default());
    let builder = Engine::builder(
        store,
        Arc::new(FixedModel {
            provider: model.clone(),
            retry: RetryPolicy::none(),
        }),
    )
    .config(EngineConfig {
        kill_grace: Duration::from_millis(300),
        boot_id: boot.into(),
        ..EngineConfig::default()
    })
    .message_observer(Arc::new(SessionProjector::default()))
    .policy(nudge.clone());
    let engine = troupe_workflows::build_engine(builder).unwrap();
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let collab = Collab::new(engine, roles, dir.path().join("workspaces"));
    W {
        wf: Workflows::new(collab),
        model,
        nudge,
        dir,
    }
}

impl W {
    pub fn bot(&self, name: &str) {
        self.wf
            .collab()
            .create_bot(NewBotRequest {
                name: name.into(),
                persona: None,
                endpoint: None,
            })
            .unwrap();
    }

    /// A direct session with a lead Bot; returns the session and its thread.
    pub fn lead(&self) -> (SessionId, ThreadId) {
        self.bot("lead");
        let bot = self.wf.collab().bots().unwrap()[0].id;
        let s = self
            .wf
            .collab()
            .create_session(NewSessionRequest {
                workspace: None,
                kind: "direct".into(),
                bot_ids: vec![bot],
                title: None,
            })
            .unwrap()
            .session
            .id;
        (s, self.wf.collab().direct_thread(s).unwrap())
    }

    pub async fn say(&self, s: SessionId, line: &str) {
        self.wf
            .collab()
            .post_line(s, line.into(), None)
            .await
            .unwrap();
    }

    pub async fn idle(&self, t: ThreadId) {
        tokio::time::timeout(Duration::from_secs(20), self.wf.engine().wait_idle(t))
            .await
            .expect("the thread did not go idle within 20 s");
    }

    pub fn tasks(&self, parent: ThreadId) -> Vec<TaskRecord> {
        self.wf.tasks(None, Some(parent), 100).unwrap()
    }

    pub fn task(&self, id: TaskId) -> TaskRecord {
        self.wf.task(id).unwrap()
    }

    pub fn statuses(&self, parent: ThreadId) -> Vec<TaskStatus> {
        self.tasks(parent).iter().map(|t| t.status).collect()
    }

    /// Wait until `cond` holds, re-checking on every store event and model request.
    pub async fn until(&self, what: &str, cond: impl Fn() -> bool) {
        let mut events = self.wf.store().subscribe();
        let mut ticks = self.model.subscribe();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if cond() {
                return;
            }
            tokio::select! {
                _ = events.recv() => {}
                _ = ticks.changed() => {}
                () = tokio::time::sleep_until(deadline) => panic!("timed out waiting for {what}"),
            }
        }
    }

    /// The parent's steer items that carried task notices, as messages.
    pub fn notices(&self, parent: ThreadId) -> Vec<String> {
        self.wf
            .store()
            .read(|tx| tx.messages(parent, None, 1000))
            .unwrap()
            .into_iter()
            .filter(|m| matches!(&m.origin, Origin::Delegation(d) if d.starts_with("cortex:")))
            .map(|m| m.text())
            .collect()
    }

    pub fn host(&self) -> Arc<LoopHost> {
        let host = LoopHost::new();
        host.attach(self.wf.engine());
        host
    }
}

pub fn tool_ctx(w: &W, thread: ThreadId, call_id: &str) -> ToolCallContext {
    ToolCallContext {
        thread: w.wf.store().read(|tx| tx.thread(thread)).unwrap(),
        run_id: RunId(1),
        message_id: Some(MessageId(77)),
        call_id: call_id.into(),
        store: w.wf.store().clone(),
        cancel: CancellationToken::new(),
    }
}

pub async fn call_tool(w: &W, name: &str, ctx: &ToolCallContext, args: Value) -> (Value, bool) {
    let regs = troupe_workflows::cortex::tools::registrations(&w.host());
    let tool = regs.iter().find(|r| r.spec.name == name).unwrap();
    let out = tool.handler.call(ctx, &args.to_string()).await;
    (serde_json::from_str(&out.content).unwrap(), out.is_error)
}
