//! The read side of the `boss-synergy` coordination tools (issue 18 item 17): `session_list`
//! (the open conversations, newest first), `session_read {session_id, limit?}` (a
//! conversation's newest lines) and `scope_list` (the places work is coordinated from: the
//! registered projects with their project bosses, and the chats channels reach). All only
//! read; `session_send` is in its own file.

use crate::slot::WorkflowSlot;
use crate::tool_results::{args, reply};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use troupe_core::SessionId;
use troupe_core::thread::Thread;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;

pub const SESSION_LIST: &str = "session_list";
pub const SESSION_READ: &str = "session_read";
pub const SCOPE_LIST: &str = "scope_list";
pub const OWNER: &str = "workflows.runtime_boss";

const LIST_LIMIT: u32 = 50;
const READ_DEFAULT: u32 = 20;
const READ_MAX: u32 = 100;

fn boss_slot(thread: &Thread) -> bool {
    WorkflowSlot::of(thread.workflow.as_ref()).is_some_and(|s| s.boss().is_some())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    session_id: i64,
    #[serde(default)]
    limit: Option<u32>,
}

struct List;
struct Read;
struct Scopes;

#[async_trait]
impl ToolHandler for List {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let raw = if raw.trim().is_empty() { "{}" } else { raw };
        if let Err(r) = args::<ListArgs>(raw, "{}") {
            return r;
        }
        match ctx.store.read(|tx| tx.sessions(LIST_LIMIT)) {
            Err(e) => ToolReply::error(format!("{SESSION_LIST}: {e}")),
            Ok(sessions) => reply(
                json!({"ok": true, "count": sessions.len(),
                       "sessions": sessions.iter().map(|s| json!({
                           "session_id": s.id.0, "title": s.title, "kind": s.kind,
                           "created_at": s.created_at})).collect::<Vec<_>>()}),
                false,
                false,
            ),
        }
    }
}

#[async_trait]
impl ToolHandler for Read {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: ReadArgs = match args(raw, r#"{"session_id": 12, "limit": 20}"#) {
            Ok(a) => a,
            Err(r) => return r,
        };
        let limit = a.limit.unwrap_or(READ_DEFAULT).clamp(1, READ_MAX);
        let id = SessionId(a.session_id);
        let found = ctx.store.read(|tx| match tx.session(id) {
            Err(troupe_store::StoreError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
            Ok(s) => Ok(Some((s, tx.recent_lines(id, limit)?))),
        });
        match found {
            Err(e) => ToolReply::error(format!("{SESSION_READ}: {e}")),
            Ok(None) => reply(
                json!({"ok": false, "code": "not_found",
                       "message": format!("no session {}; session_list lists them", a.session_id)}),
                true,
                false,
            ),
            Ok(Some((s, lines))) => reply(
                json!({"ok": true, "session_id": s.id.0, "title": s.title,
                       "lines": lines.iter().map(|l| json!({
                           "id": l.id.0, "author": l.author, "bot_id": l.bot_id.map(|b| b.0),
                           "text": l.body, "created_at": l.created_at})).collect::<Vec<_>>()}),
                false,
                false,
            ),
        }
    }
}

#[async_trait]
impl ToolHandler for Scopes {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let raw = if raw.trim().is_empty() { "{}" } else { raw };
        if let Err(r) = args::<ListArgs>(raw, "{}") {
            return r;
        }
        let read = ctx
            .store
            .read(|tx| Ok((tx.projects(LIST_LIMIT)?, tx.channel_chats(LIST_LIMIT)?)));
        match read {
            Err(e) => ToolReply::error(format!("{SCOPE_LIST}: {e}")),
            Ok((projects, chats)) => reply(
                json!({"ok": true,
                       "projects": projects.iter().map(|p| json!({
                           "directory": p.directory, "title": p.title,
                           "session_id": p.session_id.map(|s| s.0)})).collect::<Vec<_>>(),
                       "chats": chats.iter().map(|c| json!({
                           "account": c.account, "chat_id": c.chat_id, "chat_type": c.chat_type,
                           "chat_name": c.chat_name, "session_id": c.session_id.0}))
                           .collect::<Vec<_>>()}),
                false,
                false,
            ),
        }
    }
}

fn registration(
    name: &str,
    description: &str,
    parameters: serde_json::Value,
    handler: Arc<dyn ToolHandler>,
) -> ToolRegistration {
    ToolRegistration {
        owner: OWNER.into(),
        spec: ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        },
        effectful: false,
        read_only: true,
        available: Arc::new(boss_slot),
        handler,
    }
}

pub fn session_tools() -> Vec<ToolRegistration> {
    vec![
        registration(
            SESSION_LIST,
            "List the open conversations, newest first (at most 50): id, title, kind.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            Arc::new(List),
        ),
        registration(
            SESSION_READ,
            "Read a conversation's newest lines (default 20, at most 100), oldest first.",
            json!({"type": "object",
                   "properties": {"session_id": {"type": "integer"},
                                  "limit": {"type": "integer", "minimum": 1, "maximum": 100}},
                   "required": ["session_id"], "additionalProperties": false}),
            Arc::new(Read),
        ),
        registration(
            SCOPE_LIST,
            "List the places work is coordinated from (at most 50 each): registered projects \
             with their project boss sessions, and the chats channels reach with their \
             conversations.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            Arc::new(Scopes),
        ),
    ]
}
