//! A Bot's memories (digest 003-B §11.4): the `remember` and `forget` tools a Bot keeps them
//! with, the person's edits, and the situation block that shows a Bot its memories that are
//! on (and its adopted checklist) at every model call, in every conversation and job.

use crate::tools::bad_arguments;
use crate::{Collab, CollabError};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use troupe_core::BotId;
use troupe_core::bot_memory::{BODY_MAX, ENABLED_MAX, SUBJECT_MAX};
use troupe_core::thread::Thread;
use troupe_engine::extension::{
    ContextContributor, ContextParts, ToolCallContext, ToolHandler, ToolReply,
};
use troupe_store::{BotMemory, MemoryWriter, Store, StoreError};

/// Shows a Bot what it keeps for itself, in one read per model call: its memories that are
/// on, the checklist items the person adopted from its reflections (§10.2), and its catalog
/// of skills (its own and the project skills that are on).
pub struct KeptSituation;

fn memories_block(on: Vec<BotMemory>) -> Option<String> {
    if on.is_empty() {
        return None;
    }
    let mut text = String::from(
        "Your memories (ways of working you keep; `remember` rewrites one by its subject, \
         `forget` drops one):",
    );
    for m in on {
        text.push_str(&format!("\n- {}: {}", m.subject, m.body));
    }
    Some(text)
}

fn kept(thread: &Thread, store: &Store) -> Result<Vec<String>, StoreError> {
    store.read(|tx| {
        let Some((_, bot)) = tx.thread_session(thread.id)? else {
            return Ok(Vec::new());
        };
        let memories = tx
            .bot_memories(bot)?
            .into_iter()
            .filter(|m| m.enabled)
            .collect();
        let items = tx
            .checklist_items(Some(bot))?
            .into_iter()
            .filter(|i| i.enabled)
            .collect();
        let catalog = crate::skills::catalog_block(&tx.skill_catalog(bot)?);
        Ok([
            memories_block(memories),
            crate::reflection::checklist_block(items),
            catalog,
        ]
        .into_iter()
        .flatten()
        .collect())
    })
}

impl ContextContributor for KeptSituation {
    fn name(&self) -> &str {
        "kept"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match kept(thread, store) {
            Ok(blocks) => out.situation.extend(blocks),
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "what a Bot keeps could not be read")
            }
        }
    }
}

pub(crate) fn remember_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "subject": {"type": "string", "description": format!("At most {SUBJECT_MAX} characters; the same subject rewrites that memory.")},
            "body": {"type": "string", "description": format!("One way of working, at most {BODY_MAX} characters.")}
        },
        "required": ["subject", "body"],
        "additionalProperties": false
    })
}

pub(crate) fn forget_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"subject": {"type": "string"}},
        "required": ["subject"],
        "additionalProperties": false
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RememberArgs {
    subject: String,
    body: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ForgetArgs {
    subject: String,
}

fn refusal(tool: &str, e: StoreError) -> ToolReply {
    ToolReply::error(match e {
        StoreError::Invalid(m) | StoreError::Conflict(m) => format!("{tool}: {m}"),
        other => format!("{tool}: internal: {other}; nothing was changed"),
    })
}

/// `remember`: keep (or rewrite) a memory.
pub(crate) struct Remember;

#[async_trait]
impl ToolHandler for Remember {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: RememberArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => return ToolReply::error(bad_arguments("remember", &e, &remember_spec())),
        };
        let done = ctx.store.write(|tx| {
            let Some((_, bot)) = tx.thread_session(ctx.thread.id)? else {
                return Err(StoreError::Invalid("only a Bot keeps memories".into()));
            };
            let (m, before) =
                tx.write_bot_memory(bot, &args.subject, &args.body, MemoryWriter::Bot)?;
            let on = tx.bot_memories(bot)?.iter().filter(|m| m.enabled).count();
            Ok((m, before, on))
        });
        match done {
            Ok((m, before, on)) => ToolReply::ok(format!(
                "{} \"{}\" ({on} of {ENABLED_MAX} memories on).",
                if before.is_some() {
                    "Rewrote"
                } else {
                    "Remembered"
                },
                m.subject
            )),
            Err(e) => refusal("remember", e),
        }
    }
}

/// `forget`: drop a memory.
pub(crate) struct Forget;

#[async_trait]
impl ToolHandler for Forget {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: ForgetArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => return ToolReply::error(bad_arguments("forget", &e, &forget_spec())),
        };
        let done = ctx.store.write(|tx| {
            let Some((_, bot)) = tx.thread_session(ctx.thread.id)? else {
                return Err(StoreError::Invalid("only a Bot keeps memories".into()));
            };
            tx.forget_bot_memory(bot, &args.subject)
        });
        match done {
            Ok(Some(m)) => ToolReply::ok(format!("Forgot \"{}\".", m.subject)),
            Ok(None) => ToolReply::error(format!(
                "forget: you have no memory \"{}\"",
                args.subject.trim()
            )),
            Err(e) => refusal("forget", e),
        }
    }
}

/// A store conflict under the code the API answers it with.
pub(crate) fn coded(e: StoreError, code: &'static str) -> CollabError {
    match e {
        StoreError::Conflict(message) => CollabError::Conflict { code, message },
        other => other.into(),
    }
}

impl Collab {
    /// A Bot's memories (404 for an unknown Bot).
    pub fn bot_memories(&self, bot: BotId) -> Result<Vec<BotMemory>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.bot(bot)?;
            tx.bot_memories(bot)
        })?)
    }

    /// The person adds a memory for a Bot, or rewrites the one with this subject.
    pub fn add_bot_memory(
        &self,
        bot: BotId,
        subject: &str,
        body: &str,
    ) -> Result<BotMemory, CollabError> {
        self.store()
            .write(|tx| {
                tx.bot(bot)?;
                tx.write_bot_memory(bot, subject, body, MemoryWriter::Person)
                    .map(|(m, _)| m)
            })
            .map_err(|e| coded(e, "memory_off"))
    }

    /// The person's edit: new words, or the memory turned on or off.
    pub fn edit_bot_memory(
        &self,
        id: i64,
        subject: Option<&str>,
        body: Option<&str>,
        enabled: Option<bool>,
    ) -> Result<BotMemory, CollabError> {
        if subject.is_none() && body.is_none() && enabled.is_none() {
            return Err(CollabError::invalid(
                "nothing to change: give subject, body or enabled",
            ));
        }
        self.store()
            .write(|tx| tx.edit_bot_memory(id, subject, body, enabled))
            .map_err(|e| coded(e, "subject_taken"))
    }

    pub fn delete_bot_memory(&self, id: i64) -> Result<BotMemory, CollabError> {
        Ok(self.store().write(|tx| tx.delete_bot_memory(id))?)
    }
}
