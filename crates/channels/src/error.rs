//! What can go wrong with a channel request, each mapped to one HTTP answer by the server.

use crate::adapter::InboundError;
use troupe_collab::CollabError;
use troupe_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// No such account, or it is disabled (404).
    #[error("{0}")]
    UnknownAccount(String),
    /// The request could not be read or authenticated (401, 400 or 422).
    #[error(transparent)]
    Inbound(#[from] InboundError),
    /// The account cannot take the message as things stand (409 with the code).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    #[error(transparent)]
    Collab(#[from] CollabError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ChannelError {
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        ChannelError::Conflict {
            code,
            message: message.into(),
        }
    }
}
