//! Real-browser test of Lattice in the page (issue 17 item 14): a collaborative Run enabled from
//! the workflow selector, its states shown one by one as a scripted OpenAI-compatible model
//! submits the requirements, writes and submits the Pathway, reviews it, writes a Blueprint note,
//! submits and reviews it; at awaiting_execution the person's Approve starts the Step
//! (executing). A second conversation with a cap of one model call pauses on the budget, shows
//! the reason in words and a Resume that grants one more call.
//!
//! The API is served in-process on a real loopback port (tests/support); the fake model holds
//! its answer for a state until the test has seen the page show that state, so every state is
//! watched, not raced. Needs Debian's `chromium` and `chromium-driver`; without them the test
//! prints a notice and returns, unless `TROUPE_REQUIRE_BROWSER=1`:
//!
//! ```text
//! cargo test -p troupe-server --test browser_lattice
//! ```
//!
//! Screenshots: `target/browser-lattice.png` (awaiting approval), `browser-lattice-phone.png`
//! (phone width); on failure `target/browser-lattice-failure.png` and the page text.

mod browser_support;
mod support;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};
use axum::extract::State;
use axum::response::IntoResponse;
use browser_support::page::{SHORT, TURN, click_session, elements, fill, press};
use browser_support::{browser_or_skip, open_session, page_diagnostics, poll, target_dir};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};
use support::TestApp;
use tokio::sync::Notify;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_page_runs_lattice_collaboratively() {
    let Some((driver_path, _)) = browser_or_skip() else {
        return;
    };
    let app = TestApp::start().await;
    let model = Model::serve().await;
    let bot = app
        .post(
            "/v1/bots",
            json!({"name": "Planner", "endpoint": {"kind": "openai", "model": "fake", "base_url": model.url}}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let big = session(&app, bot, "Big goal").await;
    let budget = session(&app, bot, "Budget").await;
    let profile = app.dir.path().join("chrome-profile");
    std::fs::create_dir_all(&profile).expect("profile dir");
    let (driver, client) = open_session(&driver_path, &profile).await;
    let result = scenario(&client, &app, &model, big, budget).await;
    if let Err(err) = &result {
        let diag = page_diagnostics(&client, "browser-lattice-failure.png").await;
        let _ = client.clone().close().await;
        panic!(
            "{err:#}\n{diag}\n--- model calls ---\n{}\n--- chromedriver ---\n{}",
            model.seen.lock().unwrap().join("\n"),
            driver.process.log_text()
        );
    }
    let _ = client.close().await;
}

async fn session(app: &TestApp, bot: i64, title: &str) -> i64 {
    app.post(
        "/v1/sessions",
        json!({"kind": "direct", "bot_ids": [bot], "title": title}),
    )
    .await
    .expect(201)["id"]
        .as_i64()
        .unwrap()
}

async fn scenario(c: &Client, app: &TestApp, model: &Model, big: i64, budget: i64) -> Result<()> {
    c.goto(&app.url(&format!("/#session={big}"))).await?;
    // --- Enable from the selector: collaborative (the default), a goal, no cap
    press(c, "#enable-lattice").await?;
    let mode = c.find(Locator::Css("#lattice-mode")).await?;
    if mode.prop("value").await?.as_deref() != Some("collaborative") {
        bail!("the Lattice form should default to collaborative");
    }
    fill(c, "#lattice-goal", "Ship the report generator").await?;
    press(c, "#lattice-submit").await?;
    wait_state(c, "clarifying").await?;
    wait_text(c, "#lattice-panel", "Mode: collaborative").await?;
    wait_text(c, "#lattice-panel", "calls 0, no cap").await?;
    wait_text(c, "#workflow-status", "Workflow: Lattice collaborative").await?;
    if !elements(c, "#lattice-panel #lattice-approve")
        .await?
        .is_empty()
    {
        bail!("Approve shows outside awaiting_execution");
    }
    if !elements(c, "#lattice-panel #lattice-resume")
        .await?
        .is_empty()
    {
        bail!("Resume shows on an active Run with no failed Step");
    }
    if elements(c, "#lattice-panel #lattice-cancel")
        .await?
        .is_empty()
    {
        bail!("Cancel run should show on an active Run");
    }
    if c.find(Locator::Css("#lattice-panel"))
        .await?
        .text()
        .await?
        .contains("Pause")
    {
        bail!("the Lattice panel offers a Pause");
    }

    // --- Each state is shown before the model is let through it
    for (state, next) in [
        ("clarifying", "planning"),
        ("planning", "reviewing_pathway"),
        ("reviewing_pathway", "blueprinting"),
        ("blueprinting", "reviewing_blueprint"),
        ("reviewing_blueprint", "awaiting_execution"),
    ] {
        model.allow(state);
        wait_state(c, next).await?;
    }
    // What the model agreed and planned is on the panel.
    wait_text(c, "#lattice-panel", "Report generator ships").await?;
    wait_text(c, "#lattice-panel", "Collect the data").await?;
    wait_text(c, "#lattice-panel", "Render the report").await?;
    wait_text(c, "#lattice-panel .lattice-blueprint", "Blueprint note_").await?;
    wait_text(c, "#lattice-panel .lattice-blueprint", "reviewed").await?;
    wait_text(c, "#lattice-panel", "Status: active").await?;
    keep(c, "browser-lattice.png").await?;

    // --- Approve at awaiting_execution: the Step is executed
    press(c, "#lattice-approve").await?;
    wait_state(c, "executing").await?;
    poll("the current Step to read executing", SHORT, || async {
        let steps = elements(
            c,
            "#lattice-panel .lattice-steps[data-part=current] .lattice-step",
        )
        .await?;
        Ok(steps
            .iter()
            .any(|s| s.text.contains("Collect the data") && s.text.contains("executing"))
            .then_some(()))
    })
    .await?;
    if !elements(c, "#lattice-panel #lattice-approve")
        .await?
        .is_empty()
    {
        bail!("Approve still shows while executing");
    }
    let run = app
        .get(&format!("/v1/sessions/{big}/lattice"))
        .await
        .expect(200);
    if run["state"] != "executing" || run["mode"] != "collaborative" {
        bail!("the API disagrees with the page: {run}");
    }

    // --- A second conversation, cap 1: paused on the budget, Resume grants one more call
    click_session(c, "Budget").await?;
    press(c, "#enable-lattice").await?;
    fill(c, "#lattice-goal", "A small goal").await?;
    fill(c, "#lattice-calls", "1").await?;
    press(c, "#lattice-submit").await?;
    poll("the budget pause", TURN, || async {
        Ok(elements(c, "#lattice-panel [data-testid=lattice-status]")
            .await?
            .iter()
            .any(|e| e.visible && e.text.contains("model call budget exhausted"))
            .then_some(()))
    })
    .await?;
    wait_text(c, "#lattice-panel", "calls 1 of 1").await?;
    wait_text(c, "#paused-reason", "model call budget exhausted").await?;
    keep(c, "browser-lattice-budget.png").await?;
    press(c, "#lattice-resume").await?;
    // One more call: the cap is the count plus one.
    wait_text(c, "#lattice-panel", "of 2").await?;
    let run = app
        .get(&format!("/v1/sessions/{budget}/lattice"))
        .await
        .expect(200);
    if run["max_model_calls"] != 2 {
        bail!("resume should set the cap to count + 1: {run}");
    }

    // --- Phone width: the panel fits without sideways scrolling
    click_session(c, "Big goal").await?;
    wait_state(c, "executing").await?;
    c.set_window_size(390, 844).await?;
    wait_text(c, "#lattice-panel", "Collect the data").await?;
    let overflow = c
        .execute(
            "document.querySelector('#lattice-panel').scrollIntoView();
             return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await?;
    if overflow.as_f64().unwrap_or(0.0) > 1.0 {
        bail!("the Lattice panel scrolls sideways at 390 px ({overflow} px too wide)");
    }
    let png = c.screenshot().await?;
    if png.is_empty() || !png.starts_with(b"\x89PNG") {
        bail!("the phone-width screenshot is empty or not a PNG");
    }
    std::fs::write(app.dir.path().join("browser-lattice-phone.png"), &png)?;
    keep(c, "browser-lattice-phone.png").await
}

/// Waits until the Lattice panel shows `state`.
async fn wait_state(c: &Client, state: &str) -> Result<()> {
    let css = format!("#lattice-panel [data-testid=lattice-state][data-state={state}]");
    poll(
        &format!("the Lattice panel to show {state}"),
        TURN,
        || async {
            let err = elements(c, "#workflow-error").await?;
            if let Some(e) = err.first().filter(|e| e.visible) {
                bail!("the page shows an error: {}", e.text);
            }
            Ok(elements(c, &css)
                .await?
                .iter()
                .any(|e| e.visible)
                .then_some(()))
        },
    )
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

/// A copy of what the page shows in `target/<name>`, for a person to look at.
async fn keep(c: &Client, name: &str) -> Result<()> {
    let png = c.screenshot().await?;
    std::fs::create_dir_all(target_dir())?;
    let path = target_dir().join(name);
    std::fs::write(&path, png)?;
    eprintln!("screenshot: {}", path.display());
    Ok(())
}

// ---------- the scripted OpenAI-compatible model ----------

/// Answers from the Lattice state its system section names; an answer for a state waits until
/// the test allows that state. Without a Lattice section (the Step's executor) it never
/// answers, so the Run stays executing while the test looks.
struct Model {
    url: String,
    allowed: Mutex<HashSet<String>>,
    changed: Notify,
    /// One line per call: the state seen and what was answered.
    seen: Mutex<Vec<String>>,
}

impl Model {
    async fn serve() -> Arc<Model> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let model = Arc::new(Model {
            url: format!("http://{addr}/v1"),
            allowed: Mutex::new(HashSet::new()),
            changed: Notify::new(),
            seen: Mutex::new(Vec::new()),
        });
        let router = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(answer))
            .with_state(model.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        model
    }

    fn allow(&self, state: &str) {
        self.allowed.lock().unwrap().insert(state.to_string());
        self.changed.notify_waiters();
    }

    async fn wait_allowed(&self, state: &str) {
        loop {
            let notified = self.changed.notified();
            if self.allowed.lock().unwrap().contains(state) {
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
    let Some(state) = lattice_state(&req) else {
        model
            .seen
            .lock()
            .unwrap()
            .push("(no Lattice section): held".into());
        return std::future::pending().await;
    };
    model.wait_allowed(&state).await;
    let (what, body) = reply(&state, &req);
    model.seen.lock().unwrap().push(format!("{state}: {what}"));
    (
        [("content-type", "text/event-stream")],
        body + "data: [DONE]\n\n",
    )
        .into_response()
}

/// The state named by the Lattice system section (`State: planning (state revision …`).
fn lattice_state(req: &Value) -> Option<String> {
    let system: String = messages(req)
        .iter()
        .filter(|m| m["role"] == "system")
        .map(content)
        .collect::<Vec<_>>()
        .join("\n");
    if !system.contains("# Lattice") {
        return None;
    }
    let rest = system.split("\nState: ").nth(1)?;
    Some(rest.split_whitespace().next()?.to_string())
}

/// What to answer in `state`, given the turn so far: one tool call, or the follow-up of the
/// previous call (`pathway_write` → submit, `note_create` → submit its note), or plain text
/// once a submit was answered.
fn reply(state: &str, req: &Value) -> (String, String) {
    let last = last_tool(req);
    if let Some((name, _)) = &last
        && name == "lattice_submit"
    {
        return (
            "text after a submit".into(),
            text("Submitted; over to the host."),
        );
    }
    let submit = |args: Value| {
        (
            format!("lattice_submit {}", args["action"]),
            tool_call("lattice_submit", args),
        )
    };
    match state {
        "clarifying" => submit(json!({
            "action": "submit_requirements",
            "goal": "Report generator ships",
            "success_criteria": ["the report renders from live data"],
            "constraints": ["no new services"],
            "non_goals": ["charts"],
            "assumptions": ["the data is in CSV"],
        })),
        "planning" => match last {
            Some((name, _)) if name == "pathway_write" => {
                submit(json!({"action": "submit_pathway", "reason": "two Steps cover it"}))
            }
            _ => (
                "pathway_write".into(),
                tool_call(
                    "pathway_write",
                    json!({"future_steps": [
                        {"title": "Collect the data", "objective": "Read the CSV files",
                         "acceptance_criteria": ["rows loaded"]},
                        {"title": "Render the report", "objective": "Write the HTML report"},
                    ]}),
                ),
            ),
        },
        "reviewing_pathway" => {
            submit(json!({"action": "submit_pathway_review", "reason": "the order holds"}))
        }
        "blueprinting" => match last {
            Some((name, result)) if name == "note_create" => {
                let id = note_id(&result).unwrap_or(0);
                submit(json!({"action": "submit_blueprint", "blueprint_id": id}))
            }
            _ => (
                "note_create".into(),
                tool_call(
                    "note_create",
                    json!({"kind": "blueprint", "title": "Collect the data", "body": blueprint_body()}),
                ),
            ),
        },
        "reviewing_blueprint" => {
            submit(json!({"action": "submit_blueprint_review", "reason": "complete for the Step"}))
        }
        other => (format!("text in {other}"), text("Waiting for the person.")),
    }
}

fn blueprint_body() -> String {
    troupe_workflows::notes::blueprint::SECTIONS
        .iter()
        .map(|s| format!("## {s}\nDecided: {s} for collecting the data.\n"))
        .collect()
}

/// The note id in a `note_create` result (`{"note": {"id": N, …}}`, possibly wrapped).
fn note_id(result: &str) -> Option<i64> {
    let v: Value = serde_json::from_str(result).ok()?;
    find_note_id(&v)
}

fn find_note_id(v: &Value) -> Option<i64> {
    if let Some(id) = v
        .get("note")
        .and_then(|n| n.get("id"))
        .and_then(Value::as_i64)
    {
        return Some(id);
    }
    match v {
        Value::Object(m) => m.values().find_map(find_note_id),
        Value::Array(a) => a.iter().find_map(find_note_id),
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .and_then(|i| find_note_id(&i)),
        _ => None,
    }
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

/// When the request ends with a tool result: the tool's name and the result.
fn last_tool(req: &Value) -> Option<(String, String)> {
    let msgs = messages(req);
    let last = msgs.last()?;
    if last["role"] != "tool" {
        return None;
    }
    let call_id = last["tool_call_id"].as_str()?;
    let name = msgs.iter().rev().find_map(|m| {
        m["tool_calls"].as_array()?.iter().find_map(|c| {
            (c["id"].as_str() == Some(call_id))
                .then(|| c["function"]["name"].as_str().map(str::to_string))?
        })
    })?;
    Some((name, content(last)))
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

/// A call id unique per answer, so a turn's later calls are told apart from earlier ones.
fn tool_call(name: &str, args: Value) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = format!(
        "call_{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut s = chunk(json!({"role": "assistant", "content": null}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}
