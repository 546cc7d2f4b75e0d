//! Errors of a model call. Every variant tied to an endpoint names it and the
//! model so a single log line is enough to diagnose; no variant carries secrets.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("auth refused ({status}) by {endpoint} for model {model}: {detail}")]
    Auth {
        status: u16,
        endpoint: String,
        model: String,
        detail: String,
    },
    #[error("not found ({status}) at {endpoint} for model {model}: {detail}")]
    NotFound {
        status: u16,
        endpoint: String,
        model: String,
        detail: String,
    },
    #[error("bad request ({status}) to {endpoint} for model {model}: {detail}")]
    BadRequest {
        status: u16,
        endpoint: String,
        model: String,
        detail: String,
    },
    #[error("rate limited (429) by {endpoint} for model {model}{}: {detail}", fmt_retry_after(.retry_after))]
    RateLimited {
        endpoint: String,
        model: String,
        detail: String,
        retry_after: Option<Duration>,
    },
    #[error("server error ({status}) from {endpoint} for model {model}: {detail}")]
    Server {
        status: u16,
        endpoint: String,
        model: String,
        detail: String,
    },
    #[error("connection to {endpoint} failed for model {model}: {detail}")]
    Connection {
        endpoint: String,
        model: String,
        detail: String,
    },
    #[error("timed out after {after:?} waiting for {endpoint} for model {model}")]
    Timeout {
        endpoint: String,
        model: String,
        after: Duration,
    },
    /// Garbage on the wire, or the stream dropped mid-answer.
    #[error("protocol error from {endpoint} for model {model}: {detail}")]
    Protocol {
        endpoint: String,
        model: String,
        detail: String,
    },
    #[error("model call cancelled")]
    Cancelled,
    #[error("script {script} exhausted at step {step} ({endpoint} for model {model})")]
    ScriptExhausted {
        endpoint: String,
        model: String,
        script: String,
        step: usize,
    },
    #[error("invalid model endpoint config: {0}")]
    InvalidConfig(String),
}

fn fmt_retry_after(d: &Option<Duration>) -> String {
    match d {
        Some(d) => format!(" (retry after {d:?})"),
        None => String::new(),
    }
}

/// How servers word a model answer they could not parse (lower case): llama.cpp's chat
/// parsers (`… does not match the expected peg-native format`, `Failed to parse input at pos
/// N`) and Ollama's (`error parsing tool call: raw=…`).
const UNREADABLE_ANSWER: &[&str] = &[
    "does not match the expected",
    "failed to parse input at pos",
    "error parsing tool call",
];

impl LlmError {
    /// Whether another attempt may succeed: rate limits, server errors,
    /// connection failures, timeouts and broken streams.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            LlmError::RateLimited { .. }
                | LlmError::Server { .. }
                | LlmError::Connection { .. }
                | LlmError::Timeout { .. }
                | LlmError::Protocol { .. }
        )
    }

    /// The server made the model's answer but could not read it as text or as a tool call:
    /// llama.cpp's and Ollama's tool-call parsers answer 500 for a malformed call.
    pub fn is_unreadable_answer(&self) -> bool {
        let detail = match self {
            LlmError::Server { detail, .. } | LlmError::Protocol { detail, .. } => detail,
            _ => return false,
        };
        let detail = detail.to_ascii_lowercase();
        UNREADABLE_ANSWER.iter().any(|p| detail.contains(p))
    }

    /// Server-requested wait before retrying, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Map an HTTP error status to the matching variant.
    pub fn from_status(
        status: u16,
        endpoint: &str,
        model: &str,
        detail: String,
        retry_after: Option<Duration>,
    ) -> LlmError {
        let endpoint = endpoint.to_string();
        let model = model.to_string();
        match status {
            401 | 403 => LlmError::Auth {
                status,
                endpoint,
                model,
                detail,
            },
            404 => LlmError::NotFound {
                status,
                endpoint,
                model,
                detail,
            },
            429 => LlmError::RateLimited {
                endpoint,
                model,
                detail,
                retry_after,
            },
            // 408/409 are transient per HTTP semantics; 5xx (incl. 529 overloaded) too.
            408 | 409 | 500..=599 => LlmError::Server {
                status,
                endpoint,
                model,
                detail,
            },
            _ => LlmError::BadRequest {
                status,
                endpoint,
                model,
                detail,
            },
        }
    }
}

/// Collapse a body or message to one short line for error details.
pub(crate) fn short_detail(text: &str) -> String {
    const MAX: usize = 300;
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= MAX {
        return one_line;
    }
    let mut out: String = one_line.chars().take(MAX).collect();
    out.push('…');
    out
}
