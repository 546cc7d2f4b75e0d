//! `/v1/sessions/:id/workflow`, `/continue` and `/abandon` over HTTP.

mod support;

use serde_json::json;
use support::TestApp;
use troupe_engine::StreamNotice;

async fn session(app: &TestApp, steps: serde_json::Value) -> i64 {
    let bot = app.scripted_bot("Planner", json!({"steps": steps})).await;
    app.direct(bot).await
}

#[tokio::test]
async fn plan_is_enabled_shown_and_disabled() {
    let app = TestApp::start().await;
    let s = session(&app, json!([{"text": "ok"}])).await;
    let v = app
        .get(&format!("/v1/sessions/{s}/workflow"))
        .await
        .expect(200);
    assert!(v["kind"].is_null(), "{v}");

    let v = app
        .post(
            &format!("/v1/sessions/{s}/workflow"),
            json!({"kind": "plan"}),
        )
        .await
        .expect(200);
    assert_eq!(v["kind"], "plan");
    assert_eq!(v["changed"], true);
    assert_eq!(v["slot"], json!({"kind": "plan"}));
    let view = app.get(&format!("/v1/sessions/{s}")).await.expect(200);
    assert_eq!(view["workflow"], json!({"kind": "plan"}));

    let v = app
        .post(
            &format!("/v1/sessions/{s}/workflow"),
            json!({"kind": "none"}),
        )
        .await
        .expect(200);
    assert!(v["kind"].is_null());
}

#[tokio::test]
async fn lightloop_needs_instructions_and_one_kind_at_a_time() {
    let app = TestApp::start().await;
    let s = session(&app, json!([{"text": "ok"}])).await;
    let path = format!("/v1/sessions/{s}/workflow");
    app.post(&path, json!({"kind": "lightloop"}))
        .await
        .expect_error(422, "invalid");
    app.post(&path, json!({"kind": "lightloop", "instructions": "  "}))
        .await
        .expect_error(422, "invalid");
    app.post(&path, json!({"kind": "crew"}))
        .await
        .expect_error(422, "invalid");
    app.post(&path, json!({"kind": "plan", "instructions": "x"}))
        .await
        .expect_error(422, "invalid");
    app.post(&path, json!({"kind": "plan", "bogus": 1}))
        .await
        .expect_error(422, "invalid");
    app.post_raw(&path, "{")
        .await
        .expect_error(400, "bad_request");

    let v = app
        .post(
            &path,
            json!({"kind": "lightloop", "instructions": "write it", "max_iterations": 3}),
        )
        .await
        .expect(200);
    assert_eq!(v["phase"], "executing");
    assert_eq!(v["slot"]["max_iterations"], 3);
    app.post(&path, json!({"kind": "plan"}))
        .await
        .expect_error(409, "workflow_active");

    let v = app.post(&path, json!({"kind": "none"})).await.expect(200);
    assert_eq!(v["last_terminal"]["status"], "cancelled");
}

#[tokio::test]
async fn workflow_changes_are_refused_while_running() {
    let app = TestApp::start().await;
    let s = session(
        &app,
        json!([{"text": "a long answer that streams slowly", "chunks": 200, "chunk_delay_ms": 50}]),
    )
    .await;
    app.post(&format!("/v1/sessions/{s}/messages"), json!({"body": "go"}))
        .await
        .expect(201);
    app.post(
        &format!("/v1/sessions/{s}/workflow"),
        json!({"kind": "plan"}),
    )
    .await
    .expect_error(409, "session_running");

    // In a direct, `bot_id` may name its Bot, and nothing else.
    let bot = app.get(&format!("/v1/sessions/{s}")).await.expect(200)["bot_ids"][0].clone();
    for q in ["bot_id=999", "bot_id=abc"] {
        let r = app
            .post(&format!("/v1/sessions/{s}/continue?{q}"), json!({}))
            .await;
        r.expect_error(422, "invalid");
        assert!(r.message().starts_with("bot_id:"), "{q}: {}", r.message());
    }
    // Continue never drives a running session; it says what happened.
    let c = app
        .post(
            &format!("/v1/sessions/{s}/continue?bot_id={bot}"),
            json!({}),
        )
        .await
        .expect(200);
    assert_eq!(c["drive"]["outcome"], "not_handled", "{c}");
    assert_eq!(c["drive"]["refusal"], "running", "{c}");

    let a = app
        .post(&format!("/v1/sessions/{s}/abandon"), json!({}))
        .await
        .expect(200);
    assert_eq!(a["changed"], true, "{a}");
    assert!(a["stopped_run_id"].is_number(), "{a}");
    assert_eq!(a["latch_cleared"], true, "{a}");
    let again = app
        .post(&format!("/v1/sessions/{s}/abandon"), json!({}))
        .await
        .expect(200);
    assert_eq!(again["changed"], false, "{again}");
    let view = app.get(&format!("/v1/sessions/{s}")).await.expect(200);
    assert!(view["paused"].is_null(), "{view}");
    assert_eq!(view["running"], false);
}

/// A composer Stop is a hold, not the pause latch (StopMode::Hold writes none): the session
/// shows no pause, and the person's next line lifts the hold and the Bot goes on.
#[tokio::test]
async fn a_stop_is_a_hold_not_the_pause_latch() {
    let app = TestApp::start().await;
    let s = session(
        &app,
        json!([
            {"text": "a long answer that streams slowly", "chunks": 200, "chunk_delay_ms": 50},
            {"text": "resumed and finished"}
        ]),
    )
    .await;
    let mut stream = app.state.collab.engine().subscribe_stream();
    app.post(&format!("/v1/sessions/{s}/messages"), json!({"body": "go"}))
        .await
        .expect(201);
    // The stop must land in the first reply (the script's first step), not before its call.
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while !matches!(stream.recv().await, Ok(StreamNotice::TextDelta { .. })) {}
    })
    .await
    .expect("no text streamed within 20 s");
    let stopped = app
        .post("/v1/turns/stop", json!({"session_id": s}))
        .await
        .expect(200);
    app.settle(s).await;
    let view = app.get(&format!("/v1/sessions/{s}")).await.expect(200);
    assert!(view["paused"].is_null(), "{view}");
    let hold = app
        .get(&format!("/v1/holds/{}", stopped["hold_id"]))
        .await
        .expect(200);
    assert_eq!(hold["status"], "in_force", "{hold}");

    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "go on"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "resumed and finished")
        .await;
    app.settle(s).await;
    let view = app.get(&format!("/v1/sessions/{s}")).await.expect(200);
    assert!(view["paused"].is_null(), "{view}");
    let hold = app
        .get(&format!("/v1/holds/{}", stopped["hold_id"]))
        .await
        .expect(200);
    assert_eq!(hold["status"], "lifted", "{hold}");
}

#[tokio::test]
async fn unknown_sessions_and_bad_ids() {
    let app = TestApp::start().await;
    for path in [
        "/v1/sessions/999/workflow",
        "/v1/sessions/999/continue",
        "/v1/sessions/999/abandon",
    ] {
        let a = if path.ends_with("workflow") {
            app.get(path).await
        } else {
            app.post(path, json!({})).await
        };
        a.expect_error(404, "not_found");
    }
    app.post("/v1/sessions/999/workflow", json!({"kind": "plan"}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/sessions/abc/workflow")
        .await
        .expect_error(400, "bad_request");
    app.post("/v1/sessions/abc/abandon", json!({}))
        .await
        .expect_error(400, "bad_request");
}
