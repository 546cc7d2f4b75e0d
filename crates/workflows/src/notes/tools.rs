//! The model-facing note tools: `note_create`, `note_update`, `note_read`, `note_search`.
//! They are visible on every thread — Plan changes no tool visibility — and the Blueprint rule
//! is checked when a write is called: outside Plan a Blueprint write is refused with a result
//! that writes nothing and says what still works. Argument errors are repairable and persist
//! nothing; a stale version says which version is current.

use crate::notes::service::{
    NoteChange, NoteError, create_note, read_note, search_notes, update_note,
};
use crate::slot::blueprint_writes_allowed;
use async_trait::async_trait;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;
use troupe_store::{NoteId, NoteKind};

pub const OWNER: &str = "workflows";

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Op {
    Create,
    Update,
    Read,
    Search,
}

struct NoteTool(Op);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    title: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    kind: Option<NoteKind>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    id: NoteId,
    version: i64,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    kind: Option<NoteKind>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    id: NoteId,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    kind: Option<NoteKind>,
    #[serde(default)]
    limit: Option<u32>,
}

fn args<T: DeserializeOwned>(raw: &str, contract: &str) -> Result<T, ToolReply> {
    serde_json::from_str(raw).map_err(|e| {
        failure(json!({
            "ok": false,
            "code": "invalid_arguments",
            "retryable": true,
            "persisted": false,
            "message": format!("{e}; expected {contract}"),
        }))
    })
}

fn success(v: Value) -> ToolReply {
    ToolReply::ok(v.to_string())
}

fn failure(v: Value) -> ToolReply {
    ToolReply::error(v.to_string())
}

fn note_error(e: NoteError) -> ToolReply {
    match e {
        NoteError::Invalid(m) => failure(json!({
            "ok": false, "code": "invalid_arguments", "retryable": true, "persisted": false,
            "message": m,
        })),
        NoteError::PlanRequired(reason) => failure(json!({
            "ok": false, "code": "non_plan_blueprint_write", "retryable": false, "persisted": false,
            "message": reason,
            "still_available": ["note_read", "note_search", "note_create with kind \"note\""],
        })),
        NoteError::RevisionConflict { base, current } => failure(json!({
            "ok": false, "code": "revision_conflict", "retryable": true, "persisted": false,
            "message": format!("the note changed since version {base}; read it and redo the edit on version {}", current.version),
            "current_version": current.version,
        })),
        NoteError::NotFound(id) => failure(json!({
            "ok": false, "code": "not_found", "retryable": false, "persisted": false,
            "message": format!("note {id} does not exist; note_search lists notes"),
        })),
        NoteError::Store(m) => failure(json!({
            "ok": false, "code": "store_error", "retryable": false, "persisted": false,
            "message": m,
        })),
    }
}

const CREATE_CONTRACT: &str = r#"{"title": string, "body"?: string, "kind"?: "note"|"blueprint"}"#;
const UPDATE_CONTRACT: &str = r#"{"id": integer, "version": integer, "title"?: string, "body"?: string, "kind"?: "note"|"blueprint"}"#;
const READ_CONTRACT: &str = r#"{"id": integer}"#;
const SEARCH_CONTRACT: &str =
    r#"{"query"?: string, "kind"?: "note"|"blueprint", "limit"?: integer 1..100}"#;

#[async_trait]
impl ToolHandler for NoteTool {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let store = &ctx.store;
        // The slot as it is now, not as it was when the turn started.
        let plan = store
            .read(|tx| tx.thread(ctx.thread.id))
            .map(|t| blueprint_writes_allowed(t.workflow.as_ref()))
            .unwrap_or(false);
        let result = match self.0 {
            Op::Create => {
                let a: CreateArgs = match args(arguments, CREATE_CONTRACT) {
                    Ok(a) => a,
                    Err(r) => return r,
                };
                create_note(
                    store,
                    plan,
                    a.kind.unwrap_or(NoteKind::Note),
                    &a.title,
                    &a.body,
                )
                .map(|n| json!({"ok": true, "persisted": true, "note": n}))
            }
            Op::Update => {
                let a: UpdateArgs = match args(arguments, UPDATE_CONTRACT) {
                    Ok(a) => a,
                    Err(r) => return r,
                };
                let change = NoteChange {
                    base_version: a.version,
                    kind: a.kind,
                    title: a.title,
                    body: a.body,
                };
                update_note(store, plan, a.id, change)
                    .map(|n| json!({"ok": true, "persisted": true, "note": n}))
            }
            Op::Read => {
                let a: ReadArgs = match args(arguments, READ_CONTRACT) {
                    Ok(a) => a,
                    Err(r) => return r,
                };
                read_note(store, a.id).map(|n| json!({"ok": true, "note": n}))
            }
            Op::Search => {
                let a: SearchArgs = match args(arguments, SEARCH_CONTRACT) {
                    Ok(a) => a,
                    Err(r) => return r,
                };
                let limit = a.limit.unwrap_or(20).clamp(1, 100);
                search_notes(store, a.query.as_deref(), a.kind, limit).map(|notes| {
                    let hits: Vec<Value> = notes
                        .iter()
                        .map(|n| {
                            json!({"id": n.id, "kind": n.kind, "title": n.title,
                                   "version": n.version, "updated_at": n.updated_at})
                        })
                        .collect();
                    json!({"ok": true, "notes": hits})
                })
            }
        };
        match result {
            Ok(v) => success(v),
            Err(e) => note_error(e),
        }
    }
}

fn kind_schema() -> Value {
    json!({"type": "string", "enum": ["note", "blueprint"]})
}

fn spec(op: Op) -> ToolSpec {
    let (name, description, parameters) = match op {
        Op::Create => (
            "note_create",
            "Create a note. kind \"blueprint\" makes a Blueprint (allowed only while Plan is active; it must have the eight Blueprint sections as headings).",
            json!({"type": "object", "properties": {
                "title": {"type": "string"}, "body": {"type": "string"}, "kind": kind_schema()
            }, "required": ["title"], "additionalProperties": false}),
        ),
        Op::Update => (
            "note_update",
            "Edit a note. Give the version you read; if the note changed since, nothing is written and the current version is returned. Editing a Blueprint is allowed only while Plan is active.",
            json!({"type": "object", "properties": {
                "id": {"type": "integer"}, "version": {"type": "integer"},
                "title": {"type": "string"}, "body": {"type": "string"}, "kind": kind_schema()
            }, "required": ["id", "version"], "additionalProperties": false}),
        ),
        Op::Read => (
            "note_read",
            "Read one note (any kind), with its current version.",
            json!({"type": "object", "properties": {"id": {"type": "integer"}},
                   "required": ["id"], "additionalProperties": false}),
        ),
        Op::Search => (
            "note_search",
            "Search notes by words in their title or body; optionally only one kind.",
            json!({"type": "object", "properties": {
                "query": {"type": "string"}, "kind": kind_schema(),
                "limit": {"type": "integer", "minimum": 1, "maximum": 100}
            }, "additionalProperties": false}),
        ),
    };
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
    }
}

/// The four note tools. Writes pass the guards and the effect ledger (a repeated call after a
/// crash does not write twice); reads do not.
pub fn registrations() -> Vec<ToolRegistration> {
    [Op::Create, Op::Update, Op::Read, Op::Search]
        .into_iter()
        .map(|op| ToolRegistration {
            owner: OWNER.into(),
            spec: spec(op),
            effectful: matches!(op, Op::Create | Op::Update),
            read_only: matches!(op, Op::Read | Op::Search),
            available: Arc::new(|_| true),
            handler: Arc::new(NoteTool(op)),
        })
        .collect()
}
