//! Tickets over HTTP (digest 003-B §1, §0.5): `GET|POST /v1/tasks/:id/tickets`,
//! `GET|PATCH /v1/tickets/:id`, `POST /v1/tickets/:id/parts`, `POST /v1/tasks/:id/large`, and
//! every refusal they answer with. Jobs open in a group through `Collab::open_plan`, as a
//! Bot's desk would open them.

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_collab::OpenPlan;
use troupe_core::plan::RevisionCause;
use troupe_core::submission::SubmissionOrigin;
use troupe_core::ticket::{StageSource, TicketStage};
use troupe_core::{PlanId, SessionId, TicketId};
use troupe_store::{Layout, LayoutItem, NewSubmission};

struct Job {
    bots: Vec<i64>,
    plan: i64,
}

/// A group of Maker, Checker and Other, and a job opened from a person's line in it.
async fn job(app: &TestApp, words: &str) -> Job {
    let mut bots = Vec::new();
    for name in ["Maker", "Checker", "Other"] {
        bots.push(
            app.scripted_bot(name, json!({"steps": [{"text": "on it"}]}))
                .await,
        );
    }
    let s = app
        .post(
            "/v1/sessions",
            json!({"kind": "group", "bot_ids": bots, "title": "Team"}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    job_in(app, s, bots, words).await
}

async fn job_in(app: &TestApp, s: i64, bots: Vec<i64>, words: &str) -> Job {
    let line = app
        .state
        .collab
        .store()
        .write(|tx| {
            tx.insert_line(&troupe_store::NewLine::plain(
                SessionId(s),
                troupe_core::conversation::Author::User,
                words.into(),
            ))
        })
        .unwrap();
    let plan = app
        .state
        .collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: Some(line.id),
            title: None,
            cause: RevisionCause::User,
        })
        .unwrap();
    Job {
        bots,
        plan: plan.id.0,
    }
}

async fn add(app: &TestApp, plan: i64, title: &str) -> Value {
    app.post(
        &format!("/v1/tasks/{plan}/tickets"),
        json!({"title": title}),
    )
    .await
    .expect(201)
}

fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

fn events(app: &TestApp, kind: &str) -> Vec<Value> {
    app.state
        .collab
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100_000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == kind)
        .map(|e| e.payload)
        .collect()
}

