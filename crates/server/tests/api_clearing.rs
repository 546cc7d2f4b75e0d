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

/// HOLD-X2's deleted group is gone from every read *and* every write: each route under
/// `/v1/sessions/{id}` answers the same `404 not_found` for it as a conversation that never
/// was, and changes nothing (the member stays, no lead is set, no line is posted).
#[tokio::test]
async fn a_deleted_group_is_not_found_on_every_session_route() {
    let app = TestApp::start().await;
    let a = app
        .scripted_bot("Alpha", json!({"steps": [{"text": "ok"}]}))
        .await;
    let b = app
        .scripted_bot("Beta", json!({"steps": [{"text": "ok"}]}))
        .await;
    let c = app
        .scripted_bot("Gamma", json!({"steps": [{"text": "ok"}]}))
        .await;
    let g = group(&app, &[a, b]).await;
    app.delete(&format!("/v1/sessions/{g}")).await.expect(200);

    let gone = |what: &str, answer: support::Answer| {
        assert_eq!(answer.status, 404, "{what}: {}", answer.text);
        assert_eq!(answer.code(), "not_found", "{what}: {}", answer.text);
        assert!(
            answer.message().contains(&g.to_string()),
            "{what} names the conversation: {}",
            answer.text
        );
    };
    gone(
        "add member",
        app.post(&format!("/v1/sessions/{g}/members"), json!({"bot_id": c}))
            .await,
    );
    gone(
        "remove member",
        app.delete(&format!("/v1/sessions/{g}/members/{a}")).await,
    );
    gone(
        "read lead",
        app.get(&format!("/v1/sessions/{g}/lead")).await,
    );
    gone(
        "set lead",
        app.put(
            &format!("/v1/sessions/{g}/lead"),
            json!({"bot_id": a, "confirmed": true}),
        )
        .await,
    );
    gone(
        "post a line",
        app.post(
            &format!("/v1/sessions/{g}/messages"),
            json!({"body": "hello"}),
        )
        .await,
    );
    gone(
        "delegations",
        app.get(&format!("/v1/sessions/{g}/delegations")).await,
    );
    gone(
        "workflow",
        app.get(&format!("/v1/sessions/{g}/workflow")).await,
    );
    gone(
        "set workflow",
        app.post(
            &format!("/v1/sessions/{g}/workflow"),
            json!({"kind": "plan"}),
        )
        .await,
    );
    gone(
        "continue",
        app.post(&format!("/v1/sessions/{g}/continue"), json!({}))
            .await,
    );
    gone(
        "abandon",
        app.post(&format!("/v1/sessions/{g}/abandon"), json!({}))
            .await,
    );
    gone(
        "stop",
        app.post("/v1/turns/stop", json!({"session_id": g})).await,
    );

    // Nothing changed underneath: the members and lines are as the deletion left them.
    let (members, lead, lines) = app
        .state
        .collab
        .store()
        .read(|tx| {
            let s = troupe_core::SessionId(g);
            Ok((
                tx.members(s)?
                    .into_iter()
                    .map(|m| (m.bot_id.0, m.left_at.is_none()))
                    .collect::<Vec<_>>(),
                tx.members(s)?.into_iter().any(|m| m.is_lead),
                tx.lines(s, None, 100)?.len(),
            ))
        })
        .unwrap();
    assert_eq!(members, vec![(a, true), (b, true)]);
    assert!(!lead);
    assert_eq!(lines, 0);
}

/// UQ-2: `erase_quotes` is taken on the clear and the delete request; anything but true or
/// false is refused, naming the parameter, and changes nothing.
#[tokio::test]
async fn erase_quotes_is_taken_on_clear_and_delete() {
    let app = TestApp::start().await;
    let a = app
        .scripted_bot("Alpha", json!({"steps": [{"text": "ok"}]}))
        .await;
    let b = app
        .scripted_bot("Beta", json!({"steps": [{"text": "ok"}]}))
        .await;
    let d = app.direct(a).await;
    let g = group(&app, &[a, b]).await;
    let bad = app
        .post(
            &format!("/v1/sessions/{d}/clear?erase_quotes=maybe"),
            json!({}),
        )
        .await;
    bad.expect_error(422, "invalid");
    let bad = app
        .delete(&format!("/v1/sessions/{g}?erase_quotes=yes"))
        .await;
    assert!(bad.message().contains("erase_quotes"), "{}", bad.text);
    bad.expect_error(422, "invalid");
    app.get(&format!("/v1/sessions/{g}")).await.expect(200);

    let out = app
        .post(
            &format!("/v1/sessions/{d}/clear?erase_quotes=true"),
            json!({}),
        )
        .await
        .expect(200);
    assert_eq!(out["checks_reverted"], json!([]));
    assert_eq!(out["offers_withdrawn"], json!([]));
    app.delete(&format!("/v1/sessions/{g}?erase_quotes=false"))
        .await
        .expect(200);
}
