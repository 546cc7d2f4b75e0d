//! Reads Runtime Boss channel routing needs (issue 18 items 13 and 15): the inbound messages
//! one session took (for its status reactions), and the sends of a kind of key that failed (so
//! a failed `channel_push` reaches the session that made it).

use crate::{ChannelMessage, ChannelOutbound, Result, Tx, args};
use troupe_core::{SessionId, SessionMessageId};

impl Tx<'_> {
    /// A session's newest inbound channel messages, newest first (at most `limit`).
    pub fn channel_messages_of_session(
        &self,
        session: SessionId,
        limit: u32,
    ) -> Result<Vec<ChannelMessage>> {
        self.query_all(
            "SELECT account, message_id, chat_id, sender_id, session_id, line_id, created_at
             FROM channel_messages WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2",
            args![session.0, i64::from(limit)],
            |r| {
                Ok(ChannelMessage {
                    account: r.get(0)?,
                    message_id: r.get(1)?,
                    chat_id: r.get(2)?,
                    sender_id: r.get(3)?,
                    session_id: SessionId(r.get(4)?),
                    line_id: SessionMessageId(r.get(5)?),
                    created_at: r.get(6)?,
                })
            },
        )
    }

    /// Failed sends whose idempotency key starts with `prefix`, newest first (at most `limit`).
    pub fn failed_channel_outbound(
        &self,
        prefix: &str,
        limit: u32,
    ) -> Result<Vec<ChannelOutbound>> {
        // LIKE's `_` matches any one character: the prefix is checked exactly after.
        let rows: Vec<(i64, String)> = self.query_all(
            "SELECT id, idempotency_key FROM channel_outbound WHERE status = 'failed'
               AND idempotency_key LIKE ?1 ORDER BY id DESC LIMIT ?2",
            args![format!("{prefix}%"), i64::from(limit)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        rows.into_iter()
            .filter(|(_, key)| key.starts_with(prefix))
            .map(|(id, _)| self.channel_outbound(id))
            .collect()
    }
}
