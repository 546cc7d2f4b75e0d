//! The memory tools of the `boss-synergy` toolset (issue 18 item 16): `memory_write`,
//! `memory_edit`, `memory_search`, `memory_read`. A runtime boss keeps what it learns about
//! its person and their projects across conversations as titled memories under a category
//! (`crates/store/src/memories.rs`). Only a runtime boss session may call them; anything else
//! is refused and nothing is written.

use crate::slot::WorkflowSlot;
use crate::tool_results::{args, reply};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::boss::BossRole;
use troupe_core::thread::Thread;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;
use troupe_store::{Memory, MemoryWrite, StoreError, Tx};

pub const MEMORY_WRITE: &str = "memory_write";
pub const MEMORY_EDIT: &str = "memory_edit";
pub const MEMORY_SEARCH: &str = "memory_search";
pub const MEMORY_READ: &str = "memory_read";
pub const OWNER: &str = "workflows.runtime_boss";

/// The most memories one search or listing answers.
const MAX_RESULTS: u32 = 20;

fn boss_role(thread: &Thread) -> bool {
    WorkflowSlot::of(thread.workflow.as_ref())
        .and_then(|s| s.boss().map(|b| b.role))
        .is_some_and(|r| r == BossRole::Boss)
}

/// Whether the calling thread belongs to a runtime boss session.
fn runtime_boss(tx: &Tx<'_>, thread: &Thread) -> Result<bool, StoreError> {
    match tx.thread_session(thread.id)? {
        Some((session, _)) => tx.is_runtime_boss_session(session),
        None => Ok(false),
    }
}

fn not_runtime_boss(tool: &str) -> ToolReply {
    reply(
        json!({"ok": false, "code": "not_runtime_boss", "written": false,
               "message": format!("{tool} is for the account's runtime boss session only")}),
        true,
        false,
    )
}

fn memory_json(m: &Memory) -> Value {
    json!({"id": m.id, "category": m.category, "title": m.title, "body": m.body,
           "updated_at": m.updated_at})
}

/// A search hit: the body cut to a preview (memory_read gives the whole).
fn hit_json(m: &Memory) -> Value {
    const PREVIEW: usize = 200;
    let preview: String = m.body.chars().take(PREVIEW).collect();
    json!({"category": m.category, "title": m.title, "preview": preview,
           "truncated": m.body.chars().count() > PREVIEW, "updated_at": m.updated_at})
}

fn store_error(tool: &str, e: StoreError) -> ToolReply {
    match e {
        StoreError::Invalid(m) => reply(
            json!({"ok": false, "code": "invalid_arguments", "retryable": true,
                   "written": false, "message": m}),
            true,
            false,
        ),
        e => ToolReply::error(format!("{tool}: {e}; nothing was written")),
    }
}

/// Run `f` in one write when the caller is a runtime boss session.
fn guarded<T>(
    ctx: &ToolCallContext,
    f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>,
) -> Result<Option<T>, StoreError> {
    ctx.store.write(|tx| {
        if !runtime_boss(tx, &ctx.thread)? {
            return Ok(None);
        }
        f(tx).map(Some)
    })
}

/// Run `f` in one read when the caller is a runtime boss session (the read-only tools).
fn guarded_read<T>(
    ctx: &ToolCallContext,
    f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>,
) -> Result<Option<T>, StoreError> {
    ctx.store.read(|tx| {
        if !runtime_boss(tx, &ctx.thread)? {
            return Ok(None);
        }
        f(tx).map(Some)
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    category: String,
    title: String,
    body: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    category: String,
    title: String,
    old_text: String,
    new_text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    category: String,
    title: String,
}

struct Write;
struct Edit;
struct Search;
struct Read;

#[async_trait]
impl ToolHandler for Write {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: WriteArgs = match args(
            raw,
            r#"{"category": "people", "title": "Ana", "body": "Prefers one-line reports."}"#,
        ) {
            Ok(a) => a,
            Err(r) => return r,
        };
        match guarded(ctx, |tx| tx.memory_upsert(&a.category, &a.title, &a.body)) {
            Err(e) => store_error(MEMORY_WRITE, e),
            Ok(None) => not_runtime_boss(MEMORY_WRITE),
            Ok(Some((m, how))) => reply(
                json!({"ok": true, "status": match how {
                           MemoryWrite::Created => "created",
                           MemoryWrite::Replaced => "replaced",
                       }, "memory": memory_json(&m)}),
                false,
                false,
            ),
        }
    }
}

#[async_trait]
impl ToolHandler for Edit {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: EditArgs = match args(
            raw,
            r#"{"category": "people", "title": "Ana", "old_text": "short", "new_text": "one-line"}"#,
        ) {
            Ok(a) => a,
            Err(r) => return r,
        };
        match guarded(ctx, |tx| {
            tx.memory_edit(&a.category, &a.title, &a.old_text, &a.new_text)
        }) {
            Err(e) => store_error(MEMORY_EDIT, e),
            Ok(None) => not_runtime_boss(MEMORY_EDIT),
            Ok(Some(None)) => reply(
                json!({"ok": false, "code": "not_found", "written": false,
                       "message": format!("no memory '{}/{}'; memory_search finds titles, \
                                           memory_write creates one", a.category, a.title)}),
                true,
                false,
            ),
            Ok(Some(Some(m))) => reply(
                json!({"ok": true, "status": "edited", "memory": memory_json(&m)}),
                false,
                false,
            ),
        }
    }
}

