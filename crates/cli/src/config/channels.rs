//! `[channels.NAME]`: chat channel accounts `troupe serve` takes messages for. The one kind is
//! a generic signed webhook (see docs/CHANNELS.md).
//!
//! ```toml
//! [channels.acme]
//! kind = "webhook"
//! bot = "Ada"                            # a Bot's name or id; it answers the account's chats
//! secret_env = "ACME_CHANNEL_SECRET"     # the variable holding the HMAC secret
//! outbound_url = "https://bridge.example/troupe/out"
//! # require_mention = true               # group messages must mention the Bot
//! # allow_group = true
//! # allow_dm = true
//! # enabled = true
//! ```
//!
//! The table's key is the account's name (the `:account` of its inbound route); each table is
//! checked by [`ChannelDef::validate`].

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use troupe_channels::{ChannelDef, ChannelKind, FilterRules};

/// One table as written in the file, unknown fields refused so typos surface with their line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileChannel {
    kind: String,
    bot: String,
    secret_env: String,
    outbound_url: String,
    #[serde(default)]
    require_mention: Option<bool>,
    #[serde(default)]
    allow_group: Option<bool>,
    #[serde(default)]
    allow_dm: Option<bool>,
    #[serde(default)]
    enabled: Option<bool>,
}

pub(super) fn strict_channels<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, ChannelDef>, D::Error> {
    let raw = BTreeMap::<String, FileChannel>::deserialize(d)?;
    raw.into_iter()
        .map(|(name, c)| {
            let kind = ChannelKind::parse(&c.kind)
                .map_err(|m| serde::de::Error::custom(format!("[channels.{name}] kind: {m}")))?;
            let defaults = FilterRules::default();
            let def = ChannelDef {
                name: name.clone(),
                kind,
                bot: c.bot,
                secret_env: c.secret_env,
                outbound_url: c.outbound_url,
                filter: FilterRules {
                    require_mention: c.require_mention.unwrap_or(defaults.require_mention),
                    allow_group: c.allow_group.unwrap_or(defaults.allow_group),
                    allow_dm: c.allow_dm.unwrap_or(defaults.allow_dm),
                },
                enabled: c.enabled.unwrap_or(true),
            };
            Ok((name, def))
        })
        .collect()
}
