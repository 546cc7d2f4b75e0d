//! The holds routes over HTTP: `GET/POST /v1/holds`, `GET /v1/holds/{id}`,
//! `POST /v1/holds/{id}/lift`, the work log `GET /v1/audit`, and the composer Stop
//! `POST /v1/turns/stop` that makes a hold in a direct (digest A §13, §14.11).

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_engine::StreamNotice;

/// A Bot whose first turn streams slowly for ~10 s and whose next one answers at once.
fn slow_then_quick() -> Value {
    let story = (1..=200)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    json!({"steps": [
        {"text": story, "chunks": 200, "chunk_delay_ms": 50},
        {"text": "going on from your line"}
    ]})
}

async fn group(app: &TestApp, bots: &[i64]) -> i64 {
    let s = app
        .post("/v1/sessions", json!({"kind": "group", "bot_ids": bots}))
        .await
        .expect(201);
    s["id"].as_i64().unwrap()
}

async fn holds(app: &TestApp, query: &str) -> Vec<Value> {
    app.get(&format!("/v1/holds{query}"))
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .clone()
}

fn id_of(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

#[tokio::test]
async fn a_menu_stop_is_made_once_listed_newest_first_and_lifted_once() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Quiet", json!({"steps": [{"text": "ok"}]}))
        .await;
    let s = app.direct(bot).await;
    assert!(holds(&app, "").await.is_empty());

    // Stop every Bot: 201, in force, the person's button; the same scope again is that hold.
    let all = app
        .post("/v1/holds", json!({"scope": {"kind": "everything"}}))
        .await
        .expect(201);
    assert_eq!(all["status"], "in_force", "{all}");
    assert_eq!(all["scope"]["kind"], "everything");
    assert_eq!(all["source"], "user_button");
    assert_eq!(all["lift_on_next_user_message"], true);
    assert_eq!(all["cancel"], false);
    assert!(all["plan_title"].is_null());
    assert!(
        all["effect"]["stopped_turns"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let same = app
        .post("/v1/holds", json!({"scope": {"kind": "everything"}}))
        .await
        .expect(200);
    assert_eq!(id_of(&same), id_of(&all));

    // Stop all of one Bot's work, from the direct's menu; then a conversation's.
    let of_bot = app
        .post(
            "/v1/holds",
            json!({"scope": {"kind": "bot", "bot_id": bot}, "session_id": s}),
        )
        .await
        .expect(201);
    assert_eq!(of_bot["scope"], json!({"kind": "bot", "bot_id": bot}));
    assert_eq!(of_bot["session_id"], s);
    let of_session = app
        .post(
            "/v1/holds",
            json!({"scope": {"kind": "session", "session_id": s}}),
        )
        .await
        .expect(201);
    assert_eq!(of_session["scope"]["session_id"], s);

    let listed: Vec<i64> = holds(&app, "").await.iter().map(id_of).collect();
    assert_eq!(
        listed,
        vec![id_of(&of_session), id_of(&of_bot), id_of(&all)],
        "newest first"
    );
    let one = app
        .get(&format!("/v1/holds/hold_{}", id_of(&of_bot)))
        .await
        .expect(200);
    assert_eq!(one, of_bot);

    // Lift: lifted by the button; again, the same hold comes back unchanged.
    let lifted = app
        .post(&format!("/v1/holds/{}/lift", id_of(&of_bot)), json!({}))
        .await
        .expect(200);
    assert_eq!(lifted["status"], "lifted", "{lifted}");
    assert_eq!(lifted["lifted_by"], "user_button");
    assert!(lifted["lifted_at"].is_i64());
    let again = app
        .post(&format!("/v1/holds/{}/lift", id_of(&of_bot)), json!({}))
        .await
        .expect(200);
    assert_eq!(again, lifted, "a second lift changes nothing");

    let in_force: Vec<i64> = holds(&app, "").await.iter().map(id_of).collect();
    assert_eq!(in_force, vec![id_of(&of_session), id_of(&all)]);
    let every: Vec<i64> = holds(&app, "?status=all").await.iter().map(id_of).collect();
    assert_eq!(every, vec![id_of(&of_session), id_of(&of_bot), id_of(&all)]);
    // A lifted scope can be held anew: a new hold, not the lifted one.
    let anew = app
        .post(
            "/v1/holds",
            json!({"scope": {"kind": "bot", "bot_id": bot}}),
        )
        .await
        .expect(201);
    assert_ne!(id_of(&anew), id_of(&of_bot));

    // A dropped job's hold: `action: cancel`, which no line lifts.
    let dropped = app
        .post(
            "/v1/holds",
            json!({"scope": {"kind": "session", "session_id": s}, "action": "cancel"}),
        )
        .await
        .expect(201);
    assert_eq!(dropped["cancel"], true, "{dropped}");
    assert_eq!(dropped["lift_on_next_user_message"], false);
    assert_ne!(id_of(&dropped), id_of(&of_session));
}

#[tokio::test]
async fn refusals_name_what_is_wrong() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Plain", json!({"steps": [{"text": "ok"}]}))
        .await;
    let s = app.direct(bot).await;

    for (body, names) in [
        (json!({"scope": {"kind": "galaxy"}}), "scope.kind"),
        (json!({"scope": {"kind": "bot"}}), "scope.bot_id"),
        (
            json!({"scope": {"kind": "bot", "bot_id": 999999}}),
            "scope.bot_id",
        ),
        (json!({"scope": {"kind": "session"}}), "scope.session_id"),
        (
            json!({"scope": {"kind": "session", "session_id": 999999}}),
            "scope.session_id",
        ),
        (
            json!({"scope": {"kind": "plan", "task_id": 999999}}),
            "scope.task_id",
        ),
        (
            json!({"scope": {"kind": "bot_plan", "bot_id": bot}}),
            "scope.task_id",
        ),
        (
            json!({"scope": {"kind": "turn", "turn_id": 999999}}),
            "scope.turn_id",
        ),
        (
            json!({"scope": {"kind": "ticket", "ticket_id": 1}}),
            "scope.ticket_id",
        ),
        (
            json!({"scope": {"kind": "everything"}, "session_id": 999999}),
            "session_id",
        ),
        (
            json!({"scope": {"kind": "everything"}, "action": "forget"}),
            "action",
        ),
        (
            json!({"scope": {"kind": "everything"}, "colour": 1}),
            "colour",
        ),
        (
            json!({"scope": {"kind": "bot", "bot_id": "x"}}),
            "scope.bot_id",
        ),
        (json!({}), "scope"),
    ] {
        let r = app.post("/v1/holds", body.clone()).await;
        r.expect_error(422, "invalid");
        assert!(r.message().contains(names), "{body}: {}", r.message());
    }
    app.post_raw("/v1/holds", "{")
        .await
        .expect_error(400, "bad_request");
    assert!(
        holds(&app, "?status=all").await.is_empty(),
        "a refused request wrote nothing"
    );

    for q in ["?status=lifted", "?status=in_force", "?status="] {
        let r = app.get(&format!("/v1/holds{q}")).await;
        r.expect_error(422, "invalid");
        assert!(r.message().starts_with("status:"), "{q}: {}", r.message());
    }
    app.get("/v1/holds/999999")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/holds/abc")
        .await
        .expect_error(400, "bad_request");
    app.post("/v1/holds/999999/lift", json!({}))
        .await
        .expect_error(404, "not_found");
    app.post("/v1/holds/abc/lift", json!({}))
        .await
        .expect_error(400, "bad_request");

    // The composer Stop: only in a direct, only while something runs.
    let g = group(&app, &[bot]).await;
    app.post("/v1/turns/stop", json!({"session_id": g}))
        .await
        .expect_error(409, "not_direct");
    app.post("/v1/turns/stop", json!({"session_id": s}))
        .await
        .expect_error(409, "not_running");
    assert!(holds(&app, "?status=all").await.is_empty());
}

#[tokio::test]
async fn the_composer_stop_holds_the_turn_and_the_next_line_lifts_it() {
    let app = TestApp::start().await;
    let bot = app.scripted_bot("Slow", slow_then_quick()).await;
    let s = app.direct(bot).await;
    let mut stream = app.state.collab.engine().subscribe_stream();
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "tell me a story"}),
    )
    .await
    .expect(201);
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while !matches!(stream.recv().await, Ok(StreamNotice::TextDelta { .. })) {}
    })
    .await
    .expect("no text streamed within 20 s");

    let stopped = app
        .post("/v1/turns/stop", json!({"session_id": s}))
        .await
        .expect(200);
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    assert_eq!(stopped["session_id"], s);
    let hold_id = stopped["hold_id"].as_i64().expect("the hold's id");
    app.settle(s).await;

    let hold = app.get(&format!("/v1/holds/{hold_id}")).await.expect(200);
    assert_eq!(hold["status"], "in_force", "{hold}");
    assert_eq!(hold["source"], "user_button");
    assert_eq!(hold["session_id"], s);
    assert_eq!(hold["lift_on_next_user_message"], true);
    assert!(
        ["bot_plan", "turn"].contains(&hold["scope"]["kind"].as_str().unwrap()),
        "{hold}"
    );
    let ended: Vec<&Value> = hold["effect"]["stopped_turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["run_id"])
        .collect();
    assert_eq!(ended, vec![&stopped["id"]], "{hold}");
    assert_eq!(holds(&app, "").await.len(), 1);
    // Nothing runs now: a second Stop has nothing to stop.
    app.post("/v1/turns/stop", json!({"session_id": s}))
        .await
        .expect_error(409, "not_running");

    // The person's next line lifts it, and the Bot goes on from that line.
    app.post(
        &format!("/v1/sessions/{s}/messages"),
        json!({"body": "shorter, please"}),
    )
    .await
    .expect(201);
    app.wait_for_bot_line(s, |l| l["body"] == "going on from your line")
        .await;
    assert!(holds(&app, "").await.is_empty(), "the line lifted the stop");
    let lifted = app.get(&format!("/v1/holds/{hold_id}")).await.expect(200);
    assert_eq!(lifted["status"], "lifted");
    assert_eq!(lifted["lifted_by"], "user_text");
    // No line about the stop was posted.
    for l in app.lines(s).await {
        assert_ne!(l["author"], "system", "an app line about the stop: {l}");
    }
}

