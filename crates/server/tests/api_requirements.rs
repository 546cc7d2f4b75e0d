//! `/v1/tasks/:id/requirements` and `/v1/requirements/:id/action` over HTTP: the job's
//! entries in RL-19's groups with their buttons, a press on the version seen, `409
//! requirement_changed` on a stale one, `422 action_not_offered`, 404s; and the engine-step
//! switches `/v1/settings/engine-steps` and `/v1/sessions/:id/engine`.

mod support;

use serde_json::json;
use support::TestApp;
use troupe_collab::OpenPlan;
use troupe_core::plan::RevisionCause;
use troupe_core::requirement::{Polarity, Scope, SourceKind, State};
use troupe_core::{PlanId, SessionId, SessionMessageId};
use troupe_store::NewRequirement;

/// A job opened on a person's line in a direct, and an entry to confirm standing on a later
/// line of it.
async fn job_with_entry(app: &TestApp) -> (i64, i64, i64) {
    let bot = app
        .scripted_bot("Alpha", json!({"steps": [{"text": "on it"}]}))
        .await;
    let s = app.direct(bot).await;
    let line = app
        .post(
            &format!("/v1/sessions/{s}/messages"),
            json!({"body": "cut a trailer, and the hands look fake"}),
        )
        .await
        .expect(201);
    let line = SessionMessageId(line["id"].as_i64().unwrap());
    let plan = app
        .state
        .collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: Some(line),
            title: None,
            cause: RevisionCause::Message(line),
        })
        .unwrap()
        .id;
    let entry = app
        .state
        .collab
        .store()
        .write(|tx| {
            tx.add_requirement(&NewRequirement {
                plan_id: plan,
                ticket_id: None,
                session_id: Some(SessionId(s)),
                scope: Scope::Job,
                quote: "the hands look fake".into(),
                source_kind: SourceKind::ComplaintWhole,
                source_message_id: Some(line),
                source_quote_id: None,
                restatement: String::new(),
                category: None,
                nature: None,
                polarity: Polarity::Must,
                number: None,
                state: State::ToConfirm,
                replaces_id: None,
                said_at: 1,
            })
        })
        .unwrap();
    (s, plan.0, entry.id.0)
}

#[tokio::test]
async fn api_requirements_grouped_pressed_and_refused() {
    let app = TestApp::start().await;
    let (_, plan, id) = job_with_entry(&app).await;

    let view = app
        .get(&format!("/v1/tasks/{plan}/requirements"))
        .await
        .expect(200);
    assert_eq!(view["needs_a_look"], 1);
    assert_eq!(view["groups"][0]["group"], "waiting");
    let e = &view["groups"][0]["entries"][0];
    assert_eq!(e["label"], format!("R-{id}"));
    assert_eq!(e["source_kind"], "complaint_whole");
    assert_eq!(e["actions"], json!(["confirm", "not_a_requirement"]));
    let version = e["version"].as_i64().unwrap();

    // A button it does not offer: 422, nothing written.
    app.post(
        &format!("/v1/requirements/{id}/action"),
        json!({"action": "no_longer_holds", "version": version}),
    )
    .await
    .expect_error(422, "action_not_offered");
    // A version the entry has moved on from: 409.
    app.post(
        &format!("/v1/requirements/R-{id}/action"),
        json!({"action": "confirm", "version": version + 1}),
    )
    .await
    .expect_error(409, "requirement_changed");

    let pressed = app
        .post(
            &format!("/v1/requirements/R-{id}/action"),
            json!({"action": "confirm", "version": version}),
        )
        .await
        .expect(200);
    assert_eq!(pressed["state"], "in_force");
    assert_eq!(pressed["version"], version + 1);
    assert_eq!(
        pressed["actions"],
        json!(["no_longer_holds", "whole_conversation"])
    );
    // The same press again, on the old version: the entry changed since.
    app.post(
        &format!("/v1/requirements/{id}/action"),
        json!({"action": "confirm", "version": version}),
    )
    .await
    .expect_error(409, "requirement_changed");
    let steps = app
        .state
        .collab
        .store()
        .read(|tx| tx.requirement_steps(troupe_core::ids::RequirementId(id)))
        .unwrap();
    assert_eq!(steps.last().unwrap().0, "confirmed");
    let view = app
        .get(&format!("/v1/tasks/{plan}/requirements"))
        .await
        .expect(200);
    assert_eq!(view["groups"][0]["group"], "own");
    assert_eq!(view["needs_a_look"], 0);
}

