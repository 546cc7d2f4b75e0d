//! A fake OpenAI-compatible model server whose answers a test scripts per request, with the
//! requests it saw kept for the test to read; and small readers of a request body (which Bot
//! asks, the app's tagged reading calls, the newest user words).
//!
//! Two endpoints share one listener: `url` answers with the script, `failing_url` answers every
//! request `500` (a role pointed there has a model that is down).

use super::chunk;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// What the fake does with one request.
pub enum Reply {
    /// A streamed answer (`text`, `shell_call`, `tool_call` chunks); `[DONE]` is added.
    Now(String),
    /// Never answered.
    Hang,
}

type Script = dyn Fn(&Value) -> Reply + Send + Sync;

pub struct FakeModel {
    /// Base URL of the scripted endpoint (`…/v1`).
    pub url: String,
    /// Base URL of the endpoint that answers everything `500`.
    pub failing_url: String,
    seen: Mutex<Vec<Value>>,
    failed: Mutex<Vec<Value>>,
    script: Box<Script>,
}

impl FakeModel {
    /// Serve on loopback; `script` answers each request to `url` from its body.
    pub async fn serve(script: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Arc<FakeModel> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let fake = Arc::new(FakeModel {
            url: format!("http://{addr}/v1"),
            failing_url: format!("http://{addr}/failing/v1"),
            seen: Mutex::new(Vec::new()),
            failed: Mutex::new(Vec::new()),
            script: Box::new(script),
        });
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(scripted))
            .route("/failing/v1/chat/completions", axum::routing::post(failing))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        fake
    }

    /// Every request the scripted endpoint saw, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }

    /// Every request the failing endpoint answered `500`.
    pub fn failed(&self) -> Vec<Value> {
        self.failed.lock().unwrap().clone()
    }

    /// Requests a Bot made (not the app's own reading calls).
    pub fn bot_requests(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| bot_of(r).is_some())
            .collect()
    }

    /// Requests `bot` made.
    pub fn of(&self, bot: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| bot_of(r).as_deref() == Some(bot))
            .collect()
    }
}

async fn scripted(State(fake): State<Arc<FakeModel>>, Json(req): Json<Value>) -> Response {
    fake.seen.lock().unwrap().push(req.clone());
    match (fake.script)(&req) {
        Reply::Now(body) => (
            [("content-type", "text/event-stream")],
            body + "data: [DONE]\n\n",
        )
            .into_response(),
        Reply::Hang => std::future::pending().await,
    }
}

async fn failing(State(fake): State<Arc<FakeModel>>, Json(req): Json<Value>) -> Response {
    fake.failed.lock().unwrap().push(req);
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(json!({"error": {"message": "the fake model is down", "type": "server_error"}})),
    )
        .into_response()
}

/// A streamed answer calling tool `name` with `args`, the arguments split over two chunks.
pub fn tool_call(name: &str, args: Value) -> String {
    let args = args.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    let mut s = chunk(json!({"role": "assistant", "content": null}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": a}}]}),
        None,
    );
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}

pub fn messages(req: &Value) -> Vec<Value> {
    req["messages"].as_array().cloned().unwrap_or_default()
}

pub fn content(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Every system message, joined (the Bot's prompt and its situations).
pub fn system(req: &Value) -> String {
    messages(req)
        .iter()
        .filter(|m| m["role"] == "system")
        .map(content)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The Bot asking, from its system prompt ("You are NAME, a Bot working …"); `None` for the
/// app's own tool-free calls.
pub fn bot_of(req: &Value) -> Option<String> {
    let s = system(req);
    let rest = s.strip_prefix("You are ")?;
    Some(rest.split_once(", a Bot")?.0.to_string())
}

/// The app's own tool-free calls start their one user message with a tag
/// (`troupe-reader:user`, `troupe-reader:bot`, `troupe-reader:filing`, `troupe-judgement`).
pub fn tagged(req: &Value, tag: &str) -> bool {
    bot_of(req).is_none()
        && messages(req)
            .iter()
            .any(|m| m["role"] == "user" && content(m).starts_with(tag))
}

fn prompt(req: &Value) -> String {
    messages(req)
        .iter()
        .find(|m| m["role"] == "user")
        .map(content)
        .unwrap_or_default()
}

/// The line a person's-line reading is about (the prompt also shows the lines before it).
pub fn read_line(req: &Value) -> Option<String> {
    if !tagged(req, "troupe-reader:user\n") {
        return None;
    }
    Some(
        prompt(req)
            .rsplit_once("\nThe line:\n")?
            .1
            .trim()
            .to_string(),
    )
}

/// A filing reading: the line, and the jobs shown (`plan_N`, name).
pub fn filing_of(req: &Value) -> Option<(String, Vec<(String, String)>)> {
    if !tagged(req, "troupe-reader:filing") {
        return None;
    }
    let p = prompt(req);
    let mut jobs = Vec::new();
    for l in p.lines() {
        let Some(rest) = l.strip_prefix("- plan_") else {
            continue;
        };
        let Some((n, after)) = rest.split_once(" \"") else {
            continue;
        };
        let name = after.split_once('"').map_or(after, |(name, _)| name);
        jobs.push((format!("plan_{n}"), name.to_string()));
    }
    let line = p.rsplit_once("\nThe line:\n")?.1.trim().to_string();
    Some((line, jobs))
}

/// What a Bot was given since it last spoke: the user messages after its last assistant
/// message, joined (empty when a tool's result is the newest thing).
pub fn fresh_user(req: &Value) -> String {
    let all = messages(req);
    let from = all
        .iter()
        .rposition(|m| m["role"] == "assistant")
        .map_or(0, |i| i + 1);
    all[from..]
        .iter()
        .filter(|m| m["role"] == "user")
        .map(content)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The tool the last assistant message called, when a tool result is the newest message.
pub fn after_tool(req: &Value) -> Option<String> {
    let all = messages(req);
    if all.last()?["role"] != "tool" {
        return None;
    }
    let call = all.iter().rev().find(|m| m["role"] == "assistant")?;
    Some(
        call["tool_calls"][0]["function"]["name"]
            .as_str()?
            .to_string(),
    )
}
