//! What a runtime boss turn on a channel session is told about answering (issue 18 item 18,
//! digest §8.4): the explicit-delivery hint (nothing reaches the chat unless `channel_push`
//! sends it) in the system prompt, and `<boss-reply-target>`, the inbound message the latest
//! channel line came from, in the situation block. A channel-less local session replies in
//! Troupe and is told neither.

use super::push::{CHANNEL_PUSH, channel_boss_account};
use serde_json::Value;
use troupe_core::thread::Thread;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{Store, StoreError};

pub const NAME: &str = "runtime_boss_reply_target";

pub struct ReplyTarget;

/// The hint, for a session routed from `account`.
pub fn delivery_hint(account: &str) -> String {
    format!(
        "Explicit delivery: this session is reached from the chat account {account:?}. Nothing \
         you write here reaches the chat by itself. To answer, call {CHANNEL_PUSH} with \
         reply_to_message_id set to the <boss-reply-target> message id: an anchored reply to \
         that chat is sent at once. A message of its own, another chat or another account waits \
         for a person's permission."
    )
}

/// The block for the latest inbound message's metadata (`None`: none came in yet).
pub fn reply_target_block(meta: Option<&Value>) -> String {
    let s = |k: &str| {
        meta.and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .map(String::from)
    };
    let Some(message) = s("channel_message_id") else {
        return "<boss-reply-target>\nno chat message has reached this session yet\n</boss-reply-target>"
            .into();
    };
    let named = |name: Option<String>, id: Option<String>| match (name, id) {
        (Some(n), Some(i)) => format!("{n} ({i})"),
        (None, Some(i)) => i,
        (Some(n), None) => n,
        (None, None) => "?".into(),
    };
    format!(
        "<boss-reply-target>\naccount: {}\nchat: {} [{}]\nsender: {}\nmessage_id: {message}\n</boss-reply-target>",
        s("channel_account").unwrap_or_default(),
        named(s("channel_chat_name"), s("channel_chat_id")),
        s("channel_chat_type").unwrap_or_default(),
        named(s("channel_sender_name"), s("channel_sender_id")),
    )
}

impl ContextContributor for ReplyTarget {
    fn name(&self) -> &str {
        NAME
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        let found = store.read(|tx| {
            let Some((_, account)) = channel_boss_account(tx, thread)? else {
                return Ok::<_, StoreError>(None);
            };
            Ok(Some((account, tx.latest_channel_metadata(thread.id)?)))
        });
        match found {
            Ok(Some((account, meta))) => {
                out.system.push(delivery_hint(&account));
                out.situation.push(reply_target_block(meta.as_ref()));
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "reply target not read; left out")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reply_target_names_the_message_to_anchor_to() {
        let meta = json!({"channel_account": "acme", "channel_chat_id": "c-9",
            "channel_chat_type": "group", "channel_chat_name": "Ops",
            "channel_sender_id": "u1", "channel_sender_name": null, "channel_message_id": "m1"});
        assert_eq!(
            reply_target_block(Some(&meta)),
            "<boss-reply-target>\naccount: acme\nchat: Ops (c-9) [group]\nsender: u1\nmessage_id: m1\n</boss-reply-target>"
        );
        assert!(reply_target_block(None).contains("no chat message"));
        assert!(delivery_hint("acme").contains("channel_push"));
    }
}
