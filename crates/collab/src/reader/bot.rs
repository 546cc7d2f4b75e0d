//! Reading a Bot's text (its line, an ask's question): restates, promises, run claims, bare
//! status, asking only for a go-ahead. Read once per turn and text.

use crate::{Collab, CollabError};
use serde_json::json;
use sha2::{Digest, Sha256};
use troupe_core::RunId;
use troupe_core::reading::bot::{BotReading, bot_prompt, parse_bot_reading};
use troupe_core::reading::fallback::bot_by_words;

/// A reading of a Bot's text, and whether a model made it.
#[derive(Clone, Debug, PartialEq)]
pub struct BotText {
    pub reading: BotReading,
    pub by_model: bool,
}

fn text_key(text: &str, answered: &str) -> String {
    let mut h = Sha256::new();
    h.update(text.as_bytes());
    h.update([0]);
    h.update(answered.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl Collab {
    /// The reading of `text` a Bot wrote in `turn`, answering `answered`.
    pub async fn read_bot_text(
        &self,
        turn: RunId,
        text: &str,
        answered: &str,
    ) -> Result<BotText, CollabError> {
        let key = text_key(text, answered);
        if let Some(stored) = self.stored_bot_reading(turn, &key)? {
            return Ok(stored);
        }
        let answer = self
            .reader()
            .ask(self.roles(), bot_prompt(text, answered))
            .await;
        let parsed = match (&answer.raw, &answer.failure) {
            (Some(raw), None) => parse_bot_reading(raw, text, answered)
                .map_err(|e| format!("unreadable answer: {e}")),
            (_, Some(f)) => Err(f.clone()),
            (None, None) => Err("no answer".into()),
        };
        let (reading, failure) = match parsed {
            Ok(r) => (r, None),
            Err(why) => (bot_by_words(text), Some(why)),
        };
        let value = json!(reading);
        self.store().write(|tx| {
            tx.save_line_reading(
                "bot",
                None,
                Some(turn),
                Some(&key),
                answer.model.as_deref(),
                failure.as_deref(),
                &value,
                answer.raw.as_deref(),
            )
        })?;
        Ok(self.stored_bot_reading(turn, &key)?.unwrap_or(BotText {
            reading,
            by_model: failure.is_none(),
        }))
    }

    fn stored_bot_reading(&self, turn: RunId, key: &str) -> Result<Option<BotText>, CollabError> {
        let Some(r) = self.store().read(|tx| tx.bot_reading(turn, key))? else {
            return Ok(None);
        };
        let reading: BotReading = serde_json::from_value(r.reading).map_err(|e| {
            CollabError::invalid(format!(
                "a stored reading of turn {turn} is unreadable: {e}"
            ))
        })?;
        Ok(Some(BotText {
            reading,
            by_model: r.failure.is_none(),
        }))
    }
}
