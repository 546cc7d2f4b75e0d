//! Boss Mode scenarios (the digest's §7.8) at runtime: a real engine and store, one queued model
//! answering the root and its workers in turn.

mod support;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::{Reply, World, call, tool_results, user_texts, world, world_on};
use troupe_core::SessionId;
use troupe_core::thread::Interaction;
use troupe_workflows::boss::{AssignRequest, CancelRequest, SpawnRequest};
use troupe_workflows::{SetWorkflowRequest, WorkflowError};

fn boss() -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "boss".into(),
        instructions: Some("keep it small".into()),
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

fn none() -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "none".into(),
        instructions: None,
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

fn spawn(role: &str) -> SpawnRequest {
    SpawnRequest {
        role: role.into(),
        agent: None,
        instructions: None,
        workspace: None,
    }
}

fn assign(worker: SessionId, task_id: &str, task: &str) -> AssignRequest {
    AssignRequest {
        worker_session_id: worker,
        task_id: task_id.into(),
        task: task.into(),
        context: None,
        acceptance: vec!["it works".into()],
    }
}

fn code(e: WorkflowError) -> &'static str {
    match e {
        WorkflowError::Conflict { code, .. } => code,
        other => panic!("not a conflict: {other}"),
    }
}

async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A root that has talked with the person once (a report is a steer: it joins the root's
/// conversation), and one worker.
async fn root_with_worker(w: &World) -> (SessionId, SessionId) {
    let root = w.session();
    w.wf.set_workflow(root, boss()).await.unwrap();
    w.turn(root, "build the thing").await;
    let worker =
        w.wf.boss()
            .spawn(root, spawn("code"))
            .await
            .unwrap()
            .session_id;
    (root, worker)
}

#[tokio::test]
async fn spawn_worker() {
    let w = world();
    let (root, worker) = root_with_worker(&w).await;
    let view = w.wf.workflow(root).unwrap();
    assert_eq!(
        view.slot,
        Some(json!({"kind": "boss", "role": "boss", "instructions": "keep it small"}))
    );
    let wt = w.thread(worker);
    let t = w.wf.store().read(|tx| tx.thread(wt)).unwrap();
    assert_eq!(
        t.parent_id,
        Some(w.thread(root)),
        "the worker's thread is the root's child"
    );
    assert_eq!(t.interaction, Interaction::Unattended);
    assert_eq!(
        t.workflow,
        Some(
            json!({"kind": "boss", "role": "worker", "worker_role": "code", "root_session_id": root.0})
        )
    );
    // A person cannot change a worker's workflow.
    let e = w.wf.set_workflow(worker, none()).await.unwrap_err();
    assert_eq!(code(e), "boss_worker");
    // Workers spawn workers; the tree is read from parents and slots.
    let grandchild = w.wf.boss().spawn(worker, spawn("test")).await.unwrap();
    assert_eq!(grandchild.root_session_id, root);
    let tree = w.wf.boss().tree(root, None).unwrap();
    assert_eq!(tree.children.len(), 1);
    assert_eq!(
        tree.children[0].children[0].session_id,
        grandchild.session_id.0
    );
    // Unknown roles and Bots are refused with nothing written.
    let e = w.wf.boss().spawn(root, spawn("  ")).await.unwrap_err();
    assert!(e.to_string().starts_with("invalid_role"), "{e}");
    let mut unknown = spawn("x");
    unknown.agent = Some("Nobody".into());
    let e = w.wf.boss().spawn(root, unknown).await.unwrap_err();
    assert!(e.to_string().starts_with("unknown_agent"), "{e}");
    assert_eq!(w.wf.boss().tree(root, None).unwrap().children.len(), 1);
}

#[tokio::test]
async fn assign_twice_once() {
    let w = world();
    let (root, worker) = root_with_worker(&w).await;
    w.provider.push(Reply::Tools(vec![call(
        "r1",
        "boss_report",
        json!({"summary": "done"}),
    )]));
    let first =
        w.wf.boss()
            .assign(root, assign(worker, "t1", "write a.txt"))
            .await
            .unwrap();
    let again =
        w.wf.boss()
            .assign(root, assign(worker, "t1", "write a.txt"))
            .await
            .unwrap();
    assert!(first.delivered);
    assert!(!again.delivered, "BOSS-2: a task id delivers once");
    w.idle(worker).await;
    let wt = w.thread(worker);
    let roots: Vec<_> =
        w.wf.store()
            .read(|tx| tx.messages(wt, None, 100))
            .unwrap()
            .into_iter()
            .filter(|m| m.is_root)
            .collect();
    assert_eq!(roots.len(), 1, "one task reached the worker");
    assert!(roots[0].text().contains("Acceptance criteria:\n- it works"));
    let e =
        w.wf.boss()
            .assign(root, assign(worker, "bad id", "x"))
            .await
            .unwrap_err();
    assert!(e.to_string().starts_with("invalid_task_id"), "{e}");
}

#[tokio::test]
async fn unreported_worker_nudged() {
    let w = world();
    let (root, worker) = root_with_worker(&w).await;
    // The worker answers in prose first (no report): it is nudged, then reports.
    w.provider.push(Reply::Text("I wrote it".into()));
    w.provider.push(Reply::Tools(vec![call(
        "r1",
        "boss_report",
        json!({"summary": "a.txt written", "status": "completed", "refs": ["a.txt"]}),
    )]));
    w.wf.boss()
        .assign(root, assign(worker, "t1", "write a.txt"))
        .await
        .unwrap();
    let rt = w.thread(root);
    until("the root to get the report", || {
        w.wf.store()
            .read(|tx| tx.messages(rt, None, 100))
            .unwrap()
            .iter()
            .any(|m| m.text().contains("Status: completed"))
    })
    .await;
    w.idle(worker).await;
    w.idle(root).await;
    let requests = w.provider.requests();
    let nudged = requests.iter().any(|q| {
        user_texts(q)
            .iter()
            .any(|t| t.contains("Your assignment t1 has no report yet"))
    });
    assert!(nudged, "the worker was asked to continue or report");
    let report =
        w.wf.store()
            .read(|tx| tx.messages(rt, None, 100))
            .unwrap()
            .into_iter()
            .find(|m| m.text().contains("Status: completed"))
            .unwrap();
    assert!(report.text().contains("References:\n- a.txt"));
    assert!(
        !report.is_root,
        "a report is a steer, never a wrapped request (BOSS-7)"
    );
    // After the report, the worker gets no further nudge (its latest assignment is reported).
    let nudges = requests
        .iter()
        .filter(|q| {
            user_texts(q)
                .last()
                .is_some_and(|t| t.contains("has no report yet"))
        })
        .count();
    assert_eq!(nudges, 1);
}

#[tokio::test]
async fn grandchild_refused() {
    let w = world();
    let (root, worker) = root_with_worker(&w).await;
    let g =
        w.wf.boss()
            .spawn(worker, spawn("test"))
            .await
            .unwrap()
            .session_id;
    let e =
        w.wf.boss()
            .assign(root, assign(g, "t1", "x"))
            .await
            .unwrap_err();
    assert_eq!(code(e), "not_direct_child");
    let e =
        w.wf.boss()
            .cancel(
                root,
                CancelRequest {
                    worker_session_id: g,
                    task_id: None,
                },
            )
            .await
            .unwrap_err();
    assert_eq!(code(e), "not_direct_child");
    // A session outside any tree is no caller at all.
    let outsider = w.session();
    let e =
        w.wf.boss()
            .assign(outsider, assign(worker, "t1", "x"))
            .await
            .unwrap_err();
    assert_eq!(code(e), "not_boss");
}

#[tokio::test]
async fn disabled_root_dormant() {
    let w = world();
    let (root, worker) = root_with_worker(&w).await;
    // The worker's task turn reports after the root was disabled: refused, and no nudge.
    let gate = Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(gate.clone()));
    w.wf.boss()
        .assign(root, assign(worker, "t1", "write a.txt"))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), gate.notified())
        .await
        .unwrap();
    w.wf.engine()
        .stop(w.thread(worker), troupe_engine::StopMode::Internal)
        .await
        .unwrap();
    w.idle(worker).await;
    w.wf.set_workflow(root, none()).await.unwrap();
    assert!(
        w.wf.workflow(worker).unwrap().slot.is_some(),
        "workers are kept (BOSS-6)"
    );
    let calls = w.provider.calls();
    w.provider.push(Reply::Tools(vec![call(
        "r1",
        "boss_report",
        json!({"summary": "done"}),
    )]));
    w.say(worker, "go on").await;
    w.idle(worker).await;
    let results: Vec<String> = w
        .provider
        .requests()
        .iter()
        .flat_map(tool_results)
        .collect();
    assert!(
        results.iter().any(|r| r.contains("not_boss")),
        "{results:?}"
    );
    let later = w.provider.requests()[calls..]
        .iter()
        .filter(|q| {
            user_texts(q)
                .iter()
                .any(|t| t.contains("has no report yet"))
        })
        .count();
    assert_eq!(later, 0, "a dormant worker is not nudged (BOSS-5)");
}

