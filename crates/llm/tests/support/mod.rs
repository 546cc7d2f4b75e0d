//! Fake model servers for integration tests: an axum app on 127.0.0.1:0 that
//! records every request and answers from a queue of canned replies.
#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio_util::sync::CancellationToken;
use troupe_llm::{
    ChatMessage, EndpointConfig, ImagePart, ModelRequest, ModelResponse, Provider, ProviderKind,
    RetryPolicy, StreamEvent, ToolCall, ToolSpec,
};

pub const KEY: &str = "sk-test-SECRET-123456";

#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Value,
}

/// How a streamed body ends after its chunks.
#[derive(Debug, Clone)]
pub enum End {
    /// Clean end of body.
    Close,
    /// Never ends (until the client goes away).
    Hang,
    /// Abort the connection with an error once the notify fires.
    AbortOn(Arc<tokio::sync::Notify>),
}

#[derive(Debug, Clone)]
pub enum Reply {
    Status {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    Json(Value),
    Sse(Vec<String>, End),
    /// A slow server: each chunk after the pause, then a clean end.
    SsePaced(Vec<String>, std::time::Duration),
    /// An error status whose body starts and never ends.
    StatusHanging(u16),
}

impl Reply {
    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Status {
            status,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_string(),
        }
    }
}

struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
}

pub struct FakeServer {
    pub base: String,
    shared: Arc<Shared>,
}

impl FakeServer {
    /// Serve `replies` in order; the last one repeats forever.
    pub async fn start(replies: Vec<Reply>) -> FakeServer {
        assert!(!replies.is_empty());
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        FakeServer {
            base: format!("http://{addr}"),
            shared,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }
}

async fn handle(
    State(s): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let headers = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    s.requests.lock().unwrap().push(Recorded {
        path: uri.path().to_string(),
        headers,
        body,
    });
    let reply = {
        let mut q = s.replies.lock().unwrap();
        if q.len() > 1 {
            q.pop_front().unwrap()
        } else {
            q.front().unwrap().clone()
        }
    };
    match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut b = Response::builder().status(StatusCode::from_u16(status).unwrap());
            for (k, v) in headers {
                b = b.header(k, v);
            }
            b.body(Body::from(body)).unwrap()
        }
        Reply::Json(v) => Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(v.to_string()))
            .unwrap(),
        Reply::Sse(chunks, end) => {
            let items = futures::stream::iter(
                chunks
                    .into_iter()
                    .map(|c| Ok::<Bytes, std::io::Error>(Bytes::from(c))),
            );
            let body = match end {
                End::Close => Body::from_stream(items),
                End::Hang => Body::from_stream(items.chain(futures::stream::pending())),
                End::AbortOn(n) => {
                    Body::from_stream(items.chain(futures::stream::once(async move {
                        n.notified().await;
                        Err(std::io::Error::other("boom"))
                    })))
                }
            };
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .unwrap()
        }
        Reply::StatusHanging(status) => {
            let start =
                futures::stream::iter([Ok::<Bytes, std::io::Error>(Bytes::from("{\"error\":"))]);
            Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header("content-type", "application/json")
                .body(Body::from_stream(start.chain(futures::stream::pending())))
                .unwrap()
        }
        Reply::SsePaced(chunks, pause) => {
            let items = futures::stream::iter(chunks).then(move |c| async move {
                tokio::time::sleep(pause).await;
                Ok::<Bytes, std::io::Error>(Bytes::from(c))
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(items))
                .unwrap()
        }
    }
}

/// `data: <json>\n\n` lines for an OpenAI stream, terminated by `[DONE]`.
pub fn openai_sse(chunks: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push("data: [DONE]\n\n".into());
    out
}

/// OpenAI stream pieces and a plain request, for the OpenAI tests.
pub fn text_chunk(t: &str) -> Value {
    json!({"choices":[{"index":0,"delta":{"content":t},"finish_reason":null}]})
}

pub fn finish_chunk(reason: &str) -> Value {
    json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]})
}

pub fn usage_chunk(i: u64, o: u64) -> Value {
    json!({"choices":[],"usage":{"prompt_tokens":i,"completion_tokens":o,"total_tokens":i+o}})
}

