//! What the issue-16 end-to-end tests share: a fake OpenAI-compatible server whose answer is
//! scripted per request (or `500`), Ada's desk opening a job for a line, `troupe serve
//! --manual-clock` on a rig, and the debug clock and tick.
#![allow(dead_code)]

use super::daemon_support::*;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

pub const ON_IT: &str = "On it.";
pub const UNEXPECTED: &str = "UNEXPECTED request";
pub const AT_DESK: &str = "You are at your desk in this conversation";
pub const IN_JOB: &str = "You work on this job in its folder";
/// What the scheduler's timer would wait between ticks.
pub const TICK_MS: i64 = 15_000;
pub const MINUTE: i64 = 60_000;

// ---------- the fake model ----------

/// `None`: answer the request `500` (a model that is down for it).
pub type Script = dyn Fn(&Value) -> Option<String> + Send + Sync;

pub struct Fake {
    pub url: String,
    seen: Mutex<Vec<Value>>,
    script: Box<Script>,
}

impl Fake {
    pub async fn serve(
        script: impl Fn(&Value) -> Option<String> + Send + Sync + 'static,
    ) -> Arc<Fake> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let fake = Arc::new(Fake {
            url: format!("http://{addr}/v1"),
            seen: Mutex::new(Vec::new()),
            script: Box::new(script),
        });
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(answer))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        fake
    }

    /// Ada's model calls in her work on the job, in arrival order.
    pub fn job_calls(&self) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|r| bot_of(r).as_deref() == Some("Ada") && system(r).contains(IN_JOB))
            .cloned()
            .collect()
    }

    /// Every request, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }

    pub fn all(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

async fn answer(State(fake): State<Arc<Fake>>, Json(req): Json<Value>) -> Response {
    fake.seen.lock().unwrap().push(req.clone());
    match (fake.script)(&req) {
        Some(body) => (
            [("content-type", "text/event-stream")],
            body + "data: [DONE]\n\n",
        )
            .into_response(),
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"error": {"message": "the fake model is down", "type": "server_error"}})),
        )
            .into_response(),
    }
}

/// The app's own reading calls; `None` for a Bot's.
pub fn readings(req: &Value) -> Option<String> {
    Some(if tagged(req, "troupe-reader:user") {
        text(r#"{"control":"neither"}"#)
    } else if tagged(req, "troupe-reader:filing") {
        text(r#"{"belongs":"new"}"#)
    } else if tagged(req, "troupe-reader:bot") {
        text(
            r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":false,"asks_ok_only":false}"#,
        )
    } else if tagged(req, "troupe-judgement") {
        text(r#"{"join":false}"#)
    } else {
        return None;
    })
}

/// At her desk Ada opens a job for `line`; `in_job` answers her work on it.
pub fn ada(req: &Value, line: &str, in_job: &dyn Fn(&Value) -> Option<String>) -> Option<String> {
    if let Some(r) = readings(req) {
        return Some(r);
    }
    if bot_of(req).as_deref() != Some("Ada") {
        return Some(text(UNEXPECTED));
    }
    let sys = system(req);
    if sys.contains(AT_DESK) {
        return Some(
            if after_tool(req).is_none() && fresh_user(req).contains(line) {
                tool_call("work_on", json!({"new": {"title": line}}))
            } else {
                text(ON_IT)
            },
        );
    }
    if sys.contains(IN_JOB) {
        return in_job(req);
    }
    Some(text(UNEXPECTED))
}

// ---------- the daemon ----------

pub struct Setup {
    pub rig: Rig,
    pub fake: Arc<Fake>,
}

impl Setup {
    pub async fn new(script: impl Fn(&Value) -> Option<String> + Send + Sync + 'static) -> Setup {
        let fake = Fake::serve(script).await;
        // One attempt per model call: a 500 fails the turn at once, with no backoff to wait. The
        // scribe runs only in a conversation whose engine has it on.
        let rig = Rig::new(|p| {
            write_config(
                p,
                &[("fake", &fake.url)],
                &[("default", "fake"), ("reading", "fake"), ("scribe", "fake")],
                "[limits]\nmax_attempts = 1\n",
            )
        });
        Setup { rig, fake }
    }

    pub fn start(&self) -> (Daemon, Api) {
        let d = Daemon::start_with(
            &troupe_binary(),
            &self.rig.path("data"),
            &self.rig.path("config.toml"),
            &self.rig.path("daemon.log"),
            &["--manual-clock"],
        );
        let api = Api::of(&d);
        (d, api)
    }
}

pub async fn ada_bot(api: &Api, fake: &Fake) -> i64 {
    api.post(
        "/v1/bots",
        json!({"name": "Ada", "endpoint": {"kind": "openai", "base_url": fake.url, "model": "fake"}}),
    )
    .await["id"]
        .as_i64()
        .unwrap()
}

pub async fn advance(api: &Api, ms: i64) {
    let (status, v) = api
        .post_status("/v1/debug/clock", json!({"advance_ms": ms}))
        .await;
    assert_eq!(status.as_u16(), 200, "{v}");
}

/// Move the clock one timer period on, then tick once; the tick's report.
pub async fn tick(api: &Api) -> Value {
    advance(api, TICK_MS).await;
    let (status, v) = api.post_status("/v1/debug/tick", json!({})).await;
    assert_eq!(status.as_u16(), 200, "{v}");
    assert_eq!(v["failed"], json!([]), "a tick part failed: {v:#}");
    v
}

/// Ada's work item on the job, once it is in `state` with no live segment.
pub async fn job_item_in(api: &Api, bot: i64, state: &str) -> Value {
    wait_until(&format!("Ada's work on the job is {state}"), || async {
        api.list(&format!("/v1/bots/{bot}/work-items"))
            .await
            .into_iter()
            .find(|w| w["mode"] == "work" && w["state"] == state && w["turn_id"].is_null())
    })
    .await
}

pub async fn work_log(api: &Api, plan: &Value) -> Vec<Value> {
    api.list(&format!("/v1/tasks/{plan}/work-log?limit=1000"))
        .await
}

pub fn kinds(log: &[Value]) -> Vec<String> {
    log.iter()
        .map(|r| r["kind"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The app's supervisor lines in the conversation, as their control codes.
pub async fn supervisor_lines(api: &Api, s: i64) -> Vec<String> {
    api.lines(s)
        .await
        .iter()
        .filter(|l| l["control"]["kind"] == "supervisor")
        .map(|l| {
            l["control"]["code"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}
