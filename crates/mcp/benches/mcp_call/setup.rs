//! The engine under test: a real SQLite file in a temp dir, the zero-latency model, three
//! no-op tools registered through the extension point, and the in-repo test server reached
//! through `Mcp` over stdio, all in one engine so every variant shares its store and runtime.

use crate::model::{BenchModel, TASK_PREFIX};
use async_trait::async_trait;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;
use troupe_core::SystemClock;
use troupe_core::ThreadId;
use troupe_core::run::RunLimits;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_engine::models::FixedModel;
use troupe_engine::{Engine, EngineConfig};
use troupe_llm::{RetryPolicy, ToolSpec};
use troupe_mcp::{Mcp, ServerDef};
use troupe_store::{Durability, NewThread, OpenOptions, Store};

/// The name the test server has in this bench, so its tools are `srv__echo`, `srv__write_note`.
pub const SERVER: &str = "srv";

/// What a step calls. The no-op variants are the baselines: each MCP variant is set against the
/// no-op registered the way the MCP tool source registers that tool, so the difference is what
/// going to the server costs and not a different path through the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `effectful: false, read_only: true`: the kernel bench's read-only tool, run before the
    /// reply asking for it is committed (the cheapest built-in path).
    NoopReadOnly,
    /// `effectful: false, read_only: false`: registered as the MCP source registers a tool the
    /// server marks `readOnlyHint: true` (no ledger, but the reply is committed before the call,
    /// because the MCP call writes its record).
    NoopNoEffect,
    /// `effectful: true`: through the guards and the effect ledger, as an MCP tool without
    /// `readOnlyHint` is.
    NoopEffectful,
    /// The test server's `echo` (`readOnlyHint: true`).
    McpEcho,
    /// The test server's `write_note` (no `readOnlyHint`: an effect; appends a line to a file).
    McpWriteNote,
}

impl Variant {
    pub const ALL: [Variant; 5] = [
        Variant::NoopReadOnly,
        Variant::NoopNoEffect,
        Variant::NoopEffectful,
        Variant::McpEcho,
        Variant::McpWriteNote,
    ];

    /// The name in the report and in the task text.
    pub fn label(self) -> &'static str {
        match self {
            Variant::NoopReadOnly => "noop_readonly",
            Variant::NoopNoEffect => "noop_no_effect",
            Variant::NoopEffectful => "noop_effectful",
            Variant::McpEcho => "mcp_echo",
            Variant::McpWriteNote => "mcp_write_note",
        }
    }

    pub fn from_label(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.label() == s)
    }

    /// The tool name the model calls.
    pub fn tool(self) -> &'static str {
        match self {
            Variant::NoopReadOnly => "noop_readonly",
            Variant::NoopNoEffect => "noop_no_effect",
            Variant::NoopEffectful => "noop_effectful",
            Variant::McpEcho => "srv__echo",
            Variant::McpWriteNote => "srv__write_note",
        }
    }

    pub fn is_mcp(self) -> bool {
        matches!(self, Variant::McpEcho | Variant::McpWriteNote)
    }

    pub fn effectful(self) -> bool {
        matches!(self, Variant::NoopEffectful | Variant::McpWriteNote)
    }

    /// The no-op that takes the same path through the kernel as this MCP variant.
    pub fn baseline(self) -> Option<Variant> {
        match self {
            Variant::McpEcho => Some(Variant::NoopNoEffect),
            Variant::McpWriteNote => Some(Variant::NoopEffectful),
            _ => None,
        }
    }

    /// The arguments of step `step`'s call.
    pub fn arguments(self, step: usize) -> String {
        match self {
            Variant::McpEcho | Variant::McpWriteNote => json!({ "text": format!("step {step}") }),
            _ => json!({}),
        }
        .to_string()
    }

    /// What the model must read back from step `step`'s call.
    pub fn expected_result(self, step: usize) -> String {
        match self {
            Variant::McpEcho => format!("step {step}"),
            Variant::McpWriteNote => "noted".into(),
            _ => "ok".into(),
        }
    }
}

struct Noop;

#[async_trait]
impl ToolHandler for Noop {
    async fn call(&self, _ctx: &ToolCallContext, _arguments: &str) -> ToolReply {
        ToolReply::ok("ok")
    }
}

