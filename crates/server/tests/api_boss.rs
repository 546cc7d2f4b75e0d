//! Boss Mode over HTTP: enabling on a session, `/v1/boss/session/:id/{tree,worker,assign,cancel}`
//! acting as a tree member, the codes the refusals answer, and a person's line refused on a worker.

mod support;

use serde_json::{Value, json};
use support::{TestApp, wait_until};

/// One Bot for the root and its workers (a worker takes its caller's Bot). Its answers: "ok";
/// an assignment that says "write a.txt" is reported at once; a "slow job" keeps the turn
/// running until it is cancelled; a nudge to report is answered with a report.
async fn boss_bot(app: &TestApp, name: &str) -> i64 {
    app.scripted_bot(
        name,
        json!({
            "steps": [{"text": "ok"}],
            "on_exhausted": "repeat_last",
            "rules": [
                {"when_user_contains": "write a.txt", "reply": {"tool_calls": [
                    {"name": "boss_report", "arguments": {"summary": "a.txt written", "refs": ["a.txt"]}}
                ]}},
                {"when_user_contains": "slow job", "reply": {"text": "working on it", "delay_ms": 60000}},
                {"when_user_contains": "has no report yet", "reply": {"tool_calls": [
                    {"name": "boss_report", "arguments": {"summary": "stopped", "status": "blocked"}}
                ]}}
            ]
        }),
    )
    .await
}

/// A Boss root that has heard the person once.
async fn root(app: &TestApp) -> i64 {
    let bot = boss_bot(app, "Chief").await;
    let s = app.direct(bot).await;
    let v = app
        .post(
            &format!("/v1/sessions/{s}/workflow"),
            json!({"kind": "boss", "instructions": "keep it small"}),
        )
        .await
        .expect(200);
    assert_eq!(
        v["slot"],
        json!({"kind": "boss", "role": "boss", "instructions": "keep it small"})
    );
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "build the thing"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "ok").await;
    app.settle(s).await;
    s
}

async fn spawn(app: &TestApp, caller: i64, role: &str) -> i64 {
    let w = app
        .post(
            &format!("/v1/boss/session/{caller}/worker"),
            json!({"role": role}),
        )
        .await
        .expect(201);
    w["session_id"].as_i64().unwrap()
}

fn assignment(worker: i64, task_id: &str, task: &str) -> Value {
    json!({"worker_session_id": worker, "task_id": task_id, "task": task, "acceptance": ["a.txt exists"]})
}

fn tree_node(tree: &Value, session: i64) -> Option<Value> {
    if tree["session_id"] == session {
        return Some(tree.clone());
    }
    tree["children"]
        .as_array()?
        .iter()
        .find_map(|c| tree_node(c, session))
}

async fn node(app: &TestApp, root: i64, session: i64) -> Value {
    let tree = app
        .get(&format!("/v1/boss/session/{root}/tree"))
        .await
        .expect(200);
    tree_node(&tree, session).unwrap_or_else(|| panic!("{session} not in {tree}"))
}

/// A session's Bot transcript: assignments and reports are kernel messages there, not lines.
fn transcript(app: &TestApp, session: i64) -> Vec<troupe_core::message::Message> {
    let t = app
        .state
        .collab
        .direct_thread(troupe_core::SessionId(session))
        .unwrap();
    app.state
        .collab
        .store()
        .read(|tx| tx.messages(t, None, 1000))
        .unwrap()
}

#[tokio::test]
async fn spawn_worker_answers_201_with_the_workers_slot() {
    let app = TestApp::start().await;
    let r = root(&app).await;
    let w = app
        .post(
            &format!("/v1/boss/session/{r}/worker"),
            json!({"role": "code", "instructions": "small commits"}),
        )
        .await
        .expect(201);
    assert_eq!(w["worker_role"], "code");
    assert_eq!(w["root_session_id"], r);
    assert_eq!(w["bot"], "Chief");
    assert!(w["worktree"].is_null());
    let ws = w["session_id"].as_i64().unwrap();
    let view = app.get(&format!("/v1/sessions/{ws}")).await.expect(200);
    assert_eq!(
        view["workflow"],
        json!({"kind": "boss", "role": "worker", "worker_role": "code", "root_session_id": r, "instructions": "small commits"})
    );
    // The list marks the worker with its slot too.
    let all = app.get("/v1/sessions").await.expect(200);
    let listed = all
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == ws)
        .expect("the worker is listed");
    assert_eq!(listed["workflow"]["role"], "worker");
    assert_eq!(listed["workflow"]["root_session_id"], r);
}

