//! Building the engine under test: a real SQLite file in a temp dir, the zero-latency model
//! and the no-op tool registered through the engine's extension point.

use crate::provider::{BenchProvider, NOOP_TOOL, TASK_PREFIX};
use async_trait::async_trait;
use std::path::{Path, PathBuf};
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

pub struct Bench {
    pub engine: Engine,
    pub provider: Arc<BenchProvider>,
    pub dir: TempDir,
    pub workspace: PathBuf,
}

pub fn build(steps: usize, timed_threads: usize, durability: Durability) -> Bench {
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).expect("workspace dir");
    let store = Store::open_with(
        dir.path().join("troupe.db"),
        Arc::new(SystemClock),
        OpenOptions { durability },
    )
    .expect("store");
    let provider = Arc::new(BenchProvider::new(steps, timed_threads));
    let models = Arc::new(FixedModel {
        provider: provider.clone(),
        retry: RetryPolicy::none(),
    });
    let noop = ToolRegistration {
        owner: "bench".into(),
        spec: ToolSpec {
            name: NOOP_TOOL.into(),
            description: "Does nothing and answers ok.".into(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
        },
        effectful: false,
        read_only: true,
        available: Arc::new(|_| true),
        handler: Arc::new(Noop),
    };
    let config = EngineConfig {
        boot_id: format!("bench-{}", std::process::id()),
        ..EngineConfig::default()
    };
    let engine = Engine::builder(store, models)
        .config(config)
        .tool(noop)
        .expect("register the no-op tool")
        .build();
    Bench {
        engine,
        provider,
        dir,
        workspace,
    }
}

impl Bench {
    pub fn create_thread(&self, index: usize) -> ThreadId {
        self.engine
            .create_thread(&NewThread {
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
