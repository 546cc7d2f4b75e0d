//! End to end, as a real process: jobs, desks and delegation through `troupe serve` against a
//! fake OpenAI-compatible server. In a group of two Bots a person's line opens a job at the
//! lead's desk as it delegates (`expects: "answer"`); the other Bot answers in `end_turn`; the
//! lead is woken with the answer and replies in the group. A second test kills the daemon
//! (SIGKILL) while a job's segment waits on its model call and checks the restarted daemon:
//! the desk closed, the job's work needing attention, nothing lost.
//!
//! The fake answers from the request alone: which Bot asks (its system prompt starts "You are
//! NAME, a Bot"), whether it is at its desk or in work on a job (its situation says which), and
//! the newest thing it was given. Like `daemon.rs`, the tests run `target/debug/troupe`.

mod daemon_support;

use daemon_support::*;

use axum::Json;
use serde_json::{Value, json};

fn tool_call(name: &str, args: Value) -> String {
    let mut s = chunk(json!({"role": "assistant", "content": null}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}

fn messages(req: &Value) -> Vec<Value> {
    req["messages"].as_array().cloned().unwrap_or_default()
}

fn content(m: &Value) -> String {
    m["content"].as_str().unwrap_or_default().to_string()
}

fn bot_of(req: &Value) -> Option<String> {
    let first = messages(req).into_iter().find(|m| m["role"] == "system")?;
    let s = content(&first);
    Some(
        s.strip_prefix("You are ")?
            .split_once(", a Bot")?
            .0
            .to_string(),
    )
}

fn anywhere(req: &Value, words: &str) -> bool {
    messages(req)
        .iter()
        .any(|m| m["role"] == "system" && content(m).contains(words))
}

fn tagged(req: &Value, tag: &str) -> bool {
    bot_of(req).is_none()
        && messages(req)
            .iter()
            .any(|m| m["role"] == "user" && content(m).starts_with(tag))
}

fn latest(req: &Value) -> String {
    messages(req)
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(content)
        .unwrap_or_default()
}

/// `None`: hold the call open (the job's segment the second test kills the daemon under).
fn answer(req: &Value) -> Option<String> {
    let body = if tagged(req, "troupe-reader:user") {
        text(r#"{"control":"neither"}"#)
    } else if tagged(req, "troupe-reader:filing") {
        text(r#"{"belongs":"new"}"#)
    } else if tagged(req, "troupe-reader:bot") {
        text(r#"{"restates":false,"still_going":null}"#)
    } else if tagged(req, "troupe-judgement") {
        text(r#"{"join":false}"#)
    } else {
        let bot = bot_of(req).unwrap_or_default();
        let now = latest(req);
        let in_job = anywhere(req, "You work on this job in its folder");
        match bot.as_str() {
            "Lead" if now.contains("answered your request") => text("Slogan: Fast and calm."),
            "Lead" if now.contains("ask Beta") => tool_call(
                "delegate",
                json!({"to": "Beta", "ask": "A four-word slogan.", "expects": "answer"}),
            ),
            "Lead" if now.contains("write the report") && !in_job => {
                tool_call("work_on", json!({"new": {"title": "the report"}}))
            }
            "Lead" if now.contains("write the report") => return None,
            "Beta" if now.contains("asks you") => tool_call(
                "end_turn",
                json!({"reason": "answered", "answer": "Fast and calm."}),
            ),
            _ => text("UNEXPECTED request"),
        }
    };
    Some(body + "data: [DONE]\n\n")
}

async fn fake_model() -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(|Json(req): Json<Value>| async move {
            match answer(&req) {
                Some(body) => ([("content-type", "text/event-stream")], body),
                None => std::future::pending().await,
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

struct Rig {
    tmp: tempfile::TempDir,
}

impl Rig {
    async fn new() -> Rig {
        let tmp = tempfile::tempdir().unwrap();
        let model = fake_model().await;
        write_fake_config(&tmp.path().join("config.toml"), &model, &["default"]);
        Rig { tmp }
    }
    fn start(&self) -> (Daemon, Api) {
        let p = |f: &str| self.tmp.path().join(f);
        let d = Daemon::start(
            &troupe_binary(),
            &p("data"),
            &p("config.toml"),
            &p("daemon.log"),
        );
        let api = Api {
            client: reqwest::Client::new(),
            addr: d.addr.clone(),
        };
        (d, api)
    }
}

struct Api {
    client: reqwest::Client,
    addr: String,
}

impl Api {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
    async fn get(&self, path: &str) -> Value {
        get(&self.client, self.url(path)).await
    }
    async fn post(&self, path: &str, body: Value) -> Value {
        post(&self.client, self.url(path), body).await
    }
    async fn list(&self, path: &str) -> Vec<Value> {
        self.get(path).await.as_array().unwrap().clone()
    }
    async fn bot(&self, name: &str) -> i64 {
        self.post("/v1/bots", json!({"name": name})).await["id"]
            .as_i64()
            .unwrap()
    }
    async fn group(&self, bots: &[i64]) -> i64 {
        self.post(
            "/v1/sessions",
            json!({"kind": "group", "bot_ids": bots, "title": "Launch"}),
        )
        .await["id"]
            .as_i64()
            .unwrap()
    }
    async fn lines(&self, session: i64) -> Vec<Value> {
        self.list(&format!("/v1/sessions/{session}/messages?limit=1000"))
            .await
    }
    async fn work_items(&self, bot: i64) -> Vec<Value> {
        self.list(&format!("/v1/bots/{bot}/work-items")).await
    }
}

fn item<'a>(items: &'a [Value], mode: &str) -> Option<&'a Value> {
    items.iter().find(|i| i["mode"] == mode)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_group_line_opens_a_job_the_lead_delegates_and_is_woken_by_the_answer() {
    let rig = Rig::new().await;
    let (_daemon, api) = rig.start();
    let lead = api.bot("Lead").await;
    let beta = api.bot("Beta").await;
    let g = api.group(&[lead, beta]).await;
    api.post(
        &format!("/v1/sessions/{g}/messages"),
        json!({"body": "@Lead ask Beta for a slogan"}),
    )
    .await;
    wait_until("the lead's reply in the group", || async {
        api.lines(g).await.into_iter().find(|l| {
            l["body"] == "Slogan: Fast and calm." && l["bot_id"] == lead && l["author"] == "bot"
        })
    })
    .await;
    let plans = api.list(&format!("/v1/tasks?session_id={g}")).await;
    assert_eq!(plans.len(), 1, "one job for the line: {plans:#?}");
    let plan = plans[0]["id"].as_i64().unwrap();
    let delegations = api.list(&format!("/v1/tasks/{plan}/delegations")).await;
    assert_eq!(delegations.len(), 1);
    let d = &delegations[0];
    assert_eq!(d["state"], "replied");
    assert_eq!(d["result"]["text"], "Fast and calm.");
    assert_eq!(
        (d["from_bot_id"].clone(), d["to_bot_id"].clone()),
        (json!(lead), json!(beta))
    );
    let pair = d["pair_session_id"].as_i64().unwrap();
    let records: Vec<String> = api
        .lines(pair)
        .await
        .iter()
        .map(|l| l["body"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        records.iter().any(|b| b.starts_with("Request")),
        "{records:?}"
    );
    assert!(
        records.iter().any(|b| b.starts_with("Answer to")),
        "{records:?}"
    );
    // The lead's desk closed when it delegated; its work on the job is idle after replying.
    let items = wait_until("the lead's work settled", || async {
        let items = api.work_items(lead).await;
        (item(&items, "work").is_some_and(|w| w["state"] == "idle")).then_some(items)
    })
    .await;
    assert_eq!(item(&items, "desk").unwrap()["state"], "closed");
    let turns = api.list(&format!("/v1/turns?session_id={g}")).await;
    assert!(
        turns
            .iter()
            .any(|t| t["bot_id"] == lead && t["end_reason"] == "delegated" && t["mode"] == "desk"),
        "{turns:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_mid_segment_then_restart_desk_closed_job_needs_attention_nothing_lost() {
    let rig = Rig::new().await;
    let (mut daemon, api) = rig.start();
    let lead = api.bot("Lead").await;
    let beta = api.bot("Beta").await;
    let g = api.group(&[lead, beta]).await;
    api.post(
        &format!("/v1/sessions/{g}/messages"),
        json!({"body": "@Lead write the report"}),
    )
    .await;
    // The desk opened the job; the job's segment is live, waiting on its model call.
    let job = wait_until("the job's segment is live", || async {
        let items = api.work_items(lead).await;
        item(&items, "work")
            .filter(|w| w["state"] == "running" && !w["turn_id"].is_null())
            .cloned()
    })
    .await;
    let plans_before = api.list(&format!("/v1/tasks?session_id={g}")).await;
    let lines_before = api.lines(g).await;
    daemon.child.kill().unwrap();
    let _ = daemon.child.wait();

    let (_daemon, api) = rig.start();
    let items = wait_until("recovery settled the lead's work", || async {
        let items = api.work_items(lead).await;
        item(&items, "work")
            .is_some_and(|w| w["state"] == "needs_attention")
            .then_some(items)
    })
    .await;
    assert_eq!(item(&items, "desk").unwrap()["state"], "closed");
    let turn = job["turn_id"].as_i64().unwrap();
    let t = api.get(&format!("/v1/turns/{turn}")).await;
    assert_eq!(t["status"], "interrupted", "{t:#}");
    assert_eq!(t["mode"], "work");
    // Nothing written before the kill is lost.
    assert_eq!(
        api.list(&format!("/v1/tasks?session_id={g}")).await,
        plans_before
    );
    let lines_after = api.lines(g).await;
    for l in &lines_before {
        assert!(lines_after.iter().any(|a| a["id"] == l["id"]), "lost {l:#}");
    }
    assert!(
        lines_after
            .iter()
            .any(|l| l["body"] == "@Lead write the report")
    );
}
