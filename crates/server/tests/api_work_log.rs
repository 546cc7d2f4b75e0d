//! `GET /v1/tasks/:id/work-log` over HTTP: a job's work log, oldest first, paged by row id,
//! each row also an event of the job's home conversation. Rows are written here with
//! `Tx::log_work`, as the supervisor and the other concepts write them.

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_collab::OpenPlan;
use troupe_core::plan::RevisionCause;
use troupe_core::{EventId, PlanId, SessionId, TicketId, WorkItemId};
use troupe_store::WorkRef;

/// A direct with a scripted Bot `name` and a job homed there; answers (session, job).
async fn job(app: &TestApp, name: &str) -> (i64, PlanId) {
    let bot = app
        .scripted_bot(name, json!({"steps": [{"text": "on it"}]}))
        .await;
    let s = app.direct(bot).await;
    let plan = app
        .state
        .collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: None,
            title: Some("Poster".into()),
            cause: RevisionCause::User,
        })
        .unwrap();
    (s, plan.id)
}

fn log(app: &TestApp, at: WorkRef, kind: &str, payload: Value) -> i64 {
    app.state
        .collab
        .store()
        .write(|tx| tx.log_work(at, kind, payload.clone()))
        .unwrap()
}

#[tokio::test]
async fn the_work_log_lists_a_jobs_rows_oldest_first_and_pages_by_row_id() {
    let app = TestApp::start().await;
    let (s, plan) = job(&app, "Alpha").await;
    let (_, other) = job(&app, "Beta").await;
    let path = format!("/v1/tasks/{}/work-log", plan.0);
    assert_eq!(app.get(&path).await.expect(200), json!([]));

    let first = log(
        &app,
        WorkRef {
            plan,
            ticket: Some(TicketId(7)),
            work_item: Some(WorkItemId(3)),
        },
        "supervisor_picked_up",
        json!({"attempt": 1, "cause": "interrupted"}),
    );
    log(&app, WorkRef::plan(other), "supervisor_notice", json!({}));
    let second = log(
        &app,
        WorkRef::plan(plan),
        "supervisor_called_back",
        json!({"n": 1}),
    );

    let rows = app.get(&path).await.expect(200);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "only this job's rows: {rows:#?}");
    assert_eq!(rows[0]["id"], first);
    assert_eq!(rows[0]["kind"], "supervisor_picked_up");
    assert_eq!(rows[0]["ticket_id"], json!(TicketId(7)));
    assert_eq!(rows[0]["work_item_id"], json!(WorkItemId(3)));
    assert_eq!(rows[0]["payload"]["attempt"], 1);
    assert_eq!(rows[1]["id"], second);
    assert_eq!(rows[1]["ticket_id"], Value::Null);

    let after = app.get(&format!("{path}?after={first}")).await.expect(200);
    assert_eq!(after.as_array().unwrap().len(), 1);
    assert_eq!(after[0]["id"], second);
    let one = app.get(&format!("{path}?limit=1")).await.expect(200);
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0]["id"], first);
    assert_eq!(
        app.get(&format!("{path}?after={second}")).await.expect(200),
        json!([])
    );

    // Each row is also an event of the job's home conversation, naming the job and the row.
    let events = app
        .state
        .collab
        .store()
        .read(|tx| tx.events_of_kinds(&["supervisor_picked_up"], EventId(0), 100))
        .unwrap();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0].session_id, Some(SessionId(s)));
    assert_eq!(events[0].payload["log_id"], first);
    assert_eq!(events[0].payload["task_id"], json!(plan));
}

#[tokio::test]
async fn an_unknown_job_is_404_and_bad_parameters_are_422() {
    let app = TestApp::start().await;
    let (_, plan) = job(&app, "Alpha").await;
    app.get("/v1/tasks/999/work-log")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tasks/abc/work-log")
        .await
        .expect_error(400, "bad_request");
    for (q, names) in [
        ("after=-1", "after"),
        ("after=x", "after"),
        ("after=1.5", "after"),
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=many", "limit"),
    ] {
        let r = app.get(&format!("/v1/tasks/{}/work-log?{q}", plan.0)).await;
        r.expect_error(422, "invalid");
        assert!(r.message().contains(names), "{q}: {}", r.text);
    }
}
