//! The five Boss tools, offered under a Boss slot (`boss_report` to workers only). Each goes
//! through BossService, so a refusal has the routes' code and writes nothing.

use super::service::{AssignRequest, BossService, CancelRequest, ReportRequest, SpawnRequest};
use crate::WorkflowError;
use crate::lightloop::host::LoopHost;
use crate::slot::WorkflowSlot;
use crate::tool_results::reply;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::SessionId;
use troupe_core::boss::{BossRole, ReportStatus, render_tree};
use troupe_core::thread::Thread;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;

pub const OWNER: &str = "workflows.boss";

#[derive(Copy, Clone)]
enum Op {
    Spawn,
    Assign,
    Report,
    Cancel,
    Status,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Spawn => "boss_spawn",
            Op::Assign => "boss_assign",
            Op::Report => "boss_report",
            Op::Cancel => "boss_cancel",
            Op::Status => "boss_status",
        }
    }
}

fn role_of(thread: &Thread) -> Option<BossRole> {
    WorkflowSlot::of(thread.workflow.as_ref()).and_then(|s| s.boss().map(|b| b.role))
}

fn error(e: WorkflowError) -> ToolReply {
    let (code, message) = match &e {
        WorkflowError::Conflict { code, message } => (*code, message.clone()),
        WorkflowError::NotFound { .. } => ("not_found", e.to_string()),
        WorkflowError::Invalid(m) => (m.split(':').next().unwrap_or("invalid"), m.clone()),
        _ => ("error", e.to_string()),
    };
    reply(
        json!({"ok": false, "code": code, "message": message, "written": false}),
        true,
        false,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AssignArgs {
    session_id: Value,
    task_id: String,
    task: String,
    #[serde(default)]
    context: Option<String>,
    #[serde(default)]
    acceptance: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelArgs {
    session_id: Value,
    #[serde(default)]
    task_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportArgs {
    summary: String,
    #[serde(default)]
    status: Option<ReportStatus>,
    #[serde(default)]
    refs: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusArgs {
    #[serde(default)]
    depth: Option<usize>,
}

fn session_arg(v: &Value) -> Result<SessionId, String> {
    match v {
        Value::Number(n) => n.as_i64().map(SessionId),
        Value::String(s) => s.parse::<SessionId>().ok(),
        _ => None,
    }
    .ok_or_else(|| format!("session_id: '{v}' is not a session id (a number or \"ses_N\")"))
}

fn invalid(e: impl std::fmt::Display, contract: &str) -> ToolReply {
    crate::tool_results::invalid(e.to_string(), contract)
}

struct BossTool {
    op: Op,
    host: Arc<LoopHost>,
}

#[async_trait]
impl ToolHandler for BossTool {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let Some(engine) = self.host.engine() else {
            return ToolReply::error("the workflow layer is not attached to the engine");
        };
        let boss = BossService { engine };
        let caller = match boss.session_of(ctx.thread.id) {
            Ok(s) => s,
            Err(e) => return error(e),
        };
        let contract = contract(self.op);
        let out: Result<Value, WorkflowError> = match self.op {
            Op::Spawn => match serde_json::from_str::<SpawnRequest>(raw) {
                Err(e) => return invalid(e, contract),
                Ok(req) => boss
                    .spawn(caller, req)
                    .await
                    .map(|s| json!({"ok": true, "worker": s})),
            },
            Op::Assign => {
                let a: AssignArgs = match serde_json::from_str(raw) {
                    Ok(a) => a,
                    Err(e) => return invalid(e, contract),
                };
                let worker = match session_arg(&a.session_id) {
                    Ok(s) => s,
                    Err(m) => return invalid(m, contract),
                };
                boss.assign(
                    caller,
                    AssignRequest {
                        worker_session_id: worker,
                        task_id: a.task_id,
                        task: a.task,
                        context: a.context,
                        acceptance: a.acceptance,
                    },
                )
                .await
                .map(|r| json!({"ok": true, "assignment": r}))
            }
            Op::Report => {
                let a: ReportArgs = match serde_json::from_str(raw) {
                    Ok(a) => a,
                    Err(e) => return invalid(e, contract),
                };
                let Some(reply_id) = ctx.message_id else {
                    return troupe_engine::extension::no_reply_id("boss_report");
                };
                boss.report(
                    caller,
                    ReportRequest {
                        summary: a.summary,
                        status: a.status.unwrap_or(ReportStatus::Completed),
                        refs: a.refs,
                    },
                    reply_id,
                )
                .await
                .map(|r| json!({"ok": true, "report": r, "required_agent_action": "end your turn: your parent decides what comes next"}))
            }
            Op::Cancel => {
                let a: CancelArgs = match serde_json::from_str(raw) {
                    Ok(a) => a,
                    Err(e) => return invalid(e, contract),
                };
                let worker = match session_arg(&a.session_id) {
                    Ok(s) => s,
                    Err(m) => return invalid(m, contract),
                };
                boss.cancel(
                    caller,
                    CancelRequest {
                        worker_session_id: worker,
                        task_id: a.task_id,
                    },
                )
                .await
                .map(|r| json!({"ok": true, "cancel": r}))
            }
            Op::Status => {
                let a: StatusArgs =
                    match serde_json::from_str(if raw.trim().is_empty() { "{}" } else { raw }) {
                        Ok(a) => a,
                        Err(e) => return invalid(e, contract),
                    };
                boss.tree(caller, a.depth)
                    .map(|t| json!({"ok": true, "tree": render_tree(&t), "nodes": t}))
            }
        };
        match out {
            Ok(v) => reply(v, false, matches!(self.op, Op::Report)),
            Err(e) => error(e),
        }
    }
}

fn contract(op: Op) -> &'static str {
    match op {
        Op::Spawn => {
            r#"{"role": string, "agent"?: a Bot name, "instructions"?: string, "workspace"?: "main"|"worktree"}; e.g. {"role": "code"}"#
        }
        Op::Assign => {
            r#"{"session_id": the worker's session id, "task_id": 1–64 of [A-Za-z0-9._-], "task": string, "context"?: string, "acceptance"?: [string]}; e.g. {"session_id": 12, "task_id": "t1", "task": "write the parser"}"#
        }
        Op::Report => {
            r#"{"summary": string, "status"?: "completed"|"blocked"|"needs_input", "refs"?: [string]}; e.g. {"summary": "parser written, tests pass", "status": "completed"}"#
        }
        Op::Cancel => r#"{"session_id": the worker's session id, "task_id"?: string}"#,
        Op::Status => r#"{"depth"?: 1–16}"#,
    }
}

fn spec(op: Op) -> ToolSpec {
    let (description, parameters) = match op {
        Op::Spawn => (
            "Create a persistent worker in your Boss tree: a conversation with a Bot (yours unless named) that keeps its history between tasks. Returns its session id.",
            json!({"type": "object", "properties": {
                "role": {"type": "string"}, "agent": {"type": "string"},
                "instructions": {"type": "string"},
                "workspace": {"type": "string", "enum": ["main", "worktree"]}
            }, "required": ["role"], "additionalProperties": false}),
        ),
        Op::Assign => (
            "Give one of your direct workers a task; a task id you already used delivers nothing again. The worker is woken and reports back with boss_report.",
            json!({"type": "object", "properties": {
                "session_id": {"type": ["integer", "string"]}, "task_id": {"type": "string"},
                "task": {"type": "string"}, "context": {"type": "string"},
                "acceptance": {"type": "array", "items": {"type": "string"}}
            }, "required": ["session_id", "task_id", "task"], "additionalProperties": false}),
        ),
        Op::Report => (
            "Report to your parent on your current task (completed, blocked or needs_input), then end your turn. Workers only.",
            json!({"type": "object", "properties": {
                "summary": {"type": "string"},
                "status": {"type": "string", "enum": ["completed", "blocked", "needs_input"]},
                "refs": {"type": "array", "items": {"type": "string"}}
            }, "required": ["summary"], "additionalProperties": false}),
        ),
        Op::Cancel => (
            "Cancel a direct worker's work from you: its pending tasks from you are removed; its running turn is interrupted if no task id is given or it is that task.",
            json!({"type": "object", "properties": {
                "session_id": {"type": ["integer", "string"]}, "task_id": {"type": "string"}
            }, "required": ["session_id"], "additionalProperties": false}),
        ),
        Op::Status => (
            "Show your Boss subtree: each worker's session, role, Bot, status (running, queued, idle) and current task.",
            json!({"type": "object", "properties": {"depth": {"type": "integer", "minimum": 1, "maximum": 16}}, "additionalProperties": false}),
        ),
    };
    ToolSpec {
        name: op.name().into(),
        description: description.into(),
        parameters,
    }
}

pub fn registrations(host: &Arc<LoopHost>) -> Vec<ToolRegistration> {
    [Op::Spawn, Op::Assign, Op::Report, Op::Cancel, Op::Status]
        .into_iter()
        .map(|op| ToolRegistration {
            owner: OWNER.into(),
            spec: spec(op),
            effectful: false,
            read_only: matches!(op, Op::Status),
            available: match op {
                Op::Report => Arc::new(|t: &Thread| role_of(t) == Some(BossRole::Worker)),
                _ => Arc::new(|t: &Thread| role_of(t).is_some()),
            },
            handler: Arc::new(BossTool {
                op,
                host: host.clone(),
            }),
        })
        .collect()
}
