//! A channel account's definition: one shape for the config file's `[channels.NAME]` and the
//! daemon, checked as a whole so a mistake names its field.

use crate::filter::FilterRules;

/// How an account talks to its chat service. Only a generic signed webhook is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    Webhook,
}

impl ChannelKind {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "webhook" => Ok(ChannelKind::Webhook),
            other => Err(format!(
                "unknown kind {other:?} (the one kind is \"webhook\")"
            )),
        }
    }
}

/// `[channels.NAME]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelDef {
    /// The account's name: the `:account` of `/v1/channels/:account/inbound`.
    pub name: String,
    pub kind: ChannelKind,
    /// The Bot that answers the account's chats: a name or an id (`3`, `bot_3`).
    pub bot: String,
    /// The environment variable holding the HMAC secret (never the secret itself).
    pub secret_env: String,
    /// Where signed outbound sends are POSTed.
    pub outbound_url: String,
    pub filter: FilterRules,
    pub enabled: bool,
}

impl ChannelDef {
    /// Every field checked; the error names the table and the field.
    pub fn validate(&self) -> Result<(), String> {
        let at = |field: &str, m: String| format!("[channels.{}] {field}: {m}", self.name);
        if self.name.is_empty()
            || self.name.len() > 32
            || !self
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        {
            return Err(at(
                "name",
                "1 to 32 of a-z, 0-9, - and _ (it is a path segment)".into(),
            ));
        }
        if self.bot.trim().is_empty() {
            return Err(at(
                "bot",
                "name the Bot that answers (a name or an id)".into(),
            ));
        }
        let env_ok = !self.secret_env.is_empty()
            && !self.secret_env.starts_with(|c: char| c.is_ascii_digit())
            && self
                .secret_env
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !env_ok {
            return Err(at(
                "secret_env",
                format!(
                    "{:?} is not an environment variable name (letters, digits and _)",
                    self.secret_env
                ),
            ));
        }
        let url = self.outbound_url.trim();
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"));
        if rest.is_none_or(|r| r.is_empty() || r.starts_with('/')) {
            return Err(at(
                "outbound_url",
                format!("{url:?} is not an http:// or https:// URL with a host"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> ChannelDef {
        ChannelDef {
            name: "acme".into(),
            kind: ChannelKind::Webhook,
            bot: "Ada".into(),
            secret_env: "ACME_CHANNEL_SECRET".into(),
            outbound_url: "http://127.0.0.1:9/out".into(),
            filter: FilterRules::default(),
            enabled: true,
        }
    }

    #[test]
    fn def_valid_passes() {
        assert_eq!(def().validate(), Ok(()));
    }

    #[test]
    fn def_errors_name_their_field() {
        let cases = [
            (
                ChannelDef {
                    name: "Acme Co".into(),
                    ..def()
                },
                "[channels.Acme Co] name:",
            ),
            (
                ChannelDef {
                    bot: " ".into(),
                    ..def()
                },
                "[channels.acme] bot:",
            ),
            (
                ChannelDef {
                    secret_env: "1X".into(),
                    ..def()
                },
                "[channels.acme] secret_env:",
            ),
            (
                ChannelDef {
                    secret_env: "A-B".into(),
                    ..def()
                },
                "[channels.acme] secret_env:",
            ),
            (
                ChannelDef {
                    outbound_url: "localhost:80".into(),
                    ..def()
                },
                "[channels.acme] outbound_url:",
            ),
            (
                ChannelDef {
                    outbound_url: "http://".into(),
                    ..def()
                },
                "[channels.acme] outbound_url:",
            ),
        ];
        for (d, want) in cases {
            let e = d.validate().unwrap_err();
            assert!(e.starts_with(want), "{e}");
        }
        assert!(
            ChannelKind::parse("feishu")
                .unwrap_err()
                .contains("webhook")
        );
    }
}
