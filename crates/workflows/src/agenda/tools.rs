//! The Agenda's model-facing tools. A thread schedules deliveries into itself and sees and
//! changes only its own items; another thread's item is not found. Argument errors are
//! repairable and persist nothing.

use crate::WorkflowError;
use crate::agenda::service::{self, AgendaPatchRequest, NewAgendaRequest};
use crate::lightloop::host::LoopHost;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::thread::Thread;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;
use troupe_store::{AgendaId, AgendaItem};

pub const OWNER: &str = "agenda";
pub const CREATE: &str = "agenda_create";
pub const LIST: &str = "agenda_list";
pub const UPDATE: &str = "agenda_update";
pub const CANCEL: &str = "agenda_cancel";

const TRIGGER_DOC: &str = r#"{"kind":"at","at":<ms since epoch>} | {"kind":"delay","seconds":N} | {"kind":"every","seconds":N,"start_at"?:<ms>} | {"kind":"cron","expr":"<minute hour day-of-month month day-of-week>","tz":"<IANA zone, e.g. Europe/Paris>"}"#;

fn reply(v: Value, is_error: bool) -> ToolReply {
    ToolReply {
        content: v.to_string(),
        is_error,
        ends_turn: false,
        ends_run: None,
        outcome_unknown: false,
    }
}

fn failure(e: WorkflowError) -> ToolReply {
    let (code, retryable) = match &e {
        WorkflowError::Invalid(_) => ("invalid_arguments", true),
        WorkflowError::NotFound { .. } => ("not_found", false),
        WorkflowError::Conflict { code, .. } => (*code, false),
        _ => ("internal_error", false),
    };
    reply(
        json!({
            "ok": false,
            "code": code,
            "retryable": retryable,
            "persisted": false,
            "message": e.to_string(),
            "trigger_contract": TRIGGER_DOC,
        }),
        true,
    )
}

fn view(i: &AgendaItem) -> Value {
    json!({
        "id": i.id.to_string(),
        "title": i.title,
        "trigger": i.trigger,
        "status": i.status.as_str(),
        "next_run_at": i.next_run_at,
        "run_count": i.run_count,
        "auto_done": i.auto_done,
        "wake": i.wake,
        "silent": i.silent,
        "payload": i.payload,
    })
}

fn parse<T: for<'de> Deserialize<'de>>(raw: &str) -> Result<T, ToolReply> {
    serde_json::from_str(raw).map_err(|e| failure(WorkflowError::invalid(e.to_string())))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdArgs {
    id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    status: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    id: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    payload: Option<String>,
    #[serde(default)]
    trigger: Option<Value>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    wake: Option<bool>,
    #[serde(default)]
    silent: Option<bool>,
}

fn agenda_id(raw: &str) -> Result<AgendaId, ToolReply> {
    raw.parse::<AgendaId>()
        .map_err(|m| failure(WorkflowError::invalid(format!("id: {m}"))))
}

#[derive(Clone, Copy)]
enum Op {
    Create,
    List,
    Update,
    Cancel,
}

struct AgendaTool {
    op: Op,
    host: Arc<LoopHost>,
}

impl AgendaTool {
    fn run(&self, ctx: &ToolCallContext, raw: &str) -> Result<ToolReply, ToolReply> {
        let me = ctx.thread.id;
        let store = &ctx.store;
        match self.op {
            Op::Create => {
                let mut req: NewAgendaRequest = parse(raw)?;
                if req.session_id.is_some() {
                    return Err(failure(WorkflowError::invalid(
                        "session_id: not accepted here; items deliver into your own thread",
                    )));
                }
                req.session_id = None;
                let item = service::create(store, me, &req).map_err(failure)?;
                Ok(reply(
                    json!({"ok": true, "code": "agenda_created", "persisted": true, "item": view(&item)}),
                    false,
                ))
            }
            Op::List => {
                let a: ListArgs = parse(raw)?;
                let status = service::parse_status(a.status.as_deref()).map_err(failure)?;
                let items = service::list(store, Some(me), status, 200).map_err(failure)?;
                let blockers = store
                    .read(|tx| service::blocker_commands(tx, me))
                    .map_err(|e| failure(e.into()))?;
                Ok(reply(
                    json!({
                        "ok": true,
                        "items": items.iter().map(view).collect::<Vec<_>>(),
                        "blocking_waits": blockers,
                    }),
                    false,
                ))
            }
            Op::Update | Op::Cancel => {
                let change = if let Op::Update = self.op {
                    let a: UpdateArgs = parse(raw)?;
                    let id = agenda_id(&a.id)?;
                    let req = AgendaPatchRequest {
                        title: a.title,
                        payload: a.payload,
                        trigger: a.trigger,
                        status: a.status,
                        wake: a.wake,
                        silent: a.silent,
                    };
                    service::update(store, Some(me), id, &req).map_err(failure)?
                } else {
                    let a: IdArgs = parse(raw)?;
                    service::cancel(store, Some(me), agenda_id(&a.id)?).map_err(failure)?
                };
                if let Some(thread) = change.released {
                    self.host.drive_later(thread, "agenda-wait-released");
                }
                Ok(reply(
                    json!({
                        "ok": true,
                        "code": if matches!(self.op, Op::Cancel) { "agenda_cancelled" } else { "agenda_updated" },
                        "persisted": true,
                        "item": view(&change.item),
                        "wait_released": change.released.is_some(),
                    }),
                    false,
                ))
            }
        }
    }
}

#[async_trait]
impl ToolHandler for AgendaTool {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        self.run(ctx, raw).unwrap_or_else(|r| r)
    }
}

