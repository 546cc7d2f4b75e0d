//! Chat channels (issue 18 items 12–13): outside chats reach Bots through channel accounts
//! (`[channels.NAME]`).
//!
//! - [`ChannelAdapter`] is the port to a chat service; [`WebhookAdapter`] the one built, a
//!   signed JSON webhook both ways ([`signature`]).
//! - Pure rules: which messages an account takes ([`filter`]) and where they go, with the
//!   keys that make each happen once ([`routing`]).
//! - [`Channels`] holds the accounts and takes inbound requests ([`Channels::accept`]); with
//!   Boss Mode off each (account, chat) has one direct conversation with the account's Bot.
//! - [`ReplyRecorder`] records the Bot's finished replies as pending sends in the transaction
//!   that writes them; the bridge ([`Channels::spawn_sender`]) makes and settles them.
//! - [`BossIngress`] is the seam Boss Mode's routing plugs into ([`seam`]).

pub mod adapter;
mod bridge;
pub mod def;
pub mod error;
pub mod filter;
pub mod ingress;
pub mod message;
pub mod observer;
pub mod routing;
pub mod seam;
mod service;
pub mod signature;
pub mod webhook;

pub use adapter::{ChannelAdapter, InboundError, SendError, Sent};
pub use def::{ChannelDef, ChannelKind};
pub use error::ChannelError;
pub use filter::{FilterRules, Refusal};
pub use ingress::{Accepted, Outcome};
pub use message::{ChatType, InboundMessage, OutboundBody, Reaction};
pub use observer::ReplyRecorder;
pub use seam::BossIngress;
pub use service::{Account, Channels, RetryPolicy};
pub use signature::{SIGNATURE_HEADER, sign, verify};
pub use webhook::{InboundBody, WebhookAdapter};
