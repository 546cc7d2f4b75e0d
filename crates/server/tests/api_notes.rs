//! `/v1/notes` over HTTP: versioned notes, and Blueprints written only from a Plan session.

mod support;

use serde_json::json;
use support::TestApp;

fn blueprint_body() -> String {
    troupe_workflows::notes::blueprint::SECTIONS
        .iter()
        .map(|s| format!("## {s}\nDecided: {s}.\n"))
        .collect()
}

async fn plan_session(app: &TestApp) -> i64 {
    let bot = app
        .scripted_bot("Planner", json!({"steps": [{"text": "ok"}]}))
        .await;
    let s = app.direct(bot).await;
    app.post(
        &format!("/v1/sessions/{s}/workflow"),
        json!({"kind": "plan"}),
    )
    .await
    .expect(200);
    s
}

#[tokio::test]
async fn notes_are_created_read_searched_and_edited_by_version() {
    let app = TestApp::start().await;
    let n = app
        .post(
            "/v1/notes",
            json!({"title": "Groceries", "body": "milk, eggs"}),
        )
        .await
        .expect(201);
    assert_eq!(n["kind"], "note");
    assert_eq!(n["version"], 1);
    let id = n["id"].as_i64().unwrap();
    assert_eq!(app.get(&format!("/v1/notes/{id}")).await.expect(200), n);
    assert_eq!(
        app.get(&format!("/v1/notes/note_{id}")).await.expect(200),
        n
    );

    let found = app.get("/v1/notes?q=EGGS").await.expect(200);
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(app.get("/v1/notes?q=bread").await.expect(200), json!([]));
    assert_eq!(
        app.get("/v1/notes?kind=blueprint").await.expect(200),
        json!([])
    );

    let edited = app
        .patch(
            &format!("/v1/notes/{id}"),
            json!({"version": 1, "body": "milk"}),
        )
        .await
        .expect(200);
    assert_eq!(edited["version"], 2);
    assert_eq!(edited["body"], "milk");
    app.patch(
        &format!("/v1/notes/{id}"),
        json!({"version": 1, "body": "bread"}),
    )
    .await
    .expect_error(409, "revision_conflict");
    assert_eq!(
        app.get(&format!("/v1/notes/{id}")).await.expect(200)["body"],
        "milk"
    );
}

#[tokio::test]
async fn blueprints_need_plan_on_the_writing_session() {
    let app = TestApp::start().await;
    let body = blueprint_body();
    app.post(
        "/v1/notes",
        json!({"kind": "blueprint", "title": "BP", "body": body}),
    )
    .await
    .expect_error(409, "plan_required");
    let bot = app
        .scripted_bot("Plain", json!({"steps": [{"text": "ok"}]}))
        .await;
    let plain = app.direct(bot).await;
    app.post(
        "/v1/notes",
        json!({"kind": "blueprint", "title": "BP", "body": body, "session_id": plain}),
    )
    .await
    .expect_error(409, "plan_required");

    let s = plan_session(&app).await;
    let bp = app
        .post(
            "/v1/notes",
            json!({"kind": "blueprint", "title": "BP", "body": body, "session_id": s}),
        )
        .await
        .expect(201);
    assert_eq!(bp["kind"], "blueprint");
    let id = bp["id"].as_i64().unwrap();
    // Editing it needs Plan too, even when the edit does not name the kind.
    app.patch(
        &format!("/v1/notes/{id}"),
        json!({"version": 1, "title": "BP2", "session_id": plain}),
    )
    .await
    .expect_error(409, "plan_required");
    app.patch(
        &format!("/v1/notes/{id}"),
        json!({"version": 1, "title": "BP2", "session_id": s}),
    )
    .await
    .expect(200);
    // Reading and searching always work.
    let list = app.get("/v1/notes?kind=blueprint&q=BP2").await.expect(200);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
}

#[tokio::test]
async fn note_input_errors() {
    let app = TestApp::start().await;
    let s = plan_session(&app).await;
    app.post("/v1/notes", json!({"title": "  "}))
        .await
        .expect_error(422, "invalid");
    app.post("/v1/notes", json!({"title": "x", "kind": "memo"}))
        .await
        .expect_error(422, "invalid");
    app.post("/v1/notes", json!({"title": "x", "session_id": 999}))
        .await
        .expect_error(422, "invalid");
    app.post(
        "/v1/notes",
        json!({"kind": "blueprint", "title": "BP", "body": "## Goal\nx\n", "session_id": s}),
    )
    .await
    .expect_error(422, "invalid");
    app.post_raw("/v1/notes", "{")
        .await
        .expect_error(400, "bad_request");
    app.get("/v1/notes?limit=0")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/notes?kind=memo")
        .await
        .expect_error(422, "invalid");

    let n = app
        .post("/v1/notes", json!({"title": "t"}))
        .await
        .expect(201);
    let id = n["id"].as_i64().unwrap();
    app.patch(&format!("/v1/notes/{id}"), json!({"version": 1}))
        .await
        .expect_error(422, "invalid");
    app.patch(&format!("/v1/notes/{id}"), json!({"body": "x"}))
        .await
        .expect_error(422, "invalid");
    app.get("/v1/notes/999")
        .await
        .expect_error(404, "not_found");
    app.patch("/v1/notes/999", json!({"version": 1, "body": "x"}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/notes/abc")
        .await
        .expect_error(400, "bad_request");
}
