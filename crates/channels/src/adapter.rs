//! The port between Troupe and a chat service (digest §11): an adapter reads and authenticates
//! what the service sends in, and sends replies, messages and reactions out.

use crate::message::{InboundMessage, Reaction};
use async_trait::async_trait;

/// Why an inbound request was not read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InboundError {
    /// The signature is missing or does not match the body (answered 401 `bad_signature`).
    #[error("the signature is missing or does not match the body")]
    BadSignature,
    /// Not JSON at all (400).
    #[error("{0}")]
    Malformed(String),
    /// JSON, but not a message: the text names the field (422).
    #[error("{0}")]
    Invalid(String),
}

/// Why a send did not reach the chat service.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("{0}")]
pub struct SendError(pub String);

/// What the chat service answered to a send.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    /// The service's id of the message it posted, when it says.
    pub message_id: Option<String>,
}

/// One channel account's adapter. `key` is the send's idempotency key: the same for every
/// attempt at one send, so the service can drop a repeat.
#[async_trait]
pub trait ChannelAdapter: Send + Sync {
    /// The account it serves.
    fn account(&self) -> &str;
    /// Authenticate and read one inbound request: its signature header and raw body.
    fn inbound(&self, signature: Option<&str>, body: &[u8])
    -> Result<InboundMessage, InboundError>;
    /// Answer an inbound message, anchored to it.
    async fn reply(
        &self,
        chat_id: &str,
        reply_to_message_id: &str,
        text: &str,
        key: &str,
    ) -> Result<Sent, SendError>;
    /// A message of its own in a chat.
    async fn push(&self, chat_id: &str, text: &str, key: &str) -> Result<Sent, SendError>;
    /// A status reaction on an inbound message.
    async fn react(
        &self,
        chat_id: &str,
        message_id: &str,
        reaction: Reaction,
        key: &str,
    ) -> Result<Sent, SendError>;
}
