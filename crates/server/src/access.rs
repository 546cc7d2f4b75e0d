//! Access: every route wants the daemon's token (`DATA_DIR/token`), loopback binds included,
//! because every local account can reach 127.0.0.1. A client sends it as
//! `Authorization: Bearer`; the web page instead holds a session cookie it got from a one-time
//! login link (`GET /login?once=…`). Public: the channels' inbound webhooks, which check their
//! callers' signatures themselves, and the login route, which checks its one-time code.
//! `troupe serve --no-token` (loopback only) leaves `AppState::token` unset and checks nothing.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::{Arc, Mutex};

/// The web page's session cookie.
pub const SESSION_COOKIE: &str = "troupe_session";
/// How long the browser keeps the session cookie: a month, so closing the browser does not
/// log it out (the daemon keeps its sessions across restarts too).
const SESSION_COOKIE_SECONDS: u64 = 30 * 24 * 60 * 60;
/// One-time codes not yet used; the oldest is dropped past this many.
const MAX_PENDING: usize = 32;
/// Web sessions kept; the oldest is dropped past this many (that browser logs in again).
const MAX_SESSIONS: usize = 256;

/// One-time login codes and the web sessions they opened. Codes live in memory (a restart
/// voids them; the new listening line prints a new link); the daemon keeps sessions in
/// `DATA_DIR/web-sessions` (owner-only, like the token), so an open page survives a restart.
#[derive(Clone, Default)]
pub struct LoginDesk {
    inner: Arc<Mutex<Desk>>,
}

#[derive(Default)]
struct Desk {
    pending: Vec<String>,
    sessions: Vec<String>,
    /// Where sessions are kept; `None`: memory only (in-process tests).
    file: Option<std::path::PathBuf>,
}

impl LoginDesk {
    /// A desk whose sessions are kept in `file`, with the sessions already there.
    pub fn kept_in(file: std::path::PathBuf) -> std::io::Result<LoginDesk> {
        let sessions = match std::fs::read_to_string(&file) {
            Ok(text) => text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        Ok(LoginDesk {
            inner: Arc::new(Mutex::new(Desk {
                pending: Vec::new(),
                sessions,
                file: Some(file),
            })),
        })
    }

    /// A new one-time code for `/login?once=CODE`.
    pub fn issue(&self) -> std::io::Result<String> {
        let code = crate::serve::generate_token()?;
        let mut d = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if d.pending.len() >= MAX_PENDING {
            d.pending.remove(0);
        }
        d.pending.push(code.clone());
        Ok(code)
    }

    /// Use `code` up: the new session's credential, or `None` when the code is unknown or
    /// was used before.
    pub fn redeem(&self, code: &str) -> std::io::Result<Option<String>> {
        let session = crate::serve::generate_token()?;
        let mut d = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let Some(at) = position_of(&d.pending, code) else {
            return Ok(None);
        };
        d.pending.remove(at);
        if d.sessions.len() >= MAX_SESSIONS {
            d.sessions.remove(0);
        }
        d.sessions.push(session.clone());
        if let Some(file) = &d.file {
            let text: String = d.sessions.iter().map(|s| format!("{s}\n")).collect();
            crate::serve::write_atomically(file, text.as_bytes(), 0o600)?;
        }
        Ok(Some(session))
    }

    /// Whether `credential` is a session some login link opened.
    pub fn knows_session(&self, credential: &str) -> bool {
        let d = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        position_of(&d.sessions, credential).is_some()
    }
}

/// Where `given` is in `known`, comparing against every entry in constant time each, so
/// timing tells neither how much of a credential matched nor which one did.
fn position_of(known: &[String], given: &str) -> Option<usize> {
    known.iter().enumerate().fold(None, |found, (i, k)| {
        let hit = constant_time_eq(k.as_bytes(), given.as_bytes());
        if hit { Some(i) } else { found }
    })
}

pub async fn require_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(expected) = &state.token else {
        return next.run(req).await;
    };
    if is_public(req.method(), req.uri().path()) {
        return next.run(req).await;
    }
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if bearer.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.as_bytes())) {
        return next.run(req).await;
    }
    if session_cookie(req.headers()).is_some_and(|c| state.login.knows_session(c)) {
        return next.run(req).await;
    }
    if req.uri().path().starts_with("/v1/") {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "not logged in: send the bearer token from DATA_DIR/token, or open a login link \
             (`troupe login-link` prints one)",
        )
        .into_response();
    }
    page(
        StatusCode::UNAUTHORIZED,
        "Not logged in",
        "This Troupe daemon wants its owner's login. Open the login link printed on the line \
         `listening on …` when it started, or run <code>troupe login-link</code> for a new one.",
    )
}

