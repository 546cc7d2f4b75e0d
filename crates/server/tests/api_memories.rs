//! A Bot's memories and a job's retrospectives over HTTP (digest 003-B §11): the person adds,
//! rewords, turns off and deletes a Bot's memories, each bad input answered with what is wrong
//! and nothing written; on a daemon whose clock only the test moves, a delivered job quiet for
//! 30 minutes gets its retrospective at the tick, listed under the job, and one of its changes
//! is undone once — not after the person changed the memory (S-RS3).

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_core::submission::{ApprovedBy, SubmissionOrigin, SubmissionState};
use troupe_core::{BotId, PlanId, TicketId};
use troupe_store::{NewQualityEvent, NewSubmission, QualityType, quality_cause};

#[tokio::test]
async fn the_person_keeps_a_bots_memories_and_bad_input_writes_nothing() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Ada", json!({"steps": [{"text": "ok"}]}))
        .await;
    let path = format!("/v1/bots/{bot}/memories");
    let m = app
        .post(
            &path,
            json!({"subject": "Units", "body": "Give every number its unit."}),
        )
        .await
        .expect(200);
    assert_eq!(
        (m["subject"].clone(), m["enabled"].clone()),
        (json!("Units"), json!(true))
    );
    let id = m["id"].as_i64().unwrap();

    let long = app
        .post(&path, json!({"subject": "x".repeat(41), "body": "b"}))
        .await;
    long.expect_error(422, "invalid");
    assert!(long.message().contains("at most 40"), "{}", long.message());
    app.post(&path, json!({"subject": "S"}))
        .await
        .expect_error(422, "invalid");
    app.post(
        "/v1/bots/999/memories",
        json!({"subject": "S", "body": "b"}),
    )
    .await
    .expect_error(404, "not_found");
    app.get("/v1/bots/x/memories")
        .await
        .expect_error(400, "bad_request");
    app.patch(&format!("/v1/bot-memories/{id}"), json!({}))
        .await
        .expect_error(422, "invalid");
    let listed = app.get(&path).await.expect(200);
    assert_eq!(
        listed.as_array().unwrap().len(),
        1,
        "nothing refused was written"
    );

    let off = app
        .patch(&format!("/v1/bot-memories/{id}"), json!({"enabled": false}))
        .await
        .expect(200);
    assert_eq!(off["enabled"], false);
    app.post(&path, json!({"subject": "units", "body": "Other words."}))
        .await
        .expect_error(409, "memory_off");
    app.post(&path, json!({"subject": "Tone", "body": "Plain."}))
        .await
        .expect(200);
    app.patch(
        &format!("/v1/bot-memories/{id}"),
        json!({"subject": "TONE"}),
    )
    .await
    .expect_error(409, "subject_taken");
    app.delete(&format!("/v1/bot-memories/{id}"))
        .await
        .expect(200);
    app.delete(&format!("/v1/bot-memories/{id}"))
        .await
        .expect_error(404, "not_found");
}

/// A job of `bot`'s with one hand-over sent back and one approved, delivered now.
fn delivered_job(app: &TestApp, bot: BotId, session: i64) -> PlanId {
    let collab = &app.state.collab;
    let plan = collab
        .open_plan(troupe_collab::OpenPlan {
            home_session_id: troupe_core::SessionId(session),
            opening_line_id: None,
            title: Some("The report".into()),
            cause: troupe_core::plan::RevisionCause::User,
        })
        .unwrap()
        .id;
    collab
        .add_ticket(
            plan,
            troupe_collab::tickets::NewTicketRequest {
                title: "Draft".into(),
                description: None,
                done_when: None,
                owner_bot_id: Some(bot),
                reviewer_bot_id: None,
            },
        )
        .unwrap();
    collab
        .store()
        .write(|tx| {
            let ticket: TicketId = tx.tickets_of_plan(plan)?[0].id;
            for state in [SubmissionState::Rework, SubmissionState::Approved] {
                let s = tx.create_submission(&NewSubmission {
                    ticket_id: ticket,
                    origin: SubmissionOrigin::Answer,
                    producer_bot_id: Some(bot),
                    run_id: None,
                    work_item_id: None,
                    content: Some("The draft.".into()),
                    note: String::new(),
                    claims: Vec::new(),
                    files: Vec::new(),
                    parts: Vec::new(),
                })?;
                if state == SubmissionState::Approved {
                    tx.approve_submission(s.id, ApprovedBy::NoReviewer, None, None)?;
                } else {
                    tx.set_submission_state(s.id, state)?;
                }
            }
            tx.quality_event(
                NewQualityEvent::new(QualityType::Execution, quality_cause::USER_SENT_BACK)
                    .bot(Some(bot))
                    .plan(plan)
                    .ticket(ticket),
            )?;
            tx.set_plan_delivered(plan, true)?;
            Ok(())
        })
        .unwrap();
    plan
}

