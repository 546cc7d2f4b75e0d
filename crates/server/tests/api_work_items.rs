//! Work items and delegations over HTTP: a group line opens a job at a desk, the lead delegates,
//! the other Bot answers; the routes show the work items and the delegation, and refuse bad ids.

mod support;

use serde_json::json;
use support::TestApp;

#[tokio::test]
async fn a_delegation_and_the_work_items_it_links_are_listed() {
    let app = TestApp::start().await;
    let alpha = app
        .scripted_bot(
            "Alpha",
            json!({"steps": [{"text": "unused"}], "rules": [
                {"when_user_contains": "answered your request", "reply": {"text": "Slogan: Fast and calm."}},
                {"when_user_contains": "ask beta", "reply": {"tool_calls": [{"name": "delegate",
                    "arguments": {"to": "Beta", "ask": "A four-word slogan.", "expects": "answer"}}]}}
            ]}),
        )
        .await;
    let beta = app
        .scripted_bot(
            "Beta",
            json!({"steps": [{"text": "unused"}], "rules": [
                {"when_user_contains": "asks you", "reply": {"tool_calls": [{"name": "end_turn",
                    "arguments": {"reason": "answered", "answer": "Fast and calm."}}]}}
            ]}),
        )
        .await;
    let s = app
        .post(
            "/v1/sessions",
            json!({"kind": "group", "bot_ids": [alpha, beta], "title": "Launch"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "@Alpha ask Beta for a slogan"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "Slogan: Fast and calm.")
        .await;
    let plans = app
        .get(&format!("/v1/tasks?session_id={s}"))
        .await
        .expect(200);
    let plan = plans.as_array().unwrap()[0]["id"].as_i64().unwrap();
    let delegations = app
        .get(&format!("/v1/tasks/{plan}/delegations"))
        .await
        .expect(200);
    let d = &delegations.as_array().unwrap()[0];
    assert_eq!(d["state"], "replied");
    assert_eq!(d["expects"], "answer");
    assert_eq!(d["from_bot_id"], alpha);
    assert_eq!(d["to_bot_id"], beta);
    assert!(d["due_at"].is_null());
    let pair = d["pair_session_id"].as_i64().unwrap();
    let shown = app
        .get(&format!("/v1/sessions/{pair}/delegations"))
        .await
        .expect(200);
    assert_eq!(shown.as_array().unwrap().len(), 1);
    // Beta's answer was its work on the job, speaking in the pair direct.
    let turns = app
        .get(&format!("/v1/turns?session_id={pair}"))
        .await
        .expect(200);
    let answered = turns
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["end_reason"] == "answered")
        .expect("Beta's answering turn is listed in the pair direct");
    assert_eq!(answered["mode"], "work");
    assert_eq!(answered["bot_id"], beta);
    assert_eq!(answered["bounces"], 0);
    let items = app
        .get(&format!("/v1/bots/{alpha}/work-items"))
        .await
        .expect(200);
    let items = items.as_array().unwrap();
    let desk = items.iter().find(|i| i["mode"] == "desk").unwrap();
    let work = items.iter().find(|i| i["mode"] == "work").unwrap();
    assert_eq!(desk["state"], "closed");
    assert_eq!(work["plan_id"], plan);
    let id = work["id"].as_i64().unwrap();
    let one = app.get(&format!("/v1/work-items/{id}")).await.expect(200);
    assert_eq!(one["state"], "idle");
    assert!(one["queue_position"].is_null());
}

#[tokio::test]
async fn work_item_and_delegation_routes_refuse_bad_and_unknown_ids() {
    let app = TestApp::start().await;
    app.get("/v1/work-items/abc")
        .await
        .expect_error(400, "bad_request");
    app.get("/v1/work-items/999")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/bots/999/work-items")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tasks/999/delegations")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/sessions/999/delegations")
        .await
        .expect_error(404, "not_found");
}