/// Routes that authenticate their callers themselves: each channel account's inbound
/// webhook (the body's signature under the account's secret, `routes::channels`) and the
/// login route (its one-time code).
pub fn is_public(method: &Method, path: &str) -> bool {
    if method == Method::GET && path == "/login" {
        return true;
    }
    let Some(rest) = path.strip_prefix("/v1/channels/") else {
        return false;
    };
    method == Method::POST
        && rest
            .strip_suffix("/inbound")
            .is_some_and(|account| !account.is_empty() && !account.contains('/'))
}

/// The value of the session cookie in the request's `Cookie` headers.
fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value)
}

#[derive(serde::Deserialize)]
pub struct LoginQuery {
    #[serde(default)]
    once: String,
}

/// `GET /login?once=CODE`: a known, unused code sets the session cookie and sends the
/// browser to the page; any other code gets a 403 page. Without a token there is nothing
/// to log in to.
pub async fn login(State(state): State<AppState>, Query(q): Query<LoginQuery>) -> Response {
    if state.token.is_none() {
        return (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    }
    match state.login.redeem(&q.once) {
        Ok(Some(session)) => (
            StatusCode::SEE_OTHER,
            [
                (header::LOCATION, "/".to_string()),
                (
                    header::SET_COOKIE,
                    format!(
                        "{SESSION_COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/; \
                         Max-Age={SESSION_COOKIE_SECONDS}"
                    ),
                ),
                (header::CACHE_CONTROL, "no-store".to_string()),
            ],
        )
            .into_response(),
        Ok(None) => page(
            StatusCode::FORBIDDEN,
            "Login link not valid",
            "This login link was already used or is not one this daemon issued (links end \
             when the daemon restarts). Run <code>troupe login-link</code> for a new one.",
        ),
        Err(e) => {
            tracing::error!(error = %e, "cannot draw random bytes for a web session");
            page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Cannot log in",
                "The daemon could not draw random bytes for a session.",
            )
        }
    }
}

/// A one-line HTML page (the text is ours, never the request's).
fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>{title}</title><h1>{title}</h1><p>{text}</p>\n"
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
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
    use super::*;

    #[test]
    fn only_the_inbound_webhooks_and_login_are_public() {
        assert!(is_public(&Method::POST, "/v1/channels/acme/inbound"));
        assert!(!is_public(&Method::GET, "/v1/channels/acme/inbound"));
        assert!(!is_public(&Method::POST, "/v1/channels//inbound"));
        assert!(!is_public(&Method::POST, "/v1/channels/a/b/inbound"));
        assert!(!is_public(&Method::POST, "/v1/channels/acme/inbound/x"));
        assert!(!is_public(&Method::POST, "/v1/bots"));
        assert!(is_public(&Method::GET, "/login"));
        assert!(!is_public(&Method::POST, "/login"));
        assert!(!is_public(&Method::GET, "/"));
        assert!(!is_public(&Method::GET, "/v1/login-links"));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    #[test]
    fn a_code_opens_one_session_once() {
        let desk = LoginDesk::default();
        let code = desk.issue().unwrap();
        assert_eq!(desk.redeem("nope").unwrap(), None);
        let session = desk.redeem(&code).unwrap().expect("a fresh code logs in");
        assert!(desk.knows_session(&session));
        assert!(!desk.knows_session(&code), "a code is not a session");
        assert_eq!(desk.redeem(&code).unwrap(), None, "a used code is void");
        assert!(!desk.knows_session(""));
    }

    #[test]
    fn sessions_kept_in_a_file_outlive_the_desk() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("web-sessions");
        let desk = LoginDesk::kept_in(file.clone()).unwrap();
        let code = desk.issue().unwrap();
        let session = desk.redeem(&code).unwrap().unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let again = LoginDesk::kept_in(file).unwrap();
        assert!(again.knows_session(&session));
        assert_eq!(again.redeem(&code).unwrap(), None, "codes are not kept");
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.append(
            header::COOKIE,
            "a=1; troupe_session=xyz; b=2".parse().unwrap(),
        );
        assert_eq!(session_cookie(&h), Some("xyz"));
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, "troupe_sessionx=1".parse().unwrap());
        assert_eq!(session_cookie(&h), None);
    }
}
