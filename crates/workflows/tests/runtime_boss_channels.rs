//! Runtime Boss channel routing (issue 18 items 13 and 15, digest §8.3 and §8.9 scenario 2),
//! on a real store with the workflow layer installed, a queue model, and a local HTTP receiver
//! standing in for the chat service (it checks every outbound signature). Sends are made by
//! calling the bridge (`send_pending`) and failures told by calling the sweep, so nothing
//! waits on time.
//!
//! - `no_auto_delivery`: with Boss Mode on, a chat message reaches the account's runtime boss
//!   session prefixed and with its `channel_*` metadata, once; the boss ends its turn without
//!   `channel_push` and nothing but the reactions `received`, `working`, `done` is sent (RB-3).
//! - `anchored_reply_no_permission`: an anchored reply to the current chat goes out at once;
//!   a push to another chat waits for permission (RB-4).
//! - `permission_allow_sends_once`, `permission_deny_tells_the_session`,
//!   `permission_already_decided`, `failed_push_tells_the_session`,
//!   `channel_push_refused_outside_a_channel_boss`, `boss_mode_off_routes_per_chat`.
//! - `crash_then_channel_line`: the boss is mid-turn when the process dies; after a restart
//!   (store and engine reopened) a channel line is delivered once, lifts the latch and is
//!   answered.

mod support;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::{QueueProvider, Reply, World, call, tool_results, user_texts};
use troupe_channels::{
    Account, ChannelDef, ChannelKind, Channels, FilterRules, Outcome, RetryPolicy,
    SIGNATURE_HEADER, WebhookAdapter, sign, verify,
};
use troupe_core::pause::PauseReason;
use troupe_core::{SessionId, ThreadId};
use troupe_store::{PermissionDecision, PermissionStatus};
use troupe_workflows::WorkflowError;
use troupe_workflows::runtime_boss::ingress::RuntimeBossIngress;
use troupe_workflows::runtime_boss::{permissions, push_failures};

const SECRET: &[u8] = b"rb-channel-secret";
const ACCOUNT: &str = "acme";

/// The chat service's side: every outbound body it got, each signature checked.
#[derive(Default)]
struct Receiver {
    got: Mutex<Vec<Value>>,
}