fn noop_registration(v: Variant) -> ToolRegistration {
    ToolRegistration {
        owner: "bench".into(),
        spec: ToolSpec {
            name: v.tool().into(),
            description: "Does nothing and answers ok.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
        effectful: v.effectful(),
        read_only: v == Variant::NoopReadOnly,
        available: Arc::new(|_| true),
        handler: Arc::new(Noop),
    }
}

/// The test server next to this binary: `target/<profile>/examples/mcp_test_server` (benches
/// build in the release profile, so `target/release/...`).
pub fn test_server() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| format!("{} has no target/<profile> above it", exe.display()))?;
    let path = profile_dir.join("examples").join("mcp_test_server");
    if path.exists() {
        return Ok(path);
    }
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    Err(format!(
        "the MCP test server {} is missing: build it with `cargo build{} -p troupe-mcp --examples` \
         (cargo bench builds only the bench, in the release profile, and this bench looks in {})",
        path.display(),
        if release { " --release" } else { "" },
        profile_dir.join("examples").display()
    ))
}

pub struct Bench {
    pub engine: Engine,
    pub mcp: Mcp,
    pub model: Arc<BenchModel>,
    /// Holds the database and the notes file; removed when the bench ends.
    _dir: TempDir,
    pub workspace: PathBuf,
    /// The file `write_note` appends to.
    pub notes: PathBuf,
    pub server: PathBuf,
}

/// Build the engine and start the test server; ready when this returns.
pub async fn build(steps: usize, durability: Durability) -> Result<Bench, String> {
    let server = test_server()?;
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).map_err(|e| format!("workspace dir: {e}"))?;
    let notes = dir.path().join("notes.txt");
    let store = Store::open_with(
        dir.path().join("troupe.db"),
        Arc::new(SystemClock),
        OpenOptions { durability },
    )
    .map_err(|e| format!("store: {e}"))?;
    let model = Arc::new(BenchModel::default());
    let mcp = Mcp::new(store.clone(), dir.path().to_path_buf());
    let config = EngineConfig {
        boot_id: format!("mcp-bench-{}", std::process::id()),
        limits: RunLimits {
            // One task is `steps` tool calls and an answer; leave room past the default 400.
            max_hops: (steps as u32 + 10).max(RunLimits::default().max_hops),
            ..RunLimits::default()
        },
        ..EngineConfig::default()
    };
    let mut builder = Engine::builder(
        store,
        Arc::new(FixedModel {
            provider: model.clone(),
            retry: RetryPolicy::none(),
        }),
    )
    .config(config)
    .tool_source(mcp.tool_source())
    .context(mcp.context());
    for v in Variant::ALL.into_iter().filter(|v| !v.is_mcp()) {
        builder = builder
            .tool(noop_registration(v))
            .map_err(|e| format!("register {}: {e}", v.tool()))?;
    }
    let engine = builder.build();
    let def = ServerDef::from_json(&json!({
        "name": SERVER,
        "command": server.display().to_string(),
        "env": { "MCP_TEST_NOTES": notes.display().to_string() },
    }))
    .map_err(|e| format!("the test server's definition: {e}"))?;
    mcp.add(def)
        .map_err(|e| format!("add the test server: {e}"))?;
    let status = mcp.wait_ready(SERVER, Duration::from_secs(20)).await?;
    for v in Variant::ALL.into_iter().filter(|v| v.is_mcp()) {
        let Some(t) = status.tools.iter().find(|t| t.name == v.tool()) else {
            return Err(format!("the test server offers no {}", v.tool()));
        };
        if t.read_only == v.effectful() {
            return Err(format!(
                "{} is read_only={}, the bench expects the opposite",
                v.tool(),
                t.read_only
            ));
        }
    }
    Ok(Bench {
        engine,
        mcp,
        model,
        _dir: dir,
        workspace,
        notes,
        server,
    })
}

impl Bench {
    pub fn create_thread(&self, v: Variant, index: usize) -> Result<ThreadId, String> {
        self.engine
            .create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: format!("bench {} {index}", v.label()),
                agent: AgentBinding::new("bench", "You are a benchmark agent."),
                workspace: self.workspace.display().to_string(),
                interaction: Interaction::Interactive,
            })
            .map(|t| t.id)
            .map_err(|e| format!("create thread: {e}"))
    }

    /// The task the model reads: which variant, and how many steps.
    pub fn task_text(v: Variant, steps: usize) -> String {
        format!("{TASK_PREFIX}{} {steps}", v.label())
    }
}