#[tokio::test]
async fn cancel_by_task() {
    let w = world();
    let (root, worker) = root_with_worker(&w).await;
    let gate = Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(gate.clone()));
    w.wf.boss()
        .assign(root, assign(worker, "t1", "long job"))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), gate.notified())
        .await
        .unwrap();
    w.wf.boss()
        .assign(root, assign(worker, "t2", "next job"))
        .await
        .unwrap();
    let r =
        w.wf.boss()
            .cancel(
                root,
                CancelRequest {
                    worker_session_id: worker,
                    task_id: Some("t2".into()),
                },
            )
            .await
            .unwrap();
    assert_eq!(
        (r.cancelled, r.removed),
        (false, 1),
        "t2 removed, t1 goes on"
    );
    assert!(w.wf.engine().is_running(w.thread(worker)));
    w.wf.boss()
        .assign(root, assign(worker, "t3", "another"))
        .await
        .unwrap();
    let r =
        w.wf.boss()
            .cancel(
                root,
                CancelRequest {
                    worker_session_id: worker,
                    task_id: None,
                },
            )
            .await
            .unwrap();
    assert_eq!((r.cancelled, r.removed), (true, 1));
    w.idle(worker).await;
    assert!(!w.wf.engine().is_running(w.thread(worker)));
    assert!(
        w.wf.workflow(worker).unwrap().paused.is_none(),
        "an internal cancel latches nothing"
    );
}

