//! The model-facing tools: `task` hands a prompt to a named agent and returns at once (the
//! child runs in the background; its result arrives as a steer item), `task_output` reads a
//! task of one's own, waiting a while for one still working. Argument errors are repairable
//! and persist nothing.
//!
//! Depth: only threads without a parent may call them. A child waiting on its own children
//! could hold one of the eight slots while its children queue behind the caps — a deadlock —
//! and fan-out would grow without bound.

use crate::cortex::await_end::{WAIT_SECS, Waited, until_ended};
use crate::cortex::contract::{CONTRACT_DOC, OutputContract};
use crate::cortex::prepare::{ChildRequest, prepare_child, resume};
use crate::cortex::runtime::start_admitted;
use crate::cortex::texts;
use crate::lightloop::host::LoopHost;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::thread::{AgentBinding, Thread};
use troupe_engine::extension::{
    ToolCallContext, ToolHandler, ToolRegistration, ToolReply, no_reply_id,
};
use troupe_llm::ToolSpec;
use troupe_store::{Store, StoreError, TaskId, TaskRecord, TaskRole};

pub const OWNER: &str = "cortex";
pub const TASK: &str = "task";
pub const TASK_OUTPUT: &str = "task_output";

pub const MAX_PROMPT_BYTES: usize = 64 * 1024;
pub const MAX_DESCRIPTION_CHARS: usize = 200;

const TASK_DOC: &str = r#"task {"agent": "<agent name>", "prompt": "<what to do>", "description"?: "<a few words>", "output"?: {"kind":"summary"} | {"kind":"final"} | {"kind":"structured","schema":{<JSON Schema>}}} — or task {"resume": "task_N"} to continue an interrupted task"#;

fn reply(v: Value, is_error: bool) -> ToolReply {
    ToolReply {
        content: v.to_string(),
        is_error,
        ends_turn: false,
        ends_run: None,
        outcome_unknown: false,
    }
}

/// A repairable argument error: nothing was persisted.
fn invalid(message: impl Into<String>) -> ToolReply {
    reply(
        json!({
            "ok": false,
            "code": "invalid_arguments",
            "retryable": true,
            "persisted": false,
            "message": message.into(),
            "contract": TASK_DOC,
        }),
        true,
    )
}

fn refused(code: &str, message: impl Into<String>) -> ToolReply {
    reply(
        json!({"ok": false, "code": code, "retryable": false, "persisted": false, "message": message.into()}),
        true,
    )
}

