//! End to end, as a real process: a Light Loop through `troupe serve` against a fake
//! OpenAI-compatible server. The Bot claims completion, the independent reviewer rejects the
//! first claim, the Bot sees the reason and claims again, and the reviewer approves. The loop's
//! record, the conversation, the events and the requests the model saw are checked; then SIGTERM
//! stops the daemon cleanly.
//!
//! Like `daemon.rs`, the test runs `target/debug/troupe` (or `$TROUPE_BIN`), building it with
//! `cargo build -p troupe-cli` only when it is missing.

mod daemon_support;
mod sse;

use daemon_support::*;

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TASK: &str = "write hello.txt with a greeting";
const FIRST_CLAIM: &str = "first attempt at hello.txt";
const SECOND_CLAIM: &str = "second attempt: hello.txt fixed";
const REASON: &str = "hello.txt lacks the greeting";
const REMAINING: &str = "BLOCKING: put the greeting in hello.txt";
const FIRST_WORDS: &str = "I wrote hello.txt.";
const SECOND_WORDS: &str = "I fixed hello.txt.";
const APPROVAL: &str = "the greeting is there";

// ---------- the fake model server ----------

/// Optional visible words, then one tool call whose arguments arrive in two pieces.
fn tool_call(id: &str, words: Option<&str>, name: &str, args: Value) -> String {
    let args = args.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    let mut s = chunk(json!({"role": "assistant", "content": words}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
            "function": {"name": name, "arguments": a}}]}),
        None,
    );
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}

fn messages(req: &Value) -> Vec<Value> {
    req["messages"].as_array().cloned().unwrap_or_default()
}

/// A reviewer's request: its system prompt is the Light Loop reviewer's.
/// The line reader's tool-free call (it reads each person's line on the default endpoint).
fn is_reading(req: &Value) -> bool {
    messages(req)
        .iter()
        .any(|m| m["role"] == "user" && m["content"].to_string().contains("troupe-reader:"))
}

fn is_reviewer(req: &Value) -> bool {
    messages(req)
        .iter()
        .any(|m| m["role"] == "system" && m["content"].to_string().contains("independent reviewer"))
}

