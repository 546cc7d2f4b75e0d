//! Chat channels as rows (issue 18 items 12–13): the conversation each (account, chat) has
//! with the account's Bot while Boss Mode is off, each accepted inbound message once by its
//! (account, message id), and the outbound ledger: a send is recorded (pending) before it is
//! made and settled (sent or failed) after, so a restart resends exactly the unsettled ones
//! under the same idempotency key.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::{BotId, SessionId, SessionMessageId};

/// A chat's conversation (Boss Mode off).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChannelChat {
    pub account: String,
    pub chat_id: String,
    /// `dm` or `group`.
    pub chat_type: String,
    pub chat_name: Option<String>,
    pub session_id: SessionId,
    pub bot_id: BotId,
    pub created_at: i64,
}

/// An accepted inbound message and the person's line it became.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChannelMessage {
    pub account: String,
    pub message_id: String,
    pub chat_id: String,
    pub sender_id: String,
    pub session_id: SessionId,
    pub line_id: SessionMessageId,
    pub created_at: i64,
}

/// What an outbound send is, as the receiver reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutboundKind {
    /// Anchored to an inbound message (`reply_to_message_id`).
    Reply,
    /// A message of its own in the chat.
    Message,
    /// A status reaction on an inbound message (the text names it).
    Reaction,
}

impl OutboundKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OutboundKind::Reply => "reply",
            OutboundKind::Message => "message",
            OutboundKind::Reaction => "reaction",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        match s {
            "reply" => Ok(OutboundKind::Reply),
            "message" => Ok(OutboundKind::Message),
            "reaction" => Ok(OutboundKind::Reaction),
            other => Err(format!(
                "unknown outbound kind {other:?} (reply, message or reaction)"
            )),
        }
    }
}

/// Where a recorded send stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutboundStatus {
    /// Recorded, not yet known to have reached the receiver.
    Pending,
    Sent,
    Failed,
}

impl OutboundStatus {
    fn parse(s: &str) -> Result<Self> {
        match s {
            "pending" => Ok(OutboundStatus::Pending),
            "sent" => Ok(OutboundStatus::Sent),
            "failed" => Ok(OutboundStatus::Failed),
            other => Err(StoreError::Corrupt(format!(
                "channel_outbound.status {other:?}"
            ))),
        }
    }
}

/// A send to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewChannelOutbound {
    /// Unique per send: a second record under it is the first one.
    pub idempotency_key: String,
    pub account: String,
    pub chat_id: String,
    pub kind: OutboundKind,
    pub text: String,
    pub reply_to_message_id: Option<String>,
    /// The Bot's line it carries, when it carries one.
    pub line_id: Option<SessionMessageId>,
}

/// A recorded send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChannelOutbound {
    pub id: i64,
    pub idempotency_key: String,
    pub account: String,
    pub chat_id: String,
    pub kind: OutboundKind,
    pub text: String,
    pub reply_to_message_id: Option<String>,
    pub line_id: Option<SessionMessageId>,
    pub status: OutboundStatus,
    pub attempts: i64,
    pub error: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const CHAT_COLUMNS: &str = "account, chat_id, chat_type, chat_name, session_id, bot_id, created_at";
const MESSAGE_COLUMNS: &str =
    "account, message_id, chat_id, sender_id, session_id, line_id, created_at";
const OUTBOUND_COLUMNS: &str = "id, idempotency_key, account, chat_id, kind, text, \
     reply_to_message_id, line_id, status, attempts, error, created_at, updated_at";

