//! A token on loopback too: on a shared machine every local account can reach 127.0.0.1, so
//! a real `troupe serve` wants its token (DATA_DIR/token, owner-only) on every route but the
//! login route and the channels' signed webhooks; the web page logs in once through the
//! one-time link on the listening line; `--no-token` says what it opens.

mod daemon_support;

use daemon_support::*;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;

/// A rig with no model: these tests only knock on the door.
fn rig() -> Rig {
    Rig::new(|p| write_config(p, &[], &[], ""))
}

fn start(rig: &Rig, extra: &[&str]) -> Daemon {
    Daemon::start_with(
        &troupe_binary(),
        &rig.path("data"),
        &rig.path("config.toml"),
        &rig.path("daemon.log"),
        extra,
    )
}

/// A client that sends nothing of its own and follows no redirect.
fn bare() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn status_of(r: reqwest::RequestBuilder) -> (StatusCode, String) {
    let r = r.send().await.unwrap();
    let status = r.status();
    (status, r.text().await.unwrap_or_default())
}

fn error_code(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {body}"));
    v["error"]["code"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn loopback_without_token_401() {
    let rig = rig();
    let d = start(&rig, &[]);
    assert!(d.addr.starts_with("127.0.0.1:"), "{}", d.addr);
    let token = d.token.clone().expect("the daemon keeps a token");
    let http = bare();

    // No token, a wrong one, or the token in another scheme: refused on every kind of route.
    for path in ["/v1/bots", "/v1/openapi.json", "/v1/events", "/v1/nodes"] {
        let (status, body) = status_of(http.get(d.url(path))).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        assert_eq!(error_code(&body), "unauthorized", "{path}");
        let (status, _) = status_of(http.get(d.url(path)).bearer_auth("0".repeat(64))).await;
        assert_eq!(
            status,
            StatusCode::UNAUTHORIZED,
            "{path} with a wrong token"
        );
        let (status, _) = status_of(
            http.get(d.url(path))
                .header(AUTHORIZATION, format!("Basic {token}")),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::UNAUTHORIZED,
            "{path} with another scheme"
        );
    }
    let (status, _) = status_of(
        http.post(d.url("/v1/bots"))
            .json(&serde_json::json!({"name": "Intruder"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // The page itself: a 401 page that says how to log in.
    let (status, body) = status_of(http.get(d.url("/"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body.contains("troupe login-link"), "{body}");
    let (status, _) = status_of(http.get(d.url("/app.js"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // With the token from the data dir: in, and nothing the intruder tried was written.
    let (status, body) = status_of(http.get(d.url("/v1/bots")).bearer_auth(&token)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        !body.contains("Intruder"),
        "the refused POST made no Bot: {body}"
    );
    let (status, _) = status_of(http.get(d.url("/")).bearer_auth(&token)).await;
    assert_eq!(status, StatusCode::OK);

    // A channel's inbound webhook stays public (its signature is its check): not a 401.
    let (status, body) = status_of(
        http.post(d.url("/v1/channels/nobody/inbound"))
            .json(&serde_json::json!({})),
    )
    .await;
    assert_ne!(status, StatusCode::UNAUTHORIZED, "{body}");
}

#[tokio::test]
async fn login_link_sets_cookie_once() {
    let rig = rig();
    let d = start(&rig, &[]);
    let link = d
        .login_link
        .clone()
        .expect("the listening line has a login link");
    assert!(
        link.starts_with(&format!("http://{}/login?once=", d.addr)),
        "{link}"
    );
    let http = bare();

    // The first visit sets the cookie and sends the browser to the page.
    let r = http.get(&link).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()[LOCATION], "/");
    let set = r.headers()[SET_COOKIE].to_str().unwrap().to_string();
    // Kept past the browser's closing (a month), not a cookie of its session only.
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=2592000"] {
        assert!(set.split("; ").any(|a| a == attr), "{attr} in {set}");
    }
    let cookie = set.split(';').next().unwrap().to_string();
    let session = cookie.strip_prefix("troupe_session=").expect("the cookie");
    assert!(session.len() >= 32, "{session}");
    let token = d.token.clone().unwrap();
    assert_ne!(session, token, "the cookie is a session, not the token");
    assert!(!link.contains(session));

    // The cookie opens the page, the API and the event stream.
    let (status, body) = status_of(http.get(d.url("/")).header(COOKIE, &cookie)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.contains("<html") || body.contains("<!doctype"),
        "{body}"
    );
    let (status, body) = status_of(
        http.post(d.url("/v1/bots"))
            .header(COOKIE, &cookie)
            .json(&serde_json::json!({"name": "Ada"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let r = http
        .get(d.url("/v1/events"))
        .header(COOKIE, format!("other=1; {cookie}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(
        r.headers()[CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    drop(r);

    // The link is void after use: a clear 403 page, and no cookie.
    let r = http.get(&link).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(r.headers().get(SET_COOKIE).is_none());
    let text = r.text().await.unwrap();
    assert!(text.contains("already used"), "{text}");
    // So is a made-up code, and a made-up cookie.
    let (status, _) = status_of(http.get(d.url("/login?once=abc"))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = status_of(http.get(d.url("/login"))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let forged = format!("troupe_session={}", "a".repeat(64));
    let (status, _) = status_of(http.get(d.url("/v1/bots")).header(COOKIE, forged)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Whoever holds the token gets a new link (what `troupe login-link` asks for); a session
    // cannot mint one without being logged in.
    let (status, _) = status_of(http.post(d.url("/v1/login-links"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let r = http
        .post(d.url("/v1/login-links"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let v: Value = r.json().await.unwrap();
    let path = v["path"].as_str().unwrap();
    let r = http.get(d.url(path)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let second = r.headers()[SET_COOKIE].to_str().unwrap().to_string();
    let second = second.split(';').next().unwrap();
    assert_ne!(second, cookie, "each login is its own session");
    let (status, _) = status_of(http.get(d.url("/v1/bots")).header(COOKIE, second)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = status_of(http.get(d.url("/v1/bots")).header(COOKIE, &cookie)).await;
    assert_eq!(status, StatusCode::OK, "the first session still holds");

    // An open page outlives a restart (sessions are kept, owner-only); the link stays void.
    drop(d);
    let sessions = rig.path("data").join("web-sessions");
    let mode = std::fs::metadata(&sessions).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let d = start(&rig, &[]);
    let (status, _) = status_of(http.get(d.url("/v1/bots")).header(COOKIE, &cookie)).await;
    assert_eq!(status, StatusCode::OK, "the session outlives the restart");
    let (status, _) = status_of(http.get(d.url(path))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a used link stays void");
}

#[tokio::test]
async fn token_file_mode_0600() {
    let rig = rig();
    let data = rig.path("data");
    let first = start(&rig, &[]);
    let path = data.join("token");
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "owner-only");
    let token = token_of(&data);
    assert_eq!(token.len(), 64);
    assert_eq!(first.token.as_deref(), Some(token.as_str()));
    drop(first);

    // A later start reuses it, so the CLI and its clients keep working.
    let again = start(&rig, &[]);
    assert_eq!(token_of(&data), token);
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let (status, _) = status_of(bare().get(again.url("/v1/bots")).bearer_auth(&token)).await;
    assert_eq!(status, StatusCode::OK);
    drop(again);

    // --token overrides the file, which stays as it was.
    let given = start(&rig, &["--token", "given-token"]);
    let (status, _) = status_of(bare().get(given.url("/v1/bots")).bearer_auth(&token)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = status_of(bare().get(given.url("/v1/bots")).bearer_auth("given-token")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(token_of(&data), token);
}

#[tokio::test]
async fn no_token_says_what_it_opens_and_stays_on_loopback() {
    let rig = rig();
    let d = start(&rig, &["--no-token"]);
    assert_eq!(d.login_link, None);
    let (status, _) = status_of(bare().get(d.url("/v1/bots"))).await;
    assert_eq!(status, StatusCode::OK, "--no-token checks nothing");
    assert!(
        !rig.path("data").join("token").exists(),
        "--no-token writes no token"
    );
    drop(d);
    let log = rig.log();
    assert!(
        log.contains("--no-token") && log.contains("every local account"),
        "{log}"
    );

    // The listening line says it too.
    let mut child = std::process::Command::new(troupe_binary())
        .args(["serve", "--no-token", "--addr", "127.0.0.1:0", "--config"])
        .arg(rig.path("config.toml"))
        .arg("--data-dir")
        .arg(rig.path("data"))
        .env_remove("TROUPE_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.starts_with("listening on http://127.0.0.1:"), "{line}");
    assert!(
        line.contains("WARNING --no-token") && line.contains("every local account"),
        "{line}"
    );

    // Anything but loopback is refused.
    let out = std::process::Command::new(troupe_binary())
        .args(["serve", "--no-token", "--addr", "0.0.0.0:0", "--config"])
        .arg(rig.path("config.toml"))
        .arg("--data-dir")
        .arg(rig.path("data2"))
        .env_remove("TROUPE_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--no-token") && stderr.contains("not loopback"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "it never listened");
}

/// A malformed `--addr` is one clear line saying what it takes, and nothing is served.
#[test]
fn a_malformed_listen_address_says_what_it_takes() {
    let rig = Rig::new(|p| write_config(p, &[], &[], ""));
    let out = std::process::Command::new(troupe_binary())
        .args(["serve", "--addr", "nonsense", "--config"])
        .arg(rig.path("config.toml"))
        .arg("--data-dir")
        .arg(rig.path("data"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot listen on nonsense") && stderr.contains("HOST:PORT"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "it never listened");
}