/// Everything but the system prompt, as text (contents may be strings or part lists).
fn conversation(req: &Value) -> String {
    messages(req)
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The answer follows from the request alone. After a tool result either side just says a few
/// words (a verdict or a claim normally ends the turn first). The reviewer rejects the first
/// claim and approves the second; the executor claims, and claims again once it has seen the
/// rejection's reason.
fn answer(req: &Value, n: usize) -> String {
    let all = messages(req);
    let last = all.last().cloned().unwrap_or(Value::Null);
    let id = format!("call_{n}");
    let seen = conversation(req);
    let body = if is_reading(req) {
        text(r#"{"control":"neither"}"#)
    } else if last["role"] == "tool" {
        text("done")
    } else if is_reviewer(req) {
        if seen.contains(SECOND_CLAIM) {
            tool_call(
                &id,
                None,
                "light_loop_approve",
                json!({"summary": APPROVAL}),
            )
        } else {
            tool_call(
                &id,
                None,
                "light_loop_reject",
                json!({
                    "reason": REASON,
                    "remaining": [REMAINING],
                    "instructions": "write the greeting into hello.txt",
                    "completed": ["created hello.txt"],
                }),
            )
        }
    } else if seen.contains(REASON) {
        tool_call(
            &id,
            Some(SECOND_WORDS),
            "loop_stop",
            json!({
                "summary": SECOND_CLAIM,
                "completed": ["hello.txt", "greeting"],
                "evidence": ["cat hello.txt: hello"],
                "limitations": [],
            }),
        )
    } else {
        tool_call(
            &id,
            Some(FIRST_WORDS),
            "loop_stop",
            json!({
                "summary": FIRST_CLAIM,
                "completed": ["hello.txt"],
                "evidence": ["ls: hello.txt"],
                "limitations": ["greeting not checked"],
            }),
        )
    };
    body + "data: [DONE]\n\n"
}

type Seen = Arc<Mutex<Vec<Value>>>;

async fn completions(State(seen): State<Seen>, Json(req): Json<Value>) -> impl IntoResponse {
    let n = {
        let mut s = seen.lock().unwrap();
        s.push(req.clone());
        s.len()
    };
    ([("content-type", "text/event-stream")], answer(&req, n))
}

async fn fake_model() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(completions))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn light_loop_reviewer_rejects_once_then_approves_through_the_daemon() {
    let bin = troupe_binary();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let log = tmp.path().join("daemon.log");
    let (model, requests) = fake_model().await;
    let config = tmp.path().join("config.toml");
    write_fake_config(&config, &model, &["default", "review"]);
    let daemon_log = || std::fs::read_to_string(&log).unwrap_or_default();

    let mut daemon = Daemon::start(&bin, &data, &config, &log);
    // The token stays in the data dir, so this client outlives the restarts below.
    let client = daemon.client();
    let bot = post(&client, daemon.url("/v1/bots"), json!({"name": "Builder"})).await;
    let session = post(
        &client,
        daemon.url("/v1/sessions"),
        json!({"kind": "direct", "bot_ids": [bot["id"]]}),
    )
    .await;
    let sid = session["id"].as_i64().unwrap();
    let mut events = sse::SseStream::connect(
        &client,
        &daemon.url(&format!("/v1/events?session_id={sid}")),
        None,
    )
    .await;

    let workflow_url = daemon.url(&format!("/v1/sessions/{sid}/workflow"));
    let on = post(
        &client,
        workflow_url.clone(),
        json!({"kind": "lightloop", "instructions": TASK, "max_iterations": 3}),
    )
    .await;
    assert_eq!(on["kind"], "lightloop", "{on:#}");
    assert_eq!(on["phase"], "executing", "{on:#}");
    assert_eq!(on["iteration"], 1, "{on:#}");
    assert_eq!(on["changed"], true, "{on:#}");

    post(
        &client,
        daemon.url(&format!("/v1/sessions/{sid}/messages")),
        json!({"body": "please do the task"}),
    )
    .await;

    // The loop ends, and then nothing runs any more: no executor turn, no reviewer.
    let view = wait_until(
        "the Light Loop has ended and the session is idle",
        || async {
            let v = get(&client, workflow_url.clone()).await;
            (!v["last_terminal"].is_null() && v["running"] == false && v["reviewer"].is_null())
                .then_some(v)
        },
    )
    .await;
    let end = &view["last_terminal"];
    assert_eq!(end["status"], "completed", "{view:#}\n{}", daemon_log());
    assert_eq!(end["kind"], "lightloop", "{view:#}");
    assert_eq!(end["instructions"], TASK, "{view:#}");
    assert!(end["error"].is_null(), "{view:#}");
    assert!(
        view["kind"].is_null() && view["slot"].is_null() && view["phase"].is_null(),
        "the slot is cleared: {view:#}"
    );

    // Each review was a reviewer task of the session, listed by /v1/child-tasks and completed.
    let tasks_url = daemon.url(&format!("/v1/child-tasks?parent_session={sid}"));
    let tasks = wait_until("both reviewer tasks have ended", || async {
        let t = get(&client, tasks_url.clone()).await;
        let all = t.as_array().cloned().unwrap_or_default();
        (all.len() == 2 && all.iter().all(|k| k["status"] == "completed")).then_some(all)
    })
    .await;
    for task in &tasks {
        assert_eq!(task["role"], "reviewer", "{task:#}");
        assert_eq!(task["notify_parent"], false, "{task:#}");
    }
    assert_ne!(tasks[0]["child_thread_id"], tasks[1]["child_thread_id"]);

    // The model saw: claim, rejection, claim again (with the reason), approval — nothing more.
    let all = requests.lock().unwrap().clone();
    assert_eq!(
        all.iter().filter(|r| is_reading(r)).count(),
        1,
        "one reading per line"
    );
    let reqs: Vec<Value> = all.into_iter().filter(|r| !is_reading(r)).collect();
    let reviews: Vec<&Value> = reqs
        .iter()
        .filter(|r| is_reviewer(r) && messages(r).last().unwrap()["role"] != "tool")
        .collect();
    assert_eq!(reviews.len(), 2, "exactly two reviews: {reqs:#?}");
    assert!(conversation(reviews[0]).contains(FIRST_CLAIM));
    assert!(conversation(reviews[0]).contains(TASK));
    assert!(conversation(reviews[1]).contains(SECOND_CLAIM));
    let executor: Vec<&Value> = reqs.iter().filter(|r| !is_reviewer(r)).collect();
    assert!(!conversation(executor[0]).contains(REASON), "{reqs:#?}");
    let after = executor
        .iter()
        .position(|r| conversation(r).contains(REASON))
        .unwrap_or_else(|| panic!("no executor request saw the rejection: {reqs:#?}"));
    let back = conversation(executor[after]);
    assert!(back.contains(REMAINING), "{back}");
    let tools = |r: &Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert!(tools(executor[0]).contains(&"loop_stop".to_string()));
    // The loop is the executor's work: its desk does not send it to `work_on` first.
    let system = messages(executor[0])[0]["content"].to_string();
    assert!(
        system.contains("This conversation's workflow is your work")
            && !system
                .to_lowercase()
                .contains("before anything with an effect"),
        "{system}"
    );
    assert!(tools(reviews[0]).contains(&"light_loop_reject".to_string()));
    assert!(!tools(reviews[0]).contains(&"loop_stop".to_string()));

    // The conversation: the person's line, the Bot's two lines, one rejection notice, then the
    // approval notice last of them.
    let lines = get(
        &client,
        daemon.url(&format!("/v1/sessions/{sid}/messages?limit=1000")),
    )
    .await;
    let lines = lines.as_array().unwrap();
    let bodies: Vec<String> = lines
        .iter()
        .map(|l| l["body"].as_str().unwrap_or("").to_string())
        .collect();
    let at = |pred: &dyn Fn(&Value) -> bool, what: &str| -> usize {
        lines
            .iter()
            .position(pred)
            .unwrap_or_else(|| panic!("no line {what}: {lines:#?}"))
    };
    let person = at(
        &|l| l["author"] == "user" && l["body"] == "please do the task",
        "from the person",
    );
    let first = at(
        &|l| l["author"] == "bot" && l["body"] == FIRST_WORDS,
        "with the first claim",
    );
    let rejected = at(
        &|l| {
            l["body"]
                .as_str()
                .is_some_and(|b| b.contains("rejected the claim") && b.contains(REASON))
        },
        "noting the rejection",
    );
    let second = at(
        &|l| l["author"] == "bot" && l["body"] == SECOND_WORDS,
        "with the second claim",
    );
    let approved = at(
        &|l| {
            l["body"]
                .as_str()
                .is_some_and(|b| b.contains("Light Loop completed") && b.contains(APPROVAL))
        },
        "noting the approval",
    );
    assert!(
        person < first && first < rejected && rejected < second && second < approved,
        "{bodies:#?}"
    );
    assert_eq!(
        bodies
            .iter()
            .filter(|b| b.contains("rejected the claim"))
            .count(),
        1,
        "{bodies:#?}"
    );

    // The events: every line arrived as a session_message, ids strictly increasing.
    let seen = events
        .until(WAIT, |m| {
            m.event == "session_message"
                && m.json()["payload"]["message"]["body"]
                    .as_str()
                    .is_some_and(|b| b.contains("Light Loop completed"))
        })
        .await;
    let said: Vec<(i64, String)> = seen
        .iter()
        .filter(|m| m.event == "session_message")
        .map(|m| {
            let id = m.event_id().expect("a session_message carries an id");
            let body = m.json()["payload"]["message"]["body"]
                .as_str()
                .unwrap_or("")
                .to_string();
            (id, body)
        })
        .collect();
    assert!(
        said.windows(2).all(|w| w[0].0 < w[1].0),
        "ids strictly increase: {said:#?}"
    );
    let ids: Vec<i64> = seen.iter().filter_map(|m| m.event_id()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    for body in ["please do the task", FIRST_WORDS, SECOND_WORDS] {
        assert!(said.iter().any(|(_, b)| b == body), "{body}: {said:#?}");
    }
    assert!(
        said.iter().any(|(_, b)| b.contains("rejected the claim")),
        "{said:#?}"
    );
    drop(events);

    // SIGTERM: a clean exit.
    let pid = daemon.child.id() as i32;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = daemon.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the daemon did not exit within 15 s of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "exit {status}; log:\n{}", daemon_log());
    assert!(
        !data.join("daemon.json").exists(),
        "daemon.json is removed on a clean exit"
    );
}
