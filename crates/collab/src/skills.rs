//! A Bot's skills (ADR 0052): the catalog in its situation (its own skills and the project
//! skills that are on, each by name and what it is for), `read_skill` to read one whole, the
//! `write_skill` and `delete_skill` tools it keeps its own with, and the person's side: its
//! skills, and sharing one with every Bot as a project skill (QE7).

use crate::memories::coded;
use crate::tools::bad_arguments;
use crate::{Collab, CollabError};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use troupe_core::BotId;
use troupe_core::skill::{BODY_MAX, DESCRIPTION_MAX, NAME_MAX, PER_BOT_MAX};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolReply};
use troupe_store::{BotSkill, CatalogEntry, ProjectSkill, SkillText, SkillWriter, StoreError};

/// The catalog a Bot reads at every model call: names and catalog lines, never the texts.
pub(crate) fn catalog_block(catalog: &[CatalogEntry]) -> Option<String> {
    if catalog.is_empty() {
        return None;
    }
    let (own, shared): (Vec<&CatalogEntry>, Vec<&CatalogEntry>) =
        catalog.iter().partition(|e| e.shared_from.is_none());
    let mut text = String::from(
        "Your skills (before work one is for, call `read_skill` with its name and follow it):",
    );
    if own.is_empty() {
        text.push_str("\n(none of your own)");
    }
    for s in &own {
        text.push_str(&format!("\n- {}: {}", s.name, s.description));
    }
    if !shared.is_empty() {
        text.push_str(
            "\nProject skills (shared with every Bot; read them, none of you changes them):",
        );
        for p in shared {
            let clash = own.iter().any(|s| s.name.eq_ignore_ascii_case(&p.name));
            text.push_str(&format!(
                "\n- {}: {} (from {}{})",
                p.name,
                p.description,
                p.shared_from.as_deref().unwrap_or_default(),
                if clash {
                    "; read it with \"shared\": true"
                } else {
                    ""
                }
            ));
        }
    }
    Some(text)
}

pub(crate) fn read_skill_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "A skill's name from your catalog."},
            "shared": {"type": "boolean", "description": "Read the project skill of this name, not your own."}
        },
        "required": ["name"],
        "additionalProperties": false
    })
}

pub(crate) fn write_skill_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": format!("At most {NAME_MAX} characters; the same name rewrites that skill.")},
            "description": {"type": "string", "description": format!("One line, at most {DESCRIPTION_MAX} characters: what the skill is for (your catalog shows it). Needed for a new skill.")},
            "body": {"type": "string", "description": format!("The whole skill: how to do this kind of work, at most {BODY_MAX} characters.")}
        },
        "required": ["name", "body"],
        "additionalProperties": false
    })
}

pub(crate) fn delete_skill_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": false
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    name: String,
    #[serde(default)]
    shared: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    name: String,
    description: Option<String>,
    body: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteArgs {
    name: String,
}

/// A tool's refused call: the store's reason, or an internal fault with nothing changed.
pub(crate) fn refusal(tool: &str, e: StoreError) -> ToolReply {
    ToolReply::error(match e {
        StoreError::Invalid(m) | StoreError::Conflict(m) => format!("{tool}: {m}"),
        other => format!("{tool}: internal: {other}; nothing was changed"),
    })
}

fn names(catalog: &[CatalogEntry]) -> String {
    if catalog.is_empty() {
        return "you have no skills".into();
    }
    let all: Vec<&str> = catalog.iter().map(|e| e.name.as_str()).collect();
    format!("your catalog has: {}", all.join(", "))
}

/// `read_skill`: one skill, whole. Reads only; a hold leaves it offered (HOLD-T2).
pub(crate) struct ReadSkill;

#[async_trait]
impl ToolHandler for ReadSkill {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: ReadArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => return ToolReply::error(bad_arguments("read_skill", &e, &read_skill_spec())),
        };
        let found = ctx.store.read(|tx| {
            let Some((_, bot)) = tx.thread_session(ctx.thread.id)? else {
                return Ok(Err("read_skill: only a Bot has skills".to_string()));
            };
            let own = if args.shared {
                None
            } else {
                tx.bot_skill_by_name(bot, &args.name)?
            };
            if let Some(s) = own {
                return Ok(Ok(format!("# {}\n{}\n\n{}", s.name, s.description, s.body)));
            }
            match tx.project_skill_by_name(&args.name)?.filter(|p| p.enabled) {
                Some(p) => Ok(Ok(format!(
                    "# {} (project skill, from {})\n{}\n\n{}",
                    p.name, p.owner_name, p.description, p.body
                ))),
                None => Ok(Err(format!(
                    "read_skill: there is no skill \"{}\"; {}",
                    args.name.trim(),
                    names(&tx.skill_catalog(bot)?)
                ))),
            }
        });
        match found {
            Ok(Ok(text)) => ToolReply::ok(text),
            Ok(Err(m)) => ToolReply::error(m),
            Err(e) => ToolReply::error(format!("read_skill: internal: {e}")),
        }
    }
}

/// `write_skill`: keep (or rewrite) one of the Bot's own skills.
pub(crate) struct WriteSkill;

