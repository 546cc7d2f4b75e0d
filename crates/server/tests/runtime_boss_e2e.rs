//! Runtime Boss Mode through a real `troupe serve` (issue 18, "How it is judged"): the webhook
//! account `acme`, a local receiver standing in for the chat service's bridge (it checks every
//! outbound signature and records what it got), and a fake OpenAI-compatible model whose
//! script answers each request from its body alone.
//!
//! `runtime_boss_answers_a_chat_only_through_channel_push`, in order:
//! 1. a bad signature is 401 `bad_signature`;
//! 2. with `boss_mode` on, a signed message goes to the account's runtime boss session; the same
//!    message id again is a duplicate, delivered once;
//! 3. the boss's finished answer is not carried to the chat (RB-3): only reactions are;
//! 4. an anchored `channel_push` to the current chat is sent at once, exactly once (RB-4);
//! 5. a push to another chat answers `awaiting_permission` and sends nothing until a person's
//!    Allow, then exactly once (a second decision is 409 `already_decided`);
//! 6. with the mode off, the account's next chat gets its own conversation with the account's
//!    Bot, which answers the chat by itself.
//!
//! Every wait is on the receiver's record or the API, with a deadline.

mod daemon_support;

use daemon_support::channels::*;
use daemon_support::mcp::{neutral_reading, test_database, tool_call_as};
use daemon_support::*;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};

const BOSS: &str = "Runtime Boss";
/// What the person asks, one word each, so the script and the checks can find them.
const ASK_STATUS: &str = "STATUS-PLEASE";
const ASK_REPLY: &str = "REPLY-HERE";
const ASK_OTHER: &str = "TELL-OTHER-CHAT";
/// The boss's finished answer to ASK_STATUS: it must never reach the chat.
const BOSS_PROSE: &str = "All quiet, nothing is running.";
const ANCHORED: &str = "Anchored answer for chat-1.";
const ELSEWHERE: &str = "Hello chat-2, from the boss.";

struct Script {
    calls: AtomicUsize,
}

impl Script {
    fn call(&self, name: &str, args: Value) -> Reply {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        Reply::Now(tool_call_as(&format!("call_{n}"), name, &args))
    }

    fn answer(&self, req: &Value) -> Reply {
        if let Some(r) = neutral_reading(req) {
            return Reply::Now(r);
        }
        let fresh = fresh_user(req);
        if bot_of(req).as_deref() != Some(BOSS) {
            // Ada, in a chat's own conversation: names what she was told.
            let last = fresh.lines().last().unwrap_or_default().to_string();
            return Reply::Now(text(&format!("Answer to: {last}")));
        }
        if after_tool(req).as_deref() == Some("channel_push") {
            let result = messages(req).last().map(content).unwrap_or_default();
            let v: Value = serde_json::from_str(&result).unwrap_or(Value::Null);
            return Reply::Now(text(&format!(
                "Push {}.",
                v["status"].as_str().unwrap_or("?")
            )));
        }
        if fresh.contains(ASK_REPLY) {
            return self.call(
                "channel_push",
                json!({"text": ANCHORED, "reply_to_message_id": "m-2"}),
            );
        }
        if fresh.contains(ASK_OTHER) {
            return self.call(
                "channel_push",
                json!({"text": ELSEWHERE, "chat_id": "chat-2"}),
            );
        }
        if fresh.contains(ASK_STATUS) {
            return Reply::Now(text(BOSS_PROSE));
        }
        Reply::Now(text("Noted."))
    }
}

/// What the receiver got, as (kind, chat, anchor, text), in arrival order.
fn record(r: &Receiver) -> Vec<(String, String, String, String)> {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    r.got()
        .iter()
        .map(|b| {
            (
                s(&b["kind"]),
                s(&b["chat_id"]),
                s(&b["reply_to_message_id"]),
                s(&b["text"]),
            )
        })
        .collect()
}