#[tokio::test]
async fn api_requirements_404s_and_malformed_presses() {
    let app = TestApp::start().await;
    let (_, plan, id) = job_with_entry(&app).await;
    app.get("/v1/tasks/9999/requirements")
        .await
        .expect_error(404, "not_found");
    app.post(
        "/v1/requirements/9999/action",
        json!({"action": "confirm", "version": 1}),
    )
    .await
    .expect_error(404, "not_found");
    app.post(
        &format!("/v1/requirements/{id}/action"),
        json!({"action": "confirm", "version": 1, "task_id": 9999}),
    )
    .await
    .expect_error(404, "not_found");
    for bad in [
        json!({"action": "delete", "version": 1}),
        json!({"action": "confirm"}),
        json!({"action": "confirm", "version": "one"}),
        json!({"action": "confirm", "version": 1, "colour": "red"}),
    ] {
        let a = app
            .post(&format!("/v1/requirements/{id}/action"), bad.clone())
            .await;
        assert_eq!(a.status.as_u16(), 422, "{bad}");
    }
    app.post(
        "/v1/requirements/abc/action",
        json!({"action": "confirm", "version": 1}),
    )
    .await
    .expect_error(400, "bad_request");
    // Nothing above moved the entry.
    let view = app
        .get(&format!("/v1/tasks/{plan}/requirements"))
        .await
        .expect(200);
    assert_eq!(view["groups"][0]["entries"][0]["version"], 1);
    let _ = PlanId(plan);
}

#[tokio::test]
async fn api_engine_steps_and_a_sessions_engine() {
    let app = TestApp::start().await;
    let (s, _, _) = job_with_entry(&app).await;
    let steps = app.get("/v1/settings/engine-steps").await.expect(200);
    assert_eq!(
        steps,
        json!({
            "coding": {"reflection": true, "retrospective": true, "scribe": false},
            "general": {"reflection": false, "retrospective": true, "scribe": false},
            "video": {"reflection": true, "retrospective": true, "scribe": true}
        })
    );
    let steps = app
        .put(
            "/v1/settings/engine-steps",
            json!({"general": {"scribe": true}}),
        )
        .await
        .expect(200);
    assert_eq!(steps["general"]["scribe"], true);
    assert_eq!(steps["video"]["scribe"], true);
    app.put(
        "/v1/settings/engine-steps",
        json!({"radio": {"scribe": true}}),
    )
    .await
    .expect_error(422, "invalid");
    app.put(
        "/v1/settings/engine-steps",
        json!({"video": {"organizer": true}}),
    )
    .await
    .expect_error(422, "invalid");
    app.put(
        "/v1/settings/engine-steps",
        json!({"video": {"scribe": "yes"}}),
    )
    .await
    .expect(422);

    let e = app
        .get(&format!("/v1/sessions/{s}/engine"))
        .await
        .expect(200);
    assert_eq!(e["engine"], "general");
    let e = app
        .put(
            &format!("/v1/sessions/{s}/engine"),
            json!({"engine": "video"}),
        )
        .await
        .expect(200);
    assert_eq!(e["engine"], "video");
    app.put(
        &format!("/v1/sessions/{s}/engine"),
        json!({"engine": "radio"}),
    )
    .await
    .expect_error(422, "invalid");
    app.put("/v1/sessions/9999/engine", json!({"engine": "video"}))
        .await
        .expect_error(404, "not_found");
}
