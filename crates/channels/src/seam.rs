//! The seam where Boss Mode's routing plugs in (issue 18 item 13, `boss_mode` ON). With no
//! [`BossIngress`] installed, or one that names no session for an account, every admitted
//! message goes to its chat's own conversation (OFF). Runtime Boss Mode installs one
//! ([`crate::Channels::set_boss_ingress`]): it names the account's runtime boss session while
//! the mode is on, and delivers there itself (the `[chat · sender · time]` prefix, `channel_*`
//! metadata, status reactions through [`crate::Channels::adapter`]); its replies are not
//! carried back automatically (RB-3), since only chats' own conversations are (see
//! [`crate::ReplyRecorder`]), and `channel_push` sends through [`crate::Channels::record_send`].

use crate::error::ChannelError;
use crate::ingress::Accepted;
use crate::message::InboundMessage;
use async_trait::async_trait;
use troupe_core::SessionId;

#[async_trait]
pub trait BossIngress: Send + Sync {
    /// The account's runtime boss session while Boss Mode routes the account; `None` keeps
    /// per-chat routing.
    fn boss_session(&self, account: &str) -> Result<Option<SessionId>, ChannelError>;

    /// Deliver an admitted message to that session, once per `delivery_key`
    /// (`channel:<account>:<message_id>`): a repeat answers `duplicate: true`.
    async fn deliver(
        &self,
        session: SessionId,
        message: &InboundMessage,
        delivery_key: &str,
    ) -> Result<Accepted, ChannelError>;
}
