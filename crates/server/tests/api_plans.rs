//! `/v1/tasks` over HTTP: plans ("jobs") of a conversation, read with their revisions and the
//! lines filed under them, and the person's edit of the spec. Plans are opened here through
//! `Collab::open_plan`, as a Bot's desk or `work_on` would.

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_collab::OpenPlan;
use troupe_core::plan::RevisionCause;
use troupe_core::{SessionId, SessionMessageId};

/// A direct conversation with a scripted Bot named Alpha and a person's line in it; a plan
/// opened from that line. Answers (session, line, plan).
async fn job(app: &TestApp, words: &str) -> (i64, i64, Value) {
    let bot = app
        .scripted_bot("Alpha", json!({"steps": [{"text": "on it"}]}))
        .await;
    let s = app.direct(bot).await;
    let line = app
        .post(
            &format!("/v1/sessions/{s}/messages"),
            json!({"body": words}),
        )
        .await
        .expect(201);
    let line = line["id"].as_i64().unwrap();
    let plan = app
        .state
        .collab
        .open_plan(OpenPlan {
            home_session_id: SessionId(s),
            opening_line_id: Some(SessionMessageId(line)),
            title: None,
            cause: RevisionCause::Message(SessionMessageId(line)),
        })
        .unwrap();
    let plan = serde_json::to_value(plan).unwrap();
    (s, line, plan)
}

fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

#[tokio::test]
async fn plans_are_listed_by_conversation_and_read_with_revisions_and_lines() {
    let app = TestApp::start().await;
    let (s, line, plan) = job(&app, "@Alpha 做一个 logo").await;
    let p = id(&plan);

    let list = app
        .get(&format!("/v1/tasks?session_id={s}"))
        .await
        .expect(200);
    assert_eq!(list.as_array().unwrap().len(), 1);
    let one = &list[0];
    assert_eq!(one["id"], p);
    // DS-7: the Bot named is left out of the name; the request is kept verbatim.
    assert_eq!(one["name"], "做一个 logo");
    assert_eq!(one["original_request"], "@Alpha 做一个 logo");
    assert_eq!(one["status"], "active");
    assert_eq!(one["dormant"], false);
    assert_eq!(one["version"], 1);
    assert_eq!(one["home_session_id"], s);
    assert_eq!(one["opening_line_id"], line);
    assert_eq!(one["spec"]["goal"], "");
    let folder = one["folder"].as_str().unwrap();
    assert!(
        folder.ends_with(&format!("/jobs/plan_{p}-做一个-logo")),
        "{folder}"
    );
    assert!(std::path::Path::new(folder).is_dir());

    assert_eq!(
        app.get(&format!("/v1/tasks/plan_{p}")).await.expect(200),
        *one
    );

    let revs = app
        .get(&format!("/v1/tasks/{p}/revisions"))
        .await
        .expect(200);
    assert_eq!(revs.as_array().unwrap().len(), 1);
    assert_eq!(revs[0]["version"], 1);
    assert_eq!(revs[0]["cause"], format!("message:{line}"));
    assert_eq!(revs[0]["changes"]["name"]["new"], "做一个 logo");

    let lines = app
        .get(&format!("/v1/tasks/{p}/messages"))
        .await
        .expect(200);
    let ids: Vec<i64> = lines.as_array().unwrap().iter().map(id).collect();
    assert_eq!(ids, [line], "the opening line is filed under its job");
    assert_eq!(lines[0]["body"], "@Alpha 做一个 logo");
    let after = app
        .get(&format!("/v1/tasks/{p}/messages?after={line}&limit=5"))
        .await
        .expect(200);
    assert_eq!(after, json!([]));
}

#[tokio::test]
async fn the_persons_spec_edit_is_a_new_version_with_cause_user() {
    let app = TestApp::start().await;
    let (_, _, plan) = job(&app, "make a logo").await;
    let p = id(&plan);
    let path = format!("/v1/tasks/{p}/spec");
    let edited = app
        .patch(
            &path,
            json!({"version": 1, "goal": "a round logo", "done_when": "three drafts", "status": "active"}),
        )
        .await
        .expect(200);
    assert_eq!(edited["version"], 2);
    assert_eq!(edited["spec"]["goal"], "a round logo");
    assert_eq!(edited["spec"]["done_when"], "three drafts");
    assert!(edited["last_user_activity_at"].as_i64().is_some());

    // PLAN-2/3: a rename by the person sets renamed_at and keeps the folder.
    let renamed = app
        .patch(&path, json!({"version": 2, "name": "Company logo"}))
        .await
        .expect(200);
    assert_eq!(renamed["name"], "Company logo");
    assert!(renamed["renamed_at"].as_i64().is_some());
    assert_eq!(renamed["folder"], plan["folder"]);

    let done = app
        .patch(&path, json!({"version": 3, "status": "done"}))
        .await
        .expect(200);
    assert_eq!(done["status"], "done");
    assert!(done["delivered_at"].as_i64().is_some());

    let revs = app
        .get(&format!("/v1/tasks/{p}/revisions"))
        .await
        .expect(200);
    let causes: Vec<&str> = revs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["cause"].as_str().unwrap())
        .collect();
    assert_eq!(causes[1..], ["user", "user", "user"]);
    assert_eq!(
        revs[2]["changes"],
        json!({"name": {"old": "make a logo", "new": "Company logo"}})
    );
}

