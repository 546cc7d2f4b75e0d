//! What the real-process daemon tests share: finding (or building) the `troupe` binary,
//! starting `troupe serve` and reading its address, OpenAI-style stream chunks for fake model
//! servers, and small HTTP helpers.
#![allow(dead_code)]

mod api;
pub mod channels;
pub mod deliverables;
mod fake;
pub mod holds;
pub mod lattice;
pub mod mcp;
mod procs;

// Not every test binary uses each of these (some shadow them with their own).
#[allow(unused_imports)]
pub use api::{Api, Rig, member, write_config};
#[allow(unused_imports)]
pub use fake::*;
#[allow(unused_imports)]
pub use procs::{KillRecordedOnDrop, group_alive, process_alive, recorded_pids};

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const WAIT: Duration = Duration::from_secs(30);

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn troupe_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("TROUPE_BIN") {
        return PathBuf::from(bin);
    }
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if Path::new(&d).is_absolute() => PathBuf::from(d),
        Some(d) => workspace_root().join(d),
        None => workspace_root().join("target"),
    };
    let bin = target.join("debug/troupe");
    if !bin.exists() {
        eprintln!(
            "{} is missing: running cargo build -p troupe-cli",
            bin.display()
        );
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "troupe-cli"])
            .current_dir(workspace_root())
            .status()
            .expect("run cargo build");
        assert!(status.success(), "cargo build -p troupe-cli failed");
    }
    bin
}

pub fn chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({"id": "c", "object": "chat.completion.chunk", "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

pub fn text(t: &str) -> String {
    let (a, b) = t.split_at(t.len() / 2);
    let mut s = chunk(json!({"role": "assistant", "content": a}), None);
    s += &chunk(json!({"content": b}), None);
    s += &chunk(json!({}), Some("stop"));
    s
}

/// A streamed answer that calls the shell tool with `command`.
pub fn shell_call(command: &str) -> String {
    let args = json!({"command": command}).to_string();
    let mut s = chunk(json!({"role": "assistant", "content": null}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "shell", "arguments": args}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}

/// A fake OpenAI-compatible server on loopback whose streamed answer `answer` picks from each
/// request body alone; returns its base URL.
pub async fn serve_fake_model(answer: fn(&Value) -> String) -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(req): axum::Json<Value>| async move {
            ([("content-type", "text/event-stream")], answer(&req))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

/// A config file whose one endpoint, `fake`, is the OpenAI-compatible server at `model`, used by
/// each of `roles`.
pub fn write_fake_config(path: &Path, model: &str, roles: &[&str]) {
    let roles: Vec<(&str, &str)> = roles.iter().map(|r| (*r, "fake")).collect();
    write_config(path, &[("fake", model)], &roles, "");
}

pub struct Daemon {
    pub child: Child,
    pub addr: String,
    /// The token this daemon wants: `--token` from the extra arguments, else the one it keeps
    /// in DATA_DIR/token; `None` with `--no-token`.
    pub token: Option<String>,
    /// The web page's one-time login link from the first line (`None` with `--no-token`).
    pub login_link: Option<String>,
}

/// A client that sends `token` as the bearer on every request.
pub fn client_with(token: Option<&str>) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(t) = token {
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {t}")
                .parse()
                .expect("a token is a header value"),
        );
    }
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("build the HTTP client")
}

/// The token a daemon on `data_dir` keeps in DATA_DIR/token (it reuses it on every start).
pub fn token_of(data_dir: &Path) -> String {
    let path = data_dir.join("token");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .trim()
        .to_string()
}

impl Daemon {
    pub fn start(bin: &Path, data_dir: &Path, config: &Path, log: &Path) -> Daemon {
        Self::start_with(bin, data_dir, config, log, &[])
    }

    /// `start`, with more `troupe serve` arguments.
    pub fn start_with(
        bin: &Path,
        data_dir: &Path,
        config: &Path,
        log: &Path,
        extra: &[&str],
    ) -> Daemon {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let mut child = Command::new(bin)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--config")
            .arg(config)
            .args(extra)
            .env("TROUPE_LOG", "info")
            .env_remove("TROUPE_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawn troupe serve");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut first = String::new();
            let mut reader = BufReader::new(stdout);
            let _ = reader.read_line(&mut first);
            let _ = tx.send(first);
            // Keep draining so the daemon never blocks on a full pipe.
            let mut rest = String::new();
            while reader.read_line(&mut rest).is_ok_and(|n| n > 0) {
                rest.clear();
            }
        });
        let first = rx
            .recv_timeout(WAIT)
            .expect("the daemon prints its address");
        // `listening on http://ADDR log in: LINK` (or a --no-token warning after ADDR).
        let words: Vec<&str> = first.split_whitespace().collect();
        let addr = match words.as_slice() {
            ["listening", "on", url, ..] => url.strip_prefix("http://"),
            _ => None,
        }
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();
        let login_link = match words.as_slice() {
            [_, _, _, "log", "in:", link, ..] => Some(link.to_string()),
            _ => None,
        };
        let token = if extra.contains(&"--no-token") {
            None
        } else if let Some(at) = extra.iter().position(|a| *a == "--token") {
            Some(extra[at + 1].to_string())
        } else {
            Some(token_of(data_dir))
        };
        Daemon {
            child,
            addr,
            token,
            login_link,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A client that sends this daemon's token on every request.
    pub fn client(&self) -> reqwest::Client {
        client_with(self.token.as_deref())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Poll `f` every 50 ms until it yields a value; panic with `what` after WAIT.
pub async fn wait_until<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Line `id` once its routing is done (routed, or withdrawn meanwhile), read with `get` from
/// `GET /v1/messages/:id`: a person's line is answered once stored, and read and routed after.
pub async fn until_routed<F, Fut>(id: &Value, get: F) -> Value
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    wait_until(&format!("line {id} is routed"), || async {
        let now = get(format!("/v1/messages/{id}")).await;
        matches!(now["routing"].as_str(), Some("routed" | "withdrawn")).then_some(now)
    })
    .await
}

pub async fn get(client: &reqwest::Client, url: String) -> Value {
    let r = client.get(&url).send().await.unwrap();
    assert!(r.status().is_success(), "GET {url}: {}", r.status());
    r.json().await.unwrap()
}

pub async fn post(client: &reqwest::Client, url: String, body: Value) -> Value {
    let r = client.post(&url).json(&body).send().await.unwrap();
    assert!(r.status().is_success(), "POST {url}: {}", r.status());
    r.json().await.unwrap()
}
