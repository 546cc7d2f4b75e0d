//! A pass-through proxy between the daemon and the user's endpoint. It forwards every request
//! unchanged and streams the answer back, and keeps each request body, so the bench can say how
//! much of each prompt repeated an earlier one from its first byte (what a provider's prompt
//! cache can reuse) and whether the endpoint could be reached at all.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures::TryStreamExt;
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Recorded {
    bodies: Vec<Vec<u8>>,
    unreachable: Option<String>,
}

#[derive(Clone)]
struct Shared {
    upstream: String,
    http: reqwest::Client,
    recorded: Arc<Mutex<Recorded>>,
}

pub struct Proxy {
    /// The proxied base URL to give the daemon (the upstream's path on the proxy's address).
    pub base_url: String,
    recorded: Arc<Mutex<Recorded>>,
    server: tokio::task::JoinHandle<()>,
}

/// What one job's requests showed.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PromptReuse {
    pub requests: usize,
    pub request_bytes: u64,
    /// Bytes of each request (as the model reads it: system prompt, tools, messages) equal, from
    /// its first byte, to some earlier request of the job.
    pub repeated_prefix_bytes: u64,
    /// The endpoint could not be reached (the first such error).
    pub unreachable: Option<String>,
}

impl PromptReuse {
    pub fn share(&self) -> Option<f64> {
        (self.request_bytes > 0)
            .then(|| self.repeated_prefix_bytes as f64 / self.request_bytes as f64)
    }
}

impl Proxy {
    pub async fn start(upstream_base: &str) -> anyhow::Result<Proxy> {
        let url = reqwest::Url::parse(upstream_base)
            .map_err(|e| anyhow::anyhow!("--base-url {upstream_base:?} is not a URL: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            anyhow::bail!("--base-url must start with http:// or https://");
        }
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/').to_string();
        let recorded = Arc::new(Mutex::new(Recorded::default()));
        let shared = Shared {
            upstream: origin,
            http: reqwest::Client::new(),
            recorded: recorded.clone(),
        };
        let app = axum::Router::new().fallback(forward).with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Proxy {
            base_url: format!("http://{addr}{path}"),
            recorded,
            server,
        })
    }

    /// What the requests since the last call showed; starts afresh.
    pub fn take(&self) -> PromptReuse {
        let r = std::mem::take(&mut *self.recorded.lock().unwrap_or_else(|p| p.into_inner()));
        let mut reuse = prompt_reuse(&r.bodies);
        reuse.unreachable = r.unreachable;
        reuse
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// A request as the model reads it, in the order providers render a prompt: the system prompt,
/// the tool list, then the messages. A JSON body's keys are not in that order (`tools` comes
/// after `messages`), so comparing raw bodies would count an unchanged tool list as new on every
/// call. A body that is not such JSON is taken as it is.
pub fn prompt_text(body: &[u8]) -> Vec<u8> {
    let Ok(serde_json::Value::Object(req)) = serde_json::from_slice(body) else {
        return body.to_vec();
    };
    let Some(serde_json::Value::Array(messages)) = req.get("messages") else {
        return body.to_vec();
    };
    let mut out = Vec::with_capacity(body.len());
    let mut push = |v: &serde_json::Value| {
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
    };
    // Anthropic carries the system prompt beside the messages; OpenAI as the first message.
    let (system, rest) = match (req.get("system"), messages.split_first()) {
        (Some(sys), _) => (Some(sys), &messages[..]),
        (None, Some((first, rest))) if first["role"] == "system" => (Some(first), rest),
        _ => (None, &messages[..]),
    };
    if let Some(sys) = system {
        push(sys);
    }
    if let Some(tools) = req.get("tools") {
        push(tools);
    }
    for m in rest {
        push(m);
    }
    out
}

/// For each request (as the model reads it), the longest prefix it shares with any request
/// before it.
pub fn prompt_reuse(bodies: &[Vec<u8>]) -> PromptReuse {
    let bodies: Vec<Vec<u8>> = bodies.iter().map(|b| prompt_text(b)).collect();
    let mut out = PromptReuse {
        requests: bodies.len(),
        ..Default::default()
    };
    for (i, b) in bodies.iter().enumerate() {
        out.request_bytes += b.len() as u64;
        let best = bodies[..i]
            .iter()
            .map(|p| p.iter().zip(b).take_while(|(x, y)| x == y).count())
            .max()
            .unwrap_or(0);
        out.repeated_prefix_bytes += best as u64;
    }
    out
}

async fn forward(
    State(s): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    s.recorded
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .bodies
        .push(body.to_vec());
    let mut req = s.http.request(method, format!("{}{path}", s.upstream));
    for (name, value) in &headers {
        // The client sets its own host and length for the upstream.
        if name != "host" && name != "content-length" {
            req = req.header(name, value);
        }
    }
    match req.body(body).send().await {
        Ok(r) => {
            let mut out = Response::builder().status(r.status().as_u16());
            for (name, value) in r.headers() {
                if name != "content-length" && name != "transfer-encoding" {
                    out = out.header(name, value);
                }
            }
            let stream = r.bytes_stream().map_err(std::io::Error::other);
            out.body(Body::from_stream(stream))
                .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
        }
        Err(e) => {
            let mut rec = s.recorded.lock().unwrap_or_else(|p| p.into_inner());
            rec.unreachable.get_or_insert_with(|| e.to_string());
            (
                StatusCode::BAD_GATEWAY,
                format!("the bench's proxy could not reach the endpoint: {e}"),
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_compared_as_the_model_reads_it_system_tools_then_messages() {
        let first = br#"{"messages":[{"role":"system","content":"S"},{"role":"user","content":"u"}],"model":"m","tools":[{"name":"t"}]}"#;
        let second = br#"{"messages":[{"role":"system","content":"S"},{"role":"user","content":"u"},{"role":"assistant","content":"a"}],"model":"m","tools":[{"name":"t"}]}"#;
        let (a, b) = (prompt_text(first), prompt_text(second));
        // The whole first prompt (system, tools, the user line) is the second one's prefix.
        assert!(
            b.starts_with(&a),
            "{:?} / {:?}",
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b)
        );
        let r = prompt_reuse(&[first.to_vec(), second.to_vec()]);
        assert_eq!(r.repeated_prefix_bytes, a.len() as u64);
        // Not JSON: compared as bytes.
        assert_eq!(prompt_text(b"plain"), b"plain");
    }

    #[test]
    fn reuse_counts_each_requests_longest_prefix_shared_with_an_earlier_one() {
        let bodies = vec![
            b"abcdef".to_vec(),
            b"abcdefgh".to_vec(), // 6 repeated
            b"xyz".to_vec(),      // 0
            b"abcdxx".to_vec(),   // 4 (with either earlier abc… body)
        ];
        let r = prompt_reuse(&bodies);
        assert_eq!(
            (r.requests, r.request_bytes, r.repeated_prefix_bytes),
            (4, 23, 10)
        );
    }
}