fn entry(kind: &str, chat: &str, anchor: &str, text: &str) -> (String, String, String, String) {
    (kind.into(), chat.into(), anchor.into(), text.into())
}

/// Waits until the receiver got the reaction `what` on `message`.
async fn reacted(r: &Receiver, message: &str, what: &str) {
    wait_until(&format!("reaction {what} on {message}"), || async {
        record(r)
            .contains(&entry("reaction", "chat-1", message, what))
            .then_some(())
    })
    .await;
}

async fn settings(api: &Api, body: Value) -> Value {
    let r = api
        .client
        .patch(api.url("/v1/settings/runtime"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "PATCH settings: {}", r.status());
    r.json().await.unwrap()
}

/// Waits until a Bot's line in `session` reads `body`.
async fn says(api: &Api, session: i64, body: &str) {
    wait_until(&format!("{body:?} in session {session}"), || async {
        api.lines(session)
            .await
            .iter()
            .any(|l| l["author"] == "bot" && l["body"] == body)
            .then_some(())
    })
    .await;
}

/// The session's person's lines that carry `needle`.
async fn person_lines_with(api: &Api, session: i64, needle: &str) -> Vec<Value> {
    api.lines(session)
        .await
        .into_iter()
        .filter(|l| l["author"] == "user" && l["body"].as_str().unwrap_or("").contains(needle))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runtime_boss_answers_a_chat_only_through_channel_push() {
    let script = Script {
        calls: AtomicUsize::new(0),
    };
    let fake = FakeModel::serve(move |req| script.answer(req)).await;
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

    // 1. A bad signature is refused before anything is read.
    let (status, bad) = inbound(&api, "acme", dm("chat-1", "m-0", "sneaky"), "wrong").await;
    assert_eq!(status, 401, "{bad:#}");
    assert_eq!(bad["error"]["code"], "bad_signature", "{bad:#}");

    // 2. Boss Mode on: the account gets its runtime boss session, and the chat goes there.
    let on = settings(&api, json!({"boss_mode": true})).await;
    let accounts = on["provisioned"]["accounts"].as_array().unwrap().clone();
    assert_eq!(accounts.len(), 1, "{on:#}");
    assert_eq!(accounts[0]["account"], "acme", "{on:#}");
    let boss = accounts[0]["session_id"].as_i64().unwrap();

    let (status, first) = inbound(&api, "acme", dm("chat-1", "m-1", ASK_STATUS), SECRET).await;
    assert_eq!(status, 202, "{first:#}");
    assert_eq!(
        first,
        json!({"accepted": true, "session_id": boss, "duplicate": false})
    );
    let (status, again) = inbound(&api, "acme", dm("chat-1", "m-1", ASK_STATUS), SECRET).await;
    assert_eq!(status, 202, "{again:#}");
    assert_eq!(
        again,
        json!({"accepted": true, "session_id": boss, "duplicate": true})
    );

    // 3. The boss answers in Troupe; the chat sees only the message's progress.
    reacted(&receiver, "m-1", "done").await;
    says(&api, boss, BOSS_PROSE).await;
    let lines = person_lines_with(&api, boss, ASK_STATUS).await;
    assert_eq!(lines.len(), 1, "the message delivered once: {lines:#?}");
    let body = lines[0]["body"].as_str().unwrap();
    assert!(
        body.starts_with("[Grace · Grace · ") && body.ends_with(&format!("] {ASK_STATUS}")),
        "a source-prefixed line: {body:?}"
    );
    let asked = fake
        .of(BOSS)
        .iter()
        .filter(|r| fresh_user(r).contains(ASK_STATUS))
        .count();
    assert_eq!(asked, 1, "the boss was asked once");

    // 4. An anchored channel_push to the current chat is sent at once.
    let (status, second) = inbound(&api, "acme", dm("chat-1", "m-2", ASK_REPLY), SECRET).await;
    assert_eq!(
        (status, &second["session_id"]),
        (202, &json!(boss)),
        "{second:#}"
    );
    reacted(&receiver, "m-2", "done").await;
    says(&api, boss, "Push sending.").await;
    let anchored: Vec<_> = record(&receiver)
        .into_iter()
        .filter(|e| e.3 == ANCHORED)
        .collect();
    assert_eq!(
        anchored,
        [entry("reply", "chat-1", "m-2", ANCHORED)],
        "sent at once, once"
    );

    // 5. A push to another chat waits for a person.
    let (status, third) = inbound(&api, "acme", dm("chat-1", "m-3", ASK_OTHER), SECRET).await;
    assert_eq!(
        (status, &third["session_id"]),
        (202, &json!(boss)),
        "{third:#}"
    );
    reacted(&receiver, "m-3", "done").await;
    says(&api, boss, "Push awaiting_permission.").await;
    assert!(
        !record(&receiver).iter().any(|e| e.1 == "chat-2"),
        "nothing sent before the decision: {:#?}",
        record(&receiver)
    );
    let listed = api.get(&format!("/v1/permissions?session_id={boss}")).await;
    let pending = listed["permissions"].as_array().unwrap().clone();
    assert_eq!(pending.len(), 1, "{listed:#}");
    assert_eq!(pending[0]["status"], "pending", "{listed:#}");
    assert_eq!(pending[0]["kind"], "communication", "{listed:#}");
    assert_eq!(
        pending[0]["request"],
        json!({"account_id": "acme", "chat_id": "chat-2", "text": ELSEWHERE,
               "reply_to_message_id": null})
    );
    let id = pending[0]["id"].as_i64().unwrap();
    let allowed = api
        .post(
            &format!("/v1/permissions/{id}"),
            json!({"decision": "allow"}),
        )
        .await;
    assert_eq!(allowed["status"], "allowed", "{allowed:#}");
    let (status, twice) = api
        .post_status(
            &format!("/v1/permissions/{id}"),
            json!({"decision": "allow"}),
        )
        .await;
    assert_eq!(status.as_u16(), 409, "{twice:#}");
    assert_eq!(twice["error"]["code"], "already_decided", "{twice:#}");
    wait_until("the allowed push reaches chat-2", || async {
        record(&receiver)
            .iter()
            .any(|e| e.1 == "chat-2")
            .then_some(())
    })
    .await;

    // 6. Mode off: the next chat has its own conversation with Ada, who answers it herself.
    let off = settings(&api, json!({"boss_mode": false})).await;
    assert_eq!(off["settings"]["boss_mode"], false, "{off:#}");
    let (status, fourth) = inbound(&api, "acme", dm("chat-3", "m-4", "hello Ada"), SECRET).await;
    assert_eq!(status, 202, "{fourth:#}");
    let per_chat = fourth["session_id"].as_i64().unwrap();
    assert_ne!(per_chat, boss, "{fourth:#}");
    let view = api.get(&format!("/v1/sessions/{per_chat}")).await;
    assert_eq!(view["kind"], "direct", "{view:#}");
    wait_until("Ada's reply reaches chat-3", || async {
        record(&receiver)
            .iter()
            .any(|e| e.1 == "chat-3")
            .then_some(())
    })
    .await;

    // Everything the chat service got, each exactly once: the boss's prose never, both pushes
    // once, Ada's reply anchored.
    let mut got = record(&receiver);
    got.sort();
    let mut want = vec![
        entry("message", "chat-2", "", ELSEWHERE),
        entry("reply", "chat-1", "m-2", ANCHORED),
        entry("reply", "chat-3", "m-4", "Answer to: hello Ada"),
    ];
    for m in ["m-1", "m-2", "m-3"] {
        for r in ["received", "working", "done"] {
            want.push(entry("reaction", "chat-1", m, r));
        }
    }
    want.sort();
    assert_eq!(got, want);
    assert!(
        receiver.bad.lock().unwrap().is_empty(),
        "every send was signed"
    );
}
