//! Building the engine under test: a real SQLite file in a temp dir, the zero-latency model
//! and the no-op tool registered through the engine's extension point, read-only or effectful.

use crate::provider::{BenchProvider, NOOP_TOOL, TASK_PREFIX};
use async_trait::async_trait;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use tempfile::TempDir;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{SystemClock, ThreadId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_engine::models::FixedModel;
use troupe_engine::{Engine, EngineConfig};
use troupe_llm::{RetryPolicy, ToolSpec};
use troupe_store::{Durability, NewThread, OpenOptions, Store};

struct Noop;

#[async_trait]
impl ToolHandler for Noop {
    async fn call(&self, _ctx: &ToolCallContext, _arguments: &str) -> ToolReply {
        ToolReply::ok("ok")
    }
}

/// How the no-op tool is registered, which decides what the kernel does around each call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// No side effect: the call skips the guards and the effect ledger.
    ReadOnly,
    /// Every call passes the guards and the effect ledger (a start record before the call,
    /// its outcome after), like a built-in tool that changes something.
    Effectful,
}

impl Tool {
    pub const NAMES: [&'static str; 2] = ["readonly", "effectful"];

    pub fn as_str(self) -> &'static str {
        match self {
            Tool::ReadOnly => "readonly",
            Tool::Effectful => "effectful",
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Tool {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "readonly" => Ok(Tool::ReadOnly),
            "effectful" => Ok(Tool::Effectful),
            other => Err(format!("expected readonly or effectful, not {other:?}")),
        }
    }
}

/// The no-op tool's registration: the one place that says what `tool` means to the kernel.
fn noop_registration(tool: Tool) -> ToolRegistration {
    ToolRegistration {
        owner: "bench".into(),
        spec: ToolSpec {
            name: NOOP_TOOL.into(),
            description: "Does nothing and answers ok.".into(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
        },
        effectful: tool == Tool::Effectful,
        read_only: tool == Tool::ReadOnly,
        available: Arc::new(|_| true),
        handler: Arc::new(Noop),
    }
}

pub struct Bench {
    pub engine: Engine,
    /// Every node of the run, `engine` first: more than one with `--nodes` on PostgreSQL, each
    /// an engine with its own store (connections, writer, tail) on the one database.
    pub nodes: Vec<Engine>,
    pub provider: Arc<BenchProvider>,
    pub dir: TempDir,
    pub workspace: PathBuf,
}

/// The PostgreSQL server runs use (`--database`), set once before any `build`.
static DATABASE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// How many nodes share the database (`--nodes`, PostgreSQL only).
static NODES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

pub fn use_database(server: Option<String>, nodes: usize) {
    let _ = DATABASE.set(server);
    let _ = NODES.set(nodes);
}

/// `sqlite` or `postgres`, for the report lines.
pub fn backend() -> &'static str {
    match DATABASE.get() {
        Some(Some(_)) => "postgres",
        _ => "sqlite",
    }
}

pub fn build(steps: usize, timed_threads: usize, durability: Durability, tool: Tool) -> Bench {
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).expect("workspace dir");
    let options = OpenOptions { durability };
    let stores: Vec<Store> = match DATABASE.get().cloned().flatten() {
        Some(server) => {
            let url = troupe_store::testing::fresh_postgres_database(&server)
                .expect("a fresh bench database on the PostgreSQL server");
            (0..NODES.get().copied().unwrap_or(1).max(1))
                .map(|_| Store::open_url(&url, Arc::new(SystemClock), options).expect("store"))
                .collect()
        }
        None => vec![
            Store::open_with(dir.path().join("troupe.db"), Arc::new(SystemClock), options)
                .expect("store"),
        ],
    };
    let provider = Arc::new(BenchProvider::new(steps, timed_threads));
    let models = Arc::new(FixedModel {
        provider: provider.clone(),
        retry: RetryPolicy::none(),
    });
    let nodes: Vec<Engine> = stores
        .into_iter()
        .enumerate()
        .map(|(i, store)| {
            let config = EngineConfig {
                boot_id: format!("bench-{}-{i}", std::process::id()),
                ..EngineConfig::default()
            };
            Engine::builder(store, models.clone())
                .config(config)
                .tool(noop_registration(tool))
                .expect("register the no-op tool")
                .build()
        })
        .collect();
    Bench {
        engine: nodes[0].clone(),
        nodes,
        provider,
        dir,
        workspace,
    }
}

impl Bench {
    pub fn create_thread(&self, index: usize) -> ThreadId {
        self.engine
            .create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: format!("bench {index}"),
                agent: AgentBinding::new("bench", "You are a benchmark agent."),
                workspace: self.workspace.display().to_string(),
                interaction: Interaction::Interactive,
            })
            .expect("create thread")
            .id
    }

    pub fn task_text(index: usize) -> String {
        format!("{TASK_PREFIX}{index}")
    }

    /// Bytes of the database file and its WAL.
    pub fn db_bytes(&self) -> u64 {
        let db = self.dir.path().join("troupe.db");
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        size(&db) + size(&self.dir.path().join("troupe.db-wal"))
    }
}
