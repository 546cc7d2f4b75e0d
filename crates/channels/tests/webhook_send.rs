//! The webhook adapter's outbound side against a local receiver: every send is one signed
//! JSON POST carrying its kind, anchor and idempotency key; a receiver's refusal is an error
//! that names the status.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use troupe_channels::{ChannelAdapter, Reaction, SIGNATURE_HEADER, WebhookAdapter, verify};

const SECRET: &[u8] = b"outbound-secret";

#[derive(Default)]
struct Seen {
    bodies: Mutex<Vec<(bool, Value)>>,
}

async fn receive(
    State(seen): State<Arc<Seen>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let sig = headers.get(SIGNATURE_HEADER).and_then(|v| v.to_str().ok());
    let ok = verify(SECRET, &body, sig);
    let v: Value = serde_json::from_slice(&body).unwrap();
    let refuse = v["text"] == "refuse me";
    seen.bodies.lock().unwrap().push((ok, v));
    if refuse {
        return (StatusCode::INTERNAL_SERVER_ERROR, "bridge down".into());
    }
    (
        StatusCode::OK,
        json!({"message_id": "posted-1"}).to_string(),
    )
}

async fn receiver() -> (Arc<Seen>, String) {
    let seen = Arc::new(Seen::default());
    let app = axum::Router::new()
        .route("/out", axum::routing::post(receive))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (seen, format!("http://{addr}/out"))
}

#[tokio::test]
async fn webhook_sends_are_signed_posts_with_kind_anchor_and_key() {
    let (seen, url) = receiver().await;
    let a = WebhookAdapter::new("acme", SECRET, &url);
    assert_eq!(a.account(), "acme");
    let sent = a.reply("c1", "m1", "done it", "k-reply").await.unwrap();
    assert_eq!(sent.message_id.as_deref(), Some("posted-1"));
    a.push("c1", "heads up", "k-push").await.unwrap();
    a.react("c1", "m1", Reaction::Working, "k-react")
        .await
        .unwrap();
    let got = seen.bodies.lock().unwrap().clone();
    assert!(
        got.iter().all(|(ok, _)| *ok),
        "every send is signed: {got:#?}"
    );
    let bodies: Vec<Value> = got.into_iter().map(|(_, v)| v).collect();
    assert_eq!(
        bodies,
        [
            json!({"account_id": "acme", "chat_id": "c1", "text": "done it",
                   "reply_to_message_id": "m1", "kind": "reply", "idempotency_key": "k-reply"}),
            json!({"account_id": "acme", "chat_id": "c1", "text": "heads up",
                   "kind": "message", "idempotency_key": "k-push"}),
            json!({"account_id": "acme", "chat_id": "c1", "text": "working",
                   "reply_to_message_id": "m1", "kind": "reaction", "idempotency_key": "k-react"}),
        ]
    );
}

#[tokio::test]
async fn webhook_refusals_and_unreachable_receivers_are_errors() {
    let (_, url) = receiver().await;
    let a = WebhookAdapter::new("acme", SECRET, &url);
    let e = a.push("c1", "refuse me", "k").await.unwrap_err();
    assert!(e.0.contains("500") && e.0.contains("bridge down"), "{e}");
    // Nothing listens on port 9 of loopback.
    let gone = WebhookAdapter::new("acme", SECRET, "http://127.0.0.1:9/out");
    let e = gone.push("c1", "hello", "k").await.unwrap_err();
    assert!(e.0.contains("POST http://127.0.0.1:9/out"), "{e}");
}