fn store_failure(e: StoreError) -> ToolReply {
    match e {
        StoreError::NotFound { what, id } => refused("not_found", format!("{what} {id} not found")),
        StoreError::Conflict(m) => refused("conflict", m),
        other => refused("internal_error", other.to_string()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    output: Option<Value>,
    #[serde(default)]
    resume: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputArgs {
    task_id: String,
}

fn task_id(raw: &str) -> Result<TaskId, ToolReply> {
    raw.parse::<TaskId>()
        .map_err(|m| invalid(format!("task_id: {m}")))
}

/// A Bot by name (case-insensitive); an unknown name lists the known ones.
fn resolve_agent(store: &Store, name: &str) -> Result<AgentBinding, ToolReply> {
    let bots = store.read(|tx| tx.bots(false)).map_err(store_failure)?;
    if let Some(bot) = bots
        .iter()
        .find(|b| b.name.eq_ignore_ascii_case(name.trim()))
    {
        return Ok(troupe_collab::bot_binding(bot));
    }
    let known: Vec<&str> = bots.iter().map(|b| b.name.as_str()).collect();
    Err(invalid(format!(
        "agent: no agent named '{}' (known agents: {})",
        name.trim(),
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    )))
}

/// The task's own, or not found (another thread's task is not visible).
fn own_task(store: &Store, me: troupe_core::ThreadId, id: TaskId) -> Result<TaskRecord, ToolReply> {
    let t = store.read(|tx| tx.find_task(id)).map_err(store_failure)?;
    match t {
        Some(t) if t.parent_thread_id == me => Ok(t),
        _ => Err(refused(
            "not_found",
            format!("task {id} not found among the tasks you started"),
        )),
    }
}

fn started(t: &TaskRecord, code: &str) -> ToolReply {
    let mut v = texts::view(t);
    v["ok"] = json!(true);
    v["code"] = json!(code);
    v["persisted"] = json!(true);
    v["note"] = json!(
        "The task runs in the background. Its result arrives in your conversation as a message when it ends. To have it before you go on, call task_output (it waits for the task to end); otherwise continue with other work or end your turn."
    );
    reply(v, false)
}

struct TaskTool {
    host: Arc<LoopHost>,
}

impl TaskTool {
    fn run(&self, ctx: &ToolCallContext, raw: &str) -> Result<ToolReply, ToolReply> {
        if ctx.thread.parent_id.is_some() {
            return Err(refused(
                "depth_exceeded",
                "child threads cannot start tasks of their own; do the work yourself or report back",
            ));
        }
        let Some(engine) = self.host.engine() else {
            return Err(refused(
                "internal_error",
                "the task runtime is not attached",
            ));
        };
        let store = &ctx.store;
        let a: TaskArgs = serde_json::from_str(raw).map_err(|e| invalid(e.to_string()))?;
        // A blank `resume` beside a new task's fields is no resume (a small model sends
        // `"resume": ""` with every new task).
        if let Some(r) = a.resume.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
            if a.agent.is_some()
                || a.prompt.is_some()
                || a.description.is_some()
                || a.output.is_some()
            {
                return Err(invalid(
                    "resume: give it alone; the resumed task keeps its agent, prompt and output contract",
                ));
            }
            let id = task_id(r).map_err(|_| {
                invalid(format!("resume: '{r}' is not a task id (expected task_N)"))
            })?;
            own_task(store, ctx.thread.id, id)?;
            let t = store.write(|tx| resume(tx, id)).map_err(store_failure)?;
            start_admitted(engine);
            let t = store.read(|tx| tx.task(t.id)).map_err(store_failure)?;
            return Ok(started(&t, "task_resumed"));
        }
        let agent = match a.agent.as_deref().map(str::trim) {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => {
                return Err(invalid(
                    "agent: required, the name of the agent to hand the task to",
                ));
            }
        };
        // A task put only in its description is asked in those words (the local Qwen sent a
        // task with a description and no prompt fourteen times, refused each time).
        let described = a.description.as_deref().map(str::trim).unwrap_or_default();
        let prompt = match a.prompt.as_deref().map(str::trim) {
            Some(p) if !p.is_empty() => p.to_string(),
            _ if !described.is_empty() => described.to_string(),
            _ => {
                return Err(invalid(
                    "prompt: required and non-empty — what the agent should do (it does not \
                     see your conversation)",
                ));
            }
        };
        if prompt.len() > MAX_PROMPT_BYTES {
            return Err(invalid(format!("prompt: at most {MAX_PROMPT_BYTES} bytes")));
        }
        let description = match a.description.as_deref().map(str::trim) {
            Some(d) if d.chars().count() > MAX_DESCRIPTION_CHARS => {
                return Err(invalid(format!(
                    "description: at most {MAX_DESCRIPTION_CHARS} characters"
                )));
            }
            Some(d) if !d.is_empty() => d.to_string(),
            _ => prompt
                .lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect(),
        };
        let output = OutputContract::parse(a.output.as_ref())
            .map_err(|e| invalid(format!("{e}; the output contract is {CONTRACT_DOC}")))?;
        let binding = resolve_agent(store, &agent)?;
        let message_id = ctx.message_id.ok_or_else(|| no_reply_id(TASK))?;
        let req = ChildRequest {
            parent: ctx.thread.id,
            parent_message: Some(message_id),
            agent: binding,
            prompt,
            description,
            output,
            role: TaskRole::Task,
            notify_parent: true,
            // A retried call (same message, same call id) finds the task it created.
            key: format!("tool:{}:{}", message_id.0, ctx.call_id),
        };
        let prepared = store
            .write(|tx| prepare_child(tx, &req))
            .map_err(store_failure)?;
        start_admitted(engine);
        let t = store
            .read(|tx| tx.task(prepared.task.id))
            .map_err(store_failure)?;
        let code = if prepared.created {
            "task_created"
        } else {
            "task_exists"
        };
        Ok(started(&t, code))
    }
}

#[async_trait]
impl ToolHandler for TaskTool {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        self.run(ctx, raw).unwrap_or_else(|r| r)
    }
}

struct TaskOutputTool;

#[async_trait]
impl ToolHandler for TaskOutputTool {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        self.run(ctx, raw).await.unwrap_or_else(|r| r)
    }
}

