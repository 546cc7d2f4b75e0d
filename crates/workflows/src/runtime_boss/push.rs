//! `channel_push {text, account_id?, chat_id?, reply_to_message_id?}` (issue 18 item 15,
//! digest §8.3): the only way a runtime boss session reaches a chat (RB-3). It is for
//! boss-role sessions routed from a channel account; anything else gets a refusal that writes
//! nothing. The target defaults to the chat the latest inbound message came from (its
//! metadata: the endpoint stores the sentinel chat). An anchored reply to that chat on the
//! session's own account is recorded in the outbound ledger at once (RB-4); every other push
//! opens a `communication` permission request and answers `awaiting_permission`
//! ([`super::permissions`] sends it once allowed).

use crate::slot::WorkflowSlot;
use crate::tool_results::{args, reply};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::boss::BossRole;
use troupe_core::channel_push::{Inbound, Push, PushArgs, needs_permission, resolve};
use troupe_core::thread::Thread;
use troupe_core::{RunId, SessionId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;
use troupe_store::{COMMUNICATION, NewChannelOutbound, OutboundKind, StoreError, Tx};

/// The tool's name, as the `boss-synergy` toolset lists it.
pub const CHANNEL_PUSH: &str = "channel_push";
pub const OWNER: &str = "workflows.runtime_boss";

/// Every push's key starts so, then names its session: a failed one is told to it.
pub const PUSH_KEY_PREFIX: &str = "channel_push:";

const CONTRACT: &str = r#"{"text": "On it — deploy starts at 14:00.", "reply_to_message_id": "<the inbound message id>"}"#;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    text: String,
    #[serde(default)]
    account_id: Option<String>,
    #[serde(default)]
    chat_id: Option<String>,
    #[serde(default)]
    reply_to_message_id: Option<String>,
}

/// The key of a push made at once: one per tool call.
pub fn call_key(session: SessionId, run: RunId, call_id: &str) -> String {
    format!("{PUSH_KEY_PREFIX}{}:run:{}:{call_id}", session.0, run.0)
}

/// The key of a push made once its permission request was allowed.
pub fn permission_key(session: SessionId, permission: i64) -> String {
    format!("{PUSH_KEY_PREFIX}{}:permission:{permission}", session.0)
}

/// The session a push key names.
pub fn key_session(key: &str) -> Option<SessionId> {
    key.strip_prefix(PUSH_KEY_PREFIX)?
        .split(':')
        .next()?
        .parse::<i64>()
        .ok()
        .map(SessionId)
}

/// The send a push records.
pub fn outbound(push: &Push, key: String) -> NewChannelOutbound {
    NewChannelOutbound {
        idempotency_key: key,
        account: push.account.clone(),
        chat_id: push.chat_id.clone(),
        kind: if push.reply_to_message_id.is_some() {
            OutboundKind::Reply
        } else {
            OutboundKind::Message
        },
        text: push.text.clone(),
        reply_to_message_id: push.reply_to_message_id.clone(),
        line_id: None,
    }
}

/// A permission request's body is the push it would make.
pub fn push_json(p: &Push) -> Value {
    json!({"account_id": p.account, "chat_id": p.chat_id, "text": p.text,
           "reply_to_message_id": p.reply_to_message_id})
}

pub fn push_of(v: &Value) -> Option<Push> {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
    Some(Push {
        account: s("account_id")?,
        chat_id: s("chat_id")?,
        text: s("text")?,
        reply_to_message_id: s("reply_to_message_id"),
    })
}

/// The inbound message a session's latest channel line came from.
pub fn latest_inbound(tx: &Tx<'_>, thread: &Thread) -> Result<Option<Inbound>, StoreError> {
    let Some(meta) = tx.latest_channel_metadata(thread.id)? else {
        return Ok(None);
    };
    let s = |k: &str| meta.get(k).and_then(Value::as_str).map(String::from);
    Ok(
        match (
            s("channel_account"),
            s("channel_chat_id"),
            s("channel_message_id"),
        ) {
            (Some(account), Some(chat_id), Some(message_id)) => Some(Inbound {
                account,
                chat_id,
                message_id,
            }),
            _ => None,
        },
    )
}

/// A boss-role slot on the thread (the cheap check offered tools use).
fn boss_role(thread: &Thread) -> bool {
    WorkflowSlot::of(thread.workflow.as_ref())
        .and_then(|s| s.boss().map(|b| b.role))
        .is_some_and(|r| r == BossRole::Boss)
}

/// The session's own channel account when it is a runtime boss session routed from one.
pub fn channel_boss_account(
    tx: &Tx<'_>,
    thread: &Thread,
) -> Result<Option<(SessionId, String)>, StoreError> {
    if !boss_role(thread) {
        return Ok(None);
    }
    let Some((session, _)) = tx.thread_session(thread.id)? else {
        return Ok(None);
    };
    Ok(tx
        .runtime_boss_row(session)?
        .and_then(|r| r.account)
        .map(|a| (session, a)))
}

fn refused(code: &str, message: String) -> ToolReply {
    reply(
        json!({"ok": false, "code": code, "message": message, "written": false}),
        true,
        false,
    )
}