impl Tx<'_> {
    /// The conversation of a chat, if it has one.
    pub fn channel_chat(&self, account: &str, chat_id: &str) -> Result<Option<ChannelChat>> {
        let sql =
            format!("SELECT {CHAT_COLUMNS} FROM channel_chats WHERE account = ?1 AND chat_id = ?2");
        self.query_opt(&sql, args![account, chat_id], chat_row)
    }

    /// The chats that have a conversation, newest first, at most `limit`.
    pub fn channel_chats(&self, limit: u32) -> Result<Vec<ChannelChat>> {
        let sql = format!(
            "SELECT {CHAT_COLUMNS} FROM channel_chats ORDER BY created_at DESC, id DESC LIMIT ?1"
        );
        self.query_all(&sql, args![limit as i64], chat_row)
    }

    /// The chat a conversation belongs to, if it is a chat's conversation.
    pub fn channel_chat_of_session(&self, session: SessionId) -> Result<Option<ChannelChat>> {
        let sql = format!("SELECT {CHAT_COLUMNS} FROM channel_chats WHERE session_id = ?1");
        self.query_opt(&sql, args![session.0], chat_row)
    }

    /// Give a chat its conversation. A chat that has one already keeps it: the answer is the
    /// row that stands and whether this call made it.
    pub fn insert_channel_chat(&mut self, c: &ChannelChat) -> Result<(ChannelChat, bool)> {
        if c.chat_type != "dm" && c.chat_type != "group" {
            return Err(StoreError::Invalid(format!(
                "chat_type: {:?} is neither dm nor group",
                c.chat_type
            )));
        }
        // Insert first: on PostgreSQL a second writer of the same chat waits here for the
        // first to commit, then finds its row.
        let n = self.exec(
            "INSERT INTO channel_chats (account, chat_id, chat_type, chat_name, session_id, bot_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (account, chat_id) DO NOTHING",
            args![
                c.account,
                c.chat_id,
                c.chat_type,
                c.chat_name,
                c.session_id.0,
                c.bot_id.0,
                self.now
            ],
        )?;
        let row = self.channel_chat(&c.account, &c.chat_id)?.ok_or_else(|| {
            StoreError::Corrupt("a channel chat vanished as it was written".into())
        })?;
        if n == 1 {
            self.session_event(
                "channel_chat_opened",
                row.session_id,
                None,
                json!({"account": row.account, "chat_id": row.chat_id, "chat_type": row.chat_type}),
            )?;
        }
        Ok((row, n == 1))
    }

    /// An inbound message accepted before, by its (account, message id).
    pub fn channel_message(
        &self,
        account: &str,
        message_id: &str,
    ) -> Result<Option<ChannelMessage>> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM channel_messages WHERE account = ?1 AND message_id = ?2"
        );
        self.query_opt(&sql, args![account, message_id], message_row)
    }

    /// The inbound message a person's line came from, if it came from a channel.
    pub fn channel_message_of_line(
        &self,
        line: SessionMessageId,
    ) -> Result<Option<ChannelMessage>> {
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM channel_messages WHERE line_id = ?1");
        self.query_opt(&sql, args![line.0], message_row)
    }

    /// Keep an accepted inbound message with its line; false when that (account, message id)
    /// was kept already (nothing is written then).
    pub fn insert_channel_message(&mut self, m: &ChannelMessage) -> Result<bool> {
        let n = self.exec(
            "INSERT INTO channel_messages (account, message_id, chat_id, sender_id, session_id, line_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (account, message_id) DO NOTHING",
            args![
                m.account,
                m.message_id,
                m.chat_id,
                m.sender_id,
                m.session_id.0,
                m.line_id.0,
                self.now
            ],
        )?;
        if n == 1 {
            self.session_event(
                "channel_inbound",
                m.session_id,
                None,
                json!({"account": m.account, "chat_id": m.chat_id,
                       "message_id": m.message_id, "line_id": m.line_id}),
            )?;
        }
        Ok(n == 1)
    }

    /// Record a send before it is made. A key recorded before answers that record (and
    /// `false`), whatever its status: a send is recorded once.
    pub fn record_channel_outbound(
        &mut self,
        o: &NewChannelOutbound,
    ) -> Result<(ChannelOutbound, bool)> {
        if o.idempotency_key.is_empty() {
            return Err(StoreError::Invalid(
                "idempotency_key: a send needs a key".into(),
            ));
        }
        if o.kind == OutboundKind::Reply && o.reply_to_message_id.is_none() {
            return Err(StoreError::Invalid(
                "reply_to_message_id: a reply is anchored to the message it answers".into(),
            ));
        }
        let n = self.exec(
            "INSERT INTO channel_outbound (idempotency_key, account, chat_id, kind, text, reply_to_message_id,
                 line_id, status, attempts, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', 0, ?8, ?8)
             ON CONFLICT (idempotency_key) DO NOTHING",
            args![
                o.idempotency_key,
                o.account,
                o.chat_id,
                o.kind.as_str(),
                o.text,
                o.reply_to_message_id,
                o.line_id.map(|l| l.0),
                self.now
            ],
        )?;
        let row = self
            .channel_outbound_by_key(&o.idempotency_key)?
            .ok_or_else(|| {
                StoreError::Corrupt("a channel send vanished as it was recorded".into())
            })?;
        if n == 1 {
            self.event(
                "channel_outbound_recorded",
                None,
                None,
                json!({"id": row.id, "account": row.account, "chat_id": row.chat_id,
                       "kind": row.kind, "idempotency_key": row.idempotency_key}),
            )?;
        }
        Ok((row, n == 1))
    }

    pub fn channel_outbound(&self, id: i64) -> Result<ChannelOutbound> {
        let sql = format!("SELECT {OUTBOUND_COLUMNS} FROM channel_outbound WHERE id = ?1");
        self.query_opt(&sql, args![id], outbound_row)?
            .ok_or_else(|| StoreError::not_found("channel send", id))
    }

    pub fn channel_outbound_by_key(&self, key: &str) -> Result<Option<ChannelOutbound>> {
        let sql =
            format!("SELECT {OUTBOUND_COLUMNS} FROM channel_outbound WHERE idempotency_key = ?1");
        self.query_opt(&sql, args![key], outbound_row)
    }

    /// The sends of one Bot line (its reply to a channel), oldest first.
    pub fn channel_outbound_of_line(&self, line: SessionMessageId) -> Result<Vec<ChannelOutbound>> {
        let sql = format!(
            "SELECT {OUTBOUND_COLUMNS} FROM channel_outbound WHERE line_id = ?1 ORDER BY id"
        );
        self.query_all(&sql, args![line.0], outbound_row)
    }

    /// Every send still pending (recorded, not settled), oldest first.
    pub fn pending_channel_outbound(&self) -> Result<Vec<ChannelOutbound>> {
        let sql = format!(
            "SELECT {OUTBOUND_COLUMNS} FROM channel_outbound WHERE status = 'pending' ORDER BY id"
        );
        self.query_all(&sql, args![], outbound_row)
    }

    /// Count one attempt at a pending send (before it is made); false when it is settled.
    pub fn attempt_channel_outbound(&mut self, id: i64) -> Result<bool> {
        Ok(self.exec(
            "UPDATE channel_outbound SET attempts = attempts + 1, updated_at = ?2
             WHERE id = ?1 AND status = 'pending'",
            args![id, self.now],
        )? == 1)
    }

    /// Settle a pending send: sent, or failed with why. A settled send stays as it is (false).
    pub fn settle_channel_outbound(&mut self, id: i64, error: Option<&str>) -> Result<bool> {
        let status = if error.is_some() { "failed" } else { "sent" };
        let n = self.exec(
            "UPDATE channel_outbound SET status = ?2, error = ?3, updated_at = ?4
             WHERE id = ?1 AND status = 'pending'",
            args![id, status, error, self.now],
        )?;
        if n == 1 {
            let row = self.channel_outbound(id)?;
            self.event(
                "channel_outbound_settled",
                None,
                None,
                json!({"id": id, "account": row.account, "chat_id": row.chat_id,
                       "kind": row.kind, "status": status, "error": error,
                       "attempts": row.attempts}),
            )?;
        }
        Ok(n == 1)
    }
}

