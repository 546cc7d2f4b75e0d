//! `/v1/tasks/:id/checks` and `/v1/checks/:id` over HTTP: the user's acceptance checks saved
//! (422s naming the field, `outside_workspace`), run at once and on request, edited, removed;
//! a check from words confirmed (409 `withdrawn` once later words replaced it) and never edited
//! (409 `derived_check`).

mod support;

use serde_json::{Value, json};
use support::{TestApp, wait_until};
use troupe_collab::OpenPlan;
use troupe_core::plan::RevisionCause;
use troupe_core::submission::CheckSource;
use troupe_core::words_check::{Bound, Number, Value as Said};
use troupe_core::{PlanId, SessionId, SessionMessageId};
use troupe_store::{CheckKind, NewCheck, WordsStatus};

async fn job(app: &TestApp) -> i64 {
    let bot = app
        .scripted_bot("Alpha", json!({"steps": [{"text": "on it"}]}))
        .await;
    let s = app.direct(bot).await;
    let line = app
        .post(
            &format!("/v1/sessions/{s}/messages"),
            json!({"body": "build the site"}),
        )
        .await
        .expect(201);
    let line = line["id"].as_i64().unwrap();
    app.state
        .collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: Some(SessionMessageId(line)),
            title: None,
            cause: RevisionCause::Message(SessionMessageId(line)),
        })
        .unwrap()
        .id
        .0
}

async fn newest_run(app: &TestApp, check: i64) -> Value {
    wait_until("a run of the check", || async {
        let c = app.get(&format!("/v1/checks/{check}")).await.expect(200);
        c["runs"].as_array().and_then(|r| r.first().cloned())
    })
    .await
}

#[tokio::test]
async fn api_checks_save_run_edit_remove() {
    let app = TestApp::start().await;
    let p = job(&app).await;

    // Saved and run at once.
    let c = app
        .post(
            &format!("/v1/tasks/{p}/checks"),
            json!({"kind": "command", "command": "exit 3", "done_when_line": "- the build passes"}),
        )
        .await
        .expect(201);
    let id = c["id"].as_i64().unwrap();
    assert_eq!(c["source"], "user");
    assert_eq!(c["timeout_secs"], 120);
    assert_eq!(c["line"], "the build passes");
    let run = newest_run(&app, id).await;
    assert_eq!(run["outcome"], "failed");
    assert_eq!(run["detail"], "exit 3, expected exit 0");

    // Run on request, edited, run again.
    let run = app
        .post(&format!("/v1/checks/{id}/run"), json!({}))
        .await
        .expect(200);
    assert_eq!(run["outcome"], "failed");
    let c = app
        .patch(
            &format!("/v1/checks/{id}"),
            json!({"command": "echo ok", "expected_output": "ok\n\n"}),
        )
        .await
        .expect(200);
    assert_eq!(c["command"], "echo ok");
    let run = app
        .post(&format!("/v1/checks/{id}/run"), json!({}))
        .await
        .expect(200);
    assert_eq!(run["outcome"], "passed", "{run}");
    assert_eq!(run["detail"], "exit 0, output as expected");

    // The whole job's checks run on request.
    let started = app
        .post(&format!("/v1/tasks/{p}/checks/run"), json!({}))
        .await
        .expect(202);
    assert_eq!(started["check_ids"], json!([id]));

    let list = app.get(&format!("/v1/tasks/{p}/checks")).await.expect(200);
    assert_eq!(list["checks"].as_array().unwrap().len(), 1);
    // Its line is not in the job's (empty) Done when: listed, still there.
    assert_eq!(list["match_no_line"], json!([id]));

    app.delete(&format!("/v1/checks/{id}")).await.expect(204);
    let list = app.get(&format!("/v1/tasks/{p}/checks")).await.expect(200);
    assert!(list["checks"].as_array().unwrap().is_empty());
    app.post(&format!("/v1/checks/{id}/run"), json!({}))
        .await
        .expect_error(409, "removed");
}

