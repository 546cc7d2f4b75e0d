//! An engine with the MCP tool source on a real SQLite file, a model that answers from a queue
//! and records every request, and the in-repo test server as a real stdio child.
#![allow(dead_code)]

use async_trait::async_trait;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempfile::TempDir;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use troupe_core::inbox::Delivery;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{ManualClock, RunId, ThreadId};
use troupe_engine::models::FixedModel;
use troupe_engine::{Engine, EngineBuilder, EngineConfig};
use troupe_llm::{
    FinishReason, LlmError, ModelRequest, ModelResponse, Provider, RetryPolicy, StreamEvent,
    ToolCall, Usage,
};
use troupe_mcp::{Mcp, ServerDef};
use troupe_store::NewThread;

/// The test server the examples build (`cargo test -p troupe-mcp` builds examples first).
pub fn test_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join("examples").join("mcp_test_server");
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p troupe-mcp --examples`",
        path.display()
    );
    path
}

pub enum Reply {
    Text(String),
    Calls(Vec<(String, Value)>),
}

pub fn text(t: &str) -> Reply {
    Reply::Text(t.into())
}

pub fn calls(list: &[(&str, Value)]) -> Reply {
    Reply::Calls(
        list.iter()
            .map(|(n, a)| (n.to_string(), a.clone()))
            .collect(),
    )
}

#[derive(Default)]
pub struct Queue {
    replies: Mutex<VecDeque<Reply>>,
    pub requests: Mutex<Vec<ModelRequest>>,
}

impl Queue {
    pub fn push(&self, r: Reply) {
        self.replies.lock().unwrap().push_back(r);
    }
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
    pub fn last(&self) -> ModelRequest {
        self.requests.lock().unwrap().last().cloned().unwrap()
    }
}

#[async_trait]
impl Provider for Queue {
    fn endpoint(&self) -> &str {
        "test:queue"
    }
    fn model(&self) -> &str {
        "queue-model"
    }
    async fn complete_once(
        &self,
        req: &ModelRequest,
        _events: &UnboundedSender<StreamEvent>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, LlmError> {
        let n = {
            let mut r = self.requests.lock().unwrap();
            r.push(req.clone());
            r.len()
        };
        let (text, tool_calls) = match self.replies.lock().unwrap().pop_front() {
            None => ("done".to_string(), vec![]),
            Some(Reply::Text(t)) => (t, vec![]),
            Some(Reply::Calls(list)) => (
                String::new(),
                list.into_iter()
                    .enumerate()
                    .map(|(i, (name, args))| ToolCall {
                        id: format!("call_{n}_{i}"),
                        name,
                        arguments: args.to_string(),
                    })
                    .collect(),
            ),
        };
        let finish = if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        Ok(ModelResponse {
            text,
            tool_calls,
            usage: Usage {
                input_tokens: 10,
                cached_input_tokens: 0,
                output_tokens: 5,
            },
            finish,
        })
    }
}

pub struct World {
    pub engine: Engine,
    pub mcp: Mcp,
    pub model: Arc<Queue>,
    pub dir: TempDir,
    pub workspace: PathBuf,
    /// The test server's notes (`write_note`) and events (`slow`) files.
    pub notes: PathBuf,
    pub events: PathBuf,
    pub clock: ManualClock,
}

pub fn world(extend: impl FnOnce(EngineBuilder) -> EngineBuilder) -> World {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let clock = ManualClock::new(1_700_000_000_000);
    let store = troupe_store::testing::open_in(dir.path(), Arc::new(clock.clone()));
    let model = Arc::new(Queue::default());
    let mcp = Mcp::new(store.clone(), dir.path().to_path_buf());
    let builder = Engine::builder(
        store,
        Arc::new(FixedModel {
            provider: model.clone(),
            retry: RetryPolicy::none(),
        }),
    )
    .config(EngineConfig {
        kill_grace: Duration::from_millis(500),
        boot_id: "test-boot".into(),
        ..Default::default()
    })
    .tool_source(mcp.tool_source())
    .context(mcp.context());
    let engine = extend(builder).build();
    World {
        engine,
        mcp,
        model,
        notes: dir.path().join("notes.txt"),
        events: dir.path().join("events.txt"),
        clock,
        workspace,
        dir,
    }
}

impl World {
    /// A definition of the test server as `name`, with the notes and events files set.
    pub fn server(&self, name: &str, extra: Value) -> ServerDef {
        let mut def = json!({
            "name": name,
            "command": test_server().display().to_string(),
            "env": {
                "MCP_TEST_NOTES": self.notes.display().to_string(),
                "MCP_TEST_EVENTS": self.events.display().to_string(),
            }
        });
        for (k, v) in extra.as_object().unwrap() {
            def[k] = v.clone();
        }
        ServerDef::from_json(&def).unwrap()
    }

    pub async fn add_ready(&self, def: ServerDef) {
        let name = def.name.clone();
        self.mcp.add(def).unwrap();
        self.mcp
            .wait_ready(&name, Duration::from_secs(20))
            .await
            .unwrap();
    }

    pub fn thread(&self, bot: &str) -> ThreadId {
        self.engine
            .create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: "mcp".into(),
                agent: AgentBinding::new(bot, "You are a test Bot."),
                workspace: self.workspace.display().to_string(),
                interaction: Interaction::Interactive,
            })
            .unwrap()
            .id
    }

    /// Deliver a task and wait until the thread is idle again.
    pub async fn turn(&self, t: ThreadId, text: &str) -> RunId {
        self.engine
            .deliver(t, Delivery::user_task(text))
            .await
            .unwrap();
        self.engine.wait_idle(t).await;
        self.last_run(t)
    }

    pub fn last_run(&self, t: ThreadId) -> RunId {
        self.engine
            .store()
            .read(|tx| tx.runs_for_thread(t, 1))
            .unwrap()
            .remove(0)
            .id
    }

    /// The text of a request's last message (the tool result the model reads).
    pub fn last_message(req: &ModelRequest) -> String {
        format!("{:?}", req.messages.last().unwrap())
    }
}

/// Wait until `path` holds a line containing `needle` (the test server writes it), at most 20 s.
pub async fn wait_for_line(path: &Path, needle: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && s.lines().any(|l| l.contains(needle))
        {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no line with '{needle}' in {} in 20 s",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
