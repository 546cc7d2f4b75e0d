//! Permission requests over HTTP (issue 18 item 15): `GET /v1/permissions?session_id=` and
//! `POST /v1/permissions/:id {decision}`. Allowed, the push is recorded once in the outbound
//! ledger (here for an account the daemon does not have, so the bridge settles it failed and
//! the session is told `channel_delivery_failed`); denied, the session is told by a steer;
//! decided twice, 409 `already_decided`; and the bad requests' codes.

mod support;

use serde_json::{Value, json};
use support::{TestApp, wait_until};
use troupe_core::SessionId;
use troupe_store::COMMUNICATION;
use troupe_workflows::runtime_boss::push::permission_key;

fn push(chat: &str, text: &str) -> Value {
    json!({"account_id": "acme", "chat_id": chat, "text": text, "reply_to_message_id": null})
}

/// A conversation whose Bot has answered once (a steer needs a turn to join).
async fn session(app: &TestApp) -> i64 {
    let bot = app
        .scripted_bot(
            "Boss",
            json!({"steps": [{"text": "ok"}], "on_exhausted": "repeat_last"}),
        )
        .await;
    let s = app.direct(bot).await;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "hello"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "ok").await;
    app.settle(s).await;
    s
}

fn open(app: &TestApp, s: i64, p: Value) -> i64 {
    app.state
        .collab
        .store()
        .write(|tx| tx.open_permission_request(SessionId(s), COMMUNICATION, &p))
        .unwrap()
        .id
}

/// Whether the session's thread holds a message saying `needle`.
async fn told(app: &TestApp, s: i64, needle: &str) {
    let store = app.state.collab.store().clone();
    let thread = app.state.collab.direct_thread(SessionId(s)).unwrap();
    wait_until(&format!("session {s} told {needle:?}"), || {
        let store = store.clone();
        let needle = needle.to_string();
        async move {
            let msgs = store.read(|tx| tx.messages(thread, None, 500)).unwrap();
            msgs.iter()
                .any(|m| serde_json::to_string(&m.parts).unwrap().contains(&needle))
                .then_some(())
        }
    })
    .await;
}

#[tokio::test]
async fn permissions_list_allow_once_deny_and_already_decided() {
    let app = TestApp::start().await;
    let s = session(&app).await;
    let a = open(&app, s, push("c2", "Heads up"));
    let b = open(&app, s, push("c3", "Also this"));

    let v = app
        .get(&format!("/v1/permissions?session_id={s}"))
        .await
        .expect(200);
    let list = v["permissions"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["id"], b, "newest first");
    assert_eq!(list[1]["kind"], "communication");
    assert_eq!(list[1]["status"], "pending");
    assert_eq!(list[1]["request"]["chat_id"], "c2");
    let all = app.get("/v1/permissions").await.expect(200);
    assert_eq!(all["permissions"].as_array().unwrap().len(), 2);

    // Allowed: recorded once for sending, under the request's own key.
    let v = app
        .post(
            &format!("/v1/permissions/{a}"),
            json!({"decision": "allow"}),
        )
        .await
        .expect(200);
    assert_eq!(v["status"], "allowed");
    assert_eq!(v["decision"], "allow");
    let sent = app
        .state
        .collab
        .store()
        .read(|tx| tx.channel_outbound_by_key(&permission_key(SessionId(s), a)))
        .unwrap()
        .expect("the push is recorded");
    assert_eq!(
        (sent.chat_id.as_str(), sent.text.as_str()),
        ("c2", "Heads up")
    );
    for again in ["allow", "deny"] {
        app.post(&format!("/v1/permissions/{a}"), json!({"decision": again}))
            .await
            .expect_error(409, "already_decided");
    }
    // The daemon has no account "acme": the bridge settles the send failed, and the session
    // that pushed is told.
    told(&app, s, "channel_delivery_failed").await;

    // Denied: nothing recorded, the session told.
    let v = app
        .post(&format!("/v1/permissions/{b}"), json!({"decision": "deny"}))
        .await
        .expect(200);
    assert_eq!(v["status"], "denied");
    told(&app, s, &format!("Permission {b} denied")).await;
    let outbound = app
        .state
        .collab
        .store()
        .read(|tx| tx.channel_outbound_by_key(&permission_key(SessionId(s), b)))
        .unwrap();
    assert!(outbound.is_none(), "a denied push is never recorded");
}

#[tokio::test]
async fn permissions_bad_requests_answer_their_codes() {
    let app = TestApp::start().await;
    let s = session(&app).await;
    let a = open(&app, s, push("c2", "Heads up"));
    app.post(
        &format!("/v1/permissions/{a}"),
        json!({"decision": "maybe"}),
    )
    .await
    .expect_error(422, "invalid");
    app.post("/v1/permissions/999999", json!({"decision": "allow"}))
        .await
        .expect_error(404, "not_found");
    let r = app
        .post("/v1/permissions/nope", json!({"decision": "allow"}))
        .await;
    assert_eq!(r.status.as_u16(), 400, "{:?}", r.body);
    app.get("/v1/permissions?session_id=abc")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/permissions?session_id=999999")
        .await
        .expect_error(404, "not_found");
    // Nothing was decided by the bad requests.
    let v = app
        .get(&format!("/v1/permissions?session_id={s}"))
        .await
        .expect(200);
    assert_eq!(v["permissions"][0]["status"], "pending");
}