#[tokio::test]
async fn queued_assignment_after_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let root = before.session();
    before.wf.set_workflow(root, boss()).await.unwrap();
    before.turn(root, "build the thing").await;
    let worker = before
        .wf
        .boss()
        .spawn(root, spawn("code"))
        .await
        .unwrap()
        .session_id;
    // The assignment is queued, then the process dies before the worker runs it.
    let wt = before.thread(worker);
    before
        .wf
        .store()
        .write(|tx| {
            tx.deliver(
                wt,
                &troupe_core::inbox::Delivery {
                    mode: troupe_core::inbox::InboxMode::Task,
                    priority: troupe_core::inbox::Priority::DELEGATION_RESULT,
                    origin: troupe_core::message::Origin::System("boss_assign".into()),
                    text: "write a.txt".into(),
                    visible: true,
                    delivery_key: Some(format!("boss:{}:t1", root.0)),
                    order_key: None,
                    defers_calls: false,
                },
            )
        })
        .unwrap();
    drop(before);
    let after = world_on(dir.clone(), "boot-2");
    after.provider.push(Reply::Tools(vec![call(
        "r1",
        "boss_report",
        json!({"summary": "written"}),
    )]));
    after.wf.engine().recover().await.unwrap();
    let t = after.wf.store().read(|tx| tx.thread(wt)).unwrap();
    assert!(t.paused.is_none(), "an unattended worker is never latched");
    let rt = after.thread(root);
    until(
        "the boot wake to run the assignment and its report to reach the root",
        || {
            after
                .wf
                .store()
                .read(|tx| tx.messages(rt, None, 100))
                .unwrap()
                .iter()
                .any(|m| m.text().contains("Status: completed"))
        },
    )
    .await;
    after.idle(worker).await;
    after.idle(root).await;
    let tree = after.wf.boss().tree(root, None).unwrap();
    assert_eq!(
        tree.children[0].current_task.as_ref().unwrap().task_id,
        "t1"
    );
}

#[tokio::test]
async fn a_worker_that_only_answers_in_prose_is_nudged_only_until_the_guard_stops_it() {
    let w = world();
    let (root, worker) = root_with_worker(&w).await;
    // The model never reports: every turn ends in prose ("done").
    w.wf.boss()
        .assign(root, assign(worker, "t1", "write a.txt"))
        .await
        .unwrap();
    until("the continuation guard to stop the nudges", || {
        w.wf.workflow(worker)
            .unwrap()
            .guard
            .is_some_and(|g| g.loop_ref == "boss_worker" && g.paused.is_some())
    })
    .await;
    w.idle(worker).await;
    let calls = w.provider.calls();
    w.wf.engine()
        .request_drive(w.thread(worker), "test", false)
        .await
        .unwrap();
    w.idle(worker).await;
    assert_eq!(
        w.provider.calls(),
        calls,
        "no further nudge once the guard paused"
    );
}
