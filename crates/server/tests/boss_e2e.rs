//! End to end, as a real process: Boss Mode through `troupe serve` against a fake
//! OpenAI-compatible server whose script answers from each request alone. The person enables
//! Boss and says one line; the root's model spawns a worker and assigns it a task; the worker
//! answers in prose, is nudged to report (BOSS-4's other side: an unreported assignment), and
//! reports; the report wakes the root, which answers. A second worker, made and assigned through
//! the routes, has its model call held while a second assignment waits in its inbox when the
//! daemon is SIGKILLed: after the restart the worker — unattended, never latched — runs the
//! queued assignment on the boot wake and reports (BOSS-9).
//!
//! Like `daemon.rs`, the test runs `target/debug/troupe` (or `$TROUPE_BIN`), building it with
//! `cargo build -p troupe-cli` only when it is missing.

mod daemon_support;

use daemon_support::mcp::{neutral_reading, tool_call_as};
use daemon_support::*;

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const PERSON: &str = "build the greeting files";
const TASK_1: &str = "write hello.txt";
const TASK_2: &str = "write bye.txt";
const TASK_3: &str = "write fin.txt";
const PROSE: &str = "I wrote hello.txt.";
const ASSIGNED: &str = "I gave t1 to a code worker.";
const NUDGE: &str = "has no report yet";

/// What the root says when woken by reports: the task ids they name.
fn root_answer(tasks: &[String]) -> String {
    format!("Reports in for {}.", tasks.join(", "))
}

fn is_root(req: &Value) -> bool {
    system(req).contains("<boss-context>")
}

/// A worker's requests, by its role.
fn is_worker(req: &Value, role: &str) -> bool {
    system(req).contains(&format!("role {role}, root session"))
}

/// The task ids the reports in `text` name (`… on task t1]`), in order.
fn reported_tasks(text: &str) -> Vec<String> {
    text.split("on task ")
        .skip(1)
        .filter_map(|r| r.split(']').next())
        .map(str::to_string)
        .collect()
}

struct Script {
    calls: AtomicUsize,
    /// While set, a worker's call on TASK_2 never answers (the daemon is killed during it).
    hold: AtomicBool,
    unexpected: std::sync::Mutex<Vec<String>>,
}

impl Script {
    fn call(&self, name: &str, args: Value) -> Reply {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        Reply::Now(tool_call_as(&format!("call_{n}"), name, &args))
    }

    fn answer(&self, req: &Value) -> Reply {
        if let Some(r) = neutral_reading(req) {
            return Reply::Now(r);
        }
        let fresh = fresh_user(req);
        if is_root(req) {
            return match after_tool(req).as_deref() {
                Some("boss_spawn") => {
                    let result = messages(req).last().map(content).unwrap_or_default();
                    let v: Value = serde_json::from_str(&result).unwrap_or(Value::Null);
                    match v["worker"]["session_id"].as_i64() {
                        Some(w) => self.call(
                            "boss_assign",
                            json!({"session_id": w, "task_id": "t1", "task": TASK_1,
                                   "acceptance": ["hello.txt says hello"]}),
                        ),
                        None => self.unexpected(format!("boss_spawn said {result}")),
                    }
                }
                Some("boss_assign") => Reply::Now(text(ASSIGNED)),
                Some(other) => self.unexpected(format!("the root after {other}")),
                None if fresh.contains("[Boss report from") => {
                    Reply::Now(text(&root_answer(&reported_tasks(&fresh))))
                }
                None if fresh.contains(PERSON) => self.call("boss_spawn", json!({"role": "code"})),
                None => self.unexpected(format!("the root was told {fresh:?}")),
            };
        }
        if is_worker(req, "code") || is_worker(req, "docs") {
            if after_tool(req).is_some() {
                return Reply::Now(text("reported"));
            }
            if let Some(rest) = fresh.split("Your assignment ").nth(1) {
                let task = rest.split_whitespace().next().unwrap_or("?");
                return self.call(
                    "boss_report",
                    json!({"summary": format!("{task} done after a nudge"), "refs": ["hello.txt"]}),
                );
            }
            if fresh.contains(TASK_1) {
                return Reply::Now(text(PROSE));
            }
            // After the restart the cut-off t2 and the queued t3 come in one request.
            if fresh.contains(TASK_3) {
                return self.call("boss_report", json!({"summary": "fin.txt written"}));
            }
            if fresh.contains(TASK_2) {
                if self.hold.load(Ordering::SeqCst) {
                    return Reply::Hang;
                }
                return self.call("boss_report", json!({"summary": "bye.txt written"}));
            }
            return self.unexpected(format!("a worker was told {fresh:?}"));
        }
        self.unexpected(format!("a request of no known role: {req}"))
    }

