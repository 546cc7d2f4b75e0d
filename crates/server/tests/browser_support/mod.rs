//! Helpers for the real-browser test (`tests/browser.rs`): a `troupe serve` daemon and a
//! chromedriver, both started as child processes and killed on drop, the scripted model
//! files, a bounded polling helper, the WebDriver session and what to print on failure.
//! The page helpers are in [`page`].

#![allow(dead_code)]

use std::future::Future;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;

pub mod in_process;
pub mod page;

/// The workspace root (`crates/server/../..`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The workspace `target` directory (honours `CARGO_TARGET_DIR` when it is set).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace_root().join(dir)
            }
        }
        None => workspace_root().join("target"),
    }
}

/// The `troupe` binary. `CARGO_BIN_EXE_troupe` does not exist in this crate (the binary
/// belongs to `troupe-cli`), so the test runs `cargo build -p troupe-cli` (a quick no-op
/// when it is up to date; Cargo has released its build lock by the time tests run) and
/// uses `target/debug/troupe`. The page is compiled into that binary, so building it here
/// keeps the test from exercising a stale page. `TROUPE_BIN=<path>` skips the build and
/// uses that binary instead.
pub fn troupe_binary() -> Result<PathBuf> {
    if let Some(bin) = std::env::var_os("TROUPE_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let bin = target_dir()
        .join("debug")
        .join(format!("troupe{}", std::env::consts::EXE_SUFFIX));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "-p", "troupe-cli"])
        .current_dir(workspace_root())
        .status()
        .context("running cargo build -p troupe-cli")?;
    if !status.success() {
        bail!("cargo build -p troupe-cli failed: {status}");
    }
    if !bin.exists() {
        bail!("{} missing after cargo build -p troupe-cli", bin.display());
    }
    Ok(bin)
}

/// A child process killed (and reaped) on drop. Its output is collected in `log`.
pub struct ChildGuard {
    pub name: &'static str,
    child: Child,
    pub log: Arc<Mutex<String>>,
}

impl ChildGuard {
    pub fn log_text(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect_into(log: Arc<Mutex<String>>, stream: impl Read + Send + 'static) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if let Ok(mut l) = log.lock() {
                        l.push_str(&line);
                    }
                }
            }
        }
    });
}

/// `troupe serve --data-dir <tmp> --addr 127.0.0.1:0`, with its base URL and the web page's
/// one-time login link read from the first stdout line
/// (`listening on http://HOST:PORT log in: LINK`), and its token from DATA_DIR/token.
pub struct Daemon {
    pub base_url: String,
    pub process: ChildGuard,
    /// The bearer token the daemon wants (it keeps it in DATA_DIR/token).
    pub token: String,
    /// The login link of the first line; used up by the first browser that opens it.
    pub login_link: String,
}

impl Daemon {
    pub fn start(bin: &Path, data_dir: &Path, work_dir: &Path) -> Result<Daemon> {
        let mut child = Command::new(bin)
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .args(["--addr", "127.0.0.1:0"])
            .current_dir(work_dir)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("spawning {} serve", bin.display()))?;
        let log = Arc::new(Mutex::new(String::new()));
        collect_into(log.clone(), child.stderr.take().expect("piped stderr"));
        let stdout = child.stdout.take().expect("piped stdout");
        let guard = ChildGuard {
            name: "troupe serve",
            child,
            log: log.clone(),
        };

