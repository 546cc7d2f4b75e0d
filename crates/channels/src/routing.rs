//! Routing as pure functions: where an admitted message goes, the keys that make each message
//! and each reply happen once, the text a chat's Bot reads, and which of the Bot's messages are
//! finished replies to carry back to the chat.

use crate::message::{ChatType, InboundMessage};
use troupe_core::SessionId;
use troupe_core::message::{Finish, Message, PartBody, Role};

/// Where an admitted message goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination {
    /// Boss Mode off for the account: the chat's own direct conversation with its Bot.
    ChatConversation,
    /// Boss Mode on for the account: its runtime boss session (see [`crate::BossIngress`]).
    BossSession(SessionId),
}

/// The account's runtime boss session, when Boss Mode routes the account, takes every message
/// of the account; otherwise each chat has its own conversation.
pub fn destination(boss_session: Option<SessionId>) -> Destination {
    match boss_session {
        Some(s) => Destination::BossSession(s),
        None => Destination::ChatConversation,
    }
}

/// The inbox key of a message: a repeat of the same message id delivers nothing.
pub fn delivery_key(account: &str, message_id: &str) -> String {
    format!("channel:{account}:{message_id}")
}

/// The idempotency key of the reply a Bot line carries back to its chat.
pub fn reply_key(account: &str, line: troupe_core::SessionMessageId) -> String {
    format!("channel:{account}:reply:{}", line.0)
}

/// The conversation's title for a chat: the account and the chat's name, else its id.
pub fn chat_title(m: &InboundMessage) -> String {
    let name = m
        .chat_name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty());
    let title = format!("{} · {}", m.account, name.unwrap_or(&m.chat_id));
    title.chars().take(200).collect()
}

/// What the chat's Bot reads: a DM is the person's words as they are; in a group several
/// people share the conversation, so each line says who said it.
pub fn chat_text(m: &InboundMessage) -> String {
    match m.chat_type {
        ChatType::Dm => m.text.clone(),
        ChatType::Group => {
            let who = m.sender_name.as_deref().unwrap_or(&m.sender_id);
            format!("[{who}] {}", m.text)
        }
    }
}

/// A person's message that reaches a working Bot defers the calls its step has not run yet,
/// unless it only asks something (TURN-4, as for a line typed in Troupe).
pub fn defers_calls(steer: bool, text: &str) -> bool {
    steer && !text.trim_end().ends_with(['?', '？'])
}

/// A finished reply: an assistant message with visible text that ended the model's answer
/// (not one that goes on to call tools, failed, or was cut off).
pub fn is_finished_reply(m: &Message) -> bool {
    m.role == Role::Assistant
        && matches!(m.finish, Some(Finish::Stop | Finish::Length))
        && !reply_text(m).is_empty()
}

/// The visible text of a message, as its line shows it.
pub fn reply_text(m: &Message) -> String {
    m.parts
        .iter()
        .filter(|p| p.visible)
        .filter_map(|p| match &p.body {
            PartBody::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(chat_type: ChatType) -> InboundMessage {
        InboundMessage {
            account: "acme".into(),
            chat_id: "c-9".into(),
            chat_type,
            chat_name: None,
            sender_id: "u1".into(),
            sender_name: Some("Ada".into()),
            message_id: "m1".into(),
            text: "deploy it".into(),
            mentioned: true,
        }
    }

    #[test]
    fn route_off_goes_to_the_chat_and_on_to_the_boss() {
        assert_eq!(destination(None), Destination::ChatConversation);
        assert_eq!(
            destination(Some(SessionId(4))),
            Destination::BossSession(SessionId(4))
        );
    }

    #[test]
    fn route_keys_name_the_account_and_message() {
        assert_eq!(delivery_key("acme", "m1"), "channel:acme:m1");
        assert_eq!(
            reply_key("acme", troupe_core::SessionMessageId(12)),
            "channel:acme:reply:12"
        );
    }

    #[test]
    fn route_group_lines_say_who_spoke() {
        assert_eq!(chat_text(&msg(ChatType::Dm)), "deploy it");
        assert_eq!(chat_text(&msg(ChatType::Group)), "[Ada] deploy it");
        let anon = InboundMessage {
            sender_name: None,
            ..msg(ChatType::Group)
        };
        assert_eq!(chat_text(&anon), "[u1] deploy it");
    }

    #[test]
    fn route_titles_prefer_the_chat_name() {
        assert_eq!(chat_title(&msg(ChatType::Dm)), "acme · c-9");
        let named = InboundMessage {
            chat_name: Some("Ops".into()),
            ..msg(ChatType::Group)
        };
        assert_eq!(chat_title(&named), "acme · Ops");
        let long = InboundMessage {
            chat_name: Some("x".repeat(500)),
            ..msg(ChatType::Group)
        };
        assert_eq!(chat_title(&long).chars().count(), 200);
    }

    #[test]
    fn route_steers_defer_unless_they_ask() {
        assert!(defers_calls(true, "stop that"));
        assert!(!defers_calls(true, "is it done? "));
        assert!(!defers_calls(false, "stop that"), "a task defers nothing");
    }
}
