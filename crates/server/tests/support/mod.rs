//! The API served in-process for HTTP-level tests: a temp data dir, the real router on an
//! ephemeral loopback port, a `reqwest` client, and helpers for scripted Bots.

#![allow(dead_code)]

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;
use troupe_server::AppState;

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub state: AppState,
    /// Sent as `Authorization: Bearer` when set.
    pub bearer: Option<String>,
    pub dir: tempfile::TempDir,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// A JSON answer: status and body (Null when the body is not JSON).
pub struct Answer {
    pub status: StatusCode,
    pub body: Value,
    pub text: String,
}

impl Answer {
    /// The error code of an error answer.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
    pub fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or("")
    }
    #[track_caller]
    pub fn expect(self, status: u16) -> Value {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.text
        );
        self.body
    }
    #[track_caller]
    pub fn expect_error(&self, status: u16, code: &str) {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.text
        );
        assert_eq!(
            self.code(),
            code,
            "unexpected error code; body: {}",
            self.text
        );
        assert!(
            !self.message().is_empty(),
            "error without a message: {}",
            self.text
        );
    }
}

impl TestApp {
    pub async fn start() -> TestApp {
        Self::start_with_token(None).await
    }

    pub async fn start_with_token(token: Option<&str>) -> TestApp {
        Self::start_with(token, &[]).await
    }

    /// `keys` are secrets the daemon sees besides the process environment.
    pub async fn start_with(token: Option<&str>, keys: &[(&str, &str)]) -> TestApp {
        Self::boot(token, keys, None).await
    }

    /// A daemon on a clock only the test moves (`--manual-clock`): no scheduler tick or
    /// timer comes due by itself, so nothing changes but what the test asks for.
    pub async fn start_still() -> TestApp {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        Self::boot(None, &[], Some(troupe_core::ManualClock::new(now))).await
    }

    async fn boot(
        token: Option<&str>,
        keys: &[(&str, &str)],
        manual_clock: Option<troupe_core::ManualClock>,
    ) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let keys: std::collections::HashMap<String, String> = keys
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let secrets: SecretSource =
            Arc::new(move |name| keys.get(name).cloned().or_else(|| std::env::var(name).ok()));
        let data = dir.path().join("data");
        let boot = troupe_server::bootstrap::build_state(
            &data,
            troupe_server::bootstrap::BootOptions {
                token: token.map(Arc::from),
                database: Some(troupe_store::testing::database_url_in(&data)),
                manual_clock,
                ..troupe_server::bootstrap::BootOptions::new(
                    RoleTable::new(secrets.clone()),
                    secrets,
                )
            },
        )
        .await
        .unwrap();
        let state = boot.state;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let host_rule = troupe_server::hosts::HostRule::new(addr, &[]).unwrap();
        let app = troupe_server::app(state.clone(), host_rule);
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        TestApp {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            state,
            bearer: token.map(str::to_string),
            dir,
            server,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<Body>) -> Answer {
        let mut req = self.client.request(method, self.url(path));
        if let Some(token) = &self.bearer {
            req = req.bearer_auth(token);
        }
        req = match body {
            Some(Body::Json(v)) => req.json(&v),
            Some(Body::Raw(text)) => req.header("content-type", "application/json").body(text),
            None => req,
        };
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let text = resp.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Answer { status, body, text }
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.send(Method::GET, path, None).await
    }
    pub async fn post(&self, path: &str, body: Value) -> Answer {
        self.send(Method::POST, path, Some(Body::Json(body))).await
    }
    pub async fn post_raw(&self, path: &str, raw: impl Into<String>) -> Answer {
        self.send(Method::POST, path, Some(Body::Raw(raw.into())))
            .await
    }
    pub async fn put(&self, path: &str, body: Value) -> Answer {
        self.send(Method::PUT, path, Some(Body::Json(body))).await
    }
    pub async fn patch(&self, path: &str, body: Value) -> Answer {
        self.send(Method::PATCH, path, Some(Body::Json(body))).await
    }
    pub async fn delete(&self, path: &str) -> Answer {
        self.send(Method::DELETE, path, None).await
    }

    /// Write a model script into the temp dir; returns its path.
    pub fn script(&self, name: &str, script: Value) -> String {
        let path: PathBuf = self.dir.path().join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_string_pretty(&script).unwrap()).unwrap();
        path.display().to_string()
    }

    /// Create a Bot whose model is the given script; returns its id.
    pub async fn scripted_bot(&self, name: &str, script: Value) -> i64 {
        let path = self.script(name, script);
        let bot = self
            .post("/v1/bots", json!({"name": name, "endpoint": {"kind": "scripted", "model": "s", "script": path}}))
            .await
            .expect(201);
        bot["id"].as_i64().unwrap()
    }

    /// Open a direct conversation with one Bot; returns its id.
    pub async fn direct(&self, bot: i64) -> i64 {
        let s = self
            .post("/v1/sessions", json!({"kind": "direct", "bot_ids": [bot]}))
            .await
            .expect(201);
        s["id"].as_i64().unwrap()
    }

    /// A job of the conversation named `title`, opened as the person's (no opening line).
    #[allow(dead_code)] // not every test binary opens a job
    pub fn open_job(&self, session: i64, title: &str) -> troupe_core::PlanId {
        self.state
            .collab
            .open_plan(troupe_collab::OpenPlan {
                home_session_id: troupe_core::SessionId(session),
                opening_line_id: None,
                title: Some(title.into()),
                cause: troupe_core::plan::RevisionCause::User,
            })
            .unwrap()
            .id
    }

    pub async fn lines(&self, session: i64) -> Vec<Value> {
        let v = self
            .get(&format!("/v1/sessions/{session}/messages"))
            .await
            .expect(200);
        v.as_array().unwrap().clone()
    }

    /// Wait (through the API) until the conversation has a Bot line that `pred` accepts.
    pub async fn wait_for_bot_line(&self, session: i64, pred: impl Fn(&Value) -> bool) -> Value {
        wait_until(&format!("a bot line in session {session}"), || async {
            self.lines(session)
                .await
                .into_iter()
                .find(|l| l["author"] == "bot" && pred(l))
        })
        .await
    }

    /// Wait on the engine until the conversation's Bot has no running turn.
    pub async fn settle(&self, session: i64) {
        let thread = self
            .state
            .collab
            .direct_thread(troupe_core::SessionId(session))
            .unwrap();
        tokio::time::timeout(
            Duration::from_secs(20),
            self.state.collab.engine().wait_idle(thread),
        )
        .await
        .expect("the Bot's turn did not end within 20 s");
    }
}

pub enum Body {
    Json(Value),
    Raw(String),
}

/// Poll `probe` until it yields something, for at most 20 s. The only place with sleeps.
pub async fn wait_until<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after 20 s waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
