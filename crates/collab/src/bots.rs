//! Bots: their names, personas and endpoints.

use crate::{Collab, CollabError};
use serde::Deserialize;
use troupe_core::BotId;
use troupe_core::conversation::{Bot, validate_bot_name};
use troupe_core::thread::{AgentBinding, EndpointSpec};
use troupe_store::NewBot;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewBotRequest {
    pub name: String,
    #[serde(default)]
    pub persona: Option<String>,
    /// None: the Bot uses the `default` role's endpoint.
    #[serde(default)]
    pub endpoint: Option<EndpointSpec>,
}

/// A partial update. `endpoint: null` clears the Bot's own endpoint (it then uses `default`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotPatch {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub persona: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub endpoint: Option<Option<EndpointSpec>>,
}

/// Distinguishes a field that is absent (outer None) from one set to null (Some(None)).
fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<EndpointSpec>>, D::Error> {
    Option::<EndpointSpec>::deserialize(d).map(Some)
}

const PERSONA_MAX: usize = 20_000;

fn check_persona(p: &str) -> Result<(), CollabError> {
    if p.len() > PERSONA_MAX {
        return Err(CollabError::invalid(format!(
            "persona must be at most {PERSONA_MAX} bytes"
        )));
    }
    Ok(())
}

fn check_endpoint(collab: &Collab, e: &Option<EndpointSpec>) -> Result<(), CollabError> {
    if let Some(spec) = e {
        collab
            .roles()
            .check_endpoint(spec)
            .map_err(|m| CollabError::invalid(format!("endpoint: {m}")))?;
    }
    Ok(())
}

/// What a Bot's thread is bound to: its name, a system prompt built from its persona, its endpoint.
pub fn binding_for(bot: &Bot) -> AgentBinding {
    let mut prompt = format!(
        "You are {}, a Bot working with a person in Troupe. You have a workspace directory and the \
         tools read_file, write_file, edit_file, list_dir, delete_file and shell (paths are \
         relative to the workspace). Answer plainly; when you did something, say what and what \
         came of it.",
        bot.name
    );
    if !bot.persona.trim().is_empty() {
        prompt.push_str("\n\n");
        prompt.push_str(bot.persona.trim());
    }
    let mut binding = AgentBinding::new(bot.name.clone(), prompt);
    binding.endpoint = bot.endpoint.clone();
    binding
}

fn duplicate(e: CollabError) -> CollabError {
    match e {
        CollabError::Conflict { message, .. } => CollabError::Invalid(message),
        other => other,
    }
}

impl Collab {
    pub fn create_bot(&self, req: NewBotRequest) -> Result<Bot, CollabError> {
        let name =
            validate_bot_name(&req.name).map_err(|m| CollabError::invalid(format!("name: {m}")))?;
        let persona = req.persona.unwrap_or_default();
        check_persona(&persona)?;
        check_endpoint(self, &req.endpoint)?;
        let new = NewBot {
            name,
            persona,
            endpoint: req.endpoint,
            scripted: false,
        };
        // A duplicate name is invalid input (422), as the API contract says.
        self.store()
            .write(|tx| tx.create_bot(&new))
            .map_err(|e| duplicate(e.into()))
    }

    pub fn bots(&self) -> Result<Vec<Bot>, CollabError> {
        Ok(self.store().read(|tx| tx.bots(false))?)
    }

    pub fn bot(&self, id: BotId) -> Result<Bot, CollabError> {
        Ok(self.store().read(|tx| tx.bot(id))?)
    }

    /// Apply a patch: read, checked and written in one transaction (two patches at once cannot
    /// lose one), and the Bot's threads are rebound in the same transaction.
    pub fn update_bot(&self, id: BotId, patch: BotPatch) -> Result<Bot, CollabError> {
        let name = match &patch.name {
            Some(n) => {
                Some(validate_bot_name(n).map_err(|m| CollabError::invalid(format!("name: {m}")))?)
            }
            None => None,
        };
        if let Some(p) = &patch.persona {
            check_persona(p)?;
        }
        if let Some(e) = &patch.endpoint {
            check_endpoint(self, e)?;
        }
        let archived = std::cell::Cell::new(false);
        let result = self.store().write(|tx| {
            let mut bot = tx.bot(id)?;
            if bot.archived {
                archived.set(true);
                return Ok(bot);
            }
            if let Some(name) = name {
                bot.name = name;
            }
            if let Some(persona) = patch.persona {
                bot.persona = persona;
            }
            if let Some(endpoint) = patch.endpoint {
                bot.endpoint = endpoint;
            }
            let bot = tx.update_bot(&bot)?;
            let binding = binding_for(&bot);
            for t in tx.bot_threads(bot.id)? {
                tx.set_thread_agent(t, &binding)?;
            }
            Ok(bot)
        });
        if archived.get() {
            return Err(CollabError::conflict(
                "archived",
                format!("bot {id} is archived"),
            ));
        }
        result.map_err(|e| duplicate(e.into()))
    }

    /// Archive: the Bot leaves the list; its conversations and history stay. In the same write
    /// its open delegations are cancelled and its work items closed (DEL-33, 34, 36); its live
    /// turns are then stopped.
    pub fn archive_bot(&self, id: BotId) -> Result<Bot, CollabError> {
        let (bot, live) = self.store().write(|tx| {
            let bot = tx.archive_bot(id)?;
            crate::delegation::cancel_for_archived(tx, id)?;
            let mut live = Vec::new();
            for item in tx.work_items_of_bot(id)? {
                if tx.live_segment_of(item.id)?.is_some() {
                    live.push(item.thread_id);
                }
                tx.set_work_state(item.id, troupe_core::work_item::WorkState::Closed, None)?;
            }
            Ok((bot, live))
        })?;
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            for thread in live {
                let engine = self.engine().clone();
                rt.spawn(async move {
                    let _ = engine.stop(thread, troupe_engine::StopMode::User).await;
                });
            }
        }
        Ok(bot)
    }
}
