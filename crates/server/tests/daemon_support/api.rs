//! A data dir with its config that `troupe serve` is started on (again and again: the same
//! data each time), and a small client for the daemon's API.

use super::{Daemon, get, post, troupe_binary, until_routed, wait_until};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A config file naming `endpoints` (name, OpenAI-compatible base URL, all model `fake`), the
/// endpoint each role in `roles` uses, and any further TOML in `extra`.
pub fn write_config(path: &Path, endpoints: &[(&str, &str)], roles: &[(&str, &str)], extra: &str) {
    let mut toml = String::new();
    for (name, url) in endpoints {
        toml += &format!(
            "[endpoints.{name}]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake\"\n\n"
        );
    }
    toml += "[roles]\n";
    for (role, endpoint) in roles {
        toml += &format!("{role} = \"{endpoint}\"\n");
    }
    toml += "\n";
    toml += extra;
    std::fs::write(path, toml).unwrap();
}

/// The member `bot` in a conversation's view (`GET /v1/sessions/:id`), or null.
pub fn member(view: &Value, bot: i64) -> Value {
    view["members"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["bot_id"] == bot))
        .cloned()
        .unwrap_or(Value::Null)
}

/// A temp dir holding the data dir (`data`), the config (`config.toml`) and the daemon's log.
pub struct Rig {
    pub tmp: tempfile::TempDir,
}

impl Rig {
    /// A rig whose config is written by `config` (given the config file's path).
    pub fn new(config: impl FnOnce(&Path)) -> Rig {
        let tmp = tempfile::tempdir().unwrap();
        config(&tmp.path().join("config.toml"));
        Rig { tmp }
    }

    pub fn path(&self, f: &str) -> PathBuf {
        self.tmp.path().join(f)
    }

    /// `troupe serve` on the rig's data dir (the same one each time), and its API.
    pub fn start(&self) -> (Daemon, Api) {
        let d = Daemon::start(
            &troupe_binary(),
            &self.path("data"),
            &self.path("config.toml"),
            &self.path("daemon.log"),
        );
        let api = Api::of(&d);
        (d, api)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.path("daemon.log")).unwrap_or_default()
    }
}

/// The daemon's API over HTTP; helpers panic on an unexpected status.
#[derive(Clone)]
pub struct Api {
    pub client: reqwest::Client,
    pub addr: String,
}

impl Api {
    pub fn of(d: &Daemon) -> Api {
        Api {
            client: d.client(),
            addr: d.addr.clone(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub async fn get(&self, path: &str) -> Value {
        get(&self.client, self.url(path)).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Value {
        post(&self.client, self.url(path), body).await
    }

    /// A POST whose status the caller checks: the status and the body (Null if not JSON).
    pub async fn post_status(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let r = self
            .client
            .post(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn put(&self, path: &str, body: Value) -> Value {
        let r = self
            .client
            .put(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "PUT {path}: {}", r.status());
        r.json().await.unwrap()
    }

    pub async fn list(&self, path: &str) -> Vec<Value> {
        self.get(path).await.as_array().unwrap().clone()
    }

    pub async fn bot(&self, name: &str) -> i64 {
        self.post("/v1/bots", json!({"name": name})).await["id"]
            .as_i64()
            .unwrap()
    }

    /// The person's direct with `bot`.
    pub async fn direct(&self, bot: i64) -> i64 {
        self.post("/v1/sessions", json!({"kind": "direct", "bot_ids": [bot]}))
            .await["id"]
            .as_i64()
            .unwrap()
    }

    /// A group of `bots` led by the first.
    pub async fn group(&self, bots: &[i64], title: &str) -> i64 {
        let g = self
            .post(
                "/v1/sessions",
                json!({"kind": "group", "bot_ids": bots, "title": title}),
            )
            .await;
        let g = g["id"].as_i64().unwrap();
        let lead = self
            .put(
                &format!("/v1/sessions/{g}/lead"),
                json!({"bot_id": bots[0], "confirmed": true}),
            )
            .await;
        assert_eq!(lead["lead"], bots[0], "{lead:#}");
        g
    }

    /// A person's line, once it is routed (the POST answers once it is stored).
    pub async fn say(&self, session: i64, body: &str) -> Value {
        let line = self
            .post(
                &format!("/v1/sessions/{session}/messages"),
                json!({"body": body}),
            )
            .await;
        assert_eq!(line["routing"], "reading", "{line:#}");
        until_routed(&line["id"], |path| async move { self.get(&path).await }).await
    }

    pub async fn lines(&self, session: i64) -> Vec<Value> {
        self.list(&format!("/v1/sessions/{session}/messages?limit=1000"))
            .await
    }

    /// The conversation's turns, newest first.
    pub async fn turns(&self, session: i64) -> Vec<Value> {
        self.list(&format!("/v1/turns?session_id={session}&limit=200"))
            .await
    }

    pub async fn turn(&self, id: &Value) -> Value {
        self.get(&format!("/v1/turns/{id}")).await
    }

    /// Holds in force (`all`: lifted ones too), newest first.
    pub async fn holds(&self, all: bool) -> Vec<Value> {
        self.list(if all {
            "/v1/holds?status=all"
        } else {
            "/v1/holds"
        })
        .await
    }

    pub async fn hold(&self, id: &Value) -> Value {
        self.get(&format!("/v1/holds/{id}")).await
    }

    /// The one running turn of `bot` in `session`, once there is one.
    pub async fn running_turn(&self, session: i64, bot: i64) -> Value {
        wait_until(&format!("bot {bot} runs a turn in {session}"), || async {
            self.turns(session)
                .await
                .into_iter()
                .find(|t| t["bot_id"] == bot && t["status"] == "running")
        })
        .await
    }

    /// The first line by `bot` whose body is `body`, once it is there.
    pub async fn line_by(&self, session: i64, bot: i64, body: &str) -> Value {
        wait_until(&format!("bot {bot} says {body:?} in {session}"), || async {
            self.lines(session)
                .await
                .into_iter()
                .find(|l| l["body"] == body && l["author"] == "bot" && l["bot_id"] == bot)
        })
        .await
    }
}