#[tokio::test]
async fn stale_spec_patch_409() {
    let app = TestApp::start().await;
    let (_, _, plan) = job(&app, "make a logo").await;
    let path = format!("/v1/tasks/{}/spec", id(&plan));
    app.patch(&path, json!({"version": 1, "goal": "round"}))
        .await
        .expect(200);
    let stale = app
        .patch(&path, json!({"version": 1, "goal": "square"}))
        .await;
    stale.expect_error(409, "revision_conflict");
    assert!(stale.message().contains("version 2"), "{}", stale.text);
    let now = app
        .get(&format!("/v1/tasks/{}", id(&plan)))
        .await
        .expect(200);
    assert_eq!(
        (now["version"].clone(), now["spec"]["goal"].clone()),
        (json!(2), json!("round"))
    );
}

#[tokio::test]
async fn bad_spec_values_are_422_naming_the_field() {
    let app = TestApp::start().await;
    let (_, _, plan) = job(&app, "make a logo").await;
    let path = format!("/v1/tasks/{}/spec", id(&plan));
    for (body, field) in [
        (json!({"version": 1, "name": "x".repeat(41)}), "name"),
        (json!({"version": 1, "name": "   "}), "name"),
        (json!({"version": 1, "rules": "r".repeat(4001)}), "rules"),
        (json!({"version": 1, "status": "closed"}), "status"),
        (json!({"version": 1, "colour": "red"}), "colour"),
        (json!({"goal": "x"}), "version"),
        (json!({"version": 1}), "nothing to change"),
        (json!({"version": 1, "goal": ""}), "nothing to change"),
    ] {
        let r = app.patch(&path, body.clone()).await;
        r.expect_error(422, "invalid");
        assert!(r.message().contains(field), "{body}: {}", r.text);
    }
    let now = app
        .get(&format!("/v1/tasks/{}", id(&plan)))
        .await
        .expect(200);
    assert_eq!(now["version"], 1, "a refused edit writes nothing");
    // Parked is a stop's: the edit makes a hold on the job (HOLD-P9), which parks it.
    let parked = app
        .patch(&path, json!({"version": 1, "status": "parked"}))
        .await
        .expect(200);
    assert_eq!(parked["status"], "parked");
    let holds = app.get("/v1/holds").await.expect(200);
    assert_eq!(holds[0]["scope"]["kind"], "plan");
    assert_eq!(holds[0]["scope"]["plan_id"], plan["id"]);
}

#[tokio::test]
async fn unknown_plans_and_bad_queries_are_refused() {
    let app = TestApp::start().await;
    let (s, _, _) = job(&app, "make a logo").await;
    app.get("/v1/tasks/999")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tasks/999/revisions")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tasks/999/messages")
        .await
        .expect_error(404, "not_found");
    app.patch("/v1/tasks/999/spec", json!({"version": 1, "goal": "x"}))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tasks/abc")
        .await
        .expect_error(400, "bad_request");
    for q in ["", "?session_id=nope", &format!("?parent_session={s}")] {
        let r = app.get(&format!("/v1/tasks{q}")).await;
        r.expect_error(422, "invalid");
        assert!(r.message().contains("session_id"), "{q}: {}", r.text);
    }
    app.get("/v1/tasks?session_id=999")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/tasks/1/messages?limit=0")
        .await
        .expect_error(422, "invalid");
}

#[tokio::test]
async fn child_tasks_are_served_under_their_own_path() {
    let app = TestApp::start().await;
    let (s, _, _) = job(&app, "make a logo").await;
    let none = app
        .get(&format!("/v1/child-tasks?parent_session={s}"))
        .await
        .expect(200);
    assert_eq!(none, json!([]));
    app.get("/v1/child-tasks/999")
        .await
        .expect_error(404, "not_found");
}

/// HOLD-P8: `held_by` lists the holds in force over the job as a whole — its own, its home
/// conversation's, everything — newest first, on the plan and in the list; a hold on one
/// Bot, or on one Bot's work in the job, is not over the whole job; a lifted hold drops out.
#[tokio::test]
async fn hold_p8_held_by_lists_the_holds_over_the_whole_plan() {
    let app = TestApp::start().await;
    let (s, _, plan) = job(&app, "@Alpha 做一个 logo").await;
    let p = id(&plan);
    assert_eq!(plan["held_by"], json!([]));
    let bot = app.get(&format!("/v1/sessions/{s}")).await.expect(200)["bot_ids"][0].clone();

    let hold = |scope: Value| {
        let app = &app;
        async move {
            id(&app
                .post("/v1/holds", json!({ "scope": scope }))
                .await
                .expect(201))
        }
    };
    let own = hold(json!({"kind": "plan", "task_id": p})).await;
    let _bot_only = hold(json!({"kind": "bot", "bot_id": bot})).await;
    let _bot_plan = hold(json!({"kind": "bot_plan", "bot_id": bot, "task_id": p})).await;
    let home = hold(json!({"kind": "session", "session_id": s})).await;
    let everything = hold(json!({"kind": "everything"})).await;

    let one = app.get(&format!("/v1/tasks/{p}")).await.expect(200);
    assert_eq!(one["held_by"], json!([everything, home, own]), "{one}");
    let list = app
        .get(&format!("/v1/tasks?session_id={s}"))
        .await
        .expect(200);
    assert_eq!(list[0]["held_by"], one["held_by"]);

    app.post(&format!("/v1/holds/{home}/lift"), json!({}))
        .await
        .expect(200);
    let one = app.get(&format!("/v1/tasks/{p}")).await.expect(200);
    assert_eq!(one["held_by"], json!([everything, own]), "{one}");
}
