//! What crosses a channel: an inbound message as the adapter reads it, and the body of an
//! outbound send as the receiver reads it.

use serde::{Deserialize, Serialize};

/// A direct message or a group chat.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatType {
    Dm,
    Group,
}

impl ChatType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChatType::Dm => "dm",
            ChatType::Group => "group",
        }
    }
}

/// One message from an outside chat, read and authenticated by its account's adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboundMessage {
    /// The channel account (`[channels.NAME]`) it came through.
    pub account: String,
    pub chat_id: String,
    pub chat_type: ChatType,
    pub chat_name: Option<String>,
    pub sender_id: String,
    pub sender_name: Option<String>,
    /// The chat service's id of the message: unique per account, the key of its delivery.
    pub message_id: String,
    pub text: String,
    /// Whether the message mentions the account's Bot (the chat service knows; Troupe does not
    /// parse the text for it).
    pub mentioned: bool,
}

/// A status reaction on an inbound message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reaction {
    Received,
    Working,
    Done,
}

impl Reaction {
    pub fn as_str(self) -> &'static str {
        match self {
            Reaction::Received => "received",
            Reaction::Working => "working",
            Reaction::Done => "done",
        }
    }
}

pub use troupe_store::OutboundKind;

/// The JSON body of every outbound send, signed like inbound requests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboundBody {
    pub account_id: String,
    pub chat_id: String,
    /// The message; for a reaction, its name (`received`, `working`, `done`).
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to_message_id: Option<String>,
    /// `reply`, `message` or `reaction`.
    pub kind: String,
    /// The same for every attempt at one send: a receiver that saw it already drops it.
    pub idempotency_key: String,
}
