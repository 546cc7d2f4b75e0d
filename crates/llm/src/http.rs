//! HTTP plumbing shared by the OpenAI and Anthropic providers: sending,
//! status mapping, body reading, cancellation and the per-attempt timeout.

use std::future::Future;
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap};
use tokio_util::sync::CancellationToken;

use crate::error::short_detail;
use crate::sse::{SseEvent, SseParser};
use crate::{EndpointConfig, LlmError, ModelResponse};

/// Cap on error bodies we read, so a huge HTML error page can't stall us.
const MAX_ERROR_BODY: usize = 64 * 1024;

pub(crate) struct HttpTarget {
    /// Base URL without trailing slash; this is what errors name.
    pub endpoint: String,
    pub model: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
    pub client: reqwest::Client,
}

/// What the server answered with on success.
pub(crate) enum Body {
    /// A plain JSON completion (server ignored `stream: true`).
    Json(serde_json::Value),
    Stream(reqwest::Response),
}

/// Per-protocol handling of SSE events.
pub(crate) trait StreamHandler {
    /// Handle one event; return `Ok(true)` when the answer is complete.
    fn on_event(&mut self, ev: SseEvent) -> Result<bool, LlmError>;
    /// Build the response once the stream ended (`done` = terminal event seen).
    fn finish(self, done: bool) -> Result<ModelResponse, LlmError>;
}

impl HttpTarget {
    pub fn new(cfg: &EndpointConfig) -> Result<Self, LlmError> {
        let base = cfg.effective_base_url().ok_or_else(|| {
            LlmError::InvalidConfig(format!("{} endpoint needs a base_url", cfg.kind))
        })?;
        let base = base.trim().trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(LlmError::InvalidConfig(format!(
                "base_url {base:?} for model {} must start with http:// or https://",
                cfg.model
            )));
        }
        if cfg.model.trim().is_empty() {
            return Err(LlmError::InvalidConfig(format!(
                "model name for {base} is empty"
            )));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(cfg.timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| LlmError::InvalidConfig(format!("http client: {e}")))?;
        Ok(HttpTarget {
            endpoint: base,
            model: cfg.model.clone(),
            api_key: cfg.api_key.clone().filter(|k| !k.is_empty()),
            timeout: cfg.timeout,
            client,
        })
    }

    /// Remove the key from text that might echo it (error bodies).
    pub fn redact(&self, text: &str) -> String {
        match &self.api_key {
            Some(k) if k.len() >= 4 => text.replace(k.as_str(), "<redacted>"),
            _ => text.to_string(),
        }
    }

    pub fn protocol(&self, detail: impl AsRef<str>) -> LlmError {
        LlmError::Protocol {
            endpoint: self.endpoint.clone(),
            model: self.model.clone(),
            detail: short_detail(&self.redact(detail.as_ref())),
        }
    }

    pub fn status_error(
        &self,
        status: u16,
        detail: &str,
        retry_after: Option<Duration>,
    ) -> LlmError {
        LlmError::from_status(
            status,
            &self.endpoint,
            &self.model,
            short_detail(&self.redact(detail)),
            retry_after,
        )
    }

