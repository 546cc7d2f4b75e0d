//! Clearing a conversation's history (`POST /v1/sessions/{id}/clear`) and deleting a group
//! (`DELETE /v1/sessions/{id}`) over HTTP.

mod support;

use serde_json::json;
use support::TestApp;

async fn group(app: &TestApp, bots: &[i64]) -> i64 {
    let s = app
        .post("/v1/sessions", json!({"kind": "group", "bot_ids": bots}))
        .await
        .expect(201);
    s["id"].as_i64().unwrap()
}

#[tokio::test]
async fn clearing_blanks_every_line_in_place_and_again_does_nothing_more() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Alpha", json!({"steps": [{"text": "noted"}]}))
        .await;
    let s = app.direct(bot).await;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "remember the blue logo"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "noted").await;
    app.settle(s).await;
    let before: Vec<i64> = app
        .lines(s)
        .await
        .iter()
        .map(|l| l["id"].as_i64().unwrap())
        .collect();

    let out = app
        .post(&format!("/v1/sessions/{s}/clear"), json!({}))
        .await
        .expect(200);
    assert_eq!(out["session_id"], s);
    assert_eq!(out["lines_blanked"], before.len(), "{out}");
    assert_eq!(out["turns_ended"], json!([]));
    let after = app.lines(s).await;
    let ids: Vec<i64> = after.iter().map(|l| l["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, before, "the lines keep their ids");
    assert!(after.iter().all(|l| l["body"] == ""), "{after:?}");

    // Again: nothing left to blank, and the same answer otherwise.
    let again = app
        .post(&format!("/v1/sessions/{s}/clear"), json!({}))
        .await
        .expect(200);
    assert_eq!(again["lines_blanked"], 0);
    // The conversation stays and goes on.
    app.get(&format!("/v1/sessions/{s}")).await.expect(200);
}

#[tokio::test]
async fn deleting_a_group_removes_it_and_a_direct_is_refused() {
    let app = TestApp::start().await;
    let a = app
        .scripted_bot("Alpha", json!({"steps": [{"text": "ok"}]}))
        .await;
    let b = app
        .scripted_bot("Beta", json!({"steps": [{"text": "ok"}]}))
        .await;
    let d = app.direct(a).await;
    let g = group(&app, &[a, b]).await;

    app.delete(&format!("/v1/sessions/{d}"))
        .await
        .expect_error(409, "not_a_group");
    let out = app.delete(&format!("/v1/sessions/{g}")).await.expect(200);
    assert_eq!(out["session_id"], g);
    app.get(&format!("/v1/sessions/{g}"))
        .await
        .expect_error(404, "not_found");
    app.get(&format!("/v1/sessions/{g}/messages"))
        .await
        .expect_error(404, "not_found");
    let list = app.get("/v1/sessions").await.expect(200);
    assert!(
        list.as_array().unwrap().iter().all(|v| v["id"] != g),
        "{list}"
    );
    // Gone: deleting or clearing it again finds nothing.
    app.delete(&format!("/v1/sessions/{g}"))
        .await
        .expect_error(404, "not_found");
    app.post(&format!("/v1/sessions/{g}/clear"), json!({}))
        .await
        .expect_error(404, "not_found");
    // The direct is untouched.
    app.get(&format!("/v1/sessions/{d}")).await.expect(200);
}

#[tokio::test]
async fn unknown_conversations_and_bad_ids_are_refused() {
    let app = TestApp::start().await;
    app.post("/v1/sessions/999999/clear", json!({}))
        .await
        .expect_error(404, "not_found");
    app.delete("/v1/sessions/999999")
        .await
        .expect_error(404, "not_found");
    app.post("/v1/sessions/abc/clear", json!({}))
        .await
        .expect_error(400, "bad_request");
    app.delete("/v1/sessions/abc")
        .await
        .expect_error(400, "bad_request");
}