pub fn simple_request() -> ModelRequest {
    ModelRequest {
        system: "sys".into(),
        messages: vec![ChatMessage::user("hi")],
        tools: Default::default(),
        max_tokens: None,
        lightest_thinking: false,
    }
}

pub fn good_stream() -> Reply {
    Reply::Sse(
        openai_sse(&[
            text_chunk("Hel"),
            text_chunk("lo"),
            finish_chunk("stop"),
            usage_chunk(12, 3),
        ]),
        End::Close,
    )
}

/// `event: <type>\ndata: <json>\n\n` frames for an Anthropic stream.
pub fn anthropic_sse(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// Config with tiny retry delays so retry tests run fast.
pub fn config(kind: ProviderKind, base: &str, model: &str) -> EndpointConfig {
    let mut cfg = EndpointConfig::new(kind, model);
    cfg.base_url = Some(base.to_string());
    cfg.api_key = Some(KEY.to_string());
    cfg.timeout = Duration::from_secs(20);
    cfg.retry = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    };
    cfg
}

pub fn sample_request() -> ModelRequest {
    ModelRequest {
        system: "You are terse.".into(),
        messages: vec![
            ChatMessage::user("list files"),
            ChatMessage::Assistant {
                text: "Looking.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_a".into(),
                        name: "shell".into(),
                        arguments: r#"{"command":"ls"}"#.into(),
                    },
                    ToolCall {
                        id: "call_b".into(),
                        name: "shell".into(),
                        arguments: "{not json".into(),
                    },
                ],
            },
            ChatMessage::tool_result("call_a", "a.txt"),
            ChatMessage::ToolResult {
                call_id: "call_b".into(),
                content: "bad args".into(),
                is_error: true,
                images: Vec::new(),
            },
        ],
        tools: vec![ToolSpec {
            name: "shell".into(),
            description: "Run a command".into(),
            parameters: serde_json::json!({"type":"object","properties":{"command":{"type":"string"}}}),
        }]
        .into(),
        max_tokens: Some(256),
        lightest_thinking: false,
    }
}

/// A tiny picture for wire tests (the bytes need not be a real image).
pub fn picture(media_type: &str, data: &str) -> ImagePart {
    ImagePart {
        media_type: media_type.into(),
        data: data.into(),
    }
}

/// A user message with a picture, a tool call whose result carries a picture, a plain
/// tool result, then a plain user message.
pub fn picture_request() -> ModelRequest {
    ModelRequest {
        system: String::new(),
        messages: vec![
            ChatMessage::user_with_images("what is this?", vec![picture("image/png", "iVBORw0K")]),
            ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_p".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a.png"}"#.into(),
                    },
                    ToolCall {
                        id: "call_t".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a.txt"}"#.into(),
                    },
                ],
            },
            ChatMessage::ToolResult {
                call_id: "call_p".into(),
                content: "a.png: image/png, 8 bytes".into(),
                is_error: false,
                images: vec![picture("image/jpeg", "/9j/4AAQ")],
            },
            ChatMessage::tool_result("call_t", "plain text"),
            ChatMessage::user("thanks"),
        ],
        tools: Default::default(),
        max_tokens: None,
        lightest_thinking: false,
    }
}

/// One call with the endpoint's retry policy, as the engine makes it (events dropped).
pub async fn with_retries(cfg: EndpointConfig, req: &ModelRequest) -> troupe_llm::CallOutcome {
    let policy = cfg.retry.clone();
    let p = troupe_llm::build_provider(cfg).unwrap();
    let (tx, _rx) = unbounded_channel();
    troupe_llm::complete_with_retry(p.as_ref(), &policy, req, &tx, &CancellationToken::new()).await
}

/// Run one attempt, collecting the streamed events.
pub async fn once(
    p: &dyn Provider,
    req: &ModelRequest,
) -> (
    Result<ModelResponse, troupe_llm::LlmError>,
    Vec<StreamEvent>,
) {
    let (tx, mut rx) = unbounded_channel();
    let r = p.complete_once(req, &tx, &CancellationToken::new()).await;
    drop(tx);
    (r, drain(&mut rx))
}

pub fn drain(rx: &mut UnboundedReceiver<StreamEvent>) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

pub fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}