fn trigger_schema() -> Value {
    json!({
        "type": "object",
        "description": format!("When it is due: {TRIGGER_DOC}"),
        "properties": {
            "kind": {"type": "string", "enum": ["at", "delay", "every", "cron"]},
            "at": {"type": "integer"},
            "seconds": {"type": "integer", "minimum": 1},
            "start_at": {"type": "integer"},
            "expr": {"type": "string", "description": "Five-field cron expression, e.g. \"0 9 * * MON-FRI\""},
            "tz": {"type": "string", "description": "IANA time zone the expression is read in, e.g. \"Europe/Paris\""}
        },
        "required": ["kind"]
    })
}

pub fn registrations(host: &Arc<LoopHost>) -> Vec<ToolRegistration> {
    let tool = |op: Op, name: &str, description: &str, parameters: Value| ToolRegistration {
        owner: OWNER.into(),
        spec: ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        },
        effectful: false,
        read_only: false,
        available: Arc::new(|_: &Thread| true),
        handler: Arc::new(AgendaTool {
            op,
            host: host.clone(),
        }),
    };
    let id = json!({"type": "string", "description": "The item's id (agenda_N)."});
    vec![
        tool(
            Op::Create,
            CREATE,
            "Schedule a message to yourself: at a moment, after a delay, or every N seconds. With auto_done it is a one-shot watch: delivered once, then done, and until then it holds back continuation.",
            json!({
                "type": "object",
                "properties": {
                    "trigger": trigger_schema(),
                    "payload": {"type": "string", "description": "The text delivered when it is due."},
                    "title": {"type": "string"},
                    "auto_done": {"type": "boolean", "description": "A one-shot watch (default false)."},
                    "wake": {"type": "boolean", "description": "Whether a delivery wakes you (default true)."},
                    "silent": {"type": "boolean", "description": "Hide the delivery from the transcript (default false)."}
                },
                "required": ["trigger", "payload"],
                "additionalProperties": false
            }),
        ),
        tool(
            Op::List,
            LIST,
            "List your Agenda items and the one-shot watches that currently block continuation.",
            json!({
                "type": "object",
                "properties": {"status": {"type": "string", "enum": ["active", "paused", "done", "cancelled"]}},
                "additionalProperties": false
            }),
        ),
        tool(
            Op::Update,
            UPDATE,
            "Change one of your Agenda items: title, payload, trigger, status (active or paused), wake or silent.",
            json!({
                "type": "object",
                "properties": {
                    "id": id,
                    "title": {"type": "string"},
                    "payload": {"type": "string"},
                    "trigger": trigger_schema(),
                    "status": {"type": "string", "enum": ["active", "paused"]},
                    "wake": {"type": "boolean"},
                    "silent": {"type": "boolean"}
                },
                "required": ["id"],
                "additionalProperties": false
            }),
        ),
        tool(
            Op::Cancel,
            CANCEL,
            "Cancel one of your Agenda items; a cancelled one-shot watch no longer blocks.",
            json!({
                "type": "object",
                "properties": {"id": id},
                "required": ["id"],
                "additionalProperties": false
            }),
        ),
    ]
}