impl Receiver {
    fn got(&self) -> Vec<Value> {
        self.got.lock().unwrap().clone()
    }
    fn of_kind(&self, kind: &str) -> Vec<Value> {
        self.got()
            .into_iter()
            .filter(|b| b["kind"] == kind)
            .collect()
    }
    /// The reactions it got, as `(message id, reaction)`.
    fn reactions(&self) -> Vec<(String, String)> {
        self.of_kind("reaction")
            .into_iter()
            .map(|b| {
                (
                    b["reply_to_message_id"].as_str().unwrap().to_string(),
                    b["text"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

async fn receive(
    State(r): State<Arc<Receiver>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let sig = headers.get(SIGNATURE_HEADER).and_then(|v| v.to_str().ok());
    assert!(verify(SECRET, &body, sig), "an outbound send is signed");
    let v: Value = serde_json::from_slice(&body).unwrap();
    let refuse = v["text"] == "refuse me";
    r.got.lock().unwrap().push(v);
    if refuse {
        return (StatusCode::INTERNAL_SERVER_ERROR, "bridge down".into());
    }
    (StatusCode::OK, json!({"message_id": "posted"}).to_string())
}

async fn receiver() -> (Arc<Receiver>, String) {
    let r = Arc::new(Receiver::default());
    let app = axum::Router::new()
        .route("/out", axum::routing::post(receive))
        .with_state(r.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (r, format!("http://{addr}/out"))
}

/// A world as the daemon builds it for channels: the conversation projector, then the reply
/// recorder that carries chats' answers back (a boss session must get none of it).
fn world_on(dir: Arc<tempfile::TempDir>, boot_id: &str) -> World {
    let store = troupe_store::testing::open_in(dir.path(), Arc::new(troupe_core::SystemClock));
    let provider = Arc::new(QueueProvider::default());
    let models = Arc::new(troupe_engine::models::FixedModel {
        provider: provider.clone(),
        retry: troupe_llm::RetryPolicy::none(),
    });
    let builder = troupe_engine::Engine::builder(store, models)
        .config(troupe_engine::EngineConfig {
            kill_grace: std::time::Duration::from_millis(300),
            boot_id: boot_id.into(),
            ..troupe_engine::EngineConfig::default()
        })
        .message_observer(Arc::new(troupe_collab::SessionProjector::default()))
        .message_observer(Arc::new(troupe_channels::ReplyRecorder));
    let engine = troupe_workflows::build_engine(builder).unwrap();
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(troupe_collab::SharedRoles::new(
        troupe_engine::RoleTable::new(secrets.clone()),
        secrets,
    ));
    let collab = troupe_collab::Collab::new(engine, roles, dir.path().join("workspaces"));
    World {
        wf: troupe_workflows::Workflows::new(collab),
        provider,
        dir,
    }
}

fn world() -> World {
    world_on(Arc::new(tempfile::tempdir().unwrap()), "test-boot")
}

struct Rig {
    w: World,
    ch: Channels,
    recv: Arc<Receiver>,
    boss: SessionId,
    thread: ThreadId,
}

/// Channels over the world's conversation layer with one webhook account (no retries: a
/// refused send settles failed at once) and Runtime Boss routing installed.
fn channels(w: &World, url: &str) -> Channels {
    let ch = Channels::with_retry(w.wf.collab().clone(), RetryPolicy { waits: vec![] });
    ch.insert_account(Account {
        def: ChannelDef {
            name: ACCOUNT.into(),
            kind: ChannelKind::Webhook,
            bot: "Chat Bot".into(),
            secret_env: "UNUSED".into(),
            outbound_url: url.into(),
            filter: FilterRules {
                require_mention: false,
                ..FilterRules::default()
            },
            enabled: true,
        },
        adapter: Arc::new(WebhookAdapter::new(ACCOUNT, SECRET, url)),
    });
    ch.set_boss_ingress(Arc::new(RuntimeBossIngress::new(w.wf.collab().clone())));
    ch
}

/// Boss Mode on and the account's runtime boss session, as provisioning makes it.
fn boss_on(w: &World) -> SessionId {
    let boss = w.session();
    w.set_slot(boss, json!({"kind": "boss", "role": "boss"}));
    w.wf.store()
        .write(|tx| {
            tx.insert_runtime_boss_session(boss, Some(ACCOUNT), "boss")?;
            let mut s = tx.runtime_settings()?;
            s.boss_mode = true;
            tx.set_runtime_settings(&s)
        })
        .unwrap();
    boss
}

async fn rig() -> Rig {
    rig_on(world()).await
}

async fn rig_on(w: World) -> Rig {
    let (recv, url) = receiver().await;
    let ch = channels(&w, &url);
    let boss = boss_on(&w);
    let thread = w.thread(boss);
    Rig {
        w,
        ch,
        recv,
        boss,
        thread,
    }
}

fn inbound(chat: &str, message_id: &str, text: &str) -> Vec<u8> {
    json!({"chat_id": chat, "chat_type": "group", "chat_name": "Ops", "sender_id": "u1",
           "sender_name": "Ada", "message_id": message_id, "text": text, "mentioned": true})
    .to_string()
    .into_bytes()
}

impl Rig {
    async fn send(&self, chat: &str, message_id: &str, text: &str) -> Outcome {
        let body = inbound(chat, message_id, text);
        self.ch
            .accept(ACCOUNT, Some(&sign(SECRET, &body)), &body)
            .await
            .unwrap()
    }

    /// A message that reaches the boss and the turn it starts, to its end; then every
    /// recorded send is made.
    async fn turn(&self, chat: &str, message_id: &str, text: &str) {
        match self.send(chat, message_id, text).await {
            Outcome::Accepted(a) => {
                assert_eq!(a.session_id, self.boss, "Boss Mode routes to the boss");
                assert!(!a.duplicate);
            }
            other => panic!("not accepted: {other:?}"),
        }
        self.w.idle(self.boss).await;
        self.ch.send_pending().await;
    }

    fn pending_permissions(&self) -> Vec<troupe_store::PermissionRequest> {
        permissions::list(self.w.wf.collab(), Some(self.boss))
            .unwrap()
            .into_iter()
            .filter(|p| p.status == PermissionStatus::Pending)
            .collect()
    }

    fn push(&self, id: &str, args: Value) {
        self.w
            .provider
            .push(Reply::Tools(vec![call(id, "channel_push", args)]));
    }
}

#[tokio::test]
async fn no_auto_delivery() {
    let r = rig().await;
    r.w.provider
        .push(Reply::Text("Noted; I will look into it.".into()));
    r.turn("c1", "m1", "please deploy").await;

    // The boss read the message behind its source, and was told where answers go.
    let req = &r.w.provider.requests()[0];
    let asked = user_texts(req).join("\n");
    assert!(asked.contains("[Ops · Ada · "), "{asked}");
    assert!(asked.contains("] please deploy"), "{asked}");
    let whole = serde_json::to_string(req).unwrap();
    assert!(whole.contains("<boss-reply-target>"), "{whole}");
    assert!(whole.contains("message_id: m1"), "{whole}");
    assert!(whole.contains("Explicit delivery"), "{whole}");

    // The message it became carries the channel facts.
    let msgs =
        r.w.wf
            .store()
            .read(|tx| tx.messages(r.thread, None, 50))
            .unwrap();
    let meta = msgs
        .iter()
        .find(|m| m.delivery_key.as_deref() == Some("channel:acme:m1"))
        .and_then(|m| m.metadata.clone())
        .expect("the channel message with its metadata");
    assert_eq!(meta["channel_chat_id"], "c1");
    assert_eq!(meta["channel_chat_type"], "group");
    assert_eq!(meta["channel_sender_id"], "u1");
    assert_eq!(meta["channel_message_id"], "m1");
    assert_eq!(meta["channel_account"], "acme");

    // RB-3: the finished answer was not carried to the chat; the reactions were.
    assert!(r.recv.of_kind("reply").is_empty(), "{:?}", r.recv.got());
    assert!(r.recv.of_kind("message").is_empty(), "{:?}", r.recv.got());
    let mut reactions = r.recv.reactions();
    reactions.sort();
    assert_eq!(
        reactions,
        [
            ("m1".to_string(), "done".to_string()),
            ("m1".to_string(), "received".to_string()),
            ("m1".to_string(), "working".to_string()),
        ]
    );

    // The same message again delivers nothing and sends nothing.
    match r.send("c1", "m1", "please deploy").await {
        Outcome::Accepted(a) => assert!(a.duplicate),
        other => panic!("{other:?}"),
    }
    r.ch.send_pending().await;
    assert_eq!(r.recv.got().len(), 3);
    assert_eq!(r.w.provider.calls(), 1, "no second turn");
}

#[tokio::test]
async fn anchored_reply_no_permission() {
    let r = rig().await;
    r.push(
        "p1",
        json!({"text": "Deploying now.", "reply_to_message_id": "m1"}),
    );
    r.push("p2", json!({"text": "FYI: deploy today", "chat_id": "c2"}));
    r.turn("c1", "m1", "please deploy").await;

    let results = tool_results(&r.w.provider.requests()[2]);
    let first: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(first["status"], "sending", "{first}");
    let second: Value = serde_json::from_str(&results[1]).unwrap();
    assert_eq!(second["status"], "awaiting_permission", "{second}");

    // One anchored reply, in the chat the message came from, without a prompt.
    let replies = r.recv.of_kind("reply");
    assert_eq!(replies.len(), 1, "{:?}", r.recv.got());
    assert_eq!(replies[0]["chat_id"], "c1");
    assert_eq!(replies[0]["reply_to_message_id"], "m1");
    assert_eq!(replies[0]["text"], "Deploying now.");
    // The other chat waits for a person.
    assert!(r.recv.of_kind("message").is_empty());
    let pending = r.pending_permissions();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].kind, "communication");
    assert_eq!(pending[0].request["chat_id"], "c2");
    assert_eq!(second["permission_id"], pending[0].id);
}

#[tokio::test]
async fn permission_allow_sends_once() {
    let r = rig().await;
    r.push("p1", json!({"text": "Heads up", "chat_id": "c2"}));
    r.turn("c1", "m1", "tell the others").await;
    let id = r.pending_permissions()[0].id;
    let decided = permissions::decide(r.w.wf.collab(), id, PermissionDecision::Allow)
        .await
        .unwrap();
    assert_eq!(decided.status, PermissionStatus::Allowed);
    r.ch.send_pending().await;
    r.ch.send_pending().await;
    let sent = r.recv.of_kind("message");
    assert_eq!(sent.len(), 1, "{:?}", r.recv.got());
    assert_eq!(sent[0]["chat_id"], "c2");
    assert_eq!(sent[0]["text"], "Heads up");
    assert!(sent[0].get("reply_to_message_id").is_none());
}

#[tokio::test]
async fn permission_already_decided() {
    let r = rig().await;
    r.push("p1", json!({"text": "Heads up", "chat_id": "c2"}));
    r.turn("c1", "m1", "tell the others").await;
    let id = r.pending_permissions()[0].id;
    permissions::decide(r.w.wf.collab(), id, PermissionDecision::Allow)
        .await
        .unwrap();
    for again in [PermissionDecision::Allow, PermissionDecision::Deny] {
        match permissions::decide(r.w.wf.collab(), id, again).await {
            Err(WorkflowError::Conflict { code, .. }) => assert_eq!(code, "already_decided"),
            other => panic!("{other:?}"),
        }
    }
    match permissions::decide(r.w.wf.collab(), 9_999, PermissionDecision::Allow).await {
        Err(WorkflowError::NotFound { .. }) => {}
        other => panic!("{other:?}"),
    }
    r.ch.send_pending().await;
    assert_eq!(r.recv.of_kind("message").len(), 1, "sent once");
}

#[tokio::test]
async fn permission_deny_tells_the_session() {
    let r = rig().await;
    r.push("p1", json!({"text": "Heads up", "chat_id": "c2"}));
    r.turn("c1", "m1", "tell the others").await;
    let before = r.w.provider.calls();
    let id = r.pending_permissions()[0].id;
    r.w.provider
        .push(Reply::Text("Understood, not sending.".into()));
    let decided = permissions::decide(r.w.wf.collab(), id, PermissionDecision::Deny)
        .await
        .unwrap();
    assert_eq!(decided.status, PermissionStatus::Denied);
    r.w.idle(r.boss).await;
    let reqs = r.w.provider.requests();
    assert_eq!(reqs.len(), before + 1, "the denial woke the boss once");
    let told = user_texts(reqs.last().unwrap()).join("\n");
    assert!(told.contains(&format!("Permission {id} denied")), "{told}");
    r.ch.send_pending().await;
    assert!(r.recv.of_kind("message").is_empty(), "nothing sent");
}

#[tokio::test]
async fn failed_push_tells_the_session() {
    let r = rig().await;
    r.push(
        "p1",
        json!({"text": "refuse me", "reply_to_message_id": "m1"}),
    );
    r.turn("c1", "m1", "answer please").await;
    assert_eq!(r.recv.of_kind("reply").len(), 1, "it was tried");
    let before = r.w.provider.calls();
    r.w.provider
        .push(Reply::Text("The chat is unreachable.".into()));
    assert_eq!(push_failures::sweep(r.w.wf.collab()).await, 1);
    r.w.idle(r.boss).await;
    // A second sweep tells nothing new.
    push_failures::sweep(r.w.wf.collab()).await;
    r.w.idle(r.boss).await;
    let reqs = r.w.provider.requests();
    assert_eq!(reqs.len(), before + 1, "told once");
    let told = user_texts(reqs.last().unwrap()).join("\n");
    assert!(told.contains("channel_delivery_failed"), "{told}");
    assert!(told.contains("bridge down"), "{told}");
}

#[tokio::test]
async fn channel_push_refused_outside_a_channel_boss() {
    let r = rig().await;
    // A Boss Mode root that is not a runtime boss session.
    let other = r.w.session();
    r.w.set_slot(other, json!({"kind": "boss", "role": "boss"}));
    r.w.provider.push(Reply::Tools(vec![call(
        "p1",
        "channel_push",
        json!({"text": "hello", "chat_id": "c1"}),
    )]));
    r.w.turn(other, "say hello to the chat").await;
    let results = tool_results(&r.w.provider.requests()[1]);
    let refused: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(refused["code"], "not_channel_boss", "{refused}");
    assert!(r.pending_permissions().is_empty());
    r.ch.send_pending().await;
    assert!(r.recv.got().is_empty(), "nothing recorded, nothing sent");
}

#[tokio::test]
async fn boss_mode_off_routes_per_chat() {
    let r = rig().await;
    r.w.wf
        .collab()
        .create_bot(troupe_collab::NewBotRequest {
            name: "Chat Bot".into(),
            persona: None,
            endpoint: None,
        })
        .unwrap();
    r.w.wf
        .store()
        .write(|tx| {
            let mut s = tx.runtime_settings()?;
            s.boss_mode = false;
            tx.set_runtime_settings(&s)
        })
        .unwrap();
    match r.send("c1", "m1", "hello").await {
        Outcome::Accepted(a) => {
            assert_ne!(a.session_id, r.boss, "the chat's own conversation");
            let chat =
                r.w.wf
                    .store()
                    .read(|tx| tx.channel_chat(ACCOUNT, "c1"))
                    .unwrap();
            assert_eq!(chat.map(|c| c.session_id), Some(a.session_id));
            // The chat's own conversation is answered back, anchored (this rig carries
            // replies, so the boss's silence elsewhere is the rule, not the rig).
            r.w.idle(a.session_id).await;
            r.ch.send_pending().await;
            let replies = r.recv.of_kind("reply");
            assert_eq!(replies.len(), 1, "{:?}", r.recv.got());
            assert_eq!(replies[0]["reply_to_message_id"], "m1");
        }
        Outcome::Filtered(why) => panic!("{why}"),
    }
    // RB-7: the boss session is kept, and took nothing.
    assert!(
        !r.w.wf
            .store()
            .read(|tx| tx.session(r.boss))
            .unwrap()
            .archived
    );
    assert!(
        r.w.wf
            .store()
            .read(|tx| tx.channel_messages_of_session(r.boss, 5))
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn crash_then_channel_line() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = rig_on(world_on(dir.clone(), "boot-1")).await;
    let started = Arc::new(tokio::sync::Notify::new());
    before.w.provider.push(Reply::Hang(started.clone()));
    before.send("c1", "m1", "start the long job").await;
    started.notified().await;
    let (boss, thread) = (before.boss, before.thread);
    drop(before);

    let w = world_on(dir, "boot-2");
    w.wf.engine().recover().await.unwrap();
    let paused = w.wf.store().read(|tx| tx.thread(thread)).unwrap().paused;
    assert_eq!(
        paused.map(|p| p.reason),
        Some(PauseReason::Interrupted),
        "the cut turn latches the interactive boss"
    );
    let (recv, url) = receiver().await;
    let ch = channels(&w, &url);
    let after = Rig {
        w,
        ch,
        recv,
        boss,
        thread,
    };
    after.w.provider.push(Reply::Tools(vec![call(
        "p1",
        "channel_push",
        json!({"text": "Back: the job was cut off, restarting it.", "reply_to_message_id": "m2"}),
    )]));
    after.turn("c1", "m2", "are you there?").await;
    match after.send("c1", "m2", "are you there?").await {
        Outcome::Accepted(a) => assert!(a.duplicate, "delivered once"),
        other => panic!("{other:?}"),
    }
    let paused = after
        .w
        .wf
        .store()
        .read(|tx| tx.thread(thread))
        .unwrap()
        .paused;
    assert!(paused.is_none(), "a channel line lifts the latch");
    let asked = user_texts(&after.w.provider.requests()[0]).join("\n");
    assert!(asked.contains("are you there?"), "{asked}");
    let replies = after.recv.of_kind("reply");
    assert_eq!(replies.len(), 1, "answered once: {:?}", after.recv.got());
    assert_eq!(replies[0]["reply_to_message_id"], "m2");
}
