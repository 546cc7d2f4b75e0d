//! The embedded default: with no model configured, the daemon offers a built-in scripted demo
//! Bot (clearly labelled) so a new user sees a working conversation at once.

use crate::{Collab, CollabError};
use std::path::Path;
use troupe_core::conversation::Bot;
use troupe_core::thread::EndpointSpec;
use troupe_store::NewBot;

const DEMO_SCRIPT: &str = include_str!("demo-bot.json");
pub const DEMO_BOT_NAME: &str = "Demo (scripted)";

impl Collab {
    /// Write the demo script under `data_dir` and, when no model is configured and the demo
    /// Bot does not exist yet, create it. Returns the demo Bot if there is one.
    pub fn ensure_demo_bot(&self, data_dir: &Path) -> Result<Option<Bot>, CollabError> {
        let path = data_dir.join("demo-bot-script.json");
        std::fs::write(&path, DEMO_SCRIPT)
            .map_err(|e| CollabError::invalid(format!("cannot write {}: {e}", path.display())))?;
        let bots = self.store().read(|tx| tx.bots(true))?;
        if let Some(existing) = bots.iter().find(|b| b.scripted && !b.archived) {
            return Ok(Some(existing.clone()));
        }
        if self.roles().get("default").is_some() || bots.iter().any(|b| !b.scripted) {
            return Ok(None);
        }
        let endpoint = EndpointSpec {
            kind: "scripted".into(),
            base_url: None,
            model: "demo".into(),
            api_key_env: None,
            script: Some(path.display().to_string()),
            takes_pictures: false,
            thinking_levels: Vec::new(),
            max_output_tokens: None,
        };
        let made = self.store().write(|tx| {
            tx.create_bot(&NewBot {
                name: DEMO_BOT_NAME.into(),
                persona: "A scripted demo Bot: its answers are canned, no model is called.".into(),
                endpoint: Some(endpoint),
                scripted: true,
            })
        });
        match made {
            Ok(bot) => Ok(Some(bot)),
            // Another node sharing the database made it first: theirs is the demo Bot.
            Err(e) => {
                let bots = self.store().read(|tx| tx.bots(false))?;
                match bots.into_iter().find(|b| b.scripted) {
                    Some(existing) => Ok(Some(existing)),
                    None => Err(e.into()),
                }
            }
        }
    }
}