#[async_trait]
impl ToolHandler for WriteSkill {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: WriteArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => {
                return ToolReply::error(bad_arguments("write_skill", &e, &write_skill_spec()));
            }
        };
        let done = ctx.store.write(|tx| {
            let Some((_, bot)) = tx.thread_session(ctx.thread.id)? else {
                return Err(StoreError::Invalid("only a Bot keeps skills".into()));
            };
            let text = SkillText {
                name: &args.name,
                description: args.description.as_deref(),
                body: &args.body,
            };
            let (s, before) = tx.write_bot_skill(bot, &text, SkillWriter::Bot)?;
            Ok((s, before, tx.bot_skills(bot)?.len()))
        });
        match done {
            Ok((s, before, n)) => ToolReply::ok(format!(
                "{} \"{}\" ({n} of {PER_BOT_MAX} skills).{}",
                if before.is_some() { "Rewrote" } else { "Kept" },
                s.name,
                if s.shared_as.is_some() {
                    " The project skill shared from it stays as it was until the person updates it."
                } else {
                    ""
                }
            )),
            Err(e) => refusal("write_skill", e),
        }
    }
}

/// `delete_skill`: drop one of the Bot's own skills (a shared copy of it stays).
pub(crate) struct DeleteSkill;

#[async_trait]
impl ToolHandler for DeleteSkill {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: DeleteArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => {
                return ToolReply::error(bad_arguments("delete_skill", &e, &delete_skill_spec()));
            }
        };
        let done = ctx.store.write(|tx| {
            let Some((_, bot)) = tx.thread_session(ctx.thread.id)? else {
                return Err(StoreError::Invalid("only a Bot keeps skills".into()));
            };
            match tx.bot_skill_by_name(bot, &args.name)? {
                Some(s) => tx.delete_bot_skill(s.id).map(Some),
                None => Ok(None),
            }
        });
        match done {
            Ok(Some(s)) => ToolReply::ok(format!("Deleted \"{}\".", s.name)),
            Ok(None) => ToolReply::error(format!(
                "delete_skill: you have no skill \"{}\" (a project skill is not yours to delete)",
                args.name.trim()
            )),
            Err(e) => refusal("delete_skill", e),
        }
    }
}

/// What `share` and `update` need said twice (QE7: "confirmed once more").
fn confirmed(confirm: bool, what: &str) -> Result<(), CollabError> {
    if confirm {
        Ok(())
    } else {
        Err(CollabError::invalid(format!(
            "{what} needs the person's confirmation: send \"confirm\": true"
        )))
    }
}

impl Collab {
    /// A Bot's skills (404 for an unknown Bot).
    pub fn bot_skills(&self, bot: BotId) -> Result<Vec<BotSkill>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.bot(bot)?;
            tx.bot_skills(bot)
        })?)
    }

    pub fn bot_skill(&self, id: i64) -> Result<BotSkill, CollabError> {
        Ok(self.store().read(|tx| tx.bot_skill(id))?)
    }

    /// The person gives a Bot a new skill (a name it has already: 409 `skill_taken`).
    pub fn add_bot_skill(
        &self,
        bot: BotId,
        name: &str,
        description: &str,
        body: &str,
    ) -> Result<BotSkill, CollabError> {
        self.store()
            .write(|tx| {
                tx.bot(bot)?;
                if let Some(s) = tx.bot_skill_by_name(bot, name)? {
                    return Err(StoreError::Conflict(format!(
                        "this Bot already has a skill \"{}\" (skill {}); edit it instead",
                        s.name, s.id
                    )));
                }
                let text = SkillText {
                    name,
                    description: Some(description),
                    body,
                };
                tx.write_bot_skill(bot, &text, SkillWriter::Person)
                    .map(|(s, _)| s)
            })
            .map_err(|e| coded(e, "skill_taken"))
    }

    pub fn edit_bot_skill(
        &self,
        id: i64,
        name: Option<&str>,
        description: Option<&str>,
        body: Option<&str>,
    ) -> Result<BotSkill, CollabError> {
        if name.is_none() && description.is_none() && body.is_none() {
            return Err(CollabError::invalid(
                "nothing to change: give name, description or body",
            ));
        }
        self.store()
            .write(|tx| tx.edit_bot_skill(id, name, description, body))
            .map_err(|e| coded(e, "skill_taken"))
    }

    pub fn delete_bot_skill(&self, id: i64) -> Result<BotSkill, CollabError> {
        Ok(self.store().write(|tx| tx.delete_bot_skill(id))?)
    }

    /// Share a Bot's skill with every Bot, once the person confirms it.
    pub fn share_bot_skill(&self, id: i64, confirm: bool) -> Result<ProjectSkill, CollabError> {
        confirmed(confirm, "sharing a skill with every Bot")?;
        self.store()
            .write(|tx| tx.share_bot_skill(id))
            .map_err(|e| coded(e, "not_shareable"))
    }

    pub fn project_skills(&self) -> Result<Vec<ProjectSkill>, CollabError> {
        Ok(self.store().read(|tx| tx.project_skills())?)
    }

    /// "Update the shared copy", confirmed after the person saw the owner's skill as it was
    /// at `seen_updated_at`.
    pub fn update_project_skill(
        &self,
        id: i64,
        seen_updated_at: i64,
        confirm: bool,
    ) -> Result<ProjectSkill, CollabError> {
        confirmed(confirm, "updating the shared copy")?;
        self.store()
            .write(|tx| tx.update_project_skill(id, seen_updated_at))
            .map_err(|e| coded(e, "not_updatable"))
    }

    pub fn set_project_skill_enabled(
        &self,
        id: i64,
        enabled: bool,
    ) -> Result<ProjectSkill, CollabError> {
        Ok(self
            .store()
            .write(|tx| tx.set_project_skill_enabled(id, enabled))?)
    }

    /// Stop sharing: the copy leaves every Bot's catalog.
    pub fn unshare_project_skill(&self, id: i64) -> Result<ProjectSkill, CollabError> {
        Ok(self.store().write(|tx| tx.unshare_project_skill(id))?)
    }
}
