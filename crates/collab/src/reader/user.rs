//! Reading a person's line: control, status question, objections, let-through.

use crate::{Collab, CollabError};
use serde_json::json;
use troupe_core::SessionMessageId;
use troupe_core::reading::fallback::user_by_words;
use troupe_core::reading::user::{LINES_BEFORE, UserReading, parse_user_reading, user_prompt};
use troupe_store::{StoreError, Tx};

/// A stored reading of a person's line, and whether a model made it (only then may anything
/// it says be carried out).
#[derive(Clone, Debug, PartialEq)]
pub struct UserLineReading {
    pub reading: UserReading,
    pub by_model: bool,
}

/// A reading made but not yet stored: the routing write stores it with the line's routing
/// when nothing makes the line wait, so a line costs one commit less (a reading lost to a
/// crash before that commit is only read again).
#[derive(Clone, Debug)]
pub(crate) struct UnsavedUserReading {
    line: SessionMessageId,
    model: Option<String>,
    failure: Option<String>,
    value: serde_json::Value,
    raw: Option<String>,
}

impl UnsavedUserReading {
    /// Store it; a reading stored first (two readers racing) is kept.
    pub fn save(&self, tx: &mut Tx<'_>) -> Result<(), StoreError> {
        tx.save_line_reading(
            "user",
            Some(self.line),
            None,
            None,
            self.model.as_deref(),
            self.failure.as_deref(),
            &self.value,
            self.raw.as_deref(),
        )
        .map(drop)
    }
}

impl Collab {
    /// The line's reading: the stored one, or a new one (read once, by id).
    pub async fn read_user_line(
        &self,
        id: SessionMessageId,
    ) -> Result<UserLineReading, CollabError> {
        let (reading, unsaved) = self.read_user_line_unsaved(id).await?;
        let Some(unsaved) = unsaved else {
            return Ok(reading);
        };
        self.store().write(|tx| unsaved.save(tx))?;
        // Two readers racing keep the first record; answer with what is stored.
        Ok(self.stored_user_reading(id)?.unwrap_or(reading))
    }

    /// The stored reading, or a new one and what to store (`None` when it was stored already).
    pub(crate) async fn read_user_line_unsaved(
        &self,
        id: SessionMessageId,
    ) -> Result<(UserLineReading, Option<UnsavedUserReading>), CollabError> {
        if let Some(stored) = self.stored_user_reading(id)? {
            return Ok((stored, None));
        }
        let (line, parent, before, (spoken_in, shown)) = self.store().read(|tx| {
            let line = tx.line(id)?;
            let parent = line.parent_id.map(|p| tx.line(p)).transpose()?;
            let mut before = Vec::new();
            for l in tx.lines_before(line.session_id, id, LINES_BEFORE as u32)? {
                before.push((crate::routing::speaker(tx, &l)?, l.body));
            }
            let shown = crate::submissions::user_word::shown_for(tx, &line)?;
            Ok((line, parent, before, shown))
        })?;
        let shown_numbers: Vec<u32> = shown.iter().map(|(_, h)| h.number).collect();
        let shown_for_reader: Vec<_> = shown.iter().map(|(_, h)| h.clone()).collect();
        let prompt = user_prompt(
            &line.body,
            parent.as_ref().map(|p| p.body.as_str()),
            &before,
            &shown_for_reader,
            &spoken_in,
        );
        let answer = self.reader().ask(self.roles(), prompt).await;
        let parsed = match (&answer.raw, &answer.failure) {
            (Some(raw), None) => parse_user_reading(raw, &line.body, &shown_numbers)
                .map_err(|e| format!("unreadable answer: {e}")),
            (_, Some(f)) => Err(f.clone()),
            (None, None) => Err("no answer".into()),
        };
        let (reading, failure) = match parsed {
            Ok(r) => (r, None),
            Err(why) => (user_by_words(&line.body), Some(why)),
        };
        if let Some(why) = &failure {
            tracing::info!(line = %id, reason = %why, "line read by the word lists");
        }
        // The shown hand-overs by number, so what the line lets through is known after a
        // restart too.
        let mut value = json!(reading);
        value["shown"] = json!(shown.iter().map(|(s, _)| s.0).collect::<Vec<_>>());
        let unsaved = UnsavedUserReading {
            line: id,
            model: answer.model,
            failure: failure.clone(),
            value,
            raw: answer.raw,
        };
        Ok((
            UserLineReading {
                reading,
                by_model: failure.is_none(),
            },
            Some(unsaved),
        ))
    }

    fn stored_user_reading(
        &self,
        id: SessionMessageId,
    ) -> Result<Option<UserLineReading>, CollabError> {
        let stored = self.store().read(|tx| tx.line_readings(id))?;
        let Some(r) = stored.into_iter().find(|r| r.kind == "user") else {
            return Ok(None);
        };
        let reading: UserReading = serde_json::from_value(r.reading).map_err(|e| {
            CollabError::invalid(format!(
                "the stored reading of line {id} is unreadable: {e}"
            ))
        })?;
        Ok(Some(UserLineReading {
            reading,
            by_model: r.failure.is_none(),
        }))
    }

    /// Every stored reading of a line.
    pub fn line_readings(
        &self,
        id: SessionMessageId,
    ) -> Result<Vec<troupe_store::LineReading>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.line(id)?;
            tx.line_readings(id)
        })?)
    }
}