#[tokio::test]
async fn board_adds_lists_reads_and_adds_parts() {
    let app = TestApp::start().await;
    let j = job(&app, "make a launch poster").await;
    let t = app
        .post(
            &format!("/v1/tasks/{}/tickets", j.plan),
            json!({"title": "Poster", "description": "A1 portrait", "done_when": "poster.png in the folder",
                   "owner_bot_id": j.bots[0], "reviewer_bot_id": j.bots[1]}),
        )
        .await
        .expect(201);
    assert_eq!(t["number"], 1);
    assert_eq!(t["stage"], "to_do");
    assert_eq!(t["status"], "to_do");
    assert_eq!(t["label"], "To do");
    assert_eq!(t["folder"], "01-Poster");
    assert_eq!(t["owner_bot_id"], j.bots[0]);
    assert_eq!(t["reviewer_bot_id"], j.bots[1]);
    assert_eq!(t["task_id"], j.plan);
    assert_eq!(t["waits_for"], json!([]));
    // T24: the folder with its ticket.md (the ticket's words, the job's Done when and rules).
    let folder = app.state.collab.plan(PlanId(j.plan)).unwrap().folder;
    let md =
        std::fs::read_to_string(std::path::Path::new(&folder).join("01-Poster/ticket.md")).unwrap();
    assert!(md.starts_with("# #01 Poster"), "{md}");
    assert!(
        md.contains("A1 portrait") && md.contains("poster.png in the folder"),
        "{md}"
    );

    let list = app
        .get(&format!("/v1/tasks/{}/tickets", j.plan))
        .await
        .expect(200);
    assert_eq!(list["counter"], "1 open · 1 in all");
    assert_eq!(list["tickets"].as_array().unwrap().len(), 1);
    let one = app
        .get(&format!("/v1/tickets/{}", id(&t)))
        .await
        .expect(200);
    assert_eq!(one["title"], "Poster");

    let parts = app
        .post(
            &format!("/v1/tickets/{}/parts", id(&t)),
            json!({"parts": ["shot 1", "shot 2"]}),
        )
        .await
        .expect(200);
    let labels: Vec<&str> = parts["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["shot 1", "shot 2"]);
    assert_eq!(parts["label"], "To do · 0/2 approved");
    // The same label again adds nothing.
    let again = app
        .post(
            &format!("/v1/tickets/{}/parts", id(&t)),
            json!({"parts": ["shot 2", "shot 3"]}),
        )
        .await
        .expect(200);
    assert_eq!(again["parts"].as_array().unwrap().len(), 3);

    // Bad input: a clear 422 naming the field; unknown ids 404; a bad id 400.
    app.post(
        &format!("/v1/tasks/{}/tickets", j.plan),
        json!({"title": "  "}),
    )
    .await
    .expect_error(422, "invalid");
    app.post(&format!("/v1/tasks/{}/tickets", j.plan), json!({}))
        .await
        .expect_error(422, "invalid");
    app.post(
        &format!("/v1/tasks/{}/tickets", j.plan),
        json!({"title": "x", "colour": "red"}),
    )
    .await
    .expect_error(422, "invalid");
    app.post(
        &format!("/v1/tasks/{}/tickets", j.plan),
        json!({"title": "x", "owner_bot_id": j.bots[0], "reviewer_bot_id": j.bots[0]}),
    )
    .await
    .expect_error(422, "reviewer_is_owner");
    app.post(
        &format!("/v1/tickets/{}/parts", id(&t)),
        json!({"parts": []}),
    )
    .await
    .expect_error(422, "invalid");
    app.post(
        &format!("/v1/tickets/{}/parts", id(&t)),
        json!({"parts": ["a", " "]}),
    )
    .await
    .expect_error(422, "invalid");
    app.get("/v1/tasks/999/tickets")
        .await
        .expect_error(404, "not_found");
    app.post("/v1/tasks/999/tickets", json!({"title": "x"}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tickets/999")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tickets/abc")
        .await
        .expect_error(400, "bad_request");
    app.patch("/v1/tickets/999", json!({"title": "x"}))
        .await
        .expect_error(404, "not_found");
    app.post("/v1/tickets/999/parts", json!({"parts": ["a"]}))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn reviewer_edits_refuse_the_owner_and_outsiders() {
    let app = TestApp::start().await;
    let j = job(&app, "make a launch poster").await;
    let t = app
        .post(
            &format!("/v1/tasks/{}/tickets", j.plan),
            json!({"title": "Poster", "owner_bot_id": j.bots[0]}),
        )
        .await
        .expect(201);
    let path = format!("/v1/tickets/{}", id(&t));
    app.patch(&path, json!({"reviewer_bot_id": j.bots[0]}))
        .await
        .expect_error(422, "reviewer_is_owner");
    let outsider = app
        .scripted_bot("Outsider", json!({"steps": [{"text": "hi"}]}))
        .await;
    app.patch(&path, json!({"reviewer_bot_id": outsider}))
        .await
        .expect_error(422, "not_in_conversation");
    let ok = app
        .patch(
            &path,
            json!({"reviewer_bot_id": j.bots[1], "title": "Big poster",
                             "description": "A0", "done_when": "poster.pdf"}),
        )
        .await
        .expect(200);
    assert_eq!(ok["reviewer_bot_id"], j.bots[1]);
    assert_eq!(ok["title"], "Big poster");
    assert_eq!(ok["description"], "A0");
    assert_eq!(ok["done_when"], "poster.pdf");
    // The folder stays as it was made (T24).
    assert_eq!(ok["folder"], "01-Poster");
    let cleared = app
        .patch(&path, json!({"reviewer_bot_id": null}))
        .await
        .expect(200);
    assert_eq!(cleared["reviewer_bot_id"], Value::Null);
    app.patch(&path, json!({"title": ""}))
        .await
        .expect_error(422, "invalid");
    app.patch(&path, json!({"status": "finished"}))
        .await
        .expect_error(422, "invalid");
}

#[tokio::test]
async fn dependency_edits_refuse_each_fault() {
    let app = TestApp::start().await;
    let j = job(&app, "make a launch kit").await;
    let a = id(&add(&app, j.plan, "Poster").await);
    let b = id(&add(&app, j.plan, "Slogans").await);
    let c = id(&add(&app, j.plan, "Banner").await);
    app.patch(&format!("/v1/tickets/{a}"), json!({"depends_on": [a]}))
        .await
        .expect_error(422, "depends_on_self");
    let ok = app
        .patch(&format!("/v1/tickets/{a}"), json!({"depends_on": [b]}))
        .await
        .expect(200);
    assert_eq!(ok["depends_on"], json!([b]));
    assert_eq!(ok["waits_for"], json!(["Waits for #02 to be handed over"]));
    app.patch(&format!("/v1/tickets/{b}"), json!({"depends_on": [a]}))
        .await
        .expect_error(422, "dependency_loop");
    // Another job's ticket.
    let s = app
        .state
        .collab
        .plan(PlanId(j.plan))
        .unwrap()
        .home_session_id
        .unwrap();
    let other = job_in(&app, s.0, j.bots.clone(), "make a flyer").await;
    let elsewhere = id(&add(&app, other.plan, "Flyer").await);
    app.patch(
        &format!("/v1/tickets/{a}"),
        json!({"depends_on": [elsewhere]}),
    )
    .await
    .expect_error(422, "other_plan");
    app.patch(&format!("/v1/tickets/{a}"), json!({"depends_on": [9999]}))
        .await
        .expect_error(422, "unknown_ticket");
    // A set-aside ticket holds nobody: depending on it newly is refused.
    app.patch(&format!("/v1/tickets/{c}"), json!({"status": "parked"}))
        .await
        .expect(200);
    app.patch(&format!("/v1/tickets/{a}"), json!({"depends_on": [b, c]}))
        .await
        .expect_error(422, "parked_dependency");
    // At most 39.
    let many: Vec<i64> = app
        .state
        .collab
        .store()
        .write(|tx| {
            let folder = tx.plan(PlanId(j.plan))?.folder;
            let items = (0..40)
                .map(|i| LayoutItem {
                    title: format!("Shot {i}"),
                    ..Default::default()
                })
                .collect();
            let laid = tx.lay_out(
                PlanId(j.plan),
                &Layout {
                    items,
                    drops: Vec::new(),
                },
                |n, t| format!("{folder}/{n:02}-{t}"),
            )?;
            Ok(laid.tickets.iter().map(|t| t.id.0).collect())
        })
        .unwrap();
    app.patch(&format!("/v1/tickets/{a}"), json!({"depends_on": many}))
        .await
        .expect_error(422, "too_many_dependencies");
    app.patch(&format!("/v1/tickets/{a}"), json!({"depends_on": "b"}))
        .await
        .expect_error(422, "invalid");
}

#[tokio::test]
async fn board_status_edit_moves_the_stage_supersedes_and_delivers() {
    let app = TestApp::start().await;
    let j = job(&app, "make a launch poster").await;
    let t = id(&add(&app, j.plan, "Poster").await);
    // An undecided hand-over of the ticket.
    let sub = app
        .state
        .collab
        .store()
        .write(|tx| {
            tx.create_submission(&NewSubmission {
                ticket_id: TicketId(t),
                origin: SubmissionOrigin::Explicit,
                producer_bot_id: Some(troupe_core::BotId(j.bots[0])),
                run_id: None,
                work_item_id: None,
                content: None,
                note: String::new(),
                claims: Vec::new(),
                files: Vec::new(),
                parts: Vec::new(),
            })
        })
        .unwrap();
    let done = app
        .patch(&format!("/v1/tickets/{t}"), json!({"status": "done"}))
        .await
        .expect(200);
    assert_eq!(done["stage"], "approved");
    assert_eq!(done["status"], "done");
    assert_eq!(done["stage_source"], "user");
    let moved = events(&app, "ticket_stage_changed");
    let last = moved.last().unwrap();
    assert_eq!(
        (
            last["from"].as_str(),
            last["to"].as_str(),
            last["source"].as_str()
        ),
        (Some("to_do"), Some("approved"), Some("user"))
    );
    // T7/SP2: the board edit superseded the undecided hand-over.
    let after = app
        .state
        .collab
        .store()
        .read(|tx| tx.submission(sub.id))
        .unwrap();
    assert_eq!(after.state.as_str(), "superseded");
    // T9: every ticket approved and no job-wide gate: delivered.
    let d = app
        .state
        .collab
        .store()
        .read(|tx| tx.plan_deliverables(PlanId(j.plan)))
        .unwrap();
    assert!(d.delivered);
    assert_eq!(events(&app, "plan_delivered").len(), 1);
    // T10: it leaves approved, the job is active again.
    app.patch(
        &format!("/v1/tickets/{t}"),
        json!({"status": "in_progress"}),
    )
    .await
    .expect(200);
    assert_eq!(events(&app, "plan_reopened").len(), 1);
}

#[tokio::test]
async fn sample_and_large_choices() {
    let app = TestApp::start().await;
    let j = job(&app, "make a 5-minute music video").await;
    let a = id(&add(&app, j.plan, "Shot 1").await);
    let b = id(&add(&app, j.plan, "Shot 2").await);
    app.patch(&format!("/v1/tickets/{a}"), json!({"sample": true}))
        .await
        .expect_error(409, "not_large");
    app.post(
        &format!("/v1/tasks/{}/large", j.plan),
        json!({"choice": "huge"}),
    )
    .await
    .expect_error(422, "invalid");
    app.post("/v1/tasks/999/large", json!({"choice": "no_need"}))
        .await
        .expect_error(404, "not_found");
    let large = app
        .post(
            &format!("/v1/tasks/{}/large", j.plan),
            json!({"choice": "treat_as_large"}),
        )
        .await
        .expect(200);
    assert_eq!(large["large_state"], "large");
    assert_eq!(large["large_source"], "user");
    assert_eq!(events(&app, "large_job_changed").len(), 1);
    let s = app
        .patch(&format!("/v1/tickets/{a}"), json!({"sample": true}))
        .await
        .expect(200);
    assert_eq!(s["is_sample"], true);
    app.patch(&format!("/v1/tickets/{a}"), json!({"sample": true}))
        .await
        .expect_error(409, "already_sample");
    app.patch(&format!("/v1/tickets/{a}"), json!({"sample": false}))
        .await
        .expect_error(422, "invalid");
    // Shot 2 waits for the sample (LJ5).
    let two = app.get(&format!("/v1/tickets/{b}")).await.expect(200);
    assert_eq!(
        two["waits_for"],
        json!(["Waits for sample #01 to be handed over"])
    );
    // A ticket handed over already cannot become the sample.
    app.state
        .collab
        .store()
        .write(|tx| tx.set_ticket_stage(TicketId(b), TicketStage::Submitted, StageSource::Check))
        .unwrap();
    app.patch(&format!("/v1/tickets/{b}"), json!({"sample": true}))
        .await
        .expect_error(409, "ticket_through");
    // "No need" is sticky (LJ2).
    let no = app
        .post(
            &format!("/v1/tasks/{}/large", j.plan),
            json!({"choice": "no_need"}),
        )
        .await
        .expect(200);
    assert_eq!(no["large_state"], "not_large");
    assert_eq!(no["user_said_no_need"], true);
    // The user's own later "Treat as large" is their latest word (only readings are held off).
    let large = app
        .post(
            &format!("/v1/tasks/{}/large", j.plan),
            json!({"choice": "treat_as_large"}),
        )
        .await
        .expect(200);
    assert_eq!(large["large_state"], "large");
    assert_eq!(large["large_source"], "user");
    assert_eq!(large["user_said_no_need"], false);
}

// S-T5
#[tokio::test]
async fn s_t5_counter_and_drop_labels() {
    let app = TestApp::start().await;
    let j = job(&app, "make a launch kit").await;
    let mut ids = Vec::new();
    for title in ["Poster", "Slogans", "Banner", "Flyer", "Video"] {
        ids.push(id(&add(&app, j.plan, title).await));
    }
    app.state
        .collab
        .store()
        .write(|tx| tx.drop_ticket(TicketId(ids[0]), "the client dropped posters"))
        .unwrap();
    app.patch(
        &format!("/v1/tickets/{}", ids[1]),
        json!({"status": "parked"}),
    )
    .await
    .expect(200);
    let list = app
        .get(&format!("/v1/tasks/{}/tickets", j.plan))
        .await
        .expect(200);
    assert_eq!(list["counter"], "3 open · 3 in all · 2 dropped/set aside");
    let t = &list["tickets"];
    assert_eq!(t[0]["label"], "Dropped");
    assert_eq!(t[0]["drop_line"], "Dropped: the client dropped posters");
    assert_eq!(t[1]["label"], "Parked");
    assert_eq!(t[1]["drop_line"], Value::Null);
    // Both in the Parked column, neither showing an owner.
    assert_eq!(t[0]["status"], "parked");
    assert_eq!(t[1]["status"], "parked");
}
