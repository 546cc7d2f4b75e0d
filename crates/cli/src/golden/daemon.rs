//! A real `troupe serve` for one job: started from this same binary on a fresh data dir and a
//! config file the bench wrote, talked to over HTTP, stopped with SIGTERM like a person would.

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub struct Daemon {
    child: Child,
    pub base: String,
    pub data_dir: PathBuf,
    http: reqwest::Client,
}

impl Daemon {
    pub async fn start(data_dir: &Path, config: &Path, log: &Path) -> Result<Daemon> {
        let exe = std::env::current_exe().context("cannot find the troupe binary")?;
        let log_file = std::fs::File::create(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let mut child = Command::new(exe)
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .args(["--addr", "127.0.0.1:0"])
            .arg("--config")
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .kill_on_drop(true)
            .spawn()
            .context("cannot start troupe serve")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .map_err(|_| anyhow!("troupe serve did not start listening within 30 s"))??;
        let Some(base) = first
            .as_deref()
            .and_then(|l| l.strip_prefix("listening on "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string)
        else {
            let why = std::fs::read_to_string(log).unwrap_or_default();
            bail!(
                "troupe serve did not start: {}",
                why.lines().last().unwrap_or("no output")
            );
        };
        // Keep draining stdout so the daemon never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        // The daemon wrote its token before it listened; every request sends it.
        let token_file = data_dir.join("token");
        let token = std::fs::read_to_string(&token_file)
            .with_context(|| format!("cannot read {}", token_file.display()))?;
        let mut headers = reqwest::header::HeaderMap::new();
        let auth = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", token.trim()))
            .context("the token file holds no valid header value")?;
        headers.insert(reqwest::header::AUTHORIZATION, auth);
        Ok(Daemon {
            child,
            base,
            data_dir: data_dir.to_path_buf(),
            http: reqwest::Client::builder()
                .default_headers(headers)
                .build()
                .context("cannot build the HTTP client")?,
        })
    }

    pub async fn get(&self, path: &str) -> Result<Value> {
        let r = self.http.get(format!("{}{path}", self.base)).send().await?;
        answer(path, r).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Result<Value> {
        let r = self
            .http
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await?;
        answer(path, r).await
    }

    /// The events of a conversation, as a stream of `(id, kind, data)`.
    pub async fn events(&self, session: i64) -> Result<reqwest::Response> {
        let r = self
            .http
            .get(format!("{}/v1/events?session_id={session}", self.base))
            .send()
            .await?;
        if !r.status().is_success() {
            bail!("GET /v1/events answered {}", r.status());
        }
        Ok(r)
    }

    /// A Bot on the default role and a direct conversation with it; answers the conversation's
    /// id and its workspace.
    pub async fn open_conversation(&self, title: &str) -> Result<(i64, PathBuf)> {
        let bot = self.post("/v1/bots", json!({"name": "bench"})).await?;
        let bot_id = bot["id"].clone();
        let s = self
            .post(
                "/v1/sessions",
                json!({"kind": "direct", "bot_ids": [bot_id], "title": title}),
            )
            .await?;
        let id = s["id"]
            .as_i64()
            .ok_or_else(|| anyhow!("the new conversation has no id: {s}"))?;
        let ws = self
            .data_dir
            .join("workspaces")
            .join(format!("session-{id}"));
        if !ws.is_dir() {
            bail!(
                "the conversation's workspace {} was not created",
                ws.display()
            );
        }
        Ok((id, ws))
    }

    /// SIGTERM, then wait (a graceful stop records runs in progress as interrupted).
    pub async fn stop(mut self) -> Result<()> {
        if let Some(pid) = self.child.id() {
            // SAFETY: kill(2) on our own child's pid; no memory is touched.
            unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        }
        match tokio::time::timeout(Duration::from_secs(30), self.child.wait()).await {
            Ok(status) => {
                status?;
            }
            Err(_) => {
                self.child.kill().await?;
            }
        }
        Ok(())
    }
}

async fn answer(path: &str, r: reqwest::Response) -> Result<Value> {
    let status = r.status();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        bail!("{path} answered {status}: {body}");
    }
    Ok(body)
}

/// Server-Sent Events parsed from a streaming response: `event:` and `data:` lines, a blank line
/// ends an event. Events without data (comments, keep-alives) are skipped.
pub struct SseReader {
    response: reqwest::Response,
    buf: String,
}

pub struct SseEvent {
    pub kind: String,
    pub data: Value,
}

impl SseReader {
    pub fn new(response: reqwest::Response) -> Self {
        SseReader {
            response,
            buf: String::new(),
        }
    }

    /// The next event, or `None` when the stream ended.
    pub async fn next(&mut self) -> Result<Option<SseEvent>> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut kind = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(k) = line.strip_prefix("event:") {
                        kind = k.trim().to_string();
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim_start());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let data = serde_json::from_str(&data).unwrap_or(Value::String(data));
                return Ok(Some(SseEvent { kind, data }));
            }
            match self.response.chunk().await? {
                Some(bytes) => self
                    .buf
                    .push_str(&String::from_utf8_lossy(&bytes).replace("\r\n", "\n")),
                None => return Ok(None),
            }
        }
    }
}
