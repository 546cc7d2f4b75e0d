//! Ingress: an inbound request read by its account's adapter, filtered, routed, and — with
//! Boss Mode off — delivered to its chat's conversation as a person's line, in one transaction
//! with its dedupe record. The line lifts the conversation's pause latch as a line typed in
//! Troupe does (digest §13 q13: channel ingress is user input).

use crate::error::ChannelError;
use crate::filter::admit;
use crate::message::InboundMessage;
use crate::routing::{Destination, chat_text, chat_title, defers_calls, delivery_key, destination};
use crate::service::{Account, Channels};
use serde::Serialize;
use troupe_collab::NewSessionRequest;
use troupe_core::conversation::{Author, Bot};
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::{BotId, SessionId};
use troupe_store::{ChannelChat, ChannelMessage, NewLine};

/// How a line reaches the chat's one Bot (as for a line typed in a direct).
const DIRECT: &str = "direct";

/// What became of an accepted message.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Accepted {
    pub session_id: SessionId,
    /// The same message id was accepted before; nothing was delivered this time.
    pub duplicate: bool,
}

/// The answer to an inbound request that was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Filtered out: the reason (`not_mentioned`, `group_not_allowed`, `dm_not_allowed`).
    Filtered(&'static str),
    Accepted(Accepted),
}

impl Channels {
    /// One inbound request for `account`: its signature header and raw body.
    pub async fn accept(
        &self,
        account: &str,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<Outcome, ChannelError> {
        let acct = self
            .account(account)
            .filter(|a| a.def.enabled)
            .ok_or_else(|| {
                ChannelError::UnknownAccount(format!("no enabled channel account {account:?}"))
            })?;
        let msg = acct.adapter.inbound(signature, body)?;
        if let Err(refusal) = admit(&acct.def.filter, &msg) {
            return Ok(Outcome::Filtered(refusal.as_str()));
        }
        let key = delivery_key(&msg.account, &msg.message_id);
        let boss = self.boss_ingress();
        let boss_session = match &boss {
            Some(b) => b.boss_session(account)?,
            None => None,
        };
        let accepted = match (destination(boss_session), boss) {
            (Destination::BossSession(session), Some(b)) => b.deliver(session, &msg, &key).await?,
            _ => self.deliver_to_chat(&acct, &msg, &key).await?,
        };
        Ok(Outcome::Accepted(accepted))
    }

    /// Boss Mode off: the chat's conversation with the account's Bot, made on its first
    /// message, gets the message as a person's line.
    async fn deliver_to_chat(
        &self,
        acct: &Account,
        msg: &InboundMessage,
        key: &str,
    ) -> Result<Accepted, ChannelError> {
        let store = self.collab().store().clone();
        if let Some(prev) = store.read(|tx| tx.channel_message(&msg.account, &msg.message_id))? {
            return Ok(Accepted {
                session_id: prev.session_id,
                duplicate: true,
            });
        }
        let chat = self.chat_conversation(acct, msg).await?;
        let session = store.read(|tx| tx.session(chat.session_id))?;
        if session.archived {
            return Err(ChannelError::conflict(
                "archived",
                format!(
                    "the conversation of chat {:?} ({}) is archived; unarchive it to go on",
                    msg.chat_id, session.id
                ),
            ));
        }
        let thread = self.collab().direct_thread(chat.session_id)?;
        let text = chat_text(msg);
        let delivered = store.write(|tx| {
            // A second request for the same message that got here first: it delivered.
            if tx.channel_message(&msg.account, &msg.message_id)?.is_some() {
                return Ok(false);
            }
            let line = tx.insert_line(&NewLine {
                routing: Some("routed"),
                ..NewLine::plain(chat.session_id, Author::User, msg.text.clone())
            })?;
            let running = tx.thread(thread)?.lease.holder.is_some();
            let mode = if running {
                InboxMode::Steer
            } else {
                InboxMode::Task
            };
            let d = Delivery::user_task(text.clone())
                .with_mode(mode)
                .with_key(key)
                .deferring_calls(defers_calls(running, &msg.text));
            tx.deliver(thread, &d)?;
            // The turn this wakes is anchored to this line (its segment's trigger).
            tx.record_line_delivery(line.id, chat.bot_id, DIRECT, thread)?;
            tx.clear_pause(thread)?;
            tx.insert_channel_message(&ChannelMessage {
                account: msg.account.clone(),
                message_id: msg.message_id.clone(),
                chat_id: msg.chat_id.clone(),
                sender_id: msg.sender_id.clone(),
                session_id: chat.session_id,
                line_id: line.id,
                created_at: 0,
            })?;
            Ok(true)
        })?;
        if delivered
            && let Err(e) = self
                .collab()
                .engine()
                .request_drive(thread, "inbox", false)
                .await
        {
            // The line is durable; the next request or the boot wake drives it.
            tracing::warn!(thread = %thread, error = %e, "drive after a channel message failed");
        }
        Ok(Accepted {
            session_id: chat.session_id,
            duplicate: !delivered,
        })
    }

    /// The chat's conversation: found, or made now (one per chat, however many first
    /// messages arrive at once).
    async fn chat_conversation(
        &self,
        acct: &Account,
        msg: &InboundMessage,
    ) -> Result<ChannelChat, ChannelError> {
        let store = self.collab().store().clone();
        if let Some(c) = store.read(|tx| tx.channel_chat(&msg.account, &msg.chat_id))? {
            return Ok(c);
        }
        let lock = self.chat_lock(&msg.account, &msg.chat_id);
        let _turn = lock.lock().await;
        if let Some(c) = store.read(|tx| tx.channel_chat(&msg.account, &msg.chat_id))? {
            return Ok(c);
        }
        let bot = self.bot_of(acct)?;
        let view = self.collab().create_session(NewSessionRequest {
            workspace: None,
            kind: "direct".into(),
            bot_ids: vec![bot.id],
            title: Some(chat_title(msg)),
        })?;
        let (chat, _) = store.write(|tx| {
            tx.insert_channel_chat(&ChannelChat {
                account: msg.account.clone(),
                chat_id: msg.chat_id.clone(),
                chat_type: msg.chat_type.as_str().into(),
                chat_name: msg.chat_name.clone(),
                session_id: view.session.id,
                bot_id: bot.id,
                created_at: 0,
            })
        })?;
        Ok(chat)
    }

    /// The account's Bot, by id (`3`, `bot_3`) or by name, live.
    fn bot_of(&self, acct: &Account) -> Result<Bot, ChannelError> {
        let want = acct.def.bot.trim();
        let bots = self.collab().bots()?;
        let by_id = want.parse::<BotId>().ok();
        let found = bots
            .into_iter()
            .find(|b| Some(b.id) == by_id || b.name.eq_ignore_ascii_case(want));
        match found {
            Some(b) if !b.archived => Ok(b),
            Some(b) => Err(ChannelError::conflict(
                "bot_unavailable",
                format!(
                    "[channels.{}] bot {want:?}: {} is archived",
                    acct.def.name, b.id
                ),
            )),
            None => Err(ChannelError::conflict(
                "bot_unavailable",
                format!(
                    "[channels.{}] bot {want:?}: no Bot has that name or id",
                    acct.def.name
                ),
            )),
        }
    }
}
