//! The person's lines no Bot has read yet (UQ-16): for each, which Bots hold it unread and when
//! each will read it — at its next step (it is working), when its turn comes (it waits for a
//! segment or a slot), or once a stop lifts (the person's own Stop, which Insert now lifts, or a
//! lasting one, which it cannot). The page shows a row under such a line with Take
//! back (`withdraw_line`) and Insert now (`insert_line_now`); the row goes once it is read.

use crate::{Collab, CollabError};
use serde::Serialize;
use troupe_core::conversation::Author;
use troupe_core::{BotId, SessionId, SessionMessageId, ThreadId};

/// When a Bot holding a line unread will read it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadAt {
    /// The Bot is working: it reads the line at its next step (Insert now cuts that step).
    NextStep,
    /// The Bot waits for its next segment or a free slot.
    ItsTurn,
    /// The person's own Stop holds the Bot's work there: the next line lifts it, and so does
    /// Insert now, after which the Bot opens a segment on this line (UQ-18).
    Stopped,
    /// A lasting stop (Stop all Bots, the board, a tools menu) covers the Bot's work there: it
    /// reads the line once that stop is lifted; Insert now cannot.
    Held,
}

/// A Bot that holds a line unread.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnreadBy {
    pub bot_id: BotId,
    pub read_at: ReadAt,
}

/// A person's line some Bot has not read yet.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnreadLine {
    pub message_id: SessionMessageId,
    pub unread_by: Vec<UnreadBy>,
    /// Whether Take back is still possible: no Bot has read it (a line read by one Bot of a
    /// group stays unread for the others, but can no longer be taken back).
    pub can_take_back: bool,
}

/// How far back a conversation's lines are looked at: an unread line is a recent one.
const RECENT_LINES: u32 = 50;

impl Collab {
    /// The conversation's recent person's lines that some Bot it went to has not read.
    pub fn unread_lines(&self, session: SessionId) -> Result<Vec<UnreadLine>, CollabError> {
        // One read for every line: who holds each unread, and whether a stop covers them.
        let held_unread = self.store().read(|tx| {
            tx.session(session)?;
            let mut out = Vec::new();
            for line in tx.recent_lines(session, RECENT_LINES)? {
                if line.author != Author::User || line.routing.as_deref() == Some("withdrawn") {
                    continue;
                }
                let mut unread: Vec<(BotId, ThreadId, Option<bool>)> = Vec::new();
                let mut read_by_someone = false;
                for d in tx.line_deliveries(line.id)? {
                    let key = crate::routing::line_key(line.id, d.bot_id);
                    if tx.delivery_consumed(d.thread_id, &key)? {
                        read_by_someone = true;
                    } else if !unread.iter().any(|(b, _, _)| *b == d.bot_id) {
                        let held = crate::holds::lines::act_would_free(tx, d.thread_id)?;
                        unread.push((d.bot_id, d.thread_id, held));
                    }
                }
                if !unread.is_empty() {
                    out.push((line.id, unread, read_by_someone));
                }
            }
            Ok(out)
        })?;
        Ok(held_unread
            .into_iter()
            .map(|(message_id, unread, read_by_someone)| UnreadLine {
                message_id,
                unread_by: unread
                    .into_iter()
                    .map(|(bot_id, thread, held)| UnreadBy {
                        bot_id,
                        read_at: match held {
                            Some(true) => ReadAt::Stopped,
                            Some(false) => ReadAt::Held,
                            None if self.engine().is_running(thread) => ReadAt::NextStep,
                            None => ReadAt::ItsTurn,
                        },
                    })
                    .collect(),
                can_take_back: !read_by_someone,
            })
            .collect())
    }
}
