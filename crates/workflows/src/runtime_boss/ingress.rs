//! Boss Mode on (issue 18 item 13, digest §8.3): every message a channel account admits goes
//! to the account's runtime boss session instead of its chat's own conversation. It arrives as
//! a person's line (it lifts the pause latch) prefixed `[chat · sender · time]`, once per
//! `channel:<account>:<message_id>`, its inbox item carrying the `channel_*` facts, and a
//! `received` reaction is recorded in the same transaction. Nothing the session writes is
//! carried back (RB-3): only chats' own conversations have a reply recorder
//! (`troupe_channels::ReplyRecorder` looks for a `channel_chats` row, which a boss session
//! never has); the session answers with `channel_push`.

use super::reactions::reaction_send;
use async_trait::async_trait;
use serde_json::{Value, json};
use troupe_channels::{Accepted, BossIngress, ChannelError, InboundMessage, Reaction};
use troupe_collab::Collab;
use troupe_core::SessionId;
use troupe_core::channel_push::source_prefixed;
use troupe_core::conversation::Author;
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_store::{ChannelMessage, NewLine};

/// How a line reaches the session's one Bot (as for a line typed in a direct).
const DIRECT: &str = "direct";

/// The installed routing: the account's runtime boss session while `boss_mode` is on.
pub struct RuntimeBossIngress {
    collab: Collab,
}

impl RuntimeBossIngress {
    pub fn new(collab: Collab) -> Self {
        RuntimeBossIngress { collab }
    }
}

/// The facts an inbound message's inbox item carries (and its message keeps).
pub fn channel_metadata(m: &InboundMessage) -> Value {
    json!({
        "channel_account": m.account,
        "channel_chat_id": m.chat_id,
        "channel_chat_type": m.chat_type.as_str(),
        "channel_chat_name": m.chat_name,
        "channel_sender_id": m.sender_id,
        "channel_sender_name": m.sender_name,
        "channel_message_id": m.message_id,
    })
}

/// What the boss reads: the message behind its source (chat and sender by name, else id).
pub fn boss_text(m: &InboundMessage, at_ms: i64) -> String {
    let named = |n: &Option<String>, id: &str| {
        n.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .unwrap_or(id)
            .to_string()
    };
    source_prefixed(
        &named(&m.chat_name, &m.chat_id),
        &named(&m.sender_name, &m.sender_id),
        at_ms,
        &m.text,
    )
}

#[async_trait]
impl BossIngress for RuntimeBossIngress {
    fn boss_session(&self, account: &str) -> Result<Option<SessionId>, ChannelError> {
        Ok(self.collab.store().read(|tx| {
            if !tx.runtime_settings()?.boss_mode {
                return Ok(None);
            }
            tx.runtime_boss_session(account)
        })?)
    }

    async fn deliver(
        &self,
        session: SessionId,
        msg: &InboundMessage,
        key: &str,
    ) -> Result<Accepted, ChannelError> {
        let store = self.collab.store().clone();
        if let Some(prev) = store.read(|tx| tx.channel_message(&msg.account, &msg.message_id))? {
            return Ok(Accepted {
                session_id: prev.session_id,
                duplicate: true,
            });
        }
        let s = store.read(|tx| tx.session(session))?;
        if s.archived {
            return Err(ChannelError::conflict(
                "archived",
                format!(
                    "the runtime boss session {session} of account {:?} is archived; \
                     unarchive it to go on",
                    msg.account
                ),
            ));
        }
        let bot = *s.bot_ids.first().ok_or_else(|| {
            ChannelError::conflict(
                "bot_unavailable",
                format!("the runtime boss session {session} has no Bot"),
            )
        })?;
        let thread = self.collab.direct_thread(session)?;
        let meta = channel_metadata(msg);
        let delivered = store.write(|tx| {
            // A second request for the same message that got here first: it delivered.
            if tx.channel_message(&msg.account, &msg.message_id)?.is_some() {
                return Ok(false);
            }
            let text = boss_text(msg, tx.now());
            let line = tx.insert_line(&NewLine {
                routing: Some("routed"),
                ..NewLine::plain(session, Author::User, text.clone())
            })?;
            let running = tx.thread(thread)?.lease.holder.is_some();
            let mode = if running {
                InboxMode::Steer
            } else {
                InboxMode::Task
            };
            let d = Delivery::user_task(text)
                .with_mode(mode)
                .with_key(key)
                .deferring_calls(troupe_channels::routing::defers_calls(running, &msg.text));
            let item = tx.deliver(thread, &d)?;
            if item.created {
                tx.set_inbox_metadata(item.item_id, &meta)?;
            }
            tx.record_line_delivery(line.id, bot, DIRECT, thread)?;
            tx.clear_pause(thread)?;
            tx.insert_channel_message(&ChannelMessage {
                account: msg.account.clone(),
                message_id: msg.message_id.clone(),
                chat_id: msg.chat_id.clone(),
                sender_id: msg.sender_id.clone(),
                session_id: session,
                line_id: line.id,
                created_at: 0,
            })?;
            tx.record_channel_outbound(&reaction_send(
                &msg.account,
                &msg.chat_id,
                &msg.message_id,
                Reaction::Received,
            ))?;
            Ok(true)
        })?;
        if delivered
            && let Err(e) = self
                .collab
                .engine()
                .request_drive(thread, "inbox", false)
                .await
        {
            // The line is durable; the next request or the boot wake drives it.
            tracing::warn!(thread = %thread, error = %e, "drive after a boss channel message failed");
        }
        Ok(Accepted {
            session_id: session,
            duplicate: !delivered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use troupe_channels::ChatType;

    #[test]
    fn boss_text_names_the_source() {
        let m = InboundMessage {
            account: "acme".into(),
            chat_id: "c-9".into(),
            chat_type: ChatType::Group,
            chat_name: Some("Ops".into()),
            sender_id: "u1".into(),
            sender_name: None,
            message_id: "m1".into(),
            text: "deploy it".into(),
            mentioned: true,
        };
        assert_eq!(
            boss_text(&m, 0),
            "[Ops · u1 · 1970-01-01T00:00:00Z] deploy it"
        );
        let meta = channel_metadata(&m);
        assert_eq!(meta["channel_chat_type"], "group");
        assert_eq!(meta["channel_message_id"], "m1");
        assert_eq!(meta["channel_account"], "acme");
    }
}
