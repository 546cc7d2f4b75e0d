//! `/v1/child-tasks` over HTTP: child tasks a session's Bot started with the `task` tool, listed by
//! parent session or thread, read, and cancelled.

mod support;

use serde_json::{Value, json};
use support::{TestApp, wait_until};

/// A lead Bot that hands one task to `worker`, and a direct session with it; returns the
/// session once the task exists.
async fn lead_with_task(app: &TestApp, worker_script: Value) -> (i64, Value) {
    app.scripted_bot("Worker", worker_script).await;
    let lead = app
        .scripted_bot(
            "Lead",
            json!({
                "steps": [
                    {"tool_calls": [{"name": "task", "arguments": {"agent": "worker", "prompt": "count the files", "description": "count", "output": {"kind": "final"}}}]},
                    {"text": "asked the worker"}
                ],
                "on_exhausted": "repeat_last"
            }),
        )
        .await;
    let s = app.direct(lead).await;
    app.post(&format!("/v1/sessions/{s}/messages"), json!({"body": "go"}))
        .await
        .expect(201);
    let task = wait_until("the task", || async {
        let list = app
            .get(&format!("/v1/child-tasks?parent_session={s}"))
            .await
            .expect(200);
        list.as_array().unwrap().first().cloned()
    })
    .await;
    (s, task)
}

async fn status_of(app: &TestApp, id: i64) -> String {
    app.get(&format!("/v1/child-tasks/{id}")).await.expect(200)["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn tasks_are_listed_by_parent_read_and_cancelled() {
    let app = TestApp::start().await;
    // The worker's answer takes a minute: long enough to be cancelled while it runs.
    let (s, task) = lead_with_task(
        &app,
        json!({"steps": [{"text": "3 files", "delay_ms": 60000}]}),
    )
    .await;
    let id = task["id"].as_i64().unwrap();
    assert_eq!(task["agent"], "Worker");
    assert_eq!(task["description"], "count");
    assert_eq!(task["output_contract"], json!({"kind": "final"}));
    assert_eq!(task["role"], "task");
    wait_until("the task to run", || async {
        (status_of(&app, id).await == "running").then_some(())
    })
    .await;

    let one = app
        .get(&format!("/v1/child-tasks/task_{id}"))
        .await
        .expect(200);
    assert_eq!(one["child_thread_id"], task["child_thread_id"]);
    let parent = task["parent_thread_id"].as_i64().unwrap();
    let by_thread = app
        .get(&format!("/v1/child-tasks?parent_thread={parent}"))
        .await
        .expect(200);
    assert_eq!(by_thread.as_array().unwrap().len(), 1);
    assert_eq!(by_thread[0]["id"], id);

    let cancelled = app
        .post(&format!("/v1/child-tasks/{id}/cancel"), json!({}))
        .await
        .expect(200);
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["error"], "cancelled by request");
    // The child's run was aborted, not left to finish.
    let child = troupe_core::ThreadId(cancelled["child_thread_id"].as_i64().unwrap());
    assert!(!app.state.collab.engine().is_running(child));
    // Idempotent.
    let again = app
        .post(&format!("/v1/child-tasks/{id}/cancel"), json!({}))
        .await
        .expect(200);
    assert_eq!(again["status"], "cancelled");
    assert_eq!(again["updated_at"], cancelled["updated_at"]);
    // The parent was told (a steer item it has read, or will read, in its conversation).
    let parent_thread = troupe_core::ThreadId(parent);
    wait_until("the parent told", || async {
        let msgs = app
            .state
            .collab
            .store()
            .read(|tx| tx.messages(parent_thread, None, 100))
            .unwrap();
        let items = app
            .state
            .collab
            .store()
            .read(|tx| tx.inbox(parent_thread))
            .unwrap();
        let told = msgs
            .iter()
            .any(|m| m.text().contains("cancelled by request"))
            || items
                .iter()
                .any(|i| i.text.contains("cancelled by request"));
        told.then_some(())
    })
    .await;
    app.settle(s).await;
}

#[tokio::test]
async fn a_finished_task_is_a_conflict_to_cancel_and_bad_requests_say_why() {
    let app = TestApp::start().await;
    let (s, task) = lead_with_task(&app, json!({"steps": [{"text": "3 files"}]})).await;
    let id = task["id"].as_i64().unwrap();
    wait_until("the task to complete", || async {
        (status_of(&app, id).await == "completed").then_some(())
    })
    .await;
    let done = app.get(&format!("/v1/child-tasks/{id}")).await.expect(200);
    assert_eq!(done["output_text"], "3 files");
    app.post(&format!("/v1/child-tasks/{id}/cancel"), json!({}))
        .await
        .expect_error(409, "task_finished");

    app.get("/v1/child-tasks/999")
        .await
        .expect_error(404, "not_found");
    app.post("/v1/child-tasks/999/cancel", json!({}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/child-tasks/abc")
        .await
        .expect_error(400, "bad_request");
    app.get("/v1/child-tasks")
        .await
        .expect_error(422, "invalid");
    app.get(&format!(
        "/v1/child-tasks?parent_session={s}&parent_thread=1"
    ))
    .await
    .expect_error(422, "invalid");
    app.get("/v1/child-tasks?parent_session=999")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/child-tasks?parent_thread=nope")
        .await
        .expect_error(422, "invalid");
    app.settle(s).await;
}