#[tokio::test]
async fn assign_twice_delivers_once_and_the_report_reaches_the_root() {
    let app = TestApp::start().await;
    let r = root(&app).await;
    let w = spawn(&app, r, "code").await;
    let path = format!("/v1/boss/session/{r}/assign");
    let first = app
        .post(&path, assignment(w, "t1", "write a.txt"))
        .await
        .expect(200);
    assert_eq!(
        first,
        json!({"worker_session_id": w, "task_id": "t1", "delivered": true})
    );
    let again = app
        .post(&path, assignment(w, "t1", "write a.txt"))
        .await
        .expect(200);
    assert_eq!(again["delivered"], false, "BOSS-2: {again}");
    // The report is a steer in the root's transcript (not a person's line), and it wakes
    // the root: its Bot answers once more.
    let report = wait_until("the worker's report in the root", || async {
        transcript(&app, r)
            .into_iter()
            .find(|m| m.text().contains("Status: completed"))
    })
    .await;
    assert_eq!(
        report.origin,
        troupe_core::message::Origin::System("boss_report".into())
    );
    assert!(!report.is_root, "BOSS-7: a steer, never a wrapped request");
    assert!(report.text().contains("a.txt written"), "{}", report.text());
    app.settle(w).await;
    app.settle(r).await;
    let answers = app
        .lines(r)
        .await
        .into_iter()
        .filter(|l| l["author"] == "bot")
        .count();
    assert_eq!(answers, 2, "the root answered the person, then the report");
    let assignments: Vec<_> = transcript(&app, w)
        .into_iter()
        .filter(|m| m.is_root)
        .collect();
    assert_eq!(assignments.len(), 1, "one task reached the worker");
    assert!(
        assignments[0]
            .text()
            .contains("Acceptance criteria:\n- a.txt exists")
    );
    let n = node(&app, r, w).await;
    assert_eq!(n["current_task"]["task_id"], "t1", "{n}");
    assert_eq!(n["status"], "idle", "{n}");
}

#[tokio::test]
async fn refusals_carry_their_codes() {
    let app = TestApp::start().await;
    let r = root(&app).await;
    let w = spawn(&app, r, "code").await;
    let g = spawn(&app, w, "test").await;
    // BOSS-3: only a direct child worker.
    app.post(
        &format!("/v1/boss/session/{r}/assign"),
        assignment(g, "t1", "x"),
    )
    .await
    .expect_error(409, "not_direct_child");
    app.post(
        &format!("/v1/boss/session/{r}/cancel"),
        json!({"worker_session_id": g}),
    )
    .await
    .expect_error(409, "not_direct_child");
    // 422s keep the Boss code, with the rest of the message naming the field.
    let bad = app
        .post(
            &format!("/v1/boss/session/{r}/assign"),
            assignment(w, "bad id", "x"),
        )
        .await;
    bad.expect_error(422, "invalid_task_id");
    assert!(bad.message().starts_with("task_id:"), "{}", bad.text);
    app.post(
        &format!("/v1/boss/session/{r}/assign"),
        assignment(w, "t1", "  "),
    )
    .await
    .expect_error(422, "invalid_task");
    app.post(
        &format!("/v1/boss/session/{r}/worker"),
        json!({"role": "x", "agent": "Nobody"}),
    )
    .await
    .expect_error(422, "unknown_agent");
    app.post(
        &format!("/v1/boss/session/{r}/worker"),
        json!({"role": " "}),
    )
    .await
    .expect_error(422, "invalid_role");
    app.post(
        &format!("/v1/boss/session/{r}/worker"),
        json!({"role": "x", "workspace": "elsewhere"}),
    )
    .await
    .expect_error(422, "invalid");
    app.post(
        &format!("/v1/boss/session/{r}/worker"),
        json!({"role": "x", "bogus": 1}),
    )
    .await
    .expect_error(422, "invalid");
    // Unknown sessions, as caller or as target.
    app.get("/v1/boss/session/999999/tree")
        .await
        .expect_error(404, "not_found");
    app.post(
        &format!("/v1/boss/session/{r}/assign"),
        assignment(999_999, "t1", "x"),
    )
    .await
    .expect_error(404, "not_found");
    app.get("/v1/boss/session/abc/tree")
        .await
        .expect_error(400, "bad_request");
    app.get(&format!("/v1/boss/session/{r}/tree?depth=17"))
        .await
        .expect_error(422, "invalid");
    // A session outside any tree is no Boss caller.
    let bot = boss_bot(&app, "Outsider").await;
    let outsider = app.direct(bot).await;
    app.get(&format!("/v1/boss/session/{outsider}/tree"))
        .await
        .expect_error(409, "not_boss");
    app.post(
        &format!("/v1/boss/session/{outsider}/assign"),
        assignment(w, "t1", "x"),
    )
    .await
    .expect_error(409, "not_boss");
    // Nothing was written by any of these: the worker's history is empty, no fourth session.
    assert!(app.lines(w).await.is_empty());
    let tree = app
        .get(&format!("/v1/boss/session/{r}/tree"))
        .await
        .expect(200);
    assert_eq!(tree["children"].as_array().unwrap().len(), 1, "{tree}");
}

