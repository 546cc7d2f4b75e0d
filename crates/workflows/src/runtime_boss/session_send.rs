//! `session_send {session_id, text}` (issue 18 item 17): a boss hands another conversation a
//! task, or steers it when it is busy (its latest root is still open), then asks the drive to
//! act on it. Delivered once per tool call (the call's key), origin `session_send`, so the
//! receiving Bot sees who sent it. A session may not send to itself.

use super::ensure::boss_thread;
use crate::lightloop::host::LoopHost;
use crate::slot::WorkflowSlot;
use crate::tool_results::{args, reply};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use troupe_core::drive::RootState;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::thread::Thread;
use troupe_core::{SessionId, ThreadId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;
use troupe_store::{StoreError, Tx};

pub const SESSION_SEND: &str = "session_send";
pub const OWNER: &str = "workflows.runtime_boss";
pub const ORIGIN: &str = "session_send";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    session_id: i64,
    text: String,
}

enum Outcome {
    NotFound,
    ToSelf,
    Sent { thread: ThreadId, mode: InboxMode },
}

fn send_in(tx: &mut Tx<'_>, ctx: &ToolCallContext, a: &Args) -> Result<Outcome, StoreError> {
    let target = SessionId(a.session_id);
    let from = tx.thread_session(ctx.thread.id)?.map(|(s, _)| s);
    if from == Some(target) {
        return Ok(Outcome::ToSelf);
    }
    let thread = match tx.session(target) {
        Err(StoreError::NotFound { .. }) => return Ok(Outcome::NotFound),
        Err(e) => return Err(e),
        Ok(_) => match boss_thread(tx, target) {
            Err(StoreError::NotFound { .. }) => return Ok(Outcome::NotFound),
            r => r?,
        },
    };
    let mode = match tx.root_state(thread)? {
        RootState::Open(_) => InboxMode::Steer,
        _ => InboxMode::Task,
    };
    let sender = from.map_or_else(|| "a boss".to_string(), |s| format!("session {}", s.0));
    tx.deliver(
        thread,
        &Delivery {
            mode,
            priority: Priority::OWN_TIMER,
            origin: Origin::System(ORIGIN.into()),
            text: format!("[From {sender}] {}", a.text),
            visible: true,
            delivery_key: Some(format!(
                "{ORIGIN}:{}:{}:{}",
                ctx.thread.id.0, ctx.run_id.0, ctx.call_id
            )),
            order_key: None,
            defers_calls: false,
        },
    )?;
    Ok(Outcome::Sent { thread, mode })
}

struct SessionSend {
    host: Arc<LoopHost>,
}

#[async_trait]
impl ToolHandler for SessionSend {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: Args = match args(
            raw,
            r#"{"session_id": 12, "text": "Please report status."}"#,
        ) {
            Ok(a) => a,
            Err(r) => return r,
        };
        if a.text.trim().is_empty() {
            return crate::tool_results::invalid("text is empty".into(), "{\"text\": \"…\"}");
        }
        match ctx.store.write(|tx| send_in(tx, ctx, &a)) {
            Err(e) => ToolReply::error(format!("{SESSION_SEND}: {e}; nothing was sent")),
            Ok(Outcome::NotFound) => reply(
                json!({"ok": false, "code": "not_found", "written": false,
                       "message": format!("no conversation {}; session_list lists them", a.session_id)}),
                true,
                false,
            ),
            Ok(Outcome::ToSelf) => reply(
                json!({"ok": false, "code": "to_self", "written": false,
                       "message": "that is this session; answer here instead"}),
                true,
                false,
            ),
            Ok(Outcome::Sent { thread, mode }) => {
                self.host.drive_later(thread, "session_send");
                let status = if mode == InboxMode::Steer {
                    "steer"
                } else {
                    "task"
                };
                reply(
                    json!({"ok": true, "status": status, "session_id": a.session_id,
                    "message": if mode == InboxMode::Steer {
                        "it is busy; your text joins its running task"
                    } else {
                        "sent as a new task"
                    }}),
                    false,
                    false,
                )
            }
        }
    }
}

fn boss_slot(thread: &Thread) -> bool {
    WorkflowSlot::of(thread.workflow.as_ref()).is_some_and(|s| s.boss().is_some())
}

pub fn session_send_tool(host: &Arc<LoopHost>) -> ToolRegistration {
    ToolRegistration {
        owner: OWNER.into(),
        spec: ToolSpec {
            name: SESSION_SEND.into(),
            description: "Send another conversation a task, or a steer when it is busy (its \
                running task reads it before its next step)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"session_id": {"type": "integer"}, "text": {"type": "string"}},
                "required": ["session_id", "text"],
                "additionalProperties": false
            }),
        },
        effectful: true,
        read_only: false,
        available: Arc::new(boss_slot),
        handler: Arc::new(SessionSend { host: host.clone() }),
    }
}
