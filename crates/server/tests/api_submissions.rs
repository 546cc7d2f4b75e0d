//! Hand-overs over HTTP (digest 003-B §4.1): `GET /v1/tasks/:id/submissions[?ticket_id=]` and
//! `GET /v1/submissions/:id` with files, the checks bound with their results, and reviews with
//! verdicts. The records are written through the store, as `submit` and `review` write them.

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_collab::OpenPlan;
use troupe_core::plan::RevisionCause;
use troupe_core::review::{ReviewOutcome, ReviewVerdict};
use troupe_core::submission::{CheckSource, SubmissionOrigin};
use troupe_core::{BotId, PlanId, SessionId, SessionMessageId, TicketId};
use troupe_store::{
    CheckKind, Layout, LayoutItem, NewCheck, NewCheckRun, NewReview, NewSubmission, ReviewResult,
    RunOutcome, SubmittedFile, VerdictRecord,
};

const SHA: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/// A job with two tickets, a hand-over on the first with a passing bound check and a
/// reviewer's reject, and one on the second. Answers (job, first ticket, second ticket).
async fn seeded(app: &TestApp) -> (i64, TicketId, TicketId) {
    let maker = app
        .scripted_bot("Maker", json!({"steps": [{"text": "on it"}]}))
        .await;
    let checker = app
        .scripted_bot("Checker", json!({"steps": [{"text": "looking"}]}))
        .await;
    let s = app.direct(maker).await;
    let line = app
        .post(
            &format!("/v1/sessions/{s}/messages"),
            json!({"body": "make the launch poster"}),
        )
        .await
        .expect(201);
    let plan = app
        .state
        .collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: Some(SessionMessageId(line["id"].as_i64().unwrap())),
            title: None,
            cause: RevisionCause::User,
        })
        .unwrap();
    let (maker, checker) = (BotId(maker), BotId(checker));
    let folder = plan.folder.clone();
    let (t1, t2) = app
        .state
        .collab
        .store()
        .write(|tx| {
            let laid = tx.lay_out(
                plan.id,
                &Layout {
                    items: ["Poster", "Slogan"]
                        .iter()
                        .map(|t| LayoutItem {
                            title: t.to_string(),
                            owner_bot_id: Some(maker),
                            ..LayoutItem::default()
                        })
                        .collect(),
                    drops: Vec::new(),
                },
                |n, title| format!("{folder}/{n:02}-{title}"),
            )?;
            let (t1, t2) = (laid.tickets[0].id, laid.tickets[1].id);
            let sub = |ticket: TicketId, path: &str| NewSubmission {
                ticket_id: ticket,
                origin: SubmissionOrigin::Explicit,
                producer_bot_id: Some(maker),
                run_id: None,
                work_item_id: None,
                content: None,
                note: "the first cut".into(),
                claims: vec!["1080p".into()],
                files: vec![SubmittedFile {
                    path: path.into(),
                    sha256: SHA.into(),
                    size: 3,
                }],
                parts: Vec::new(),
            };
            let first = tx.create_submission(&sub(t1, "01-Poster/poster.png"))?;
            let check = tx.create_check(&NewCheck {
                ticket_id: Some(t1),
                path: Some("poster.png".into()),
                ..NewCheck::new(plan.id, CheckKind::FileExists, CheckSource::User)
            })?;
            tx.record_check_run(&NewCheckRun {
                check_id: check.id,
                submission_id: Some(first.id),
                outcome: RunOutcome::Passed,
                detail: "exists".into(),
                output_tail: String::new(),
                measured: None,
                for_reference: false,
                started_at: tx.now(),
            })?;
            tx.record_review(&NewReview {
                submission_id: first.id,
                reviewer_bot_id: checker,
                run_id: None,
                outcome: ReviewOutcome::Reject,
                note: "Make the title bigger".into(),
                result: ReviewResult::Recorded,
                reasons: Vec::new(),
                same_model: false,
                reviewer_model: Some("checker-model".into()),
                producer_model: Some("maker-model".into()),
                verdicts: vec![VerdictRecord {
                    requirement_id: "title".into(),
                    verdict: ReviewVerdict::Fail,
                    evidence: Some("12 px".into()),
                }],
            })?;
            tx.create_submission(&sub(t2, "02-Slogan/slogan.txt"))?;
            Ok((t1, t2))
        })
        .unwrap();
    (plan.id.0, t1, t2)
}

#[tokio::test]
async fn a_jobs_submissions_carry_files_checks_and_reviews() {
    let app = TestApp::start().await;
    let (p, t1, t2) = seeded(&app).await;
    let all = app
        .get(&format!("/v1/tasks/{p}/submissions"))
        .await
        .expect(200);
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 2);
    // Newest first.
    assert_eq!(all[0]["ticket_id"], json!(t2));
    let first = &all[1];
    assert_eq!(first["task_id"], json!(PlanId(p)));
    assert_eq!(first["ticket_number"], 1);
    assert_eq!(first["origin"], "explicit");
    assert_eq!(first["state"], "checking");
    assert_eq!(first["note"], "the first cut");
    assert_eq!(first["claims"], json!(["1080p"]));
    assert_eq!(
        first["files"],
        json!([{"path": "01-Poster/poster.png", "sha256": SHA, "size": 3}])
    );
    let checks = first["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0]["result"], "pass");
    assert_eq!(checks[0]["gate"], true);
    assert_eq!(checks[0]["source"], "user");
    assert_eq!(checks[0]["detail"], "exists");
    let reviews = first["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0]["outcome"], "reject");
    assert_eq!(reviews[0]["note"], "Make the title bigger");
    assert_eq!(
        reviews[0]["verdicts"],
        json!([{"requirement_id": "title", "verdict": "fail", "evidence": "12 px"}])
    );

    // One ticket's only.
    let one: Value = app
        .get(&format!("/v1/tasks/{p}/submissions?ticket_id={}", t1.0))
        .await
        .expect(200);
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0], *first);

    // One submission.
    let id = first["id"].as_i64().unwrap();
    assert_eq!(
        app.get(&format!("/v1/submissions/{id}")).await.expect(200),
        *first
    );
    assert_eq!(
        app.get(&format!("/v1/submissions/sub_{id}"))
            .await
            .expect(200),
        *first
    );
}

#[tokio::test]
async fn unknown_and_malformed_ids_are_refused() {
    let app = TestApp::start().await;
    let (p, _, _) = seeded(&app).await;
    app.get("/v1/tasks/999/submissions")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/submissions/999")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/submissions/nope")
        .await
        .expect_error(400, "bad_request");
    app.get(&format!("/v1/tasks/{p}/submissions?ticket_id=x"))
        .await
        .expect_error(422, "invalid");
    let other = app
        .get(&format!("/v1/tasks/{p}/submissions?ticket_id=999"))
        .await;
    other.expect_error(422, "invalid");
    assert!(other.message().contains("ticket_id"), "{}", other.message());
}
