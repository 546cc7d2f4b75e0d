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
    /// Bytes of each request equal, from its first byte, to some earlier request of the job.
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

/// For each body, the longest prefix it shares with any body before it.
pub fn prompt_reuse(bodies: &[Vec<u8>]) -> PromptReuse {
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
