//! Real-browser test of Boss Mode in the page (issue 18 item 20, the Boss panel): Boss enabled
//! from the workflow selector, a worker spawned from the panel, a task assigned to it; the
//! worker's status is watched going running → idle, and the root's answer to the worker's report
//! appears in the root's conversation. On the worker's page the composer is closed ("talk to its
//! root"). A phone-width screenshot checks that the panel fits.
//!
//! The API is served in-process on a real loopback port (tests/support); the fake model holds
//! the worker's answer until the test has seen the panel show it running. Needs Debian's
//! `chromium` and `chromium-driver`; without them the test prints a notice and returns, unless
//! `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_boss
//! ```
//!
//! Screenshots: `target/browser-boss.png` (the tree after the report), `browser-boss-phone.png`
//! (phone width); on failure `target/browser-boss-failure.png` and the page text.

mod browser_support;
mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};
use axum::extract::State;
use axum::response::IntoResponse;
use browser_support::page::{SHORT, TURN, elements, fill, press};
use browser_support::{browser_or_skip, open_session, page_diagnostics, poll, target_dir};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};
use support::TestApp;
use tokio::sync::Notify;

const ROOT_ANSWER: &str = "The docs worker reports: README written.";
const PERSON: &str = "Get the README done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_runs_a_boss_tree() {
    let Some((driver_path, _)) = browser_or_skip() else {
        return;
    };
    let app = TestApp::start().await;
    let model = Model::serve().await;
    let bot = app
        .post(
            "/v1/bots",
            json!({"name": "Chief", "endpoint": {"kind": "openai", "model": "fake", "base_url": model.url}}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let root = app
        .post(
            "/v1/sessions",
            json!({"kind": "direct", "bot_ids": [bot], "title": "Team"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let profile = app.dir.path().join("chrome-profile");
    std::fs::create_dir_all(&profile).expect("profile dir");
    let (driver, client) = open_session(&driver_path, &profile).await;
    let result = scenario(&client, &app, &model, root).await;
    if let Err(err) = &result {
        let diag = page_diagnostics(&client, "browser-boss-failure.png").await;
        let _ = client.clone().close().await;
        panic!(
            "{err:#}\n{diag}\n--- model calls ---\n{}\n--- chromedriver ---\n{}",
            model.seen.lock().unwrap().join("\n"),
            driver.process.log_text()
        );
    }
    let _ = client.close().await;
}

async fn scenario(c: &Client, app: &TestApp, model: &Model, root: i64) -> Result<()> {
    c.goto(&app.url(&format!("/#session={root}"))).await?;
    // --- Enable Boss from the selector, with standing instructions
    press(c, "#enable-boss").await?;
    fill(c, "#boss-instructions", "Small steps").await?;
    press(c, "#boss-submit").await?;
    wait_text(c, "#workflow-status", "Workflow: Boss (root)").await?;
    wait_text(c, "#boss-panel", "No workers yet").await?;
    let v = app
        .get(&format!("/v1/sessions/{root}/workflow"))
        .await
        .expect(200);
    if v["slot"] != json!({"kind": "boss", "role": "boss", "instructions": "Small steps"}) {
        bail!("the slot is not a Boss root: {v}");
    }
    // The person talks to the root (its answer makes the root's history a conversation).
    fill(c, "#composer", PERSON).await?;
    press(c, "#send").await?;
    wait_text(c, "#transcript", "On it.").await?;

    // --- Spawn a worker from the panel: its form is folded under the tree until opened
    let folded = c
        .execute(
            "return ['#boss-spawn-details', '#boss-assign-details']
                .map(s => document.querySelector(s)).every(d => d && !d.open);",
            vec![],
        )
        .await?;
    if folded != json!(true) {
        bail!("the spawn and assign forms should be folded away until asked for");
    }
    press(c, "#boss-spawn-details > summary").await?;
    fill(c, "#boss-spawn-role", "docs").await?;
    press(c, "#boss-spawn").await?;
    wait_text(c, "#boss-result", "Spawned docs").await?;
    wait_node(c, "idle").await?;
    wait_text(c, "#boss-tree", "Chief").await?;
    let tree = app
        .get(&format!("/v1/boss/session/{root}/tree"))
        .await
        .expect(200);
    let worker = tree["children"][0]["session_id"]
        .as_i64()
        .ok_or_else(|| anyhow::anyhow!("no worker in {tree}"))?;

    // --- Assign to the selected idle worker; the model holds the worker's answer until the
    // panel has shown it running
    let chosen = c
        .find(Locator::Css("#boss-assign-worker"))
        .await?
        .prop("value")
        .await?;
    if chosen.as_deref() != Some(worker.to_string().as_str()) {
        bail!("the idle worker should be offered for Assign, got {chosen:?}");
    }
    press(c, "#boss-assign-details > summary").await?;
    fill(c, "#boss-task-id", "t1").await?;
    fill(c, "#boss-task", "Write the README").await?;
    fill(c, "#boss-acceptance", "README.md exists").await?;
    press(c, "#boss-assign").await?;
    wait_text(c, "#boss-result", "Assigned t1").await?;
    wait_node(c, "running").await?;
    wait_text(c, "#boss-tree .boss-task", "Task t1: Write the README").await?;
    model.release_worker();
    wait_node(c, "idle").await?;
    // The report woke the root, whose answer is in its conversation.
    poll("the root's answer to the report", TURN, || async {
        Ok(elements(c, "#transcript .msg.bot")
            .await?
            .iter()
            .any(|m| m.visible && m.text.contains(ROOT_ANSWER))
            .then_some(()))
    })
    .await?;
    c.execute(
        "document.querySelector('#boss-panel').scrollTop = 0;",
        vec![],
    )
    .await?;
    keep(c, "browser-boss.png").await?;

    // --- A repeat of the task id delivers nothing
    fill(c, "#boss-task-id", "t1").await?;
    fill(c, "#boss-task", "Write the README").await?;
    press(c, "#boss-assign").await?;
    wait_text(c, "#boss-result", "nothing new was delivered").await?;

    // --- The worker's page: the composer is closed, the root is one click away
    press(c, ".boss-node[data-depth='1'] .boss-open").await?;
    wait_text(c, "#boss-worker-note", "A Boss worker: talk to its root").await?;
    wait_text(c, "#workflow-status", "Boss worker").await?;
    poll("the worker's composer to be disabled", SHORT, || async {
        let d = c
            .find(Locator::Css("#composer"))
            .await?
            .prop("disabled")
            .await?;
        Ok((d.as_deref() == Some("true")).then_some(()))
    })
    .await?;
    if elements(c, "#boss-panel").await?.iter().any(|e| e.visible) {
        bail!("the Boss panel shows on a worker");
    }
    press(c, "#boss-open-root").await?;
    wait_text(c, "#boss-tree", "docs").await?;
    poll("the root's composer to be open", SHORT, || async {
        let d = c
            .find(Locator::Css("#composer"))
            .await?
            .prop("disabled")
            .await?;
        Ok((d.as_deref() == Some("false")).then_some(()))
    })
    .await?;
    if elements(c, "#boss-worker-note")
        .await?
        .iter()
        .any(|e| e.visible)
    {
        bail!("the worker note stays on the root");
    }

    // --- Phone width: the panel fits without sideways scrolling
    c.set_window_size(390, 844).await?;
    wait_text(c, "#boss-tree", "docs").await?;
    let overflow = c
        .execute(
            "const p = document.querySelector('#boss-panel');
             p.scrollIntoView();
             p.scrollTop = 0;
             return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await?;
    if overflow.as_f64().unwrap_or(0.0) > 1.0 {
        bail!("the Boss panel scrolls sideways at 390 px ({overflow} px too wide)");
    }
    let png = c.screenshot().await?;
    if png.is_empty() || !png.starts_with(b"\x89PNG") {
        bail!("the phone-width screenshot is empty or not a PNG");
    }
    keep(c, "browser-boss-phone.png").await
}

/// Waits until the panel shows the first worker with `status`.
async fn wait_node(c: &Client, status: &str) -> Result<()> {
    let css = format!(".boss-node[data-depth='1'][data-status={status}]");
    poll(&format!("the worker to show {status}"), TURN, || async {
        let err = elements(c, "#boss-error").await?;
        if let Some(e) = err.first().filter(|e| e.visible) {
            bail!("the panel shows an error: {}", e.text);
        }
        Ok(elements(c, &css)
            .await?
            .iter()
            .any(|e| e.visible)
            .then_some(()))
    })
    .await
}

async fn wait_text(c: &Client, css: &str, needle: &str) -> Result<()> {
    poll(&format!("{css} to show {needle:?}"), SHORT, || async {
        Ok(elements(c, css)
            .await?
            .iter()
            .any(|e| e.visible && e.text.contains(needle))
            .then_some(()))
    })
    .await
}

async fn keep(c: &Client, name: &str) -> Result<()> {
    let png = c.screenshot().await?;
    std::fs::create_dir_all(target_dir())?;
    let path = target_dir().join(name);
    std::fs::write(&path, png)?;
    eprintln!("screenshot: {}", path.display());
    Ok(())
}

// ---------- the scripted OpenAI-compatible model ----------

/// The root answers the person, and answers a report with ROOT_ANSWER; the worker reports on
/// its task once the test releases it. The app's own reading calls get a neutral answer.
struct Model {
    url: String,
    worker_released: AtomicBool,
    released: Notify,
    seen: Mutex<Vec<String>>,
}

impl Model {
    async fn serve() -> Arc<Model> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let model = Arc::new(Model {
            url: format!("http://{addr}/v1"),
            worker_released: AtomicBool::new(false),
            released: Notify::new(),
            seen: Mutex::new(Vec::new()),
        });
        let router = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(answer))
            .with_state(model.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        model
    }

    fn release_worker(&self) {
        self.worker_released.store(true, Ordering::SeqCst);
        self.released.notify_waiters();
    }

    async fn wait_released(&self) {
        loop {
            let notified = self.released.notified();
            if self.worker_released.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

async fn answer(
    State(model): State<Arc<Model>>,
    axum::Json(req): axum::Json<Value>,
) -> axum::response::Response {
    let system = system(&req);
    let fresh = fresh_user(&req);
    let last_is_tool = messages(&req).last().is_some_and(|m| m["role"] == "tool");
    let (what, body) = if system.contains("<boss-worker-context>") {
        if last_is_tool {
            ("worker after its report", text("Reported."))
        } else {
            model.wait_released().await;
            (
                "worker reports",
                tool_call(
                    "boss_report",
                    json!({"summary": "README written", "refs": ["README.md"]}),
                ),
            )
        }
    } else if system.contains("<boss-context>") {
        if fresh.contains("[Boss report from") {
            ("root answers the report", text(ROOT_ANSWER))
        } else {
            ("root answers the person", text("On it."))
        }
    } else if fresh.starts_with("troupe-reader:user") {
        ("reading", text(r#"{"control":"neither"}"#))
    } else if fresh.starts_with("troupe-reader:bot") {
        (
            "reading",
            text(
                r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":false,"asks_ok_only":false}"#,
            ),
        )
    } else if fresh.starts_with("troupe-reader:filing") {
        ("reading", text(r#"{"belongs":"done_in_place"}"#))
    } else {
        ("something else", text("ok"))
    };
    model.seen.lock().unwrap().push(what.to_string());
    (
        [("content-type", "text/event-stream")],
        body + "data: [DONE]\n\n",
    )
        .into_response()
}

fn messages(req: &Value) -> Vec<Value> {
    req["messages"].as_array().cloned().unwrap_or_default()
}

fn content(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn system(req: &Value) -> String {
    messages(req)
        .iter()
        .filter(|m| m["role"] == "system")
        .map(content)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The user messages since the last assistant message.
fn fresh_user(req: &Value) -> String {
    let all = messages(req);
    let from = all
        .iter()
        .rposition(|m| m["role"] == "assistant")
        .map_or(0, |i| i + 1);
    all[from..]
        .iter()
        .filter(|m| m["role"] == "user")
        .map(content)
        .collect::<Vec<_>>()
        .join("\n")
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({"id": "c", "object": "chat.completion.chunk", "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

fn text(t: &str) -> String {
    let mut s = chunk(json!({"role": "assistant", "content": t}), None);
    s += &chunk(json!({}), Some("stop"));
    s
}

fn tool_call(name: &str, args: Value) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = format!("call_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let mut s = chunk(json!({"role": "assistant", "content": null}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}
