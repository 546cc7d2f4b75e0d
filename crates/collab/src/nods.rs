//! The nod to a nod the word lists cannot decide (MEN-8): a Bot's line back to the Bot whose
//! nod woke its turn, in words the lists do not know as a bare acknowledgement. Routing gave
//! that Bot the line to hear only and wrote `mention_nod_reading`; here the Bot-line reading
//! decides after commit. Read by a model as `bare_status`, the line wakes nobody
//! (`mention_nod_suppressed`); otherwise — or with no usable reading, when the fixed list
//! decides and it has already found more than a nod — the Bot is woken with the line, unless
//! a turn of its own read it meanwhile.

use crate::routing::{deliver, routed_event};
use crate::{Collab, CollabError};
use serde_json::json;
use troupe_core::conversation::SessionMessage;
use troupe_core::{BotId, SessionMessageId, ThreadId};
use troupe_store::{StoreError, Tx};

/// The event routing writes for each Bot a line's reading is to decide about.
pub(crate) const NOD_READING: &str = "mention_nod_reading";

/// What the line's turn answers: the line that woke it (a nod, or it would not be asked).
fn answered(tx: &Tx<'_>, line: &SessionMessage) -> Result<String, StoreError> {
    let Some(run) = line.turn_id else {
        return Ok(String::new());
    };
    match tx.segment(run)?.and_then(|s| s.trigger_line_id) {
        Some(t) => Ok(tx.line(t)?.body),
        None => Ok(String::new()),
    }
}

impl Collab {
    /// Decide about one Bot a Bot's line was held back from. Returns the thread woken, if any.
    pub(crate) async fn settle_nod(
        &self,
        id: SessionMessageId,
        bot: BotId,
        how: &str,
    ) -> Result<Option<ThreadId>, CollabError> {
        let (line, answered) = self.store().read(|tx| {
            let line = tx.line(id)?;
            let answered = answered(tx, &line)?;
            Ok((line, answered))
        })?;
        let Some(turn) = line.turn_id else {
            return Err(CollabError::invalid(format!(
                "message {id} is not a Bot's line in a turn; no nod to read"
            )));
        };
        let read = self.read_bot_text(turn, &line.body, &answered).await?;
        // Only a model's reading keeps a Bot asleep; the word lists' `bare_status` is the
        // same list that already called this line more than a nod.
        let quiet = read.by_model && read.reading.bare_status;
        let workspace = self.workspace_of_line(&line)?;
        let woke = self.store().write(|tx| {
            if quiet {
                tx.session_event(
                    "mention_nod_suppressed",
                    line.session_id,
                    line.turn_id,
                    json!({"message_id": line.id, "bot_id": bot, "read": true}),
                )?;
                return Ok(None);
            }
            let session = tx.session(line.session_id)?;
            let key = crate::routing::line_key(line.id, bot);
            let heard = tx.session_thread(session.id, bot, troupe_store::CONVERSATION)?;
            if let Some(t) = heard {
                // Read already, in a turn of its own: the line is not news to wake it with.
                if tx.delivery_consumed(t, &key)? {
                    return Ok(None);
                }
                // The heard copy gives way to the line as work (same key, so once).
                let items: Vec<_> = tx
                    .inbox(t)?
                    .into_iter()
                    .filter(|i| i.delivery_key.as_deref() == Some(key.as_str()))
                    .map(|i| i.id)
                    .collect();
                tx.drop_inbox_items(t, &items)?;
            }
            let b = tx.bot(bot)?;
            if b.archived || !session.bot_ids.contains(&bot) {
                return Ok(None);
            }
            let thread = deliver(tx, &workspace, &session, &line, &b, Some(how))?;
            routed_event(tx, session.id, &line, &[(bot, how)])?;
            Ok(Some(thread))
        })?;
        Ok(woke)
    }

    /// Settle every `mention_nod_reading` as it is committed. Started once with the daemon
    /// (and by tests that route Bot lines).
    pub fn listen_for_nods(&self) -> tokio::task::JoinHandle<()> {
        let mut rx = self.store().subscribe();
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                let ev = match rx.recv().await {
                    Ok(ev) => ev,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "nod readings missed events");
                        continue;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                if ev.kind != NOD_READING {
                    continue;
                }
                let (Some(line), Some(bot), Some(how)) = (
                    ev.payload["message_id"].as_i64(),
                    ev.payload["bot_id"].as_i64(),
                    ev.payload["how"].as_str(),
                ) else {
                    continue;
                };
                let (line, bot) = (SessionMessageId(line), BotId(bot));
                // Each on its own task: a slow reading holds up no other line.
                let me = me.clone();
                let how = how.to_string();
                tokio::spawn(async move {
                    if let Err(e) = me.settle_nod(line, bot, &how).await {
                        tracing::warn!(line = %line, bot = %bot, error = %e, "reading a nod failed");
                    }
                });
            }
        })
    }
}
