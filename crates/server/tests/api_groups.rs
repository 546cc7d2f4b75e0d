//! Groups over HTTP: members, the lead, routing by lead and mention, asks answered.

mod support;

use serde_json::{Value, json};
use support::{TestApp, wait_until};

async fn group(app: &TestApp, bots: &[i64]) -> i64 {
    app.post(
        "/v1/sessions",
        json!({"kind": "group", "bot_ids": bots, "title": "Launch"}),
    )
    .await
    .expect(201)["id"]
        .as_i64()
        .unwrap()
}

fn member(view: &Value, bot: i64) -> &Value {
    view["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["bot_id"] == bot)
        .expect("a member")
}

#[tokio::test]
async fn a_group_routes_to_its_lead_and_to_whoever_is_named() {
    let app = TestApp::start().await;
    let lead = app
        .scripted_bot(
            "Lead",
            json!({"steps": [{"text": "Lead here."}], "on_exhausted": "repeat_last"}),
        )
        .await;
    let beta = app
        .scripted_bot(
            "Beta",
            json!({"steps": [{"text": "Beta here."}], "on_exhausted": "repeat_last"}),
        )
        .await;
    let s = group(&app, &[lead, beta]).await;
    let view = app.get(&format!("/v1/sessions/{s}")).await.expect(200);
    assert_eq!(view["kind"], "group");
    assert_eq!(member(&view, beta)["state"], "idle");

    // The lead needs confirmed: true; a non-member is refused; then it is set.
    app.put(&format!("/v1/sessions/{s}/lead"), json!({"bot_id": lead}))
        .await
        .expect_error(422, "invalid");
    app.put(
        &format!("/v1/sessions/{s}/lead"),
        json!({"bot_id": 999, "confirmed": true}),
    )
    .await
    .expect_error(422, "invalid");
    let l = app
        .put(
            &format!("/v1/sessions/{s}/lead"),
            json!({"bot_id": lead, "confirmed": true}),
        )
        .await
        .expect(200);
    assert_eq!(l["lead"], lead);
    assert!(l["suggestion"].is_null());

    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "kick off"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "Lead here.")
        .await;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "@Beta your part"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "Beta here.")
        .await;
    let turns = wait_until("two finished turns", || async {
        let t = app
            .get(&format!("/v1/turns?session_id={s}"))
            .await
            .expect(200);
        let done = t
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["state"] == "completed")
            .count();
        (done == 2).then_some(t)
    })
    .await;
    let by: Vec<i64> = turns
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["bot_id"].as_i64().unwrap())
        .collect();
    assert_eq!(by, vec![beta, lead], "newest first, one turn each");

    // Members: adding a present one is a no-op; the last cannot leave.
    app.post(
        &format!("/v1/sessions/{s}/members"),
        json!({"bot_id": beta}),
    )
    .await
    .expect(200);
    app.delete(&format!("/v1/sessions/{s}/members/{lead}"))
        .await
        .expect(200);
    let after = app.get(&format!("/v1/sessions/{s}/lead")).await.expect(200);
    assert!(after["lead"].is_null(), "a removed lead is no lead");
    app.delete(&format!("/v1/sessions/{s}/members/{beta}"))
        .await
        .expect_error(409, "last_member");
    let direct = app.direct(beta).await;
    app.post(
        &format!("/v1/sessions/{direct}/members"),
        json!({"bot_id": lead}),
    )
    .await
    .expect_error(422, "invalid");
    app.get(&format!("/v1/sessions/{direct}/lead"))
        .await
        .expect_error(422, "invalid");
}

#[tokio::test]
async fn an_ask_answered_over_http_resumes_the_turn() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot(
            "Asker",
            json!({"steps": [
                {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Which colour?", "options": [{"label": "blue"}, {"label": "green"}]}}]},
                {"text": "Going with blue."}
            ]}),
        )
        .await;
    let s = app.direct(bot).await;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "make a logo"}),
    )
    .await
    .expect(201);
    let ask = wait_until("the ask", || async {
        app.lines(s).await.into_iter().find(|l| l["kind"] == "ask")
    })
    .await;
    assert_eq!(ask["ask"]["question"], "Which colour?");
    let id = ask["id"].as_i64().unwrap();
    app.settle(s).await;
    let view = app.get(&format!("/v1/sessions/{s}")).await.expect(200);
    assert_eq!(member(&view, bot)["state"], "waiting_ask");
    app.post(&format!("/v1/messages/{id}/answer"), json!({}))
        .await
        .expect_error(422, "invalid");
    app.post(
        &format!("/v1/messages/{id}/answer"),
        json!({"options": [0, 1]}),
    )
    .await
    .expect_error(422, "invalid");
    let answered = app
        .post(
            &format!("/v1/messages/{id}/answer"),
            json!({"options": [0], "text": "dark"}),
        )
        .await
        .expect(200);
    assert_eq!(answered["ask"]["answer"]["options"], json!([0]));
    app.wait_for_bot_line(s, |l| l["body"] == "Going with blue.")
        .await;
    app.post(
        &format!("/v1/messages/{id}/answer"),
        json!({"options": [1]}),
    )
    .await
    .expect_error(409, "already_answered");
}
