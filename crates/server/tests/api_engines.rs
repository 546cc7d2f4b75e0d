//! Engines over HTTP (ADR 0085/0086): `GET /v1/settings/engines` lists the default and each
//! engine's steps, what it leaves off and how many conversations run it;
//! `PUT /v1/settings/default-engine` moves every conversation that never chose;
//! `PUT /v1/sessions/:id/engine {engine: null}` goes back to the default; `GET
//! /v1/tasks/:id/engine` says which engine a job runs under and why. Bad input is a 422 naming
//! the field, and nothing changes.

mod support;

use serde_json::json;
use support::TestApp;

#[tokio::test]
async fn engines_default_choice_and_a_jobs_engine_over_http() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Alpha", json!({"steps": [{"text": "on it"}]}))
        .await;
    let s = app.direct(bot).await;
    let plan = app.open_job(s, "Poster").0;

    let all = app.get("/v1/settings/engines").await.expect(200);
    assert_eq!(all["default_engine"], "general");
    let general = &all["engines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["engine"] == "general")
        .unwrap()
        .clone();
    assert_eq!(general["steps_off"], json!(["reflection", "scribe"]));
    assert_eq!(general["steps"]["retrospective"], true);
    assert_eq!(general["conversations"], 1);

    let job = app
        .get(&format!("/v1/tasks/{plan}/engine"))
        .await
        .expect(200);
    assert_eq!(
        (job["engine"].as_str(), job["why"].as_str()),
        (Some("general"), Some("default"))
    );
    assert_eq!(job["why_text"], "Settings' default");

    // The default moves the conversation that never chose, and its job.
    let all = app
        .put("/v1/settings/default-engine", json!({"engine": "video"}))
        .await
        .expect(200);
    assert_eq!(all["default_engine"], "video");
    let e = app
        .get(&format!("/v1/sessions/{s}/engine"))
        .await
        .expect(200);
    assert_eq!(
        (e["engine"].as_str(), e["chosen"].as_bool()),
        (Some("video"), Some(false))
    );
    let job = app
        .get(&format!("/v1/tasks/{plan}/engine"))
        .await
        .expect(200);
    assert_eq!(job["engine"], "video");

    // Chosen, then back to the default with null.
    let e = app
        .put(
            &format!("/v1/sessions/{s}/engine"),
            json!({"engine": "coding"}),
        )
        .await
        .expect(200);
    assert_eq!(
        (e["engine"].as_str(), e["chosen"].as_bool()),
        (Some("coding"), Some(true))
    );
    let job = app
        .get(&format!("/v1/tasks/{plan}/engine"))
        .await
        .expect(200);
    assert_eq!(
        (job["engine"].as_str(), job["why"].as_str()),
        (Some("coding"), Some("conversation"))
    );
    assert_eq!(job["session_id"], s);
    assert_eq!(job["why_text"], "Its conversation runs coding");
    let e = app
        .put(&format!("/v1/sessions/{s}/engine"), json!({"engine": null}))
        .await
        .expect(200);
    assert_eq!(
        (e["engine"].as_str(), e["chosen"].as_bool()),
        (Some("video"), Some(false))
    );

    // Refused, nothing changes.
    app.put("/v1/settings/default-engine", json!({"engine": "radio"}))
        .await
        .expect_error(422, "invalid");
    app.put(
        "/v1/settings/default-engine",
        json!({"engine": "video", "also": 1}),
    )
    .await
    .expect_error(422, "invalid");
    app.put("/v1/settings/default-engine", json!({}))
        .await
        .expect(422);
    assert_eq!(
        app.get("/v1/settings/engines").await.expect(200)["default_engine"],
        "video"
    );
    app.get("/v1/tasks/9999/engine")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tasks/x/engine").await.expect(400);
}
