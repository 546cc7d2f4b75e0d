//! The API served in-process on a loopback port with a manual clock (as `troupe serve
//! --manual-clock`: time moves only on `POST /v1/debug/clock`, the scheduler ticks only on
//! `POST /v1/debug/tick`), for browser tests that also write records the HTTP API does not
//! (a quality event, a hand-over in a given state) through its `AppState`.

use anyhow::{Result, bail};
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::{BotId, ManualClock, SessionId};
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;
use troupe_server::AppState;

use super::{ChromeDriver, page_diagnostics};

pub struct App {
    pub base: String,
    pub client: reqwest::Client,
    pub state: AppState,
    pub dir: tempfile::TempDir,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for App {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl App {
    pub async fn start() -> App {
        let dir = tempfile::tempdir().unwrap();
        let secrets: SecretSource = Arc::new(|name| std::env::var(name).ok());
        let data = dir.path().join("data");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let boot = troupe_server::bootstrap::build_state(
            &data,
            troupe_server::bootstrap::BootOptions {
                database: Some(troupe_store::testing::database_url_in(&data)),
                manual_clock: Some(ManualClock::new(now)),
                ..troupe_server::bootstrap::BootOptions::new(
                    RoleTable::new(secrets.clone()),
                    secrets,
                )
            },
        )
        .await
        .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let rule = troupe_server::hosts::HostRule::new(addr, &[]).unwrap();
        let router = troupe_server::app(boot.state.clone(), rule);
        let server = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        App {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            state: boot.state,
            dir,
            server,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The status and body, whatever the status.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self.client.request(method, self.url(path));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// The body of a 2xx answer, else an error naming the route, status and body.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value> {
        let (status, v) = self.call(method, path, body).await;
        if !(200..300).contains(&status) {
            bail!("{path}: {status} {v}");
        }
        Ok(v)
    }

    pub async fn post(&self, path: &str, body: Value) -> Value {
        let (status, v) = self.call(reqwest::Method::POST, path, Some(body)).await;
        assert!(status == 200 || status == 201, "POST {path}: {status} {v}");
        v
    }

    pub async fn get(&self, path: &str) -> Value {
        let (status, v) = self.call(reqwest::Method::GET, path, None).await;
        assert_eq!(status, 200, "GET {path}: {v}");
        v
    }

    /// A Bot replaying `script` (written to a file in the test's folder).
    pub async fn scripted_bot(&self, name: &str, script: &str) -> BotId {
        let path = self.dir.path().join(format!("{name}.json"));
        std::fs::write(&path, script).unwrap();
        let bot = self
            .post(
                "/v1/bots",
                json!({"name": name, "endpoint": {"kind": "scripted", "model": "s",
                       "script": path.display().to_string()}}),
            )
            .await;
        BotId(bot["id"].as_i64().unwrap())
    }

    pub async fn direct(&self, bot: BotId) -> SessionId {
        let s = self
            .post(
                "/v1/sessions",
                json!({"kind": "direct", "bot_ids": [bot.0]}),
            )
            .await;
        SessionId(s["id"].as_i64().unwrap())
    }
}

impl App {
    /// Chromium on a fresh profile, or None (with a notice) when it is not installed and
    /// `TROUPE_REQUIRE_BROWSER` is unset.
    pub async fn open_browser(&self) -> Option<(ChromeDriver, fantoccini::Client)> {
        super::browser_in(self.dir.path()).await
    }
}

/// Close the browser; a failed scenario panics with the page (its screenshot in
/// `target/<shot>`) and chromedriver's log.
pub async fn finish(
    result: Result<()>,
    driver: ChromeDriver,
    client: fantoccini::Client,
    shot: &str,
) {
    if let Err(err) = &result {
        let diag = page_diagnostics(&client, shot).await;
        let _ = client.clone().close().await;
        panic!(
            "{err:#}\n{diag}\n--- chromedriver ---\n{}",
            driver.process.log_text()
        );
    }
    let _ = client.close().await;
}