#[tokio::test]
async fn the_work_log_lists_holds_made_and_lifted_filtered_by_kind_and_hold() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Logged", json!({"steps": [{"text": "ok"}]}))
        .await;
    let a = app
        .post(
            "/v1/holds",
            json!({"scope": {"kind": "bot", "bot_id": bot}}),
        )
        .await
        .expect(201);
    let b = app
        .post("/v1/holds", json!({"scope": {"kind": "everything"}}))
        .await
        .expect(201);
    app.post(&format!("/v1/holds/{}/lift", id_of(&a)), json!({}))
        .await
        .expect(200);

    let names = |e: &Value, h: &Value| {
        e["payload"]["hold_ids"]
            .as_array()
            .is_some_and(|ids| ids.contains(&h["id"]))
    };
    let log = app.get("/v1/audit").await.expect(200);
    let log = log.as_array().unwrap();
    let kinds: Vec<&str> = log.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        vec!["control_hold", "control_hold", "hold_lifted"],
        "{log:#?}"
    );
    assert!(
        log.windows(2)
            .all(|w| w[0]["id"].as_i64() < w[1]["id"].as_i64())
    );

    let of_a = app
        .get(&format!("/v1/audit?hold_id={}", id_of(&a)))
        .await
        .expect(200);
    let of_a = of_a.as_array().unwrap();
    assert_eq!(of_a.len(), 2, "{of_a:#?}");
    assert!(of_a.iter().all(|e| names(e, &a)));
    let of_b = app
        .get(&format!(
            "/v1/audit?hold_id=hold_{}&kind=control_hold",
            id_of(&b)
        ))
        .await
        .expect(200);
    assert_eq!(of_b.as_array().unwrap().len(), 1);
    assert!(names(&of_b[0], &b));
    assert_eq!(of_b[0]["payload"]["scope"]["kind"], "everything");

    let lifts = app.get("/v1/audit?kind=hold_lifted").await.expect(200);
    assert_eq!(lifts.as_array().unwrap().len(), 1);
    let after = log[0]["id"].as_i64().unwrap();
    let rest = app
        .get(&format!("/v1/audit?after={after}&limit=1"))
        .await
        .expect(200);
    assert_eq!(rest.as_array().unwrap().len(), 1);
    assert_eq!(rest[0]["id"], log[1]["id"]);

    for q in [
        "kind=bogus",
        "hold_id=abc",
        "after=x",
        "limit=0",
        "limit=1001",
    ] {
        app.get(&format!("/v1/audit?{q}"))
            .await
            .expect_error(422, "invalid");
    }
    app.get("/v1/audit?hold_id=999999")
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn a_stopped_group_is_held_by_a_session_hold_and_goes_on_when_lifted() {
    let app = TestApp::start().await;
    let bot = app.scripted_bot("Lead", slow_then_quick()).await;
    let g = group(&app, &[bot]).await;
    let mut stream = app.state.collab.engine().subscribe_stream();
    app.post(
        &format!("/v1/sessions/{g}/messages"),
        json!({"body": "@Lead tell me a story"}),
    )
    .await
    .expect(201);
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while !matches!(stream.recv().await, Ok(StreamNotice::TextDelta { .. })) {}
    })
    .await
    .expect("no text streamed within 20 s");

    // A group has no composer Stop; its menu's "Stop the work in this group" is a hold.
    app.post("/v1/turns/stop", json!({"session_id": g}))
        .await
        .expect_error(409, "not_direct");
    let hold = app
        .post(
            "/v1/holds",
            json!({"scope": {"kind": "session", "session_id": g}, "session_id": g}),
        )
        .await
        .expect(201);
    let stopped = hold["effect"]["stopped_turns"].as_array().unwrap();
    assert_eq!(stopped.len(), 1, "{hold}");
    let turn = app
        .get(&format!("/v1/turns/{}", stopped[0]["run_id"]))
        .await
        .expect(200);
    assert_eq!(turn["status"], "stopped", "{turn}");
    support::wait_until("the group to show idle", || async {
        (app.get(&format!("/v1/sessions/{g}")).await.expect(200)["running"] == false).then_some(())
    })
    .await;

    let lifted = app
        .post(&format!("/v1/holds/{}/lift", id_of(&hold)), json!({}))
        .await
        .expect(200);
    assert_eq!(lifted["status"], "lifted");
    assert!(holds(&app, "").await.is_empty());
}
