//! Access: loopback binds need no token; any other bind requires `Authorization: Bearer`,
//! except on the public routes, which authenticate their callers themselves.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub async fn require_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(expected) = &state.token else {
        return next.run(req).await;
    };
    if is_public(req.method(), req.uri().path()) {
        return next.run(req).await;
    }
    let given = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.as_bytes())) {
        next.run(req).await
    } else {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or wrong bearer token",
        )
        .into_response()
    }
}

/// Routes a chat service's bridge calls: each channel account's inbound webhook, checked by
/// the body's signature under the account's secret (`routes::channels`), never the token.
pub fn is_public(method: &axum::http::Method, path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/v1/channels/") else {
        return false;
    };
    method == axum::http::Method::POST
        && rest
            .strip_suffix("/inbound")
            .is_some_and(|account| !account.is_empty() && !account.contains('/'))
}

/// Compare without an early exit, so timing does not leak how much of a token matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_inbound_webhooks_are_public() {
        use axum::http::Method;
        assert!(super::is_public(&Method::POST, "/v1/channels/acme/inbound"));
        assert!(!super::is_public(&Method::GET, "/v1/channels/acme/inbound"));
        assert!(!super::is_public(&Method::POST, "/v1/channels//inbound"));
        assert!(!super::is_public(&Method::POST, "/v1/channels/a/b/inbound"));
        assert!(!super::is_public(
            &Method::POST,
            "/v1/channels/acme/inbound/x"
        ));
        assert!(!super::is_public(&Method::POST, "/v1/bots"));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(super::constant_time_eq(b"abc", b"abc"));
        assert!(!super::constant_time_eq(b"abc", b"abd"));
        assert!(!super::constant_time_eq(b"abc", b"abcd"));
    }
}