#[async_trait]
impl ToolHandler for Search {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: SearchArgs = match args(raw, r#"{"query": "deploy friday"}"#) {
            Ok(a) => a,
            Err(r) => return r,
        };
        let found = guarded_read(ctx, |tx| {
            if a.query.trim().is_empty() {
                tx.memory_list(MAX_RESULTS)
            } else {
                tx.memory_search(&a.query, MAX_RESULTS)
            }
        });
        match found {
            Err(e) => store_error(MEMORY_SEARCH, e),
            Ok(None) => not_runtime_boss(MEMORY_SEARCH),
            Ok(Some(found)) => reply(
                json!({"ok": true, "count": found.len(),
                       "memories": found.iter().map(hit_json).collect::<Vec<_>>()}),
                false,
                false,
            ),
        }
    }
}

#[async_trait]
impl ToolHandler for Read {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: ReadArgs = match args(raw, r#"{"category": "people", "title": "Ana"}"#) {
            Ok(a) => a,
            Err(r) => return r,
        };
        match guarded_read(ctx, |tx| tx.memory_by_title(&a.category, &a.title)) {
            Err(e) => store_error(MEMORY_READ, e),
            Ok(None) => not_runtime_boss(MEMORY_READ),
            Ok(Some(None)) => reply(
                json!({"ok": false, "code": "not_found",
                       "message": format!("no memory '{}/{}'", a.category, a.title)}),
                true,
                false,
            ),
            Ok(Some(Some(m))) => {
                reply(json!({"ok": true, "memory": memory_json(&m)}), false, false)
            }
        }
    }
}

fn registration(
    name: &str,
    description: &str,
    parameters: Value,
    read_only: bool,
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
        read_only,
        available: Arc::new(boss_role),
        handler,
    }
}

fn names() -> Value {
    json!({
        "category": {"type": "string", "description": "A short group name, e.g. people, projects, preferences."},
        "title": {"type": "string", "description": "The memory's title, unique in its category."}
    })
}

fn with(mut props: Value, extra: Value) -> Value {
    if let (Some(p), Some(e)) = (props.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    props
}

/// The four memory tools, in the order the toolset lists them.
pub fn memory_tools() -> Vec<ToolRegistration> {
    vec![
        registration(
            MEMORY_WRITE,
            "Keep something worth remembering across conversations (about the person, their \
             projects, preferences) as a titled memory under a category. Writing an existing \
             title replaces its body.",
            json!({"type": "object",
                   "properties": with(names(), json!({"body": {"type": "string"}})),
                   "required": ["category", "title", "body"],
                   "additionalProperties": false}),
            false,
            Arc::new(Write),
        ),
        registration(
            MEMORY_EDIT,
            "Change part of a memory: the first occurrence of old_text in its body becomes \
             new_text (old_text must be there).",
            json!({"type": "object",
                   "properties": with(names(), json!({"old_text": {"type": "string"},
                                                      "new_text": {"type": "string"}})),
                   "required": ["category", "title", "old_text", "new_text"],
                   "additionalProperties": false}),
            false,
            Arc::new(Edit),
        ),
        registration(
            MEMORY_SEARCH,
            "Find memories by keywords (any word, in category, title or body; most matching \
             first). An empty query lists the most recent. Answers previews; memory_read gives \
             the whole body.",
            json!({"type": "object",
                   "properties": {"query": {"type": "string"}},
                   "required": ["query"],
                   "additionalProperties": false}),
            true,
            Arc::new(Search),
        ),
        registration(
            MEMORY_READ,
            "Read one memory whole by its category and title.",
            json!({"type": "object", "properties": names(),
                   "required": ["category", "title"],
                   "additionalProperties": false}),
            true,
            Arc::new(Read),
        ),
    ]
}
