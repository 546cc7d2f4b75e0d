//! Chat channels with Boss Mode off (issue 18 items 12–13) through a real `troupe serve`, a
//! fake OpenAI-compatible model and a local HTTP receiver standing in for the chat service's
//! bridge (it checks every outbound signature):
//!
//! - `s_ch_off_one_conversation_per_chat_reply_anchored`: a signed DM makes one conversation
//!   and the Bot's reply is POSTed back anchored to it; the same message again is a duplicate
//!   that delivers and sends nothing; a bad signature is 401 and an unknown account 404; a
//!   group message without the required mention is not accepted; a second chat gets a second
//!   conversation, and a group's mention is accepted there.
//! - `s_ch_reply_recorded_then_killed_is_sent_after_restart`: the reply is recorded and its
//!   POST is in flight (the receiver holds it unanswered) when the daemon is SIGKILLed; on
//!   restart the same send, with the same idempotency key, is made and settled sent.
//!
//! Both run on PostgreSQL when `TROUPE_TEST_DATABASE` names a server, else on SQLite.

mod daemon_support;

use daemon_support::channels::*;
use daemon_support::mcp::{neutral_reading, test_database};
use daemon_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The Bot answers each message by naming it.
fn answering(req: &Value) -> Reply {
    if let Some(r) = neutral_reading(req) {
        return Reply::Now(r);
    }
    let asked = fresh_user(req);
    let last = asked.lines().last().unwrap_or_default().to_string();
    Reply::Now(text(&format!("Answer to: {last}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s_ch_off_one_conversation_per_chat_reply_anchored() {
    let fake = FakeModel::serve(answering).await;
    let (receiver, outbound) = Receiver::serve(false).await;
    let rig = Rig::new(|p| {
        write_config(
            p,
            &[("fake", &fake.url)],
            &[("default", "fake")],
            &channel_config(&outbound),
        )
    });
    let database = test_database();
    let (_daemon, api) = start(&rig, database.as_deref());
    api.bot("Ada").await;

    // A signed DM: one conversation with Ada, the reply anchored to the message.
    let (status, first) = inbound(&api, "acme", dm("chat-1", "m-1", "hello there"), SECRET).await;
    assert_eq!(status, 202, "{first:#}");
    assert_eq!(first["accepted"], true, "{first:#}");
    assert_eq!(first["duplicate"], false, "{first:#}");
    let session = first["session_id"].as_i64().unwrap();
    let view = api.get(&format!("/v1/sessions/{session}")).await;
    assert_eq!(view["kind"], "direct", "{view:#}");
    let replies = replies_at_least(&receiver, 1).await;
    assert_eq!(
        replies[0],
        json!({"account_id": "acme", "chat_id": "chat-1", "text": "Answer to: hello there",
               "reply_to_message_id": "m-1", "kind": "reply",
               "idempotency_key": replies[0]["idempotency_key"]}),
    );
    assert!(
        replies[0]["idempotency_key"]
            .as_str()
            .unwrap()
            .starts_with("channel:acme:reply:"),
        "{:#}",
        replies[0]
    );
    let lines = api.lines(session).await;
    assert_eq!(
        lines
            .iter()
            .map(|l| (l["author"].as_str().unwrap(), l["body"].as_str().unwrap()))
            .collect::<Vec<_>>(),
        [("user", "hello there"), ("bot", "Answer to: hello there")],
        "the message is a person's line in the conversation"
    );

    // The same message again: a duplicate, in the same conversation, delivering nothing.
    let (status, again) = inbound(&api, "acme", dm("chat-1", "m-1", "hello there"), SECRET).await;
    assert_eq!(status, 202);
    assert_eq!(again["session_id"], session, "{again:#}");
    assert_eq!(again["duplicate"], true, "{again:#}");

    // A bad signature, and an account nobody configured.
    let (status, bad) = inbound(&api, "acme", dm("chat-1", "m-x", "sneaky"), "wrong").await;
    assert_eq!(status, 401, "{bad:#}");
    assert_eq!(bad["error"]["code"], "bad_signature", "{bad:#}");
    let r = api
        .client
        .post(api.url("/v1/channels/acme/inbound"))
        .body(serde_json::to_vec(&dm("chat-1", "m-y", "unsigned")).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401, "no signature at all");
    let (status, unknown) = inbound(&api, "beta", dm("chat-1", "m-1", "hi"), SECRET).await;
    assert_eq!(status, 404, "{unknown:#}");

    // A group message without the mention the account requires.
    let group = |message: &str, mentioned: bool, text: &str| {
        json!({"chat_id": "chat-2", "chat_type": "group", "chat_name": "Ops",
               "sender_id": "u-alan", "sender_name": "Alan", "message_id": message,
               "text": text, "mentioned": mentioned})
    };
    let (status, quiet) = inbound(&api, "acme", group("g-1", false, "lunch?"), SECRET).await;
    assert_eq!(status, 202);
    assert_eq!(
        quiet,
        json!({"accepted": false, "reason": "not_mentioned"}),
        "{quiet:#}"
    );

    // The second chat, mentioned: its own conversation, its reply anchored there.
    let (status, second) = inbound(&api, "acme", group("g-2", true, "deploy please"), SECRET).await;
    assert_eq!(status, 202, "{second:#}");
    let other = second["session_id"].as_i64().unwrap();
    assert_ne!(other, session, "a chat has its own conversation");
    let replies = replies_at_least(&receiver, 2).await;
    assert_eq!(replies[1]["chat_id"], "chat-2");
    assert_eq!(replies[1]["reply_to_message_id"], "g-2");
    assert_eq!(replies[1]["text"], "Answer to: [Alan] deploy please");

    // The first chat again: the same conversation; the duplicate before sent nothing.
    let (_, third) = inbound(&api, "acme", dm("chat-1", "m-2", "and now?"), SECRET).await;
    assert_eq!(third["session_id"], session);
    let replies = replies_at_least(&receiver, 3).await;
    assert_eq!(replies.len(), 3, "one reply per message: {replies:#?}");
    assert_eq!(replies[2]["reply_to_message_id"], "m-2");
    let lines = api.lines(session).await;
    assert_eq!(lines.len(), 4, "the duplicate added no line: {lines:#?}");
    assert!(
        receiver.bad.lock().unwrap().is_empty(),
        "every send was signed"
    );
    let keys: std::collections::BTreeSet<_> = replies
        .iter()
        .map(|r| r["idempotency_key"].to_string())
        .collect();
    assert_eq!(keys.len(), 3, "each reply has its own key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s_ch_reply_recorded_then_killed_is_sent_after_restart() {
    let fake = FakeModel::serve(answering).await;
    // The receiver holds the first POST unanswered: the send is recorded and made, never
    // settled, when the daemon dies.
    let (receiver, outbound) = Receiver::serve(true).await;
    let rig = Rig::new(|p| {
        write_config(
            p,
            &[("fake", &fake.url)],
            &[("default", "fake")],
            &channel_config(&outbound),
        )
    });
    let database = test_database();
    let (mut daemon, api) = start(&rig, database.as_deref());
    api.bot("Ada").await;
    let (status, first) = inbound(&api, "acme", dm("chat-1", "m-1", "hello"), SECRET).await;
    assert_eq!(status, 202, "{first:#}");
    let held = replies_at_least(&receiver, 1).await;
    let key = held[0]["idempotency_key"].clone();

    daemon.child.kill().unwrap(); // SIGKILL
    daemon.child.wait().unwrap();
    receiver.hold.store(false, Ordering::SeqCst);

    let (mut daemon, api) = start(&rig, database.as_deref());
    let replies = replies_at_least(&receiver, 2).await;
    assert_eq!(replies[1], held[0], "the same send, the same key");
    assert_eq!(replies[1]["idempotency_key"], key);
    // The message is still a duplicate after the restart.
    let (_, again) = inbound(&api, "acme", dm("chat-1", "m-1", "hello"), SECRET).await;
    assert_eq!(again["duplicate"], true, "{again:#}");

    // Settled sent in the ledger (read once the daemon is gone).
    let store_url = database.unwrap_or_else(|| rig.path("data/troupe.db").display().to_string());
    let settled = wait_until("the resend is settled", || async {
        let store = troupe_store::Store::open_url(
            &store_url,
            Arc::new(troupe_core::SystemClock),
            Default::default(),
        )
        .unwrap();
        let row = store
            .read(|tx| tx.channel_outbound_by_key(key.as_str().unwrap()))
            .unwrap()
            .unwrap();
        (row.status == troupe_store::OutboundStatus::Sent).then_some(row)
    })
    .await;
    assert_eq!(
        settled.attempts, 2,
        "one attempt before the kill, one after"
    );
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    assert_eq!(receiver.replies().len(), 2, "sent once more, not again");
}
