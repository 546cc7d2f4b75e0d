//! Quality over HTTP (digest 003-B §9, §10.1): the events listing and its filters, the report's
//! shape, the user's "the model's problem" mark on a turn, lessons and model prices — with the
//! 404 and 422 answers, and refused input writing nothing.

mod support;

use serde_json::{Value, json};
use support::TestApp;
use troupe_store::{NewQualityEvent, QualityType, quality_cause};

/// A Bot's finished turn: its id and the Bot's.
async fn one_turn(app: &TestApp) -> (i64, i64) {
    let bot = app
        .scripted_bot("Greeter", json!({"steps": [{"text": "Hello."}]}))
        .await;
    let s = app.direct(bot).await;
    app.post(&format!("/v1/sessions/{s}/messages"), json!({"body": "hi"}))
        .await
        .expect(201);
    app.wait_for_bot_line(s, |l| l["status"] == "done").await;
    app.settle(s).await;
    let turns = app
        .get(&format!("/v1/turns?session_id={s}"))
        .await
        .expect(200);
    (turns[0]["id"].as_i64().unwrap(), bot)
}

#[tokio::test]
async fn marking_a_turn_as_the_models_problem_is_a_model_event_until_unmarked() {
    let app = TestApp::start().await;
    let (turn, bot) = one_turn(&app).await;
    let path = format!("/v1/turns/{turn}/model-problem");
    let marked = app.put(&path, json!({"marked": true})).await.expect(200);
    assert_eq!(marked, json!({"turn_id": turn, "marked": true}));
    // Marking twice keeps one mark.
    app.put(&path, json!({"marked": true})).await.expect(200);
    let events = app
        .get(&format!("/v1/quality/events?bot_id={bot}"))
        .await
        .expect(200);
    let events = events.as_array().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "model");
    assert_eq!(events[0]["cause"], "marked");
    assert_eq!(events[0]["turn_id"], turn);
    assert_eq!(events[0]["bot_id"], bot);
    assert_eq!(events[0]["model"], "s");
    let report = app.get("/v1/quality/report").await.expect(200);
    let row = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["bot_id"] == bot)
        .cloned()
        .expect("the Bot's row");
    assert_eq!(row["failed_replies"], 1);
    assert_eq!(row["failure_shapes"]["model:marked"], 1);

    let unmarked = app.put(&path, json!({"marked": false})).await.expect(200);
    assert_eq!(unmarked["marked"], false);
    assert_eq!(
        app.get("/v1/quality/events?type=model").await.expect(200),
        json!([])
    );
}

#[tokio::test]
async fn the_mark_refuses_unknown_turns_and_bad_bodies() {
    let app = TestApp::start().await;
    let (turn, _) = one_turn(&app).await;
    app.put("/v1/turns/9999/model-problem", json!({"marked": true}))
        .await
        .expect_error(404, "not_found");
    let path = format!("/v1/turns/{turn}/model-problem");
    for bad in [
        json!({}),
        json!({"marked": "yes"}),
        json!({"marked": true, "why": "slow"}),
    ] {
        app.put(&path, bad.clone())
            .await
            .expect_error(422, "invalid");
    }
    app.put("/v1/turns/abc/model-problem", json!({"marked": true}))
        .await
        .expect_error(400, "bad_request");
    assert_eq!(
        app.get("/v1/quality/events").await.expect(200),
        json!([]),
        "refused input writes nothing"
    );
}

#[tokio::test]
async fn the_events_listing_checks_its_query() {
    let app = TestApp::start().await;
    for q in [
        "type=blame",
        "days=0",
        "days=366",
        "maintainer=yes",
        "limit=0",
        "bot_id=x",
    ] {
        app.get(&format!("/v1/quality/events?{q}"))
            .await
            .expect_error(422, "invalid");
    }
    app.get("/v1/quality/events?bot_id=4242")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/quality/report?days=0")
        .await
        .expect_error(422, "invalid");
}

#[tokio::test]
async fn orchestration_events_need_maintainer() {
    let app = TestApp::start().await;
    app.state
        .collab
        .store()
        .write(|tx| {
            tx.quality_event(NewQualityEvent::new(
                QualityType::Orchestration,
                quality_cause::CRASH,
            ))
        })
        .unwrap();
    assert_eq!(app.get("/v1/quality/events").await.expect(200), json!([]));
    let all = app
        .get("/v1/quality/events?maintainer=true")
        .await
        .expect(200);
    assert_eq!(all[0]["type"], "orchestration");
}

