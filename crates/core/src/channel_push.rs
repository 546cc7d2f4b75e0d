//! Runtime Boss channel rules as pure functions (digest §8.3, RB-3, RB-4): what a runtime
//! boss reads for a chat message (a source prefix), where a `channel_push` goes by default
//! (the inbound message's chat, never the endpoint's sentinel), and whether it needs a
//! person's permission (only an anchored reply to the current chat on the session's own
//! account does not).

use crate::time::iso_utc;

/// The chat id a runtime boss session's endpoint stores: not a chat, never a target.
pub const SENTINEL_CHAT: &str = "boss";

/// The longest text one push may carry.
pub const MAX_PUSH_CHARS: usize = 20_000;

/// The inbound message a runtime boss turn answers, as its metadata says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inbound {
    pub account: String,
    pub chat_id: String,
    pub message_id: String,
}

/// What the tool was asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PushArgs {
    pub text: String,
    pub account_id: Option<String>,
    pub chat_id: Option<String>,
    pub reply_to_message_id: Option<String>,
}

/// A push resolved to where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Push {
    pub account: String,
    pub chat_id: String,
    pub text: String,
    /// Set: a reply anchored to that message; unset: a message of its own.
    pub reply_to_message_id: Option<String>,
}

/// Why a push cannot be made as asked (nothing is recorded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PushRefusal {
    EmptyText,
    TooLong(usize),
    /// No chat named and no inbound message to answer.
    NoTarget,
    /// The sentinel chat id was named.
    Sentinel,
}

impl PushRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            PushRefusal::EmptyText | PushRefusal::TooLong(_) => "invalid_text",
            PushRefusal::NoTarget => "no_target",
            PushRefusal::Sentinel => "sentinel_chat",
        }
    }

    pub fn message(&self) -> String {
        match self {
            PushRefusal::EmptyText => "text: say something (it is empty)".into(),
            PushRefusal::TooLong(n) => {
                format!("text: {n} characters; one push carries at most {MAX_PUSH_CHARS}")
            }
            PushRefusal::NoTarget => "chat_id: no chat message has reached this session yet, so \
                 there is no chat to answer; name chat_id"
                .into(),
            PushRefusal::Sentinel => format!(
                "chat_id: {SENTINEL_CHAT:?} is this session's endpoint marker, not a chat; leave \
                 chat_id out to answer the chat the latest message came from"
            ),
        }
    }
}

/// Where a push goes: the named account and chat, else the session's own account and the
/// latest inbound message's chat. Blank strings count as not named.
pub fn resolve(
    args: &PushArgs,
    own_account: &str,
    latest: Option<&Inbound>,
) -> Result<Push, PushRefusal> {
    let text = args.text.trim();
    if text.is_empty() {
        return Err(PushRefusal::EmptyText);
    }
    let n = text.chars().count();
    if n > MAX_PUSH_CHARS {
        return Err(PushRefusal::TooLong(n));
    }
    let named = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    let account = named(&args.account_id).unwrap_or_else(|| own_account.to_string());
    let chat_id = match named(&args.chat_id) {
        Some(c) => c,
        None => latest
            .filter(|l| l.account == account)
            .map(|l| l.chat_id.clone())
            .ok_or(PushRefusal::NoTarget)?,
    };
    if chat_id == SENTINEL_CHAT {
        return Err(PushRefusal::Sentinel);
    }
    Ok(Push {
        account,
        chat_id,
        text: text.to_string(),
        reply_to_message_id: named(&args.reply_to_message_id),
    })
}

/// RB-4: an anchored reply to the chat the latest inbound message came from, on the session's
/// own account, is the boss's normal answer and needs no prompt; `anchor_chat` is the chat the
/// anchored message is known to belong to (on that account). Everything else does.
pub fn needs_permission(
    push: &Push,
    own_account: &str,
    latest: Option<&Inbound>,
    anchor_chat: Option<&str>,
) -> bool {
    let Some(latest) = latest else {
        return true;
    };
    let anchored_here = push.reply_to_message_id.is_some()
        && anchor_chat == Some(push.chat_id.as_str())
        && push.chat_id == latest.chat_id;
    let own = push.account == own_account && latest.account == own_account;
    !(anchored_here && own)
}

