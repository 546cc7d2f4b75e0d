//! Which inbound messages an account takes (pure): DMs and groups can each be switched off,
//! and a group message must mention the Bot unless the account says otherwise.

use crate::message::{ChatType, InboundMessage};
use serde::{Deserialize, Serialize};

/// An account's filter flags (`[channels.NAME]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterRules {
    /// A group message is taken only when it mentions the Bot (default true).
    pub require_mention: bool,
    /// Group chats are taken at all (default true).
    pub allow_group: bool,
    /// Direct messages are taken at all (default true).
    pub allow_dm: bool,
}

impl Default for FilterRules {
    fn default() -> Self {
        FilterRules {
            require_mention: true,
            allow_group: true,
            allow_dm: true,
        }
    }
}

/// Why a message was not taken; the inbound route answers it as `reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    GroupNotAllowed,
    DmNotAllowed,
    NotMentioned,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::GroupNotAllowed => "group_not_allowed",
            Refusal::DmNotAllowed => "dm_not_allowed",
            Refusal::NotMentioned => "not_mentioned",
        }
    }
}

/// Take the message, or say why not. A DM needs no mention: it is said to the Bot.
pub fn admit(rules: &FilterRules, m: &InboundMessage) -> Result<(), Refusal> {
    match m.chat_type {
        ChatType::Dm if !rules.allow_dm => Err(Refusal::DmNotAllowed),
        ChatType::Dm => Ok(()),
        ChatType::Group if !rules.allow_group => Err(Refusal::GroupNotAllowed),
        ChatType::Group if rules.require_mention && !m.mentioned => Err(Refusal::NotMentioned),
        ChatType::Group => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(chat_type: ChatType, mentioned: bool) -> InboundMessage {
        InboundMessage {
            account: "acme".into(),
            chat_id: "c".into(),
            chat_type,
            chat_name: None,
            sender_id: "u".into(),
            sender_name: None,
            message_id: "m".into(),
            text: "hi".into(),
            mentioned,
        }
    }

    #[test]
    fn filter_group_needs_a_mention_by_default() {
        let r = FilterRules::default();
        assert_eq!(
            admit(&r, &msg(ChatType::Group, false)),
            Err(Refusal::NotMentioned)
        );
        assert_eq!(admit(&r, &msg(ChatType::Group, true)), Ok(()));
        assert_eq!(
            admit(&r, &msg(ChatType::Dm, false)),
            Ok(()),
            "a DM is said to the Bot"
        );
    }

    #[test]
    fn filter_mention_can_be_waived_for_groups() {
        let r = FilterRules {
            require_mention: false,
            ..FilterRules::default()
        };
        assert_eq!(admit(&r, &msg(ChatType::Group, false)), Ok(()));
    }

    #[test]
    fn filter_allow_flags_close_a_chat_type_whatever_the_mention() {
        let no_groups = FilterRules {
            allow_group: false,
            ..FilterRules::default()
        };
        assert_eq!(
            admit(&no_groups, &msg(ChatType::Group, true)),
            Err(Refusal::GroupNotAllowed)
        );
        assert_eq!(admit(&no_groups, &msg(ChatType::Dm, false)), Ok(()));
        let no_dms = FilterRules {
            allow_dm: false,
            ..FilterRules::default()
        };
        assert_eq!(
            admit(&no_dms, &msg(ChatType::Dm, true)),
            Err(Refusal::DmNotAllowed)
        );
        assert_eq!(admit(&no_dms, &msg(ChatType::Group, true)), Ok(()));
    }

    #[test]
    fn filter_refusals_have_stable_names() {
        let names: Vec<_> = [
            Refusal::GroupNotAllowed,
            Refusal::DmNotAllowed,
            Refusal::NotMentioned,
        ]
        .iter()
        .map(|r| r.as_str())
        .collect();
        assert_eq!(
            names,
            ["group_not_allowed", "dm_not_allowed", "not_mentioned"]
        );
    }
}
