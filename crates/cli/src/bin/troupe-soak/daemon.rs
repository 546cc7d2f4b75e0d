//! One `troupe serve` process on the soak's data dir: started, asked over HTTP (with the bearer
//! token from DATA_DIR/token whenever that file exists), and SIGKILLed.

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Daemon {
    child: Child,
    pub pid: u32,
    pub base: String,
    client: reqwest::Client,
}

pub struct Paths {
    pub bin: PathBuf,
    pub data: PathBuf,
    pub config: PathBuf,
    pub log: PathBuf,
}

impl Daemon {
    /// Start the daemon and wait for its listening line (printed once boot recovery is done).
    pub fn start(p: &Paths) -> Result<Daemon> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p.log)
            .with_context(|| format!("open {}", p.log.display()))?;
        let mut child = Command::new(&p.bin)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(&p.data)
            .arg("--config")
            .arg(&p.config)
            .env("TROUPE_LOG", "warn")
            .env_remove("TROUPE_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .with_context(|| format!("spawn {} serve", p.bin.display()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line.clone());
            // Keep draining so the daemon never blocks on a full pipe.
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                line.clear();
            }
        });
        let first = match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(l) => l,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "the daemon printed no listening line (see {})",
                    p.log.display()
                );
            }
        };
        let words: Vec<&str> = first.split_whitespace().collect();
        let base = match words.as_slice() {
            ["listening", "on", url, ..] => url.trim_end_matches('/').to_string(),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("unexpected first line {first:?} (see {})", p.log.display());
            }
        };
        let client = client_for(&p.data)?;
        let pid = child.id();
        Ok(Daemon {
            child,
            pid,
            base,
            client,
        })
    }

    /// SIGKILL, and reap.
    pub fn kill(self) {
        drop(self);
    }

    pub async fn get(&self, path: &str) -> Result<Value> {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .with_context(|| format!("GET {path}"))?;
        let status = r.status();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            return Err(anyhow!("GET {path}: {status} {body}"));
        }
        Ok(body)
    }

    pub async fn post(&self, path: &str, body: Value) -> Result<Value> {
        post_with(&self.client, &self.base, path, body).await
    }

    /// A handle for posting from another task (the burst of the `commit` kill).
    pub fn poster(&self) -> (reqwest::Client, String) {
        (self.client.clone(), self.base.clone())
    }
}

impl Drop for Daemon {
    /// A soak that fails midway leaves no daemon behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn post_with(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    body: Value,
) -> Result<Value> {
    let r = client
        .post(format!("{base}{path}"))
        .json(&body)
        .send()
        .await
        .with_context(|| format!("POST {path}"))?;
    let status = r.status();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        return Err(anyhow!("POST {path}: {status} {body}"));
    }
    Ok(body)
}

/// A client that sends the data dir's token when the daemon keeps one (and nothing otherwise,
/// for a daemon that asks for none on loopback).
fn client_for(data: &Path) -> Result<reqwest::Client> {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Ok(token) = std::fs::read_to_string(data.join("token")) {
        let value = format!("Bearer {}", token.trim())
            .parse()
            .context("the token file holds no header value")?;
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    Ok(reqwest::Client::builder()
        .default_headers(headers)
        .timeout(Duration::from_secs(30))
        .build()?)
}