fn chat_row(r: &crate::Row) -> Result<ChannelChat> {
    Ok(ChannelChat {
        account: r.get(0)?,
        chat_id: r.get(1)?,
        chat_type: r.get(2)?,
        chat_name: r.get(3)?,
        session_id: SessionId(r.get(4)?),
        bot_id: BotId(r.get(5)?),
        created_at: r.get(6)?,
    })
}

fn message_row(r: &crate::Row) -> Result<ChannelMessage> {
    Ok(ChannelMessage {
        account: r.get(0)?,
        message_id: r.get(1)?,
        chat_id: r.get(2)?,
        sender_id: r.get(3)?,
        session_id: SessionId(r.get(4)?),
        line_id: SessionMessageId(r.get(5)?),
        created_at: r.get(6)?,
    })
}

fn outbound_row(r: &crate::Row) -> Result<ChannelOutbound> {
    let kind: String = r.get(4)?;
    let status: String = r.get(8)?;
    Ok(ChannelOutbound {
        id: r.get(0)?,
        idempotency_key: r.get(1)?,
        account: r.get(2)?,
        chat_id: r.get(3)?,
        kind: OutboundKind::parse(&kind).map_err(StoreError::Corrupt)?,
        text: r.get(5)?,
        reply_to_message_id: r.get(6)?,
        line_id: r.get::<Option<i64>>(7)?.map(SessionMessageId),
        status: OutboundStatus::parse(&status)?,
        attempts: r.get(9)?,
        error: r.get(10)?,
        created_at: r.get(11)?,
        updated_at: r.get(12)?,
    })
}
