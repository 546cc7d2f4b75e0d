//! Helpers for the deliverables end-to-end tests: a fake OpenAI-compatible server whose
//! scripted answer may wait until the requests it has seen make a condition true (so one Bot's
//! reply can follow another Bot's step without a sleep), a Bot on its own endpoint and model
//! name, and reading a tool result's JSON out of a request.

use super::fake::{content, messages};
use super::{Api, Daemon, Rig, troupe_binary};
use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// Whether the requests seen so far (in arrival order) let a held answer go.
pub type Cond = Arc<dyn Fn(&[Value]) -> bool + Send + Sync>;

/// What the fake does with one request.
pub enum Answer {
    /// A streamed answer (`[DONE]` is added).
    Now(String),
    /// The streamed answer, once `Cond` holds over the requests seen (checked on each arrival).
    When(Cond, String),
}

type Script = dyn Fn(&Value) -> Answer + Send + Sync;

pub struct GatedFake {
    /// Base URL (`…/v1`); any model name is answered.
    pub url: String,
    seen: Mutex<Vec<Value>>,
    /// Bumped on every arrival, so a held answer re-checks its condition.
    arrived: watch::Sender<usize>,
    script: Box<Script>,
}

impl GatedFake {
    pub async fn serve(script: impl Fn(&Value) -> Answer + Send + Sync + 'static) -> Arc<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let fake = Arc::new(GatedFake {
            url: format!("http://{addr}/v1"),
            seen: Mutex::new(Vec::new()),
            arrived: watch::channel(0).0,
            script: Box::new(script),
        });
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(answer))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        fake
    }

    /// Every request seen, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

async fn answer(State(fake): State<Arc<GatedFake>>, Json(req): Json<Value>) -> Response {
    fake.seen.lock().unwrap().push(req.clone());
    fake.arrived.send_modify(|n| *n += 1);
    let body = match (fake.script)(&req) {
        Answer::Now(b) => b,
        Answer::When(cond, b) => {
            // Subscribed before the check: an arrival between the two is not missed.
            let mut rx = fake.arrived.subscribe();
            while !cond(&fake.requests()) {
                if rx.changed().await.is_err() {
                    break;
                }
            }
            b
        }
    };
    (
        [("content-type", "text/event-stream")],
        body + "data: [DONE]\n\n",
    )
        .into_response()
}

/// `troupe serve` on the rig: on a fresh PostgreSQL database when `TROUPE_TEST_DATABASE`
/// names a server, else on SQLite in its data dir (as `Rig::start`).
pub fn start_on_test_backend(rig: &Rig) -> (Daemon, Api) {
    let url = troupe_store::testing::postgres_server().map(|server| {
        troupe_store::testing::fresh_postgres_database(&server)
            .unwrap_or_else(|e| panic!("a fresh database on {server}: {e}"))
    });
    let extra: Vec<&str> = match &url {
        Some(u) => vec!["--database", u],
        None => Vec::new(),
    };
    let d = Daemon::start_with(
        &troupe_binary(),
        &rig.path("data"),
        &rig.path("config.toml"),
        &rig.path("daemon.log"),
        &extra,
    );
    let api = Api::of(&d);
    (d, api)
}

/// A Bot on its own OpenAI-compatible endpoint at `url` whose model is called `model` (the
/// name the same-model rule compares).
pub async fn bot_on(api: &Api, name: &str, url: &str, model: &str) -> i64 {
    let b = api
        .post(
            "/v1/bots",
            json!({"name": name,
                   "endpoint": {"kind": "openai", "base_url": url, "model": model}}),
        )
        .await;
    assert_eq!(b["endpoint"]["model"], model, "{b:#}");
    b["id"].as_i64().unwrap()
}

/// The tool results in a request, oldest first, with the tool each answers.
pub fn tool_results(req: &Value) -> Vec<(String, String)> {
    let all = messages(req);
    let mut out = Vec::new();
    for (i, m) in all.iter().enumerate() {
        if m["role"] != "tool" {
            continue;
        }
        let id = m["tool_call_id"].as_str().unwrap_or_default();
        let name = all[..i]
            .iter()
            .rev()
            .filter(|a| a["role"] == "assistant")
            .flat_map(|a| a["tool_calls"].as_array().cloned().unwrap_or_default())
            .find(|c| id.is_empty() || c["id"] == id)
            .and_then(|c| c["function"]["name"].as_str().map(String::from))
            .unwrap_or_default();
        out.push((name, content(m)));
    }
    out
}

/// The first JSON object in a tool result's text (results may carry words around it).
pub fn json_in(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    serde_json::Deserializer::from_str(&text[start..])
        .into_iter::<Value>()
        .next()?
        .ok()
}
