//! The reflection lesson over HTTP (digest 003-B §10.2), on a daemon whose clock only the test
//! moves: an overturned approval's reflection at the tick, listed under its job; Adopt keeps a
//! checklist item the Lessons page lists and retires; each refusal says what is wrong.

mod support;

use serde_json::json;
use support::TestApp;
use troupe_core::{BotId, PlanId, SessionId};
use troupe_store::{NewQualityEvent, QualityType, quality_cause};

#[tokio::test]
async fn an_overturned_approvals_proposal_adopted_over_http_and_its_item_retired() {
    let app = TestApp::start_still().await;
    let answer = json!({"proposal": "checklist", "when": "before_reviewing",
                        "text": "Open every file handed over before approving."});
    let ben = app
        .scripted_bot(
            "Ben",
            json!({"steps": [{"text": answer.to_string()}], "on_exhausted": "repeat_last"}),
        )
        .await;
    let s = app.direct(ben).await;
    app.put(
        "/v1/settings/engine-steps",
        json!({"general": {"reflection": true}}),
    )
    .await
    .expect(200);
    let collab = &app.state.collab;
    let plan = collab
        .open_plan(troupe_collab::OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: None,
            title: Some("The report".into()),
            cause: troupe_core::plan::RevisionCause::User,
        })
        .unwrap()
        .id;
    let t = app
        .post(
            &format!("/v1/tasks/{}/tickets", plan.0),
            json!({"title": "Draft"}),
        )
        .await
        .expect(201);
    let ticket = troupe_core::TicketId(t["id"].as_i64().unwrap());
    collab
        .store()
        .write(|tx| {
            tx.quality_event(
                NewQualityEvent::new(QualityType::ReviewMiss, quality_cause::REVIEW_MISS)
                    .bot(Some(BotId(ben)))
                    .plan(PlanId(plan.0))
                    .ticket(ticket),
            )
        })
        .unwrap();
    app.post("/v1/debug/tick", json!({})).await.expect(200);

    let listed = app
        .get(&format!("/v1/tasks/{}/reflections", plan.0))
        .await
        .expect(200);
    let r = &listed[0];
    assert_eq!(
        (r["state"].clone(), r["cause"].clone()),
        (json!("proposed"), json!("review_miss")),
        "{r}"
    );
    assert_eq!(r["proposal"]["when"], "before_reviewing");
    let id = r["id"].as_i64().unwrap();
    let path = format!("/v1/reflections/{id}/answer");

    app.post(&path, json!({"adopt": "yes"}))
        .await
        .expect_error(422, "invalid");
    app.post("/v1/reflections/999/answer", json!({"adopt": true}))
        .await
        .expect_error(404, "not_found");
    let adopted = app.post(&path, json!({"adopt": true})).await.expect(200);
    assert_eq!(adopted["state"], "adopted");
    app.post(&path, json!({"adopt": false}))
        .await
        .expect_error(409, "answered");
    // Its card's buttons are the same answer: pressed again, it is closed.
    let card = format!("/v1/messages/{}/control", r["message_id"]);
    app.post(&card, json!({"action": "maybe"}))
        .await
        .expect_error(422, "invalid");
    app.post(&card, json!({"action": "no"}))
        .await
        .expect_error(409, "card_closed");
    let line = app
        .get(&format!("/v1/messages/{}", r["message_id"]))
        .await
        .expect(200);
    assert_eq!(line["control"]["answer"], "adopted");
    assert_eq!(line["control"]["offer"], json!([]));

    let items = app
        .get(&format!("/v1/checklist-items?bot_id={ben}"))
        .await
        .expect(200);
    assert_eq!(
        items[0]["text"],
        "Open every file handed over before approving."
    );
    assert_eq!(items[0]["when"], "before_reviewing");
    let item = items[0]["id"].as_i64().unwrap();
    let off = app
        .patch(
            &format!("/v1/checklist-items/{item}"),
            json!({"enabled": false}),
        )
        .await
        .expect(200);
    assert_eq!(off["enabled"], false);
    app.patch("/v1/checklist-items/999", json!({"enabled": true}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/checklist-items?bot_id=x")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/tasks/999/reflections")
        .await
        .expect_error(404, "not_found");
}