#[tokio::test]
async fn the_tree_shows_roles_bots_and_depth() {
    let app = TestApp::start().await;
    let r = root(&app).await;
    let w1 = spawn(&app, r, "code").await;
    let w2 = spawn(&app, r, "research").await;
    let g = spawn(&app, w1, "test").await;
    let tree = app
        .get(&format!("/v1/boss/session/{r}/tree"))
        .await
        .expect(200);
    assert_eq!(tree["session_id"], r);
    assert_eq!(tree["role"], "boss");
    assert_eq!(tree["status"], "idle");
    let kids: Vec<i64> = tree["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["session_id"].as_i64().unwrap())
        .collect();
    assert_eq!(kids, vec![w1, w2]);
    let c = &tree["children"][0];
    assert_eq!(c["role"], "worker");
    assert_eq!(c["worker_role"], "code");
    assert_eq!(c["bot"], "Chief");
    assert_eq!(c["children"][0]["session_id"], g);
    assert_eq!(c["children"][0]["worker_role"], "test");
    // depth bounds the levels below the caller.
    let shallow = app
        .get(&format!("/v1/boss/session/{r}/tree?depth=1"))
        .await
        .expect(200);
    assert_eq!(shallow["children"].as_array().unwrap().len(), 2);
    assert!(
        shallow["children"][0]["children"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{shallow}"
    );
    // A worker sees its own subtree.
    let sub = app
        .get(&format!("/v1/boss/session/{w1}/tree"))
        .await
        .expect(200);
    assert_eq!(sub["session_id"], w1);
    assert_eq!(sub["children"][0]["session_id"], g);
}

#[tokio::test]
async fn cancel_removes_the_queued_task_then_interrupts_the_running_one() {
    let app = TestApp::start().await;
    let r = root(&app).await;
    let w = spawn(&app, r, "code").await;
    let assign = format!("/v1/boss/session/{r}/assign");
    let cancel = format!("/v1/boss/session/{r}/cancel");
    app.post(&assign, assignment(w, "t1", "the slow job"))
        .await
        .expect(200);
    wait_until("the worker to run t1", || async {
        let n = node(&app, r, w).await;
        (n["status"] == "running").then_some(())
    })
    .await;
    app.post(&assign, assignment(w, "t2", "next job"))
        .await
        .expect(200);
    let c = app
        .post(&cancel, json!({"worker_session_id": w, "task_id": "t2"}))
        .await
        .expect(200);
    assert_eq!(
        c,
        json!({"cancelled": false, "removed": 1}),
        "t2 goes, t1 runs on"
    );
    assert_eq!(node(&app, r, w).await["status"], "running");
    app.post(
        &cancel,
        json!({"worker_session_id": w, "task_id": "bad id"}),
    )
    .await
    .expect_error(422, "invalid_task_id");
    let c = app
        .post(&cancel, json!({"worker_session_id": w}))
        .await
        .expect(200);
    assert_eq!(c, json!({"cancelled": true, "removed": 0}));
    app.settle(w).await;
    let view = app.get(&format!("/v1/sessions/{w}")).await.expect(200);
    assert!(
        view["paused"].is_null(),
        "an internal cancel latches nothing: {view}"
    );
}

#[tokio::test]
async fn a_person_cannot_post_to_a_worker() {
    let app = TestApp::start().await;
    let r = root(&app).await;
    let w = spawn(&app, r, "code").await;
    let e = app
        .post(
            &format!("/v1/sessions/{w}/messages"),
            json!({"body": "hello worker"}),
        )
        .await;
    e.expect_error(409, "boss_worker");
    assert!(e.message().contains(&format!("session {r}")), "{}", e.text);
    assert!(app.lines(w).await.is_empty(), "nothing reached the worker");
    // Nor change its workflow.
    app.post(
        &format!("/v1/sessions/{w}/workflow"),
        json!({"kind": "none"}),
    )
    .await
    .expect_error(409, "boss_worker");
    // The root still takes the person's lines.
    app.post(
        &format!("/v1/sessions/{r}/messages"),
        json!({"body": "how is it going"}),
    )
    .await
    .expect(201);
    app.settle(r).await;
}

#[tokio::test]
async fn disabling_the_root_keeps_its_workers_dormant() {
    let app = TestApp::start().await;
    let r = root(&app).await;
    let w = spawn(&app, r, "code").await;
    let v = app
        .post(
            &format!("/v1/sessions/{r}/workflow"),
            json!({"kind": "none"}),
        )
        .await
        .expect(200);
    assert!(v["slot"].is_null(), "{v}");
    // BOSS-6: the worker and its slot remain; the tree is no longer live.
    let view = app.get(&format!("/v1/sessions/{w}")).await.expect(200);
    assert_eq!(view["workflow"]["role"], "worker");
    assert_eq!(view["archived"], false);
    app.get(&format!("/v1/boss/session/{r}/tree"))
        .await
        .expect_error(409, "not_boss");
    app.get(&format!("/v1/boss/session/{w}/tree"))
        .await
        .expect_error(409, "not_boss");
    app.post(
        &format!("/v1/boss/session/{r}/assign"),
        assignment(w, "t1", "write a.txt"),
    )
    .await
    .expect_error(409, "not_boss");
    // Still a worker: a person's line is refused there.
    app.post(&format!("/v1/sessions/{w}/messages"), json!({"body": "x"}))
        .await
        .expect_error(409, "boss_worker");
}
