//! Editing a sent line (UQ-7, UQ-9, UQ-13, UQ-14; ADR 0063). Only a person's plain line is
//! editable. The words before are kept as a version; the clauses the edit added become a new
//! quote tied to the line's first quote (taking words out adds none). A Bot that has not read
//! the line finds the new words in its inbox instead of the old; a Bot that read it is told
//! with a line of the person's, which lifts the person's own Stop on it as their next line
//! would (a lasting stop keeps the note until it lifts). Nothing else happens: no stop or go-on is carried out, the
//! line is not filed again and nobody it now names is woken.

use crate::holds::AfterLift;
use crate::{Collab, CollabError};
use std::collections::BTreeMap;
use troupe_core::conversation::{Author, LineKind, SessionKind, SessionMessage, validate_line};
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::quote::{EDITED_MARK, QuoteSource, changed_clauses, changed_line_note};
use troupe_core::{BotId, SessionMessageId, ThreadId};
use troupe_store::{LineVersion, NewQuote, StoreError, Tx};

/// `PATCH /v1/messages/:id`: the line's new words.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditRequest {
    pub body: String,
}

/// Why a line cannot be edited (UQ-7): `409 not_editable`, the reason first in the message.
fn not_editable(reason: &str, why: String) -> CollabError {
    CollabError::conflict("not_editable", format!("{reason}: {why}"))
}

/// UQ-7's refusals, checked on the stored line and its conversation.
fn editable(tx: &Tx<'_>, line: &SessionMessage) -> Result<Result<(), CollabError>, StoreError> {
    let id = line.id;
    if line.author != Author::User || line.kind != LineKind::Line {
        return Ok(Err(not_editable(
            "bot_line",
            format!("message {id} is not a person's plain line"),
        )));
    }
    let session = tx.session(line.session_id)?;
    if session.kind == SessionKind::BotDirect {
        return Ok(Err(not_editable(
            "bot_direct",
            format!("message {id} is in a direct between two Bots"),
        )));
    }
    if session.archived || tx.session_deleted(session.id)? {
        return Ok(Err(not_editable(
            "archived",
            format!("conversation {} is archived", session.id),
        )));
    }
    if session.kind == SessionKind::Direct {
        let gone = match session.bot_ids.first() {
            Some(b) => tx.bot(*b)?.archived,
            None => true,
        };
        if gone {
            return Ok(Err(not_editable(
                "bot_gone",
                format!("the Bot of conversation {} is gone", session.id),
            )));
        }
    }
    if line.routing.as_deref() == Some("withdrawn") {
        return Ok(Err(not_editable(
            "taken_back",
            format!("message {id} was taken back; send it again instead"),
        )));
    }
    if line.body.is_empty() {
        return Ok(Err(not_editable(
            "cleared",
            format!("message {id} was cleared with its conversation's history"),
        )));
    }
    let quotes = tx.quotes_of_line(id)?;
    if quotes
        .first()
        .is_some_and(|q| q.source == QuoteSource::Answer)
    {
        return Ok(Err(not_editable(
            "answer",
            format!("message {id} answered a Bot's question"),
        )));
    }
    if tx.line_executed_as_stop(id)? {
        return Ok(Err(not_editable(
            "executed_stop",
            format!("message {id} was carried out as a stop"),
        )));
    }
    Ok(Ok(()))
}

/// The threads that were given the line, each with its Bot: the conversation's own threads
/// and any thread the line was delivered to as work.
fn given_to(tx: &Tx<'_>, line: &SessionMessage) -> Result<BTreeMap<ThreadId, BotId>, StoreError> {
    let mut out = BTreeMap::new();
    for t in tx.session_threads(line.session_id)? {
        if let Some((_, bot)) = tx.thread_session(t)? {
            out.insert(t, bot);
        }
    }
    for d in tx.line_deliveries(line.id)? {
        out.insert(d.thread_id, d.bot_id);
    }
    Ok(out)
}

/// `text` with the line's old words (its last occurrence: the line comes after any lines read
/// before it) replaced by the new.
fn with_new_words(text: &str, old: &str, new: &str) -> String {
    match text.rfind(old) {
        Some(at) if !old.is_empty() => format!("{}{new}{}", &text[..at], &text[at + old.len()..]),
        _ => text.to_string(),
    }
}

