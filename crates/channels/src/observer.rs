//! Replies carried back to the chat, recorded in the transaction that writes them: a chat
//! conversation's Bot message that finishes an answer to a turn a channel message woke is
//! recorded as a pending `reply` send anchored to that message, keyed by its line. The send
//! itself happens after commit ([`crate::Channels::spawn_sender`]); a crash in between leaves
//! it pending, and the next start sends it.

use crate::routing::{is_finished_reply, reply_key};
use troupe_core::message::Message;
use troupe_engine::extension::MessageObserver;
use troupe_store::{NewChannelOutbound, OutboundKind, StoreError, Tx};

/// Registered on the engine after the conversation layer's projector, so the Bot's line
/// exists when it looks.
pub struct ReplyRecorder;

impl MessageObserver for ReplyRecorder {
    fn on_message(&self, tx: &mut Tx<'_>, m: &Message) -> Result<(), StoreError> {
        if !is_finished_reply(m) {
            return Ok(());
        }
        let Some((session, _)) = tx.thread_session(m.thread_id)? else {
            return Ok(());
        };
        let Some(chat) = tx.channel_chat_of_session(session)? else {
            return Ok(());
        };
        let (Some(line), Some(run)) = (tx.line_for_thread_message(m.id)?, m.run_id) else {
            return Ok(());
        };
        // The message that woke this turn; a turn woken by a line typed in Troupe answers
        // the person there, not the chat.
        let Some(trigger) = tx.segment(run)?.and_then(|s| s.trigger_line_id) else {
            return Ok(());
        };
        let Some(inbound) = tx.channel_message_of_line(trigger)? else {
            return Ok(());
        };
        let body = tx.line(line)?.body;
        tx.record_channel_outbound(&NewChannelOutbound {
            idempotency_key: reply_key(&chat.account, line),
            account: chat.account,
            chat_id: chat.chat_id,
            kind: OutboundKind::Reply,
            text: body,
            reply_to_message_id: Some(inbound.message_id),
            line_id: Some(line),
        })?;
        Ok(())
    }
}