        // Read the first line on a thread so a silent daemon cannot hang the test.
        let (tx, rx) = mpsc::channel();
        let rest_log = log.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut first = String::new();
            let res = reader.read_line(&mut first).map(|_| first);
            let _ = tx.send(res);
            // Keep draining stdout so the daemon never blocks on a full pipe.
            let mut line = String::new();
            while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
                if let Ok(mut l) = rest_log.lock() {
                    l.push_str(&line);
                }
                line.clear();
            }
        });
        let first = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => bail!("reading the daemon's stdout: {e}\n{}", guard.log_text()),
            Err(_) => bail!(
                "the daemon printed nothing within 60 s\n{}",
                guard.log_text()
            ),
        };
        let words: Vec<&str> = first.split_whitespace().collect();
        let [_, _, base_url, "log", "in:", login_link, ..] = words.as_slice() else {
            bail!(
                "unexpected first stdout line {first:?} (stderr:\n{})",
                guard.log_text()
            );
        };
        let base_url = base_url.trim_end_matches('/').to_string();
        let login_link = login_link.to_string();
        let token_file = data_dir.join("token");
        let token = std::fs::read_to_string(&token_file)
            .with_context(|| format!("reading {}", token_file.display()))?
            .trim()
            .to_string();
        Ok(Daemon {
            base_url,
            process: guard,
            token,
            login_link,
        })
    }

    /// An HTTP client that sends the daemon's token on every request.
    pub fn http(&self) -> reqwest::Client {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {}", self.token)
                .parse()
                .expect("a token is a header value"),
        );
        reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .expect("build the HTTP client")
    }

    /// `GET path` on the daemon with its token, decoded (an error status is an error).
    pub async fn get_json<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T> {
        Ok(self
            .http()
            .get(format!("{}{path}", self.base_url))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?)
    }

    /// A new one-time login link (what `troupe login-link` prints): opening it in a browser
    /// logs that browser in and lands on the page at `/`.
    pub async fn new_login_link(&self) -> Result<String> {
        let r = self
            .http()
            .post(format!("{}/v1/login-links", self.base_url))
            .send()
            .await?;
        anyhow::ensure!(
            r.status().as_u16() == 201,
            "POST /v1/login-links: {}",
            r.status()
        );
        let v: serde_json::Value = r.json().await?;
        let path = v["path"]
            .as_str()
            .ok_or_else(|| anyhow!("no path in {v}"))?;
        Ok(format!("{}{path}", self.base_url))
    }

    /// Log the browser `c` in through a new one-time link; it lands on the page at `/`.
    pub async fn log_in(&self, c: &Client) -> Result<()> {
        c.goto(&self.new_login_link().await?).await?;
        Ok(())
    }
}

/// A free TCP port on 127.0.0.1 (bound, read, released).
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// Chromedriver's and Chromium's paths, or None with a notice when either is missing (the test
/// then skips) — unless `TROUPE_REQUIRE_BROWSER` is set, when it fails.
pub fn browser_or_skip() -> Option<(PathBuf, PathBuf)> {
    let (driver_path, chrome) = (chromedriver_path(), chrome_path());
    if driver_path.exists() && chrome.exists() {
        return Some((driver_path, chrome));
    }
    let msg = format!(
        "{} or {} not found: install chromium and chromium-driver (or set CHROMEDRIVER, CHROME_BIN)",
        driver_path.display(),
        chrome.display()
    );
    if std::env::var_os("TROUPE_REQUIRE_BROWSER").is_some() {
        panic!("{msg}");
    }
    eprintln!("SKIPPED browser test: {msg}");
    None
}

/// Chromedriver started and one Chromium session on a fresh profile in `profile`.
/// Chromium on a fresh profile in `dir`, or None (with a notice) when it is not installed and
/// `TROUPE_REQUIRE_BROWSER` is unset.
#[allow(dead_code)] // not every browser test starts its own
pub async fn browser_in(dir: &Path) -> Option<(ChromeDriver, Client)> {
    let (driver_path, _) = browser_or_skip()?;
    let profile = dir.join("chrome-profile");
    std::fs::create_dir_all(&profile).expect("profile dir");
    Some(open_session(&driver_path, &profile).await)
}

pub async fn open_session(driver_path: &Path, profile: &Path) -> (ChromeDriver, Client) {
    let driver = ChromeDriver::start(driver_path)
        .await
        .expect("start chromedriver");
    let client = connect(&driver, profile)
        .await
        .expect("open a chromium session");
    (driver, client)
}

/// The chromedriver program: `CHROMEDRIVER` or Debian's `/usr/bin/chromedriver`.
pub fn chromedriver_path() -> PathBuf {
    std::env::var_os("CHROMEDRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromedriver"))
}