#[tokio::test]
async fn api_a_seams_check_is_saved_from_a_glob_and_runs() {
    let app = TestApp::start().await;
    let p = job(&app).await;
    let c = app
        .post(
            &format!("/v1/tasks/{p}/checks"),
            json!({"kind": "seams", "path": "chapters/*.md", "done_when_line": "reads as one"}),
        )
        .await
        .expect(201);
    assert_eq!(c["kind"], "seams");
    assert_eq!(c["path"], "chapters/*.md");
    let id = c["id"].as_i64().unwrap();
    // Nothing matches yet: the run fails and says so.
    let run = app
        .post(&format!("/v1/checks/{id}/run"), json!({}))
        .await
        .expect(200);
    assert_eq!(run["outcome"], "failed");
    assert_eq!(run["detail"], "no file matches chapters/*.md");
    assert_eq!(run["for_reference"], false);
    // With the parts there but no model set, the run says which setting is missing.
    let task = app.get(&format!("/v1/tasks/{p}")).await.expect(200);
    let folder = std::path::PathBuf::from(task["folder"].as_str().unwrap());
    let ws = folder.parent().unwrap().parent().unwrap();
    std::fs::create_dir_all(ws.join("chapters")).unwrap();
    std::fs::write(ws.join("chapters/1-intro.md"), "# Intro\nTea.\n").unwrap();
    std::fs::write(ws.join("chapters/2-market.md"), "# Market\nOffices.\n").unwrap();
    let run = app
        .post(&format!("/v1/checks/{id}/run"), json!({}))
        .await
        .expect(200);
    assert_eq!(run["outcome"], "error", "{run}");
    let detail = run["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("not judged: no model is set for the picture judge"),
        "{detail}"
    );
    // With a model on the role, the daemon's picture judge answers.
    let judge = app.script(
        "judge",
        json!({"steps": [{"text": "{\"seams\": [{\"holds\": true}], \"whole_set\": {\"holds\": true}}"}]}),
    );
    app.put(
        "/v1/roles/picture_judge",
        json!({"kind": "scripted", "model": "judge-1", "script": judge}),
    )
    .await
    .expect(200);
    let run = app
        .post(&format!("/v1/checks/{id}/run"), json!({}))
        .await
        .expect(200);
    assert_eq!(run["outcome"], "passed", "{run}");
    assert_eq!(run["detail"], "the seam holds, and so does the whole set");
}