    /// Run one attempt, aborting (and dropping the connection) as soon as `cancel` fires. The
    /// timeout is not the attempt's: it bounds each wait for the server (see [`Self::send`] and
    /// [`Self::read_stream`]), so a slow answer that keeps coming is never cut and sent again.
    pub async fn guard<T>(
        &self,
        cancel: &CancellationToken,
        fut: impl Future<Output = Result<T, LlmError>>,
    ) -> Result<T, LlmError> {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(LlmError::Cancelled),
            r = fut => r,
        }
    }

    fn timed_out(&self) -> LlmError {
        LlmError::Timeout {
            endpoint: self.endpoint.clone(),
            model: self.model.clone(),
            after: self.timeout,
        }
    }

    /// `fut` unless the server stays silent for the whole timeout.
    async fn within<T>(
        &self,
        fut: impl Future<Output = Result<T, LlmError>>,
    ) -> Result<T, LlmError> {
        tokio::time::timeout(self.timeout, fut)
            .await
            .unwrap_or_else(|_| Err(self.timed_out()))
    }

    /// Send the request and map non-2xx statuses to errors.
    pub async fn send(&self, rb: reqwest::RequestBuilder) -> Result<Body, LlmError> {
        // Until the answer begins: a non-streamed answer's whole generation, a stream's start.
        let resp = self
            .within(async {
                rb.send().await.map_err(|e| {
                    if e.is_timeout() {
                        self.timed_out()
                    } else {
                        LlmError::Connection {
                            endpoint: self.endpoint.clone(),
                            model: self.model.clone(),
                            detail: short_detail(&self.redact(&error_chain(&e))),
                        }
                    }
                })
            })
            .await?;
        let status = resp.status();
        if !status.is_success() {
            let retry_after = parse_retry_after(resp.headers());
            // An error's body is only words for the message: a server that never ends it
            // leaves the status alone to say what went wrong.
            let body = tokio::time::timeout(self.timeout, read_capped(resp))
                .await
                .unwrap_or_default();
            let detail = error_message(&body).unwrap_or(body);
            let detail = if detail.trim().is_empty() {
                status.canonical_reason().unwrap_or("no body").to_string()
            } else {
                detail
            };
            return Err(self.status_error(status.as_u16(), &detail, retry_after));
        }
        let is_json = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.to_ascii_lowercase().contains("application/json"));
        if is_json {
            let bytes = self
                .within(async {
                    resp.bytes()
                        .await
                        .map_err(|e| self.protocol(format!("reading body: {}", error_chain(&e))))
                })
                .await?;
            let value = serde_json::from_slice(&bytes).map_err(|e| {
                self.protocol(format!(
                    "invalid JSON body ({e}): {}",
                    String::from_utf8_lossy(&bytes)
                ))
            })?;
            return Ok(Body::Json(value));
        }
        Ok(Body::Stream(resp))
    }

    /// Drive an SSE body through `handler` until its terminal event or EOF; times out only when
    /// no bytes come for the whole timeout.
    pub async fn read_stream<H: StreamHandler>(
        &self,
        mut resp: reqwest::Response,
        mut handler: H,
    ) -> Result<ModelResponse, LlmError> {
        let mut parser = SseParser::default();
        loop {
            // Silence between parts is what times out, not the length of the answer.
            let chunk = self
                .within(async {
                    resp.chunk().await.map_err(|e| {
                        self.protocol(format!("stream dropped mid-answer: {}", error_chain(&e)))
                    })
                })
                .await?;
            let events = match &chunk {
                Some(bytes) => parser.push(bytes),
                None => parser.finish(),
            };
            for ev in events {
                if handler.on_event(ev)? {
                    return handler.finish(true);
                }
            }
            if chunk.is_none() {
                return handler.finish(false);
            }
        }
    }
}

/// Error text including causes (reqwest's top-level message is vague).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let msg = s.to_string();
        if !out.contains(&msg) {
            out.push_str(": ");
            out.push_str(&msg);
        }
        src = s.source();
    }
    out
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds; HTTP dates are ignored.
pub(crate) fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let num = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = num("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    num("retry-after").map(Duration::from_secs_f64)
}

async fn read_capped(mut resp: reqwest::Response) -> String {
    let mut buf = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        buf.extend_from_slice(&chunk);
        if buf.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Pull the human message out of a JSON error body (`{"error":{"message":..}}`
/// or `{"error":"..."}` or `{"message":..}`).
pub(crate) fn error_message(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let err = v.get("error").unwrap_or(&v);
    if let Some(s) = err.as_str() {
        return Some(s.to_string());
    }
    err.get("message")
        .and_then(|m| m.as_str())
        .map(str::to_string)
}