impl TaskOutputTool {
    async fn run(&self, ctx: &ToolCallContext, raw: &str) -> Result<ToolReply, ToolReply> {
        let a: OutputArgs = serde_json::from_str(raw).map_err(|e| invalid(e.to_string()))?;
        let t = own_task(&ctx.store, ctx.thread.id, task_id(&a.task_id)?)?;
        let (t, waited) = if t.status.is_active() {
            until_ended(
                &ctx.store,
                ctx.thread.id,
                t.id,
                WAIT_SECS * 1000,
                &ctx.cancel,
            )
            .await
            .map_err(store_failure)?
        } else {
            (t, Waited::Ended)
        };
        let mut v = texts::view(&t);
        v["ok"] = json!(true);
        let note = match waited {
            Waited::Ended => None,
            Waited::TimeUp => Some(format!(
                "Still {} after waiting {WAIT_SECS} s. Its result arrives in your conversation as a \
                 message when it ends: end your turn to wait for it without asking again, or \
                 go on with other work.",
                t.status.as_str()
            )),
            Waited::Message => Some(
                "A message for you is waiting (it stopped the wait); the task is still working. \
                 Read the message; the task's result arrives as a message when it ends."
                    .to_string(),
            ),
            Waited::Stopped => Some("The wait was cut short: your turn is stopping.".into()),
        };
        if let Some(n) = note {
            v["note"] = json!(n);
        }
        Ok(reply(v, false))
    }
}

/// Only top-level threads delegate (see the module note on depth).
fn top_level(t: &Thread) -> bool {
    t.parent_id.is_none()
}

pub fn registrations(host: &Arc<LoopHost>) -> Vec<ToolRegistration> {
    let output_schema = json!({
        "type": "object",
        "description": format!("What comes back: {CONTRACT_DOC}. summary: the first paragraph of the final reply; final: the whole final reply; structured: the final reply as JSON valid against schema (up to 3 repair turns)."),
        "properties": {
            "kind": {"type": "string", "enum": ["summary", "final", "structured"]},
            "schema": {"type": "object", "description": "A JSON Schema (structured only)."}
        },
        "required": ["kind"]
    });
    vec![
        ToolRegistration {
            owner: OWNER.into(),
            spec: ToolSpec {
                name: TASK.into(),
                description: "Hand a task to another agent, who works on it in a child session with its own tools. Returns the task id at once; the result arrives in your conversation as a message when the child ends. At most 8 tasks run at once (more wait in a queue). With resume, continue a task that was interrupted.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "agent": {"type": "string", "description": "The name of the agent (Bot) to hand the task to."},
                        "prompt": {"type": "string", "description": "Everything the agent needs to know: it does not see your conversation. Without it, the description is the prompt."},
                        "description": {"type": "string", "description": "A few words naming the task."},
                        "output": output_schema,
                        "resume": {"type": "string", "description": "task_N of an interrupted task to continue (give it alone)."}
                    },
                    "additionalProperties": false
                }),
            },
            effectful: false,
            read_only: false,
            available: Arc::new(top_level),
            handler: Arc::new(TaskTool { host: host.clone() }),
        },
        ToolRegistration {
            owner: OWNER.into(),
            spec: ToolSpec {
                name: TASK_OUTPUT.into(),
                description: format!("Read one of your tasks: its status, and its output or error once it has ended. A task still working is waited for first, up to {WAIT_SECS} s; the wait also ends when a message comes for you."),
                parameters: json!({
                    "type": "object",
                    "properties": {"task_id": {"type": "string", "description": "The task's id (task_N)."}},
                    "required": ["task_id"],
                    "additionalProperties": false
                }),
            },
            effectful: false,
            // It only reads, but it may wait a minute: the reply asking for it is committed
            // first (a read-only tool would run before that commit), so the call shows at once.
            read_only: false,
            available: Arc::new(top_level),
            handler: Arc::new(TaskOutputTool),
        },
    ]
}