#[tokio::test]
async fn the_report_has_a_row_per_bot_and_model_with_tokens_and_priced_spend() {
    let app = TestApp::start().await;
    let (_, bot) = one_turn(&app).await;
    let report = app.get("/v1/quality/report?days=7").await.expect(200);
    assert_eq!(report["days"], 7);
    assert!(report["since"].is_i64());
    let row: Value = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["bot_id"] == bot)
        .cloned()
        .expect("the Bot's row");
    assert_eq!(row["bot_name"], "Greeter");
    assert_eq!(row["model"], "s");
    assert_eq!(row["plan_kind"], "");
    assert_eq!(row["model_calls"], 1);
    assert!(row["output_tokens"].as_u64().unwrap() > 0, "{row}");
    for field in [
        "hand_overs",
        "approvals",
        "rejects",
        "send_backs",
        "checks_failed",
        "complaints",
        "review_misses",
        "failed_replies",
    ] {
        assert_eq!(row[field], 0, "{field}: {row}");
    }
    assert!(row["spend_usd"].is_null(), "an unpriced model: {row}");
    assert!(row["spend_per_approval_usd"].is_null());

    for bad in [
        json!({"model": "", "input_per_mtok": 1.0, "output_per_mtok": 1.0}),
        json!({"model": "s", "input_per_mtok": -1.0, "output_per_mtok": 1.0}),
        json!({"model": "s", "input_per_mtok": 1.0}),
    ] {
        app.put("/v1/quality/prices", bad)
            .await
            .expect_error(422, "invalid");
    }
    assert_eq!(app.get("/v1/quality/prices").await.expect(200), json!([]));
    let price = app
        .put(
            "/v1/quality/prices",
            json!({"model": "s", "input_per_mtok": 1000000.0, "output_per_mtok": 1000000.0}),
        )
        .await
        .expect(200);
    assert_eq!(price["model"], "s");
    let report = app.get("/v1/quality/report").await.expect(200);
    let row = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["bot_id"] == bot)
        .cloned()
        .unwrap();
    let tokens = row["input_tokens"].as_f64().unwrap() + row["output_tokens"].as_f64().unwrap();
    assert_eq!(row["spend_usd"].as_f64(), Some(tokens), "{row}");
}

#[tokio::test]
async fn lessons_are_listed_and_switched() {
    let app = TestApp::start().await;
    assert_eq!(app.get("/v1/lessons").await.expect(200), json!([]));
    app.patch("/v1/lessons/7", json!({"state": "block"}))
        .await
        .expect_error(404, "not_found");
    // A lesson as a timed-out search teaches it.
    let (turn, _) = one_turn(&app).await;
    app.state
        .collab
        .store()
        .write(|tx| {
            let thread = tx.run(troupe_core::RunId(turn))?.thread_id;
            tx.record_command(
                thread,
                &troupe_store::CommandRecord {
                    run_id: troupe_core::RunId(turn),
                    call_id: "c1".into(),
                    command: "rg TODO /srv/big".into(),
                    exit_code: None,
                    signal: Some(9),
                    timed_out: true,
                    cancelled: false,
                    duration_ms: 120_000,
                    output_tail: String::new(),
                    success: false,
                },
            )
        })
        .unwrap();
    let lessons = app.get("/v1/lessons").await.expect(200);
    assert_eq!(lessons[0]["program"], "rg");
    assert_eq!(lessons[0]["place"], "/srv/big");
    assert_eq!(lessons[0]["state"], "warn");
    let id = lessons[0]["id"].as_i64().unwrap();
    let path = format!("/v1/lessons/{id}");
    for bad in [
        json!({"state": "retired"}),
        json!({}),
        json!({"state": 1}),
        json!({"state": "off", "note": "x"}),
    ] {
        app.patch(&path, bad).await.expect_error(422, "invalid");
    }
    assert_eq!(
        app.get("/v1/lessons").await.expect(200)[0]["state"],
        "warn",
        "refused input writes nothing"
    );
    let blocked = app
        .patch(&path, json!({"state": "block"}))
        .await
        .expect(200);
    assert_eq!(blocked["state"], "block");
    let off = app.patch(&path, json!({"state": "off"})).await.expect(200);
    assert_eq!(off["state"], "off");
    app.patch("/v1/lessons/x", json!({"state": "warn"}))
        .await
        .expect_error(400, "bad_request");
}
