//! End to end, as a real process: a BlueprintLoop through `troupe serve` against a fake
//! OpenAI-compatible server, with the daemon killed (SIGKILL) while the supervisor audits. On
//! restart the same audit resumes — no recovery turn spent, no second claim — and approves; the
//! loop's record, the session's binding and the requests the model saw are checked.
//!
//! Like `daemon.rs`, the test runs `target/debug/troupe` (or `$TROUPE_BIN`), building it with
//! `cargo build -p troupe-cli` only when it is missing.

mod daemon_support;

use daemon_support::*;

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const CLAIM: &str = "hello.txt written as the Blueprint says";
const VERDICT: &str = "hello.txt exists and says hi";

fn tool_call(id: &str, name: &str, args: Value) -> String {
    let mut s = chunk(json!({"role": "assistant", "content": null}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}

fn messages(req: &Value) -> Vec<Value> {
    req["messages"].as_array().cloned().unwrap_or_default()
}

fn is_auditor(req: &Value) -> bool {
    messages(req).iter().any(|m| {
        m["role"] == "system"
            && m["content"]
                .to_string()
                .contains("independent auditor of a BlueprintLoop")
    })
}

fn conversation(req: &Value) -> String {
    messages(req)
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Clone, Default)]
struct Fake {
    seen: Arc<Mutex<Vec<Value>>>,
    /// While set, an auditor's call never answers (the daemon is killed during it).
    hold_audit: Arc<AtomicBool>,
}

async fn completions(State(f): State<Fake>, Json(req): Json<Value>) -> impl IntoResponse {
    let n = {
        let mut s = f.seen.lock().unwrap();
        s.push(req.clone());
        s.len()
    };
    let last = messages(&req).last().cloned().unwrap_or(Value::Null);
    let id = format!("call_{n}");
    // The auditor looks before it approves (an approval needs a look since the claim).
    let looks = messages(&req)
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    let body = if is_auditor(&req) && looks < 2 {
        if f.hold_audit.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        if looks == 0 {
            tool_call(&id, "list_dir", json!({"path": "."}))
        } else {
            tool_call(&id, "blueprint_loop_approve", json!({"summary": VERDICT}))
        }
    } else if last["role"] == "tool" {
        text("done")
    } else {
        tool_call(
            &id,
            "blueprint_loop_stop",
            json!({"summary": CLAIM, "evidence": ["cat hello.txt: hi"]}),
        )
    };
    (
        [("content-type", "text/event-stream")],
        body + "data: [DONE]\n\n",
    )
}

async fn fake_model() -> (String, Fake) {
    let fake = Fake::default();
    fake.hold_audit.store(true, Ordering::SeqCst);
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(completions))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), fake)
}

fn blueprint_body() -> String {
    troupe_workflows::notes::blueprint::SECTIONS
        .iter()
        .map(|s| format!("## {s}\nhello.txt says hi.\n"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restart_during_auditing_resumes_the_same_audit_through_the_daemon() {
    let bin = troupe_binary();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let log = tmp.path().join("daemon.log");
    let (model, fake) = fake_model().await;
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
    post(
        &client,
        daemon.url(&format!("/v1/sessions/{sid}/workflow")),
        json!({"kind": "plan"}),
    )
    .await;
    let note = post(
        &client,
        daemon.url("/v1/notes"),
        json!({"kind": "blueprint", "title": "Hello", "body": blueprint_body(), "session_id": sid}),
    )
    .await;
    let started = post(
        &client,
        daemon.url("/v1/blueprint-loops"),
        json!({"session_id": sid, "note_id": note["id"], "instruction": "only hello.txt"}),
    )
    .await;
    let id = started["id"].as_i64().unwrap();
    let loop_url = |d: &Daemon| d.url(&format!("/v1/blueprint-loops/{id}"));

    // The executor stops; the supervisor's audit starts and is in flight when the process dies.
    let auditing = wait_until("the audit to be in flight", || async {
        let l = get(&client, loop_url(&daemon)).await;
        let asked = fake.seen.lock().unwrap().iter().any(is_auditor);
        (l["status"] == "auditing" && asked).then_some(l)
    })
    .await;
    assert!(auditing["audit_thread_id"].is_i64(), "{auditing:#}");
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    fake.hold_audit.store(false, Ordering::SeqCst);

    let daemon = Daemon::start(&bin, &data, &config, &log);
    let done = wait_until("the loop to complete after the restart", || async {
        let l = get(&client, loop_url(&daemon)).await;
        (l["status"] == "completed").then_some(l)
    })
    .await;
    assert_eq!(done["summary"], VERDICT, "{done:#}\n{}", daemon_log());
    assert_eq!(done["audit"]["attempts"], 0, "{done:#}");
    assert!(
        done["stop_request"].is_null() && done["audit_thread_id"].is_null(),
        "{done:#}"
    );

    // The session is unbound, Plan stays cleared, and the note is free again.
    let wf = get(&client, daemon.url(&format!("/v1/sessions/{sid}/workflow"))).await;
    assert!(wf["blueprint"].is_null() && wf["kind"].is_null(), "{wf:#}");
    let n = get(&client, daemon.url(&format!("/v1/notes/{}", note["id"]))).await;
    assert!(n["active_loop_id"].is_null(), "{n:#}");
    assert_eq!(n["run_count"], 1, "{n:#}");

    // The model saw one claim and two audit calls of the same audit: the cut one and the
    // resumed one, with the same task and no recovery turn.
    let reqs = fake.seen.lock().unwrap().clone();
    let claims = reqs
        .iter()
        .filter(|r| !is_auditor(r) && messages(r).last().unwrap()["role"] != "tool")
        .count();
    assert_eq!(claims, 1, "one executor turn: {reqs:#?}");
    let audits: Vec<String> = reqs
        .iter()
        .filter(|r| is_auditor(r) && messages(r).last().unwrap()["role"] != "tool")
        .map(conversation)
        .collect();
    assert_eq!(audits.len(), 2, "{audits:#?}");
    for a in &audits {
        assert!(
            a.contains(&format!("Audit BlueprintLoop {id}")) && a.contains(CLAIM),
            "{a}"
        );
        assert!(!a.contains("recovery"), "no recovery turn was spent: {a}");
    }
    let lines = get(&client, daemon.url(&format!("/v1/sessions/{sid}/messages"))).await;
    let text = lines.to_string();
    assert!(text.contains("an independent audit started"), "{text}");
    assert!(
        text.contains("completed: the supervisor approved"),
        "{text}"
    );
}
