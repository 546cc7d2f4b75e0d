//! `/v1/agenda` over HTTP: scheduling into a session, changing, cancelling, and the daemon's
//! timer delivering a due item to the session's Bot.

mod support;

use serde_json::json;
use support::{TestApp, wait_until};

const FAR: i64 = 4_000_000_000_000;

async fn session(app: &TestApp, name: &str) -> i64 {
    let bot = app
        .scripted_bot(name, json!({"steps": [{"text": "noted"}]}))
        .await;
    app.direct(bot).await
}

#[tokio::test]
async fn items_are_created_listed_changed_and_cancelled() {
    let app = TestApp::start().await;
    let s = session(&app, "Sched").await;
    let item = app
        .post(
            "/v1/agenda",
            json!({"session_id": s, "title": "standup", "trigger": {"kind": "at", "at": FAR}, "payload": "remind me"}),
        )
        .await
        .expect(201);
    assert_eq!(item["status"], "active");
    assert_eq!(item["next_run_at"], FAR);
    assert_eq!(item["session_id"], s);
    assert_eq!(item["trigger_kind"], "at");
    assert_eq!(
        (item["wake"].clone(), item["silent"].clone()),
        (json!(true), json!(false))
    );
    let id = item["id"].as_i64().unwrap();

    assert_eq!(
        app.get(&format!("/v1/agenda/agenda_{id}"))
            .await
            .expect(200),
        item
    );
    let listed = app
        .get(&format!("/v1/agenda?session_id={s}"))
        .await
        .expect(200);
    assert_eq!(listed, json!([item]));
    assert_eq!(
        app.get("/v1/agenda?status=done").await.expect(200),
        json!([])
    );

    let paused = app
        .patch(
            &format!("/v1/agenda/{id}"),
            json!({"status": "paused", "trigger": {"kind": "every", "seconds": 3600}}),
        )
        .await
        .expect(200);
    assert_eq!(paused["status"], "paused");
    assert_eq!(paused["trigger_kind"], "every");
    assert!(paused["next_run_at"].as_i64().unwrap() > item["created_at"].as_i64().unwrap());

    let cancelled = app.delete(&format!("/v1/agenda/{id}")).await.expect(200);
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["next_run_at"], json!(null));
    // Cancelling again changes nothing; changing a cancelled item is a conflict.
    assert_eq!(
        app.delete(&format!("/v1/agenda/{id}")).await.expect(200),
        cancelled
    );
    app.patch(&format!("/v1/agenda/{id}"), json!({"payload": "x"}))
        .await
        .expect_error(409, "conflict");
}

#[tokio::test]
async fn unknown_items_are_404_and_bad_input_is_422() {
    let app = TestApp::start().await;
    let s = session(&app, "Picky").await;
    app.get("/v1/agenda/999")
        .await
        .expect_error(404, "not_found");
    app.patch("/v1/agenda/999", json!({"payload": "x"}))
        .await
        .expect_error(404, "not_found");
    app.delete("/v1/agenda/999")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/agenda/abc")
        .await
        .expect_error(400, "bad_request");
    for bad in [
        json!({"session_id": s, "trigger": {"kind": "delay", "seconds": 0}, "payload": "x"}),
        json!({"session_id": s, "trigger": {"kind": "cron", "expr": "* * * * *"}, "payload": "x"}),
        json!({"session_id": s, "trigger": {"kind": "at", "at": FAR}, "payload": "  "}),
        json!({"trigger": {"kind": "at", "at": FAR}, "payload": "x"}),
        json!({"session_id": 9999, "trigger": {"kind": "at", "at": FAR}, "payload": "x"}),
    ] {
        app.post("/v1/agenda", bad)
            .await
            .expect_error(422, "invalid");
    }
    let item = app
        .post(
            "/v1/agenda",
            json!({"session_id": s, "trigger": {"kind": "at", "at": FAR}, "payload": "x"}),
        )
        .await
        .expect(201);
    let id = item["id"].as_i64().unwrap();
    for bad in [
        json!({}),
        json!({"status": "done"}),
        json!({"trigger": {"kind": "every", "seconds": -1}}),
    ] {
        let r = app.patch(&format!("/v1/agenda/{id}"), bad).await;
        assert!(matches!(r.status.as_u16(), 400 | 422), "{}", r.text);
    }
    app.patch(&format!("/v1/agenda/{id}"), json!({"status": "done"}))
        .await
        .expect_error(422, "invalid");
    app.get("/v1/agenda?status=later")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/agenda?limit=0")
        .await
        .expect_error(422, "invalid");
}

#[tokio::test]
async fn the_daemon_timer_delivers_a_due_item_to_the_session_once() {
    let app = TestApp::start().await;
    let s = session(&app, "Alarm").await;
    let item = app
        .post(
            "/v1/agenda",
            json!({"session_id": s, "trigger": {"kind": "at", "at": 0}, "payload": "time to stretch"}),
        )
        .await
        .expect(201);
    let id = item["id"].as_i64().unwrap();
    let done = wait_until("the item to be delivered", || async {
        let v = app.get(&format!("/v1/agenda/{id}")).await.expect(200);
        (v["status"] == "done").then_some(v)
    })
    .await;
    assert_eq!(done["run_count"], 1);
    app.wait_for_bot_line(s, |l| l["body"] == "noted").await;
}

#[tokio::test]
async fn a_cron_item_is_due_at_its_next_match_in_its_zone_and_bad_fields_are_named() {
    let app = TestApp::start().await;
    let s = session(&app, "Weekly").await;
    let trigger = json!({"kind": "cron", "expr": "0 9 * * MON-FRI", "tz": "Europe/Paris"});
    let item = app
        .post(
            "/v1/agenda",
            json!({"session_id": s, "trigger": trigger, "payload": "standup"}),
        )
        .await
        .expect(201);
    assert_eq!(item["trigger_kind"], "cron");
    assert_eq!(item["trigger"], trigger);
    let next = item["next_run_at"].as_i64().unwrap();
    assert!(next > item["created_at"].as_i64().unwrap());
    // 09:00 in Paris is 07:00 or 08:00 UTC, on the minute.
    assert!(matches!((next / 3_600_000) % 24, 7 | 8), "{next}");
    assert_eq!(next % 3_600_000, 0);
    let id = item["id"].as_i64().unwrap();

    let r = app
        .post(
            "/v1/agenda",
            json!({"session_id": s, "trigger": {"kind": "cron", "expr": "0 9 * *", "tz": "UTC"}, "payload": "x"}),
        )
        .await;
    r.expect_error(422, "invalid");
    assert!(r.text.contains("trigger.expr: "), "{}", r.text);
    let r = app
        .patch(
            &format!("/v1/agenda/{id}"),
            json!({"trigger": {"kind": "cron", "expr": "0 9 * * *", "tz": "Moon/Base"}}),
        )
        .await;
    r.expect_error(422, "invalid");
    assert!(
        r.text.contains("trigger.tz: unknown time zone 'Moon/Base'"),
        "{}",
        r.text
    );
    // The refused change left the item as it was.
    assert_eq!(app.get(&format!("/v1/agenda/{id}")).await.expect(200), item);
}