/// What a call did.
enum Outcome {
    Refused(&'static str, String),
    Sending { send_id: i64, push: Push },
    Awaiting { permission_id: i64, push: Push },
}

fn push_in(tx: &mut Tx<'_>, ctx: &ToolCallContext, a: &PushArgs) -> Result<Outcome, StoreError> {
    let Some((session, own)) = channel_boss_account(tx, &ctx.thread)? else {
        return Ok(Outcome::Refused(
            "not_channel_boss",
            "channel_push is for a runtime boss session routed from a chat account; this \
             session is not one, so answer here"
                .into(),
        ));
    };
    let latest = latest_inbound(tx, &ctx.thread)?;
    let push = match resolve(a, &own, latest.as_ref()) {
        Ok(p) => p,
        Err(r) => return Ok(Outcome::Refused(r.code(), r.message())),
    };
    let anchor_chat = match &push.reply_to_message_id {
        Some(m) => tx.channel_message(&push.account, m)?.map(|m| m.chat_id),
        None => None,
    };
    if needs_permission(&push, &own, latest.as_ref(), anchor_chat.as_deref()) {
        let r = tx.open_permission_request(session, COMMUNICATION, &push_json(&push))?;
        return Ok(Outcome::Awaiting {
            permission_id: r.id,
            push,
        });
    }
    let key = call_key(session, ctx.run_id, &ctx.call_id);
    let (sent, _) = tx.record_channel_outbound(&outbound(&push, key))?;
    Ok(Outcome::Sending {
        send_id: sent.id,
        push,
    })
}

struct ChannelPush;

#[async_trait]
impl ToolHandler for ChannelPush {
    async fn call(&self, ctx: &ToolCallContext, raw: &str) -> ToolReply {
        let a: Args = match args(raw, CONTRACT) {
            Ok(a) => a,
            Err(r) => return r,
        };
        let a = PushArgs {
            text: a.text,
            account_id: a.account_id,
            chat_id: a.chat_id,
            reply_to_message_id: a.reply_to_message_id,
        };
        match ctx.store.write(|tx| push_in(tx, ctx, &a)) {
            Err(e) => ToolReply::error(format!("channel_push: {e}; nothing was recorded")),
            Ok(Outcome::Refused(code, message)) => refused(code, message),
            Ok(Outcome::Sending { send_id, push }) => reply(
                json!({"ok": true, "status": "sending", "send_id": send_id,
                       "account_id": push.account, "chat_id": push.chat_id,
                       "reply_to_message_id": push.reply_to_message_id,
                       "message": "recorded; it is sent to the chat now (a failure is told to you \
                                   as channel_delivery_failed)"}),
                false,
                false,
            ),
            Ok(Outcome::Awaiting {
                permission_id,
                push,
            }) => reply(
                json!({"ok": true, "status": "awaiting_permission",
                       "permission_id": permission_id,
                       "account_id": push.account, "chat_id": push.chat_id,
                       "reply_to_message_id": push.reply_to_message_id,
                       "message": "not an anchored reply to the current chat on your own account, \
                                   so a person decides: it is sent once allowed; a denial is told \
                                   to you. Do not push it again meanwhile."}),
                false,
                false,
            ),
        }
    }
}

/// The `channel_push` tool, offered to boss-role threads (the call itself checks that the
/// session is a runtime boss session routed from a chat account).
pub fn channel_push_tool() -> ToolRegistration {
    ToolRegistration {
        owner: OWNER.into(),
        spec: ToolSpec {
            name: CHANNEL_PUSH.into(),
            description: "Send a message to the outside chat this runtime boss session is \
                reached from: the only way anything you write reaches it. Without chat_id it \
                goes to the chat the latest message came from; with reply_to_message_id it \
                answers that message. An anchored reply to the current chat on your own account \
                is sent at once; anything else waits for a person's permission \
                (awaiting_permission)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "What to send."},
                    "account_id": {"type": "string", "description": "Another channel account (default: this session's)."},
                    "chat_id": {"type": "string", "description": "Another chat (default: the latest message's)."},
                    "reply_to_message_id": {"type": "string", "description": "The message this answers (the reply target's message id)."}
                },
                "required": ["text"],
                "additionalProperties": false
            }),
        },
        effectful: true,
        read_only: false,
        available: Arc::new(boss_role),
        handler: Arc::new(ChannelPush),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_keys_name_their_session() {
        let k = call_key(SessionId(7), RunId(3), "call_1");
        assert_eq!(k, "channel_push:7:run:3:call_1");
        assert_eq!(key_session(&k), Some(SessionId(7)));
        assert_eq!(
            key_session(&permission_key(SessionId(9), 4)),
            Some(SessionId(9))
        );
        assert_eq!(key_session("channel:acme:reply:3"), None);
    }

    #[test]
    fn a_push_round_trips_through_its_request() {
        let p = Push {
            account: "acme".into(),
            chat_id: "c2".into(),
            text: "hi".into(),
            reply_to_message_id: None,
        };
        assert_eq!(push_of(&push_json(&p)), Some(p.clone()));
        assert_eq!(outbound(&p, "k".into()).kind, OutboundKind::Message);
    }
}
