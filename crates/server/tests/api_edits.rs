//! Editing a sent line (`PATCH /v1/messages/{id}`, UQ-7, UQ-9, UQ-13) and its earlier words
//! (`GET /v1/messages/{id}/versions`) over HTTP.

mod support;

use serde_json::json;
use support::TestApp;

const SENT: &str = "剪一支约 60 秒的宣传片";
const EDITED: &str = "剪一支约 60 秒的宣传片,加字幕";

/// A direct with a Bot that read and answered the person's line; answers the session and
/// the line's id.
async fn answered_line(app: &TestApp) -> (i64, i64, i64) {
    let bot = app
        .scripted_bot(
            "Alpha",
            json!({
                "steps": [{"text": "noted"}],
                "rules": [{"when_user_contains": "You changed this line",
                           "reply": {"text": "seen the change"}}],
                "on_exhausted": "repeat_last"
            }),
        )
        .await;
    let s = app.direct(bot).await;
    let line = app
        .post(&format!("/v1/sessions/{s}/messages"), json!({"body": SENT}))
        .await
        .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "noted").await;
    app.settle(s).await;
    (bot, s, line["id"].as_i64().unwrap())
}

#[tokio::test]
async fn an_edit_keeps_the_words_before_as_a_version_and_tells_the_bot_that_read_it() {
    let app = TestApp::start().await;
    let (_, s, id) = answered_line(&app).await;
    let unedited = app.get(&format!("/v1/messages/{id}")).await.expect(200);
    assert_eq!(unedited["edited"], false);
    assert_eq!(
        app.get(&format!("/v1/messages/{id}/versions"))
            .await
            .expect(200),
        json!([])
    );

    let line = app
        .patch(&format!("/v1/messages/{id}"), json!({"body": EDITED}))
        .await
        .expect(200);
    assert_eq!(line["body"], EDITED);
    assert_eq!(line["edited"], true);
    assert!(line["edited_at"].is_i64(), "{line}");
    let versions = app
        .get(&format!("/v1/messages/{id}/versions"))
        .await
        .expect(200);
    assert_eq!(versions.as_array().unwrap().len(), 1, "{versions}");
    assert_eq!(versions[0]["version"], 1);
    assert_eq!(versions[0]["body"], SENT);

    // UQ-13: the Bot had read the line; it is told, with a person's line, and answers it.
    app.wait_for_bot_line(s, |l| l["body"] == "seen the change")
        .await;

    // UQ-9: the quote of the changed clause only, tied to the line's first quote.
    let quotes = app
        .state
        .collab
        .store()
        .read(|tx| tx.quotes_of_line(troupe_core::SessionMessageId(id)))
        .unwrap();
    assert_eq!(quotes.len(), 2, "{quotes:?}");
    assert_eq!(quotes[0].body, SENT);
    assert_eq!(quotes[1].body, "加字幕");
    assert_eq!(quotes[1].first_quote_id, Some(quotes[0].id));

    // The same words again change nothing.
    app.patch(&format!("/v1/messages/{id}"), json!({"body": EDITED}))
        .await
        .expect(200);
    let versions = app
        .get(&format!("/v1/messages/{id}/versions"))
        .await
        .expect(200);
    assert_eq!(versions.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn refused_edits_say_why_and_write_nothing() {
    let app = TestApp::start().await;
    let (bot, s, id) = answered_line(&app).await;

    // 422: empty words.
    app.patch(&format!("/v1/messages/{id}"), json!({"body": "  "}))
        .await
        .expect_error(422, "invalid");
    // 404: no such line; 400: no id.
    app.patch("/v1/messages/999999", json!({"body": "x"}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/messages/999999/versions")
        .await
        .expect_error(404, "not_found");

    // 409 bot_line: the Bot's reply.
    let reply = app.wait_for_bot_line(s, |l| l["body"] == "noted").await;
    let r = app
        .patch(
            &format!("/v1/messages/{}", reply["id"]),
            json!({"body": "changed"}),
        )
        .await;
    r.expect_error(409, "not_editable");
    assert!(r.message().starts_with("bot_line:"), "{}", r.text);

    // 409 bot_gone: a direct whose Bot was archived.
    app.delete(&format!("/v1/bots/{bot}")).await.expect(200);
    let r = app
        .patch(&format!("/v1/messages/{id}"), json!({"body": "changed"}))
        .await;
    r.expect_error(409, "not_editable");
    assert!(r.message().starts_with("bot_gone:"), "{}", r.text);

    // Nothing was written by any of them.
    let line = app.get(&format!("/v1/messages/{id}")).await.expect(200);
    assert_eq!(line["body"], SENT);
    assert_eq!(line["edited"], false);
    assert_eq!(
        app.get(&format!("/v1/messages/{id}/versions"))
            .await
            .expect(200),
        json!([])
    );
}