/// The browser: `CHROME_BIN` or Debian's `/usr/bin/chromium`.
pub fn chrome_path() -> PathBuf {
    std::env::var_os("CHROME_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

pub struct ChromeDriver {
    pub url: String,
    pub process: ChildGuard,
}

impl ChromeDriver {
    pub async fn start(program: &Path) -> Result<ChromeDriver> {
        let port = free_port()?;
        let mut child = Command::new(program)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("spawning {}", program.display()))?;
        let log = Arc::new(Mutex::new(String::new()));
        collect_into(log.clone(), child.stdout.take().expect("piped stdout"));
        collect_into(log.clone(), child.stderr.take().expect("piped stderr"));
        let process = ChildGuard {
            name: "chromedriver",
            child,
            log,
        };
        let url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let status_url = format!("{url}/status");
        poll("chromedriver /status", Duration::from_secs(30), || {
            let http = http.clone();
            let status_url = status_url.clone();
            async move {
                match http.get(&status_url).send().await {
                    Ok(r) if r.status().is_success() => Ok(Some(())),
                    _ => Ok(None),
                }
            }
        })
        .await
        .with_context(|| format!("chromedriver output:\n{}", process.log_text()))?;
        Ok(ChromeDriver { url, process })
    }
}

/// Polls `check` every 100 ms until it yields `Some`, failing after `timeout`; an `Err`
/// from `check` ends the wait at once. This is a bounded wait on a condition, not a
/// fixed sleep.
pub async fn poll<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<T>>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check()
            .await
            .with_context(|| format!("while waiting for {what}"))?
        {
            return Ok(v);
        }
        if start.elapsed() > timeout {
            bail!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The final text of the quick script's "hello" turn.
pub const QUICK_FINAL_TEXT: &str = "All done: the shell said hi.";

/// A quick script (format: crates/llm/SCRIPT_FORMAT.md). Its "hello" rule streams a
/// short text in a few chunks and calls the shell tool with `echo hi`; the next model
/// call of the turn (no rule applies after a tool result) gets the final text.
pub fn quick_script() -> String {
    serde_json::json!({
        "name": "browser-quick",
        "rules": [{
            "when_user_contains": "hello",
            "reply": {
                "text": "Hello from the quick script. Let me run a command first.",
                "chunks": 4,
                "chunk_delay_ms": 40,
                "tool_calls": [{ "name": "shell", "arguments": { "command": "echo hi" } }]
            }
        }],
        "steps": [{ "text": QUICK_FINAL_TEXT, "chunks": 3, "chunk_delay_ms": 40 }],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

/// A slow script: one reply streamed as 200 chunks, 50 ms apart (a 10 s turn).
pub fn slow_script() -> String {
    let text: String = (1..=200).map(|i| format!("word{i:03} ")).collect();
    serde_json::json!({
        "name": "browser-slow",
        "steps": [{ "text": text, "chunks": 200, "chunk_delay_ms": 50 }],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

/// The failing Bot's answer once Continue has it try again.
pub const RECOVERED_REPLY: &str = "Back on my feet: here it is.";

/// A script whose model call fails with a 401: the turn fails and the session latches
/// `failed`. Continue picks the failed turn up again (the Bot reads that the person pressed
/// Continue), and that call answers.
pub fn failing_script() -> String {
    serde_json::json!({
        "name": "browser-failing",
        "steps": [{ "error": { "kind": "auth", "status": 401, "message": "bad key" } }],
        "rules": [{ "when_user_contains": "pressed Continue", "reply": { "text": RECOVERED_REPLY } }],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

/// Alpha's reply to a line that names nobody (it is the group's lead).
pub const ALPHA_REPLY: &str = "Alpha here: kicking off.";
/// Alpha's words once its question is answered.
pub const ALPHA_FOLLOW_UP: &str = "Thanks, going with your pick.";
/// Gamma's reply in the group once it is named.
pub const GAMMA_REPLY: &str = "Gamma here, glad to join.";
/// The first line of the Bot↔Bot direct Gamma opens with Beta.
pub const BOT_DIRECT_LINE: &str = "Beta, a private word about the logo.";

/// The group's lead. A line about a "colour" makes it ask (after a pause, so its chip is
/// seen working); the answer (a message starting "Answer to your question") gets its
/// follow-up, again after a pause. Anything else gets [`ALPHA_REPLY`].
pub fn alpha_script() -> String {
    serde_json::json!({
        "name": "browser-alpha",
        "rules": [
            {
                "when_user_contains": "answer to your question",
                "reply": { "text": ALPHA_FOLLOW_UP, "delay_ms": 2000, "chunks": 3, "chunk_delay_ms": 60 }
            },
            {
                "when_user_contains": "colour",
                "reply": {
                    "delay_ms": 2000,
                    "tool_calls": [{ "name": "ask_user", "arguments": {
                        "question": "Which colour should the logo be?",
                        "options": [
                            { "label": "Blue", "description": "Matches the site" },
                            { "label": "Green" }
                        ]
                    }}]
                }
            }
        ],
        "steps": [{ "text": ALPHA_REPLY, "chunks": 3, "chunk_delay_ms": 40 }],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

/// Beta says nothing in the direct Gamma opens (an empty reply posts no line, so the two
/// do not talk back and forth), and "Beta here." anywhere it is woken otherwise.
pub fn beta_script() -> String {
    serde_json::json!({
        "name": "browser-beta",
        "rules": [{ "when_user_contains": "in your direct", "reply": { "text": "" } }],
        "steps": [{ "text": "Beta here." }],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

/// Gamma, once welcomed aboard, opens a direct with Beta ([`BOT_DIRECT_LINE`]) and then
/// answers in the group with [`GAMMA_REPLY`].
pub fn gamma_script() -> String {
    serde_json::json!({
        "name": "browser-gamma",
        "rules": [
            { "when_user_contains": "in your direct", "reply": { "text": "" } },
            {
                "when_user_contains": "welcome aboard",
                "reply": { "tool_calls": [{ "name": "create_direct", "arguments": {
                    "to": "Beta", "text": BOT_DIRECT_LINE
                }}]}
            }
        ],
        "steps": [{ "text": GAMMA_REPLY, "chunks": 2, "chunk_delay_ms": 40 }],
        "on_exhausted": "repeat_last"
    })
    .to_string()
}

/// A headless Chromium session through `driver`, with its profile in `profile`.
pub async fn connect(driver: &ChromeDriver, profile: &Path) -> Result<Client> {
    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), json!("chrome"));
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chrome_path(),
            "args": [
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--window-size=1280,900",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .map_err(|e| {
            anyhow!(
                "WebDriver new session: {e}\nchromedriver:\n{}",
                driver.process.log_text()
            )
        })
}

/// What helps after a failure: a screenshot (`target/<shot>`), the page text and the logs.
/// What to print when a scenario fails: a screenshot (`target/<shot>`) and the page's text.
pub async fn page_diagnostics(c: &Client, shot: &str) -> String {
    let mut out = String::new();
    if let Ok(png) = c.screenshot().await {
        let path = target_dir().join(shot);
        if std::fs::write(&path, png).is_ok() {
            out.push_str(&format!("failure screenshot: {}\n", path.display()));
        }
    }
    if let Ok(text) = c.execute("return document.body.innerText;", vec![]).await {
        out.push_str(&format!(
            "--- page text ---\n{}\n",
            text.as_str().unwrap_or_default()
        ));
    }
    out
}

/// [`page_diagnostics`], then the ends of the daemon's and chromedriver's logs.
pub async fn diagnostics(c: &Client, daemon: &Daemon, driver: &ChromeDriver, shot: &str) -> String {
    let mut out = page_diagnostics(c, shot).await;
    let log = daemon.process.log_text();
    let tail: Vec<&str> = log.lines().rev().take(80).collect();
    out.push_str("--- troupe serve log (last 80 lines) ---\n");
    for line in tail.into_iter().rev() {
        out.push_str(line);
        out.push('\n');
    }
    let dlog = driver.process.log_text();
    out.push_str(&format!(
        "--- chromedriver log ---\n{}\n",
        dlog.chars().take(4000).collect::<String>()
    ));
    out
}

/// A browser test's world: a real `troupe serve` on a temp data dir, chromedriver and one
/// Chromium session. `None` when chromedriver is missing (the test then skips, unless
/// `TROUPE_REQUIRE_BROWSER` is set, when it fails).
pub struct BrowserRun {
    pub tmp: tempfile::TempDir,
    pub daemon: Daemon,
    pub driver: ChromeDriver,
    pub client: Client,
}

impl BrowserRun {
    pub async fn start() -> Option<BrowserRun> {
        let (driver_path, _) = browser_or_skip()?;
        let tmp = tempfile::tempdir().expect("temp dir");
        let (data, work, profile) = (
            tmp.path().join("data"),
            tmp.path().join("work"),
            tmp.path().join("chrome-profile"),
        );
        for d in [&data, &work, &profile] {
            std::fs::create_dir_all(d).expect("create temp dirs");
        }
        let bin = troupe_binary().expect("locate the troupe binary");
        let daemon = Daemon::start(&bin, &data, &work).expect("start troupe serve");
        let (driver, client) = open_session(&driver_path, &profile).await;
        Some(BrowserRun {
            tmp,
            daemon,
            driver,
            client,
        })
    }

    /// Write a script file into the run's temp dir; its path.
    pub fn script(&self, name: &str, text: String) -> PathBuf {
        let path = self.tmp.path().join(name);
        std::fs::write(&path, text).expect("write script");
        path
    }

    /// End the run: on an error, a screenshot (`target/<shot>`), the page text and the logs,
    /// then the test fails with them.
    pub async fn finish(self, result: Result<()>, shot: &str) {
        if let Err(err) = &result {
            let diag = diagnostics(&self.client, &self.daemon, &self.driver, shot).await;
            let _ = self.client.clone().close().await;
            panic!("{err:#}\n{diag}");
        }
        let _ = self.client.close().await;
    }
}