    fn unexpected(&self, what: String) -> Reply {
        self.unexpected.lock().unwrap().push(what.clone());
        Reply::Now(text(&format!("UNEXPECTED: {what}")))
    }
}

/// The node of `session` in a tree answer.
fn node(tree: &Value, session: i64) -> Option<Value> {
    if tree["session_id"] == session {
        return Some(tree.clone());
    }
    tree["children"]
        .as_array()?
        .iter()
        .find_map(|c| node(c, session))
}

async fn root_line(api: &Api, root: i64, body: &str) -> Value {
    wait_until(&format!("the root says {body:?}"), || async {
        api.lines(root)
            .await
            .into_iter()
            .find(|l| l["author"] == "bot" && l["body"] == body)
    })
    .await
}

/// The tree route's node for `worker`, once `ok` holds for it.
async fn node_when(api: &Api, root: i64, worker: i64, what: &str, ok: impl Fn(&Value) -> bool) {
    wait_until(what, || async {
        let tree = api.get(&format!("/v1/boss/session/{root}/tree")).await;
        node(&tree, worker).filter(|n| ok(n))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_boss_tree_delegates_reports_and_survives_a_sigkill() {
    let script = Arc::new(Script {
        calls: AtomicUsize::new(0),
        hold: AtomicBool::new(true),
        unexpected: std::sync::Mutex::new(Vec::new()),
    });
    let s = script.clone();
    let fake = FakeModel::serve(move |req| s.answer(req)).await;
    let url = fake.url.clone();
    let rig = Rig::new(|p| write_fake_config(p, &url, &["default"]));
    let (mut daemon, api) = rig.start();

    let bot = api.bot("Chief").await;
    let root = api.direct(bot).await;
    let on = api
        .post(
            &format!("/v1/sessions/{root}/workflow"),
            json!({"kind": "boss", "instructions": "small files only"}),
        )
        .await;
    assert_eq!(on["slot"]["role"], "boss", "{on:#}");
    api.say(root, PERSON).await;
    root_line(&api, root, ASSIGNED).await;

    // The worker the root spawned: the root's child, unattended, in its tree.
    let sessions = api.list("/v1/sessions").await;
    let code = sessions
        .iter()
        .find(|s| s["workflow"]["worker_role"] == "code")
        .unwrap_or_else(|| panic!("no code worker: {sessions:#?}\n{}", rig.log()));
    let code_id = code["id"].as_i64().unwrap();
    assert_eq!(code["workflow"]["root_session_id"], root, "{code:#}");

    // Prose first, a nudge, then the report; the report wakes the root, which answers.
    root_line(&api, root, &root_answer(&["t1".into()])).await;
    let code_reqs: Vec<Value> = fake
        .requests()
        .into_iter()
        .filter(|r| is_worker(r, "code"))
        .collect();
    let nudged = code_reqs
        .iter()
        .filter(|r| fresh_user(r).contains(NUDGE))
        .count();
    assert_eq!(nudged, 1, "one nudge, none after the report");
    assert!(
        code_reqs.iter().any(|r| messages(r)
            .iter()
            .any(|m| m["role"] == "assistant" && content(m) == PROSE)),
        "the nudge followed the prose answer"
    );
    assert!(
        fake.requests()
            .iter()
            .filter(|r| is_root(r))
            .all(|r| !fresh_user(r).contains(NUDGE)),
        "the root is never nudged (BOSS-4)"
    );
    node_when(
        &api,
        root,
        code_id,
        "the code worker to be idle on t1",
        |n| n["status"] == "idle" && n["current_task"]["task_id"] == "t1",
    )
    .await;
    // A person's line never reaches a worker.
    let (status, body) = api
        .post_status(
            &format!("/v1/sessions/{code_id}/messages"),
            json!({"body": "hi"}),
        )
        .await;
    assert_eq!(
        (status.as_u16(), body["error"]["code"].as_str()),
        (409, Some("boss_worker"))
    );

    // A second worker through the routes; its model call on t2 is held, t3 waits behind it.
    let docs = api
        .post(
            &format!("/v1/boss/session/{root}/worker"),
            json!({"role": "docs"}),
        )
        .await;
    let docs_id = docs["session_id"].as_i64().unwrap();
    let assign = format!("/v1/boss/session/{root}/assign");
    let a = api
        .post(
            &assign,
            json!({"worker_session_id": docs_id, "task_id": "t2", "task": TASK_2}),
        )
        .await;
    assert_eq!(a["delivered"], true, "{a:#}");
    wait_until("the docs worker's call on t2 to be in flight", || async {
        fake.requests()
            .iter()
            .any(|r| is_worker(r, "docs") && fresh_user(r).contains(TASK_2))
            .then_some(())
    })
    .await;
    let a = api
        .post(
            &assign,
            json!({"worker_session_id": docs_id, "task_id": "t3", "task": TASK_3}),
        )
        .await;
    assert_eq!(a["delivered"], true, "{a:#}");
    let tree = api.get(&format!("/v1/boss/session/{root}/tree")).await;
    let kids: Vec<&Value> = tree["children"].as_array().unwrap().iter().collect();
    assert_eq!(kids.len(), 2, "two workers: {tree:#}");
    assert_eq!(
        node(&tree, docs_id).unwrap()["status"],
        "running",
        "{tree:#}"
    );
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| fresh_user(r).contains(TASK_3)),
        "t3 is still queued"
    );
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    script.hold.store(false, Ordering::SeqCst);

    let (_daemon, api) = rig.start();
    // The boot wake runs the worker's queued assignment, and its report reaches the root.
    node_when(&api, root, docs_id, "the docs worker to finish t3", |n| {
        n["status"] == "idle" && n["current_task"]["task_id"] == "t3"
    })
    .await;
    wait_until("the root to answer the t3 report", || async {
        api.lines(root).await.into_iter().find(|l| {
            l["author"] == "bot"
                && l["body"]
                    .as_str()
                    .is_some_and(|b| b.starts_with("Reports in for") && b.contains("t3"))
        })
    })
    .await;
    let view = api.get(&format!("/v1/sessions/{docs_id}")).await;
    assert!(
        view["paused"].is_null(),
        "an unattended worker is never latched: {view:#}"
    );
    // The worker's calls: the one cut by the kill, then one after the restart that shows the
    // cut-off t2 (its turn ended as interrupted) and the queued t3; nothing ran twice.
    let docs_calls: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| is_worker(r, "docs") && after_tool(r).is_none())
        .map(fresh_user)
        .collect();
    assert_eq!(
        docs_calls,
        [TASK_2.to_string(), format!("{TASK_2}\n{TASK_3}")],
        "{}",
        rig.log()
    );
    let odd = script.unexpected.lock().unwrap().clone();
    assert!(odd.is_empty(), "{odd:#?}\n{}", rig.log());
}
