//! A Bot's skills and the project skills over HTTP (ADR 0052, QE7): the person adds, edits
//! and deletes a Bot's skills, each bad input answered with what is wrong and nothing written;
//! shares one once confirmed; sees the owner's later edit and takes it into the copy only
//! against the version shown; turns a copy off, and stops sharing it.

mod support;

use serde_json::json;
use support::TestApp;

#[tokio::test]
async fn the_person_keeps_a_bots_skills_and_bad_input_writes_nothing() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Ada", json!({"steps": [{"text": "ok"}]}))
        .await;
    let path = format!("/v1/bots/{bot}/skills");
    let s = app
        .post(
            &path,
            json!({"name": "Renders", "description": "How I render", "body": "Render twice."}),
        )
        .await
        .expect(200);
    let id = s["id"].as_i64().unwrap();
    assert_eq!(s["shared_as"], json!(null));

    app.post(
        &path,
        json!({"name": "renders", "description": "d", "body": "b"}),
    )
    .await
    .expect_error(409, "skill_taken");
    let long = app
        .post(
            &path,
            json!({"name": "x".repeat(65), "description": "d", "body": "b"}),
        )
        .await;
    long.expect_error(422, "invalid");
    assert!(long.message().contains("at most 64"), "{}", long.message());
    app.post(&path, json!({"name": "N", "body": "b"}))
        .await
        .expect_error(422, "invalid");
    app.post(
        &path,
        json!({"name": "N", "description": "d", "body": "b", "x": 1}),
    )
    .await
    .expect_error(422, "invalid");
    app.post(
        "/v1/bots/999/skills",
        json!({"name": "N", "description": "d", "body": "b"}),
    )
    .await
    .expect_error(404, "not_found");
    app.get("/v1/skills/x")
        .await
        .expect_error(400, "bad_request");
    app.patch(&format!("/v1/skills/{id}"), json!({}))
        .await
        .expect_error(422, "invalid");
    assert_eq!(
        app.get(&path).await.expect(200).as_array().unwrap().len(),
        1,
        "nothing refused was written"
    );

    let edited = app
        .patch(&format!("/v1/skills/{id}"), json!({"body": "Render once."}))
        .await
        .expect(200);
    assert_eq!(edited["body"], "Render once.");
    assert_eq!(edited["description"], "How I render");
    app.delete(&format!("/v1/skills/{id}")).await.expect(200);
    app.get(&format!("/v1/skills/{id}"))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn qe7_a_shared_copy_is_updated_only_against_the_owners_skill_as_shown() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Ada", json!({"steps": [{"text": "ok"}]}))
        .await;
    let s = app
        .post(
            &format!("/v1/bots/{bot}/skills"),
            json!({"name": "House style", "description": "How we write", "body": "Short."}),
        )
        .await
        .expect(200);
    let skill = s["id"].as_i64().unwrap();
    let share = format!("/v1/skills/{skill}/share");
    app.post(&share, json!({"confirm": false}))
        .await
        .expect_error(422, "invalid");
    let ps = app.post(&share, json!({"confirm": true})).await.expect(200);
    let pid = ps["id"].as_i64().unwrap();
    assert_eq!(
        (ps["owner_name"].clone(), ps["enabled"].clone()),
        (json!("Ada"), json!(true))
    );
    app.post(&share, json!({"confirm": true}))
        .await
        .expect_error(409, "not_shareable");

    let edited = app
        .patch(
            &format!("/v1/skills/{skill}"),
            json!({"body": "Short. Plain."}),
        )
        .await
        .expect(200);
    let listed = app.get("/v1/project-skills").await.expect(200);
    assert_eq!(listed[0]["body"], "Short.", "the copy stays as it was");
    assert_eq!(listed[0]["owner_changed"], true);
    assert_eq!(listed[0]["source_updated_at"], edited["updated_at"]);

    let update = format!("/v1/project-skills/{pid}/update");
    app.post(&update, json!({"seen_updated_at": 1, "confirm": true}))
        .await
        .expect_error(409, "not_updatable");
    app.post(
        &update,
        json!({"seen_updated_at": edited["updated_at"], "confirm": false}),
    )
    .await
    .expect_error(422, "invalid");
    let updated = app
        .post(
            &update,
            json!({"seen_updated_at": edited["updated_at"], "confirm": true}),
        )
        .await
        .expect(200);
    assert_eq!(
        (updated["body"].clone(), updated["owner_changed"].clone()),
        (json!("Short. Plain."), json!(false))
    );

    let off = app
        .patch(
            &format!("/v1/project-skills/{pid}"),
            json!({"enabled": false}),
        )
        .await
        .expect(200);
    assert_eq!(off["enabled"], false);
    app.delete(&format!("/v1/project-skills/{pid}"))
        .await
        .expect(200);
    assert!(
        app.get("/v1/project-skills")
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .is_empty()
    );
    let owner = app.get(&format!("/v1/skills/{skill}")).await.expect(200);
    assert_eq!(
        owner["shared_as"],
        json!(null),
        "the owner's skill stays, unshared"
    );
}
