//! Retrying wrapper around `Provider::complete_once`.

use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::{LlmError, ModelRequest, ModelResponse, Provider, RetryPolicy, StreamEvent};

/// Result of a call plus its history, for records and diagnostics.
#[derive(Debug)]
pub struct CallOutcome {
    pub result: Result<ModelResponse, LlmError>,
    /// Attempts actually made (1 when the first one succeeded or failed fast).
    pub attempts: u32,
    /// One line per failed attempt, e.g. `attempt 1: rate limited (429) by ...`.
    pub errors: Vec<String>,
}

/// How long to wait after the `failed_attempt`-th failure with error `err`.
pub fn retry_delay(policy: &RetryPolicy, failed_attempt: u32, err: &LlmError) -> Duration {
    match err.retry_after() {
        Some(d) => d.min(policy.max_delay),
        None => policy.backoff(failed_attempt),
    }
}

/// Call `p` until success, a non-retryable error, cancellation, or
/// `policy.max_attempts` attempts. Deltas of failed attempts have already been
/// sent on `events`; consumers should treat the returned response as authoritative.
pub async fn complete_with_retry(
    p: &dyn Provider,
    policy: &RetryPolicy,
    req: &ModelRequest,
    events: &UnboundedSender<StreamEvent>,
    cancel: &CancellationToken,
) -> CallOutcome {
    let max = policy.max_attempts.max(1);
    let mut errors = Vec::new();
    let mut attempt = 0;
    loop {
        attempt += 1;
        if cancel.is_cancelled() {
            return CallOutcome {
                result: Err(LlmError::Cancelled),
                attempts: attempt - 1,
                errors,
            };
        }
        let err = match p.complete_once(req, events, cancel).await {
            Ok(resp) => {
                return CallOutcome {
                    result: Ok(resp),
                    attempts: attempt,
                    errors,
                };
            }
            Err(e) => e,
        };
        if matches!(err, LlmError::Cancelled) {
            return CallOutcome {
                result: Err(err),
                attempts: attempt,
                errors,
            };
        }
        errors.push(format!("attempt {attempt}: {err}"));
        if !err.retryable() || attempt >= max {
            return CallOutcome {
                result: Err(err),
                attempts: attempt,
                errors,
            };
        }
        let delay = retry_delay(policy, attempt, &err);
        tracing::warn!(attempt, ?delay, error = %err, "model call failed; retrying");
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                return CallOutcome { result: Err(LlmError::Cancelled), attempts: attempt, errors };
            }
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Always fails with the given error, counting calls.
    struct Failing(LlmError, AtomicU32);

    #[async_trait::async_trait]
    impl Provider for Failing {
        fn endpoint(&self) -> &str {
            "http://e"
        }
        fn model(&self) -> &str {
            "m"
        }
        async fn complete_once(
            &self,
            _: &ModelRequest,
            _: &UnboundedSender<StreamEvent>,
            _: &CancellationToken,
        ) -> Result<ModelResponse, LlmError> {
            self.1.fetch_add(1, Ordering::SeqCst);
            Err(self.0.clone())
        }
    }

    fn rate_limited(after: Option<Duration>) -> LlmError {
        LlmError::RateLimited {
            endpoint: "http://e".into(),
            model: "m".into(),
            detail: "slow".into(),
            retry_after: after,
        }
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff(1), Duration::from_millis(500));
        assert_eq!(p.backoff(2), Duration::from_secs(1));
        assert_eq!(p.backoff(4), Duration::from_secs(4));
        assert_eq!(p.backoff(5), Duration::from_secs(8));
        assert_eq!(p.backoff(60), Duration::from_secs(8));
        let e = rate_limited(Some(Duration::from_secs(2)));
        assert_eq!(retry_delay(&p, 1, &e), Duration::from_secs(2));
        let e = rate_limited(Some(Duration::from_secs(600)));
        assert_eq!(retry_delay(&p, 1, &e), Duration::from_secs(8));
        assert!(e.to_string().contains("retry after"));
    }

    #[tokio::test]
    async fn backoff_sleep_is_cancellable() {
        let p = Failing(
            rate_limited(Some(Duration::from_secs(3600))),
            AtomicU32::new(0),
        );
        let policy = RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_secs(3600),
            max_delay: Duration::from_secs(3600),
        };
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let req = ModelRequest::default();
        let call = complete_with_retry(&p, &policy, &req, &tx, &cancel);
        let cancel_when_failed = async {
            // The first failure has happened once the counter moves; then cancel.
            while p.1.load(Ordering::SeqCst) == 0 {
                tokio::task::yield_now().await;
            }
            cancel.cancel();
        };
        let (out, ()) = tokio::time::timeout(Duration::from_secs(5), async {
            tokio::join!(call, cancel_when_failed)
        })
        .await
        .unwrap();
        assert!(matches!(out.result, Err(LlmError::Cancelled)));
        assert_eq!(out.attempts, 1);
        assert_eq!(out.errors.len(), 1);
    }

    #[tokio::test]
    async fn non_retryable_fails_fast_and_zero_attempts_means_one() {
        let auth = LlmError::from_status(403, "http://e", "m", "no".into(), None);
        let p = Failing(auth, AtomicU32::new(0));
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let policy = RetryPolicy::default();
        let out = complete_with_retry(
            &p,
            &policy,
            &ModelRequest::default(),
            &tx,
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(out.attempts, 1);
        assert_eq!(p.1.load(Ordering::SeqCst), 1);

        let p = Failing(rate_limited(None), AtomicU32::new(0));
        let policy = RetryPolicy {
            max_attempts: 0,
            ..RetryPolicy::default()
        };
        let out = complete_with_retry(
            &p,
            &policy,
            &ModelRequest::default(),
            &tx,
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(out.attempts, 1);
    }
}