#[tokio::test]
async fn s_rs3_a_retrospective_listed_under_its_job_and_its_change_undone_only_while_it_stands() {
    let app = TestApp::start_still().await;
    let answer = json!({
        "summary": "I handed over before reading the brief again.",
        "tripped_up": ["skipped the brief"], "sent_back_because": ["off brief"], "do_again": [],
        "verdicts": [],
        "memories": [
            {"subject": "Brief first", "body": "Read the brief again before handing over."},
            {"subject": "Units", "body": "Give every number its unit."}
        ],
        "forget": []
    });
    let bot = app
        .scripted_bot(
            "Ada",
            json!({"steps": [{"text": answer.to_string()}], "on_exhausted": "repeat_last"}),
        )
        .await;
    let s = app.direct(bot).await;
    let plan = delivered_job(&app, BotId(bot), s);
    let path = format!("/v1/tasks/{}/retrospectives", plan.0);
    app.post("/v1/debug/clock", json!({"advance_ms": 31 * 60_000}))
        .await
        .expect(200);
    app.post("/v1/debug/tick", json!({})).await.expect(200);

    let listed = app.get(&path).await.expect(200);
    let r = &listed[0];
    assert_eq!(
        (r["bot_id"].clone(), r["state"].clone()),
        (json!(bot), json!("done")),
        "{r}"
    );
    assert_eq!(
        r["went_wrong"],
        json!([
            "the person sent a hand-over back",
            "ticket 01 was handed over 2 times"
        ])
    );
    let changes: Vec<Value> = r["changes"].as_array().unwrap().clone();
    assert_eq!(changes.len(), 2);
    assert!(
        changes
            .iter()
            .all(|c| c["undoable"] == true && c["refused"].is_null())
    );

    // The person rewords one: its mark goes and its Undo with it.
    let memories = app
        .get(&format!("/v1/bots/{bot}/memories"))
        .await
        .expect(200);
    let units = memories
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["subject"] == "Units")
        .unwrap()
        .clone();
    assert_eq!(units["retrospective_id"], r["id"]);
    let edited = app
        .patch(
            &format!("/v1/bot-memories/{}", units["id"]),
            json!({"body": "Units on all numbers."}),
        )
        .await
        .expect(200);
    assert!(edited["retrospective_id"].is_null());
    let units_change = changes.iter().find(|c| c["subject"] == "Units").unwrap();
    app.post(
        &format!("/v1/retrospective-changes/{}/undo", units_change["id"]),
        json!({}),
    )
    .await
    .expect_error(409, "not_undoable");

    // The other still stands: undone, the memory is gone, and a second undo is refused.
    let brief = changes
        .iter()
        .find(|c| c["subject"] == "Brief first")
        .unwrap();
    let undo = format!("/v1/retrospective-changes/{}/undo", brief["id"]);
    let undone = app.post(&undo, json!({})).await.expect(200);
    assert!(undone["undone_at"].is_i64());
    let left = app
        .get(&format!("/v1/bots/{bot}/memories"))
        .await
        .expect(200);
    let subjects: Vec<&str> = left
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["Units"]);
    app.post(&undo, json!({}))
        .await
        .expect_error(409, "not_undoable");
    app.post("/v1/retrospective-changes/999/undo", json!({}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tasks/999/retrospectives")
        .await
        .expect_error(404, "not_found");
}
