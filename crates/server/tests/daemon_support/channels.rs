//! A chat channel's two sides for daemon tests: a local HTTP receiver standing in for the chat
//! service's bridge (it checks every outbound signature and records what it got), the
//! `[channels.acme]` webhook account pointed at it, `troupe serve` with the account's secret in
//! its environment, and signed inbound messages.

use super::{Api, Daemon, Rig, WAIT, token_of, troupe_binary, wait_until};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub const SECRET: &str = "e2e-channel-secret";
pub const SECRET_ENV: &str = "TROUPE_E2E_CHANNEL_SECRET";

/// The chat service's side: every outbound POST it got (signature checked), and whether it
/// holds requests unanswered (a bridge that is slow at the wrong moment).
#[derive(Default)]
pub struct Receiver {
    pub got: Mutex<Vec<Value>>,
    pub bad: Mutex<Vec<String>>,
    pub hold: AtomicBool,
}

impl Receiver {
    pub async fn serve(hold: bool) -> (Arc<Receiver>, String) {
        let r = Arc::new(Receiver::default());
        r.hold.store(hold, Ordering::SeqCst);
        let app = axum::Router::new()
            .route("/out", axum::routing::post(receive))
            .with_state(r.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (r, format!("http://{addr}/out"))
    }

    pub fn got(&self) -> Vec<Value> {
        self.got.lock().unwrap().clone()
    }

    pub fn replies(&self) -> Vec<Value> {
        self.got()
            .into_iter()
            .filter(|b| b["kind"] == "reply")
            .collect()
    }
}

async fn receive(
    State(r): State<Arc<Receiver>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, &'static str) {
    let sig = headers
        .get(troupe_channels::SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok());
    if !troupe_channels::verify(SECRET.as_bytes(), &body, sig) {
        r.bad
            .lock()
            .unwrap()
            .push(String::from_utf8_lossy(&body).into());
        return (StatusCode::UNAUTHORIZED, "bad signature");
    }
    r.got
        .lock()
        .unwrap()
        .push(serde_json::from_slice(&body).unwrap());
    if r.hold.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    (StatusCode::OK, "{}")
}

/// The webhook account `acme`, answered by `Ada`, sending to `outbound`.
pub fn channel_config(outbound: &str) -> String {
    format!(
        "[channels.acme]\nkind = \"webhook\"\nbot = \"Ada\"\nsecret_env = \"{SECRET_ENV}\"\n\
         outbound_url = \"{outbound}\"\n"
    )
}

/// `troupe serve` on the rig with the channel secret in its environment.
pub fn start(rig: &Rig, database: Option<&str>) -> (Daemon, Api) {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(rig.path("daemon.log"))
        .unwrap();
    let mut cmd = Command::new(troupe_binary());
    cmd.args(["serve", "--addr", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(rig.path("data"))
        .arg("--config")
        .arg(rig.path("config.toml"));
    if let Some(db) = database {
        cmd.args(["--database", db]);
    }
    let mut child = cmd
        .env("TROUPE_LOG", "info")
        .env(SECRET_ENV, SECRET)
        .env_remove("TROUPE_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .expect("spawn troupe serve");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = tx.send(line.clone());
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            line.clear();
        }
    });
    let first = rx
        .recv_timeout(WAIT)
        .expect("the daemon prints its address");
    // `listening on http://ADDR log in: LINK`
    let addr = first
        .split_whitespace()
        .nth(2)
        .and_then(|url| url.strip_prefix("http://"))
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();
    let d = Daemon {
        child,
        addr,
        token: Some(token_of(&rig.path("data"))),
        login_link: None,
    };
    let api = Api::of(&d);
    (d, api)
}

/// POST a chat message to the account's inbound route, signed with `secret`.
pub async fn inbound(api: &Api, account: &str, body: Value, secret: &str) -> (u16, Value) {
    let bytes = serde_json::to_vec(&body).unwrap();
    let r = api
        .client
        .post(api.url(&format!("/v1/channels/{account}/inbound")))
        .header("content-type", "application/json")
        .header(
            troupe_channels::SIGNATURE_HEADER,
            troupe_channels::sign(secret.as_bytes(), &bytes),
        )
        .body(bytes)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// A direct message from Grace in `chat`.
pub fn dm(chat: &str, message: &str, text: &str) -> Value {
    json!({"chat_id": chat, "chat_type": "dm", "chat_name": "Grace", "sender_id": "u-grace",
           "sender_name": "Grace", "message_id": message, "text": text})
}

pub async fn replies_at_least(r: &Receiver, n: usize) -> Vec<Value> {
    wait_until(&format!("{n} replies reach the chat"), || async {
        let got = r.replies();
        (got.len() >= n).then_some(got)
    })
    .await
}