#[tokio::test]
async fn api_checks_refusals_name_the_field() {
    let app = TestApp::start().await;
    let p = job(&app).await;
    let post = |body: Value| {
        let app = &app;
        async move { app.post(&format!("/v1/tasks/{p}/checks"), body).await }
    };
    let a = post(json!({"kind": "command", "command": "cat ~/.ssh/id_rsa"})).await;
    a.expect_error(422, "outside_workspace");
    assert!(a.message().contains("~/.ssh/id_rsa"), "{}", a.message());
    post(json!({"kind": "file_exists", "path": "/etc/passwd"}))
        .await
        .expect_error(422, "outside_workspace");
    for (body, field) in [
        (
            json!({"kind": "command", "command": "sleep 1", "timeout_secs": 601}),
            "timeout_secs:",
        ),
        (
            json!({"kind": "file_matches_regex", "path": "a.md", "pattern": "a(b"}),
            "pattern:",
        ),
        (json!({"kind": "file_contains", "path": "a.md"}), "pattern:"),
        (json!({"kind": "sames", "path": "a.md"}), "kind:"),
        (
            json!({"kind": "seams", "path": "a/*.md", "command": "ls"}),
            "path:",
        ),
        (json!({"kind": "seams", "path": "src/*.rs"}), "path:"),
        (json!({"kind": "words"}), "kind:"),
        (json!({"kind": "command", "command": " "}), "command:"),
        (
            json!({"kind": "file_exists", "path": "a.md", "ticket_id": 999}),
            "ticket_id:",
        ),
    ] {
        let a = post(body.clone()).await;
        a.expect_error(422, "invalid");
        assert!(a.message().starts_with(field), "{body}: {}", a.message());
    }
    post(json!({"kind": "command", "command": "true", "colour": "red"}))
        .await
        .expect_error(422, "invalid");
    // Unknown ids.
    app.get("/v1/tasks/999/checks")
        .await
        .expect_error(404, "not_found");
    app.post(
        "/v1/tasks/999/checks",
        json!({"kind": "command", "command": "true"}),
    )
    .await
    .expect_error(404, "not_found");
    app.post("/v1/tasks/999/checks/run", json!({}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/checks/999")
        .await
        .expect_error(404, "not_found");
    app.patch("/v1/checks/999", json!({"command": "true"}))
        .await
        .expect_error(404, "not_found");
    app.delete("/v1/checks/999")
        .await
        .expect_error(404, "not_found");
    app.post("/v1/checks/999/run", json!({}))
        .await
        .expect_error(404, "not_found");
    app.post("/v1/checks/999/confirm", json!({}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/checks/abc")
        .await
        .expect_error(400, "bad_request");
    // An edit reaching outside is refused too, and a user check is not confirmed.
    let c = post(json!({"kind": "command", "command": "true"}))
        .await
        .expect(201);
    let id = c["id"].as_i64().unwrap();
    app.patch(&format!("/v1/checks/{id}"), json!({"cwd": "../.."}))
        .await
        .expect_error(422, "outside_workspace");
    app.post(&format!("/v1/checks/{id}/confirm"), json!({}))
        .await
        .expect_error(422, "invalid");
}

#[tokio::test]
async fn api_words_check_is_confirmed_not_edited() {
    let app = TestApp::start().await;
    let p = job(&app).await;
    let number = Number::new(Said::Seconds { seconds: 120.0 }, Bound::About);
    // An offer no words stand on any more (its line is not filed under the job) is withdrawn
    // by reading the words again, so confirming it is refused. (An offer on no line at all is
    // a confirmed check whose words were erased: CW-20 keeps it.)
    let offer = app
        .state
        .collab
        .store()
        .write(|tx| {
            let home = tx.plan(PlanId(p))?.home_session_id.unwrap();
            let unfiled = tx.insert_line(&troupe_store::NewLine::plain(
                home,
                troupe_core::conversation::Author::User,
                "about two minutes".into(),
            ))?;
            tx.create_check(&NewCheck {
                quote_id: Some(unfiled.id.0),
                dimension: Some(number.dimension()),
                value: Some(number.value),
                bound: Some(number.bound),
                min: number.min,
                max: number.max,
                status: Some(WordsStatus::Offer),
                said_count: 1,
                ..NewCheck::new(PlanId(p), CheckKind::Words, CheckSource::Words)
            })
        })
        .unwrap();
    let id = offer.id.0;
    let c = app.get(&format!("/v1/checks/{id}")).await.expect(200);
    assert_eq!(c["to_confirm"], true);
    assert_eq!(c["gate"], false);
    app.patch(&format!("/v1/checks/{id}"), json!({"timeout_secs": 10}))
        .await
        .expect_error(409, "derived_check");
    app.post(&format!("/v1/checks/{id}/confirm"), json!({}))
        .await
        .expect_error(409, "withdrawn");

    // The user says a running time under the job: an offer, confirmed over the API.
    let session = app
        .state
        .collab
        .store()
        .read(|tx| tx.plan(PlanId(p)))
        .unwrap();
    app.state
        .collab
        .store()
        .write(|tx| {
            let l = tx.insert_line(&troupe_store::NewLine::plain(
                session.home_session_id.unwrap(),
                troupe_core::conversation::Author::User,
                "片长约 2 分钟".into(),
            ))?;
            tx.file_line(&troupe_store::NewFiling {
                message_id: l.id,
                plan_id: PlanId(p),
                ticket_id: None,
                part_id: None,
                source: troupe_store::FilingSource::Reader,
                filed_by: "test".into(),
                locked: false,
                primary: true,
            })
        })
        .unwrap();
    let offer = wait_until("an offer from the words", || async {
        let list = app.get(&format!("/v1/tasks/{p}/checks")).await.expect(200);
        list["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == "words" && c["removed_at"].is_null())
            .cloned()
    })
    .await;
    assert_eq!(offer["status"], "offer");
    assert_eq!(offer["max"], 132.0);
    let id = offer["id"].as_i64().unwrap();
    let c = app
        .post(&format!("/v1/checks/{id}/confirm"), json!({}))
        .await
        .expect(200);
    assert_eq!(c["status"], "in_force");
    assert_eq!(
        (c["gate"].clone(), c["to_confirm"].clone()),
        (json!(true), json!(false))
    );
    // Measured again at once: no video delivered yet, so no evidence either way.
    assert_eq!(c["runs"][0]["outcome"], "error");
    assert!(
        c["runs"][0]["detail"]
            .as_str()
            .unwrap()
            .starts_with("no delivered video")
    );
}
