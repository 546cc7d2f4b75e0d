//! External jobs over HTTP (B §8): `GET /v1/external-jobs?plan_id=` and
//! `GET /v1/external-jobs/:id` show what the app registered and polls, with waiters; bad
//! queries are 422, unknown ids 404. The rows are written as the interceptor writes them, on a
//! real turn's thread and run (the interceptor itself is proven in troupe-collab's tests).

mod support;

use serde_json::json;
use support::TestApp;
use troupe_collab::OpenPlan;
use troupe_core::conversation::Author;
use troupe_core::plan::RevisionCause;
use troupe_core::{BotId, PlanId, SessionId, ThreadId};
use troupe_store::{CONVERSATION, NewExternalJob, NewLine};

/// A job as the interceptor registers one, on the turn that submitted it.
fn job(app: &TestApp, thread: ThreadId, bot: BotId, plan: Option<PlanId>, remote: &str) -> i64 {
    app.state
        .collab
        .store()
        .write(|tx| {
            let run = tx.runs_for_thread(thread, 1)?[0].id;
            let now = tx.now();
            tx.insert_external_job(&NewExternalJob {
                server: "media".into(),
                tool: "submit_render".into(),
                check_tool: "check_render".into(),
                args_fingerprint: format!("fp-{remote}"),
                arguments: json!({"prompt": remote}).to_string(),
                submitter_bot_id: Some(bot),
                submitter_thread_id: thread,
                submitter_work_item_id: None,
                run_id: run,
                message_id: None,
                plan_id: plan,
                ticket_id: None,
                part_number: None,
                remote_id: remote.into(),
                remote_key: "request_id".into(),
                resubmit_reason: None,
                next_poll_at: now + 30_000,
            })
        })
        .unwrap()
        .id
        .0
}

#[tokio::test]
async fn external_jobs_are_listed_per_job_and_read_one_by_one() {
    let app = TestApp::start().await;
    let ada = app
        .scripted_bot("Ada", json!({"steps": [{"text": "on it"}]}))
        .await;
    let s = app.direct(ada).await;
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "hello"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "on it").await;
    let collab = &app.state.collab;
    let thread = collab
        .store()
        .read(|tx| tx.session_thread(SessionId(s), BotId(ada), CONVERSATION))
        .unwrap()
        .unwrap();
    let line = collab
        .store()
        .write(|tx| {
            tx.insert_line(&NewLine::plain(
                SessionId(s),
                Author::User,
                "a video".into(),
            ))
        })
        .unwrap();
    let plan = collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: Some(line.id),
            title: None,
            cause: RevisionCause::User,
        })
        .unwrap()
        .id;
    let loose = job(&app, thread, BotId(ada), None, "abc");
    let filed = job(&app, thread, BotId(ada), Some(plan), "def");
    collab
        .store()
        .write(|tx| {
            tx.add_external_job_waiter(
                troupe_core::ids::ExternalJobId(filed),
                thread,
                Some(BotId(ada)),
                None,
            )
        })
        .unwrap();

    let all = app.get("/v1/external-jobs").await.expect(200);
    let ids: Vec<i64> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![filed, loose], "newest first");
    let of_plan = app
        .get(&format!("/v1/external-jobs?plan_id={}", plan.0))
        .await
        .expect(200);
    let j = &of_plan.as_array().unwrap()[0];
    assert_eq!(of_plan.as_array().unwrap().len(), 1);
    assert_eq!(
        (
            j["id"].as_i64(),
            j["status"].as_str(),
            j["remote_id"].as_str()
        ),
        (Some(filed), Some("pending"), Some("def"))
    );
    assert_eq!(j["waiters"][0]["bot_id"], ada);
    assert_eq!(
        app.get("/v1/external-jobs?limit=1")
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let one = app
        .get(&format!("/v1/external-jobs/{loose}"))
        .await
        .expect(200);
    assert_eq!(one["tool"], "submit_render");
    assert_eq!(one["check_tool"], "check_render");
    assert_eq!(one["submitter_bot_id"], ada);
    assert_eq!(one["poll_step"], 0);
    assert!(one["result"].is_null() && one["finished_at"].is_null());
    assert_eq!(one["waiters"], json!([]));
    let prefixed = app
        .get(&format!("/v1/external-jobs/ej_{loose}"))
        .await
        .expect(200);
    assert_eq!(prefixed["id"], loose);
}

#[tokio::test]
async fn bad_queries_are_422_and_unknown_ids_404() {
    let app = TestApp::start().await;
    app.get("/v1/external-jobs?plan_id=abc")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/external-jobs?limit=0")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/external-jobs?limit=lots")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/external-jobs?plan_id=424242")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/external-jobs/424242")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/external-jobs/nope")
        .await
        .expect_error(400, "bad_request");
    assert_eq!(app.get("/v1/external-jobs").await.expect(200), json!([]));
}