/// UQ-13 in the edit's transaction; answers the threads told of the change, and the lifts of
/// the person's own Stops it made.
fn deliver_change(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
    old: &str,
    version: usize,
) -> Result<(Vec<ThreadId>, Vec<AfterLift>), StoreError> {
    let mut told = Vec::new();
    let mut lifts = Vec::new();
    for (thread, bot) in given_to(tx, line)? {
        let key = crate::routing::line_key(line.id, bot);
        if tx.delivery_consumed(thread, &key)? {
            // A Bot the person stopped takes the change as their next line: that Stop lifts
            // and a segment starts from it. A lasting stop keeps the note until it lifts.
            if crate::holds::lines::act_would_free(tx, thread)? == Some(true) {
                lifts.push(crate::holds::lines::lift_by_person_act(tx, thread)?.0);
            }
            let running = tx.thread(thread)?.lease.holder.is_some();
            let mode = if running {
                InboxMode::Steer
            } else {
                InboxMode::Task
            };
            // Read between steps, it carries the line's short id: the ending says what it did
            // with the change (UQ-13, END-3), as for any line a working Bot reads.
            let note = changed_line_note(&line.body, old);
            let note = if running {
                format!("#{} {note}", line.id.0)
            } else {
                note
            };
            tx.deliver(
                thread,
                &Delivery::user_task(note)
                    .with_mode(mode)
                    .with_key(format!("line:{}:edit:{version}:to:{}", line.id.0, bot.0)),
            )?;
            told.push(thread);
            continue;
        }
        for item in tx.inbox(thread)? {
            if item.delivery_key.as_deref() == Some(key.as_str()) {
                // The new words only, marked as changed (UQ-15).
                let now = format!("{} {EDITED_MARK}", line.body);
                tx.set_inbox_body(item.id, &with_new_words(&item.text, old, &now))?;
            }
        }
    }
    Ok((told, lifts))
}

impl Collab {
    /// `PATCH /v1/messages/:id`: change a sent line's words. The same words again change
    /// nothing.
    pub async fn edit_line(
        &self,
        id: SessionMessageId,
        body: String,
    ) -> Result<SessionMessage, CollabError> {
        validate_line(&body).map_err(|m| CollabError::invalid(format!("body: {m}")))?;
        let out = self.store().write(|tx| {
            let line = tx.line(id)?;
            if let Err(e) = editable(tx, &line)? {
                return Ok(Err(e));
            }
            if line.body == body {
                return Ok(Ok((line, Vec::new(), Vec::new())));
            }
            let old = line.body.clone();
            let edited = tx.edit_line_body(id, &body)?;
            if let Some(words) = changed_clauses(&old, &body) {
                let first = tx.quotes_of_line(id)?.first().map(|q| q.id);
                tx.insert_quote(&NewQuote {
                    body: words,
                    message_id: Some(id),
                    session_id: Some(edited.session_id),
                    source: QuoteSource::Line,
                    first_quote_id: first,
                    filings: Vec::new(),
                })?;
            }
            let version = tx.line_versions(id)?.len();
            let (told, lifts) = deliver_change(tx, &edited, &old, version)?;
            Ok(Ok((edited, told, lifts)))
        })?;
        let (line, told, lifts) = out?;
        for after in &lifts {
            self.drive_lifted(after).await;
        }
        // Only the Bots told of the change go on; the drive and holds decide when (a lasting
        // stop keeps the note until it lifts).
        for t in told {
            if let Err(e) = self.engine().request_drive(t, "inbox", false).await {
                tracing::warn!(thread = %t, error = %e, "drive after an edit failed");
            }
        }
        Ok(line)
    }

    /// `GET /v1/messages/:id/versions`: a line's earlier words, oldest first.
    pub fn line_versions(&self, id: SessionMessageId) -> Result<Vec<LineVersion>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.line(id)?;
            tx.line_versions(id)
        })?)
    }
}

#[cfg(test)]
mod tests {
    use super::with_new_words;

    #[test]
    fn the_line_s_own_words_are_replaced_not_an_earlier_line_s() {
        let text = "[earlier] same words\n[User] same words";
        assert_eq!(
            with_new_words(text, "same words", "new words"),
            "[earlier] same words\n[User] new words"
        );
        assert_eq!(with_new_words("#7 hello", "hello", "hi"), "#7 hi");
    }
}
