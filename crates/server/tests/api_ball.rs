//! The ball holder over HTTP (digest C §13): the `ball` each ticket and the job carry
//! (`GET /v1/tasks/:id/tickets`, `GET /v1/tickets/:id`, `GET /v1/tasks/:id`), and BH-5's
//! refusals of a board's `depends_on` edit (S-BH-4), each writing nothing.

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_collab::OpenPlan;
use troupe_core::conversation::Author;
use troupe_core::plan::RevisionCause;
use troupe_core::{PlanId, SessionId};
use troupe_store::{Layout, LayoutItem, NewLine};

/// A job opened from a person's line in the group `s`.
fn open_job(app: &TestApp, s: i64, words: &str) -> i64 {
    let collab = &app.state.collab;
    let line = collab
        .store()
        .write(|tx| tx.insert_line(&NewLine::plain(SessionId(s), Author::User, words.into())))
        .unwrap();
    collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: Some(line.id),
            title: None,
            cause: RevisionCause::User,
        })
        .unwrap()
        .id
        .0
}

/// A group of Maker and Lead (its confirmed lead), and a job opened in it.
async fn team(app: &TestApp) -> (i64, i64, i64, i64) {
    let quiet = json!({"steps": [{"text": "on it"}]});
    let maker = app.scripted_bot("Maker", quiet.clone()).await;
    let lead = app.scripted_bot("Lead", quiet).await;
    let s = app
        .post(
            "/v1/sessions",
            json!({"kind": "group", "bot_ids": [maker, lead], "title": "Team"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    app.put(
        &format!("/v1/sessions/{s}/lead"),
        json!({"bot_id": lead, "confirmed": true}),
    )
    .await
    .expect(200);
    (s, maker, lead, open_job(app, s, "make a launch kit"))
}

async fn add(app: &TestApp, plan: i64, title: &str) -> i64 {
    app.post(
        &format!("/v1/tasks/{plan}/tickets"),
        json!({"title": title}),
    )
    .await
    .expect(201)["id"]
        .as_i64()
        .unwrap()
}

async fn depends_on(app: &TestApp, ticket: i64) -> Value {
    app.get(&format!("/v1/tickets/{ticket}")).await.expect(200)["depends_on"].clone()
}

#[tokio::test]
async fn s_bh_4_depends_on_refusals() {
    let app = TestApp::start().await;
    let (s, _, _, plan) = team(&app).await;
    let a = add(&app, plan, "Poster").await;
    let b = add(&app, plan, "Slogans").await;
    let c = add(&app, plan, "Banner").await;
    app.patch(&format!("/v1/tickets/{a}"), json!({"depends_on": [b]}))
        .await
        .expect(200);
    let refused = |code: &'static str, on: Value| {
        let app = &app;
        async move {
            app.patch(&format!("/v1/tickets/{a}"), json!({ "depends_on": on }))
                .await
                .expect_error(422, code);
            assert_eq!(depends_on(app, a).await, json!([b]), "{code} wrote nothing");
        }
    };
    refused("depends_on_self", json!([a])).await;
    // b → a would close a loop with a → b.
    app.patch(&format!("/v1/tickets/{b}"), json!({"depends_on": [a]}))
        .await
        .expect_error(422, "dependency_loop");
    assert_eq!(depends_on(&app, b).await, json!([]));
    // Another job's ticket.
    let other = open_job(&app, s, "make a flyer");
    let elsewhere = add(&app, other, "Flyer").await;
    refused("other_plan", json!([b, elsewhere])).await;
    // A parked ticket newly added holds nobody.
    app.patch(&format!("/v1/tickets/{c}"), json!({"status": "parked"}))
        .await
        .expect(200);
    refused("parked_dependency", json!([b, c])).await;
    // 40 ids, all of this job.
    let many: Vec<i64> = app
        .state
        .collab
        .store()
        .write(|tx| {
            let folder = tx.plan(PlanId(plan))?.folder;
            let items = (0..40)
                .map(|i| LayoutItem {
                    title: format!("Shot {i}"),
                    ..Default::default()
                })
                .collect();
            let laid = tx.lay_out(
                PlanId(plan),
                &Layout {
                    items,
                    drops: Vec::new(),
                },
                |n, t| format!("{folder}/{n:02}-{t}"),
            )?;
            Ok(laid.tickets.iter().map(|t| t.id.0).collect())
        })
        .unwrap();
    refused("too_many_dependencies", json!(many)).await;
    // 39 are allowed.
    app.patch(
        &format!("/v1/tickets/{a}"),
        json!({"depends_on": many[..39]}),
    )
    .await
    .expect(200);
}

#[tokio::test]
async fn tickets_and_the_job_carry_the_ball() {
    let app = TestApp::start().await;
    let (_, _, lead, plan) = team(&app).await;
    let a = add(&app, plan, "Poster").await;
    let list = app
        .get(&format!("/v1/tasks/{plan}/tickets"))
        .await
        .expect(200);
    // Nobody owns it: the group's confirmed lead hands it out.
    assert_eq!(
        list["tickets"][0]["ball"],
        json!({"holder": "bot", "bot_id": lead, "why": "lead",
               "text": "Waiting on Lead to hand it out"})
    );
    let one = app
        .patch(&format!("/v1/tickets/{a}"), json!({"status": "in_review"}))
        .await
        .expect(200);
    assert_eq!(one["ball"]["holder"], "user");
    assert_eq!(
        one["ball"]["text"],
        "Waiting on your word: say it is fine, or what to fix"
    );
    let job = app.get(&format!("/v1/tasks/{plan}")).await.expect(200);
    assert_eq!(job["ball"], one["ball"]);
    // A done ticket shows no ball, nor does the job with no open ticket.
    app.patch(&format!("/v1/tickets/{a}"), json!({"status": "done"}))
        .await
        .expect(200);
    let one = app.get(&format!("/v1/tickets/{a}")).await.expect(200);
    assert_eq!(one["ball"], Value::Null);
    let job = app.get(&format!("/v1/tasks/{plan}")).await.expect(200);
    assert_eq!(job["ball"], Value::Null);
}