/// What a runtime boss reads for a chat message: `[chat · sender · time] text`, the chat by
/// name (else id), the sender by name (else id), the time in UTC.
pub fn source_prefixed(chat: &str, sender: &str, at_ms: i64, text: &str) -> String {
    format!("[{chat} · {sender} · {}] {text}", iso_utc(at_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latest() -> Inbound {
        Inbound {
            account: "acme".into(),
            chat_id: "c1".into(),
            message_id: "m1".into(),
        }
    }

    fn args(text: &str) -> PushArgs {
        PushArgs {
            text: text.into(),
            ..PushArgs::default()
        }
    }

    #[test]
    fn push_defaults_to_the_latest_chat_on_the_own_account() {
        let p = resolve(&args(" done "), "acme", Some(&latest())).unwrap();
        assert_eq!((p.account.as_str(), p.chat_id.as_str()), ("acme", "c1"));
        assert_eq!(p.text, "done");
        assert_eq!(p.reply_to_message_id, None);
        assert_eq!(
            resolve(&args("x"), "acme", None),
            Err(PushRefusal::NoTarget)
        );
        // Another account named: the latest chat is the own account's, not a default there.
        let other = PushArgs {
            account_id: Some("zeta".into()),
            ..args("x")
        };
        assert_eq!(
            resolve(&other, "acme", Some(&latest())),
            Err(PushRefusal::NoTarget)
        );
    }

    #[test]
    fn push_never_targets_the_sentinel_or_sends_nothing() {
        let sentinel = PushArgs {
            chat_id: Some("boss".into()),
            ..args("x")
        };
        assert_eq!(
            resolve(&sentinel, "acme", Some(&latest())),
            Err(PushRefusal::Sentinel)
        );
        assert_eq!(
            resolve(&args("  "), "acme", Some(&latest())),
            Err(PushRefusal::EmptyText)
        );
        let long = "x".repeat(MAX_PUSH_CHARS + 1);
        assert!(matches!(
            resolve(&args(&long), "acme", Some(&latest())),
            Err(PushRefusal::TooLong(_))
        ));
    }

    #[test]
    fn push_anchored_same_chat_own_account_needs_no_permission() {
        let l = latest();
        let anchored = resolve(
            &PushArgs {
                reply_to_message_id: Some("m1".into()),
                ..args("ok")
            },
            "acme",
            Some(&l),
        )
        .unwrap();
        assert!(!needs_permission(&anchored, "acme", Some(&l), Some("c1")));
        // The anchor is not known to be in that chat.
        assert!(needs_permission(&anchored, "acme", Some(&l), None));
        assert!(needs_permission(&anchored, "acme", Some(&l), Some("c2")));
        // Unanchored.
        let plain = resolve(&args("ok"), "acme", Some(&l)).unwrap();
        assert!(needs_permission(&plain, "acme", Some(&l), None));
        // Another chat, anchored to a message there.
        let elsewhere = Push {
            chat_id: "c2".into(),
            ..anchored.clone()
        };
        assert!(needs_permission(&elsewhere, "acme", Some(&l), Some("c2")));
        // Another account.
        let abroad = Push {
            account: "zeta".into(),
            ..anchored.clone()
        };
        assert!(needs_permission(&abroad, "acme", Some(&l), Some("c1")));
        // Nothing came in yet.
        assert!(needs_permission(&anchored, "acme", None, Some("c1")));
    }

    #[test]
    fn prefix_names_chat_sender_and_time() {
        assert_eq!(
            source_prefixed("Ops", "Ada", 1_709_214_307_000, "deploy"),
            "[Ops · Ada · 2024-02-29T13:45:07Z] deploy"
        );
    }
}
