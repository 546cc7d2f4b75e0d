//! `/v1/blueprint-loops` over HTTP: start a loop from a Blueprint, read it, refuse what is
//! wrong with the right status and code, cancel it (idempotently).

mod support;

use serde_json::json;
use support::TestApp;

fn blueprint_body() -> String {
    troupe_workflows::notes::blueprint::SECTIONS
        .iter()
        .map(|s| format!("## {s}\nDecided: {s}.\n"))
        .collect()
}

/// A Plan session whose Bot works slowly (its turn can be cancelled), and a Blueprint written
/// from it.
async fn setup(app: &TestApp) -> (i64, i64) {
    let bot = app
        .scripted_bot(
            "Builder",
            json!({"steps": [{"text": "working", "delay_ms": 60000}]}),
        )
        .await;
    let s = app.direct(bot).await;
    app.post(
        &format!("/v1/sessions/{s}/workflow"),
        json!({"kind": "plan"}),
    )
    .await
    .expect(200);
    let note = app
        .post(
            "/v1/notes",
            json!({"kind": "blueprint", "title": "Parser", "body": blueprint_body(), "session_id": s}),
        )
        .await
        .expect(201);
    (s, note["id"].as_i64().unwrap())
}

#[tokio::test]
async fn a_loop_is_started_read_listed_and_cancelled() {
    let app = TestApp::start().await;
    let (s, note) = setup(&app).await;
    let l = app
        .post(
            "/v1/blueprint-loops",
            json!({"session_id": s, "note_id": note, "note_version": 1, "instruction": "parser only", "max_iterations": 2}),
        )
        .await
        .expect(201);
    assert_eq!(l["status"], "running");
    assert_eq!(l["session_id"], s);
    assert_eq!(l["audit_agent"], "supervisor");
    assert_eq!(l["user_prompt"], "parser only");
    assert_eq!(l["run_mode"], "current");
    let id = l["id"].as_i64().unwrap();

    let wf = app
        .get(&format!("/v1/sessions/{s}/workflow"))
        .await
        .expect(200);
    assert_eq!(wf["kind"], serde_json::Value::Null, "Plan was cleared");
    assert_eq!(wf["blueprint"]["role"], "execution");
    assert_eq!(wf["blueprint"]["phase"], "running");
    assert_eq!(wf["blueprint_loop"]["id"], id);
    let n = app.get(&format!("/v1/notes/{note}")).await.expect(200);
    assert_eq!(
        (n["active_loop_id"].as_i64(), n["run_count"].as_i64()),
        (Some(id), Some(1))
    );

    assert_eq!(
        app.get(&format!("/v1/blueprint-loops/{id}"))
            .await
            .expect(200)["id"],
        id
    );
    let active = app.get("/v1/blueprint-loops?active=true").await.expect(200);
    assert_eq!(active.as_array().unwrap().len(), 1);

    let c = app
        .post(&format!("/v1/blueprint-loops/{id}/cancel"), json!({}))
        .await
        .expect(200);
    assert_eq!(c["status"], "cancelled");
    assert_eq!(c["error"], "stopped by user request");
    let again = app
        .post(&format!("/v1/blueprint-loops/{id}/cancel"), json!({}))
        .await
        .expect(200);
    assert_eq!(again["status"], "cancelled");
    assert_eq!(
        app.get("/v1/blueprint-loops?active=true").await.expect(200),
        json!([])
    );
    let wf = app
        .get(&format!("/v1/sessions/{s}/workflow"))
        .await
        .expect(200);
    assert_eq!(wf["blueprint"], serde_json::Value::Null, "bindings cleared");
    app.settle(s).await;
}

#[tokio::test]
async fn bad_requests_get_a_clear_error_and_write_nothing() {
    let app = TestApp::start().await;
    let (s, note) = setup(&app).await;
    let plain = app
        .post("/v1/notes", json!({"title": "n", "body": "b"}))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    app.post_raw("/v1/blueprint-loops", "{not json")
        .await
        .expect(400);
    for (body, needle) in [
        (
            json!({"session_id": s, "note_id": note, "colour": "red"}),
            "unknown field `colour`",
        ),
        (
            json!({"session_id": s, "note_id": plain}),
            "not a Blueprint",
        ),
        (json!({"session_id": s, "note_id": 9999}), "does not exist"),
        (
            json!({"session_id": s, "note_id": note, "run_mode": "later"}),
            "run_mode",
        ),
        (
            json!({"session_id": s, "note_id": note, "max_iterations": 0}),
            "max_iterations",
        ),
    ] {
        let a = app.post("/v1/blueprint-loops", body).await;
        assert_eq!(a.status, 422, "{needle}");
        assert!(a.message().contains(needle), "{needle}: {}", a.message());
    }
    app.post(
        "/v1/blueprint-loops",
        json!({"session_id": s, "note_id": note, "note_version": 5}),
    )
    .await
    .expect_error(409, "note_version_mismatch");
    app.post(
        "/v1/blueprint-loops",
        json!({"session_id": 4242, "note_id": note}),
    )
    .await
    .expect(404);
    app.post(
        "/v1/blueprint-loops",
        json!({"session_id": s, "note_id": note, "run_mode": "worktree"}),
    )
    .await
    .expect_error(409, "worktree_failed");
    assert_eq!(app.get("/v1/blueprint-loops").await.expect(200), json!([]));

    let first = app
        .post(
            "/v1/blueprint-loops",
            json!({"session_id": s, "note_id": note}),
        )
        .await
        .expect(201);
    app.post(
        "/v1/blueprint-loops",
        json!({"session_id": s, "note_id": note}),
    )
    .await
    .expect_error(409, "already_active");
    app.get("/v1/blueprint-loops/abc").await.expect(400);
    app.get("/v1/blueprint-loops/777").await.expect(404);
    app.post("/v1/blueprint-loops/777/cancel", json!({}))
        .await
        .expect(404);
    let id = first["id"].as_i64().unwrap();
    app.post(&format!("/v1/blueprint-loops/{id}/cancel"), json!({}))
        .await
        .expect(200);
    app.settle(s).await;
}
