//! `GET /v1/notifications` and `POST /v1/notifications/:id/dismiss` over HTTP: the open ones
//! newest first with the open count, dismissing once, and the refusals. Notifications are opened
//! here with `Tx::notify`, as the supervisor, blocked work and work questions open them.

mod support;

use serde_json::json;
use support::TestApp;
use troupe_core::SessionId;
use troupe_core::notification::NotificationKind;
use troupe_store::NewNotification;

fn open(app: &TestApp, title: &str, session: i64) -> i64 {
    app.state
        .collab
        .store()
        .write(|tx| {
            tx.notify(&NewNotification {
                kind: NotificationKind::Stopped,
                title,
                body: "Its retries ran out; @ the Bot or press Continue.",
                session_id: Some(SessionId(session)),
                plan_id: None,
                ticket_id: None,
                work_item_id: None,
                message_id: None,
            })
        })
        .unwrap()
        .id
}

#[tokio::test]
async fn notifications_list_the_open_ones_newest_first_and_dismiss_once() {
    let app = TestApp::start().await;
    assert_eq!(
        app.get("/v1/notifications").await.expect(200),
        json!({"notifications": [], "open_count": 0})
    );
    let bot = app
        .scripted_bot("Ada", json!({"steps": [{"text": "ok"}]}))
        .await;
    let s = app.direct(bot).await;
    let first = open(&app, "Ada stopped", s);
    let second = open(&app, "Ada stopped again", s);

    let listed = app.get("/v1/notifications").await.expect(200);
    assert_eq!(listed["open_count"], 2);
    let ids: Vec<i64> = listed["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [second, first], "newest first");
    assert_eq!(listed["notifications"][0]["kind"], "stopped");
    assert_eq!(listed["notifications"][0]["session_id"], s);

    let dismissed = app
        .post(&format!("/v1/notifications/{first}/dismiss"), json!({}))
        .await
        .expect(200);
    assert_eq!(dismissed["status"], "resolved");
    assert_eq!(dismissed["resolution"], "dismissed");
    app.post(&format!("/v1/notifications/{first}/dismiss"), json!({}))
        .await
        .expect_error(409, "not_open");

    let open_now = app.get("/v1/notifications").await.expect(200);
    assert_eq!(open_now["open_count"], 1);
    assert_eq!(open_now["notifications"].as_array().unwrap().len(), 1);
    let all = app.get("/v1/notifications?status=all").await.expect(200);
    assert_eq!(all["notifications"].as_array().unwrap().len(), 2);
    assert_eq!(all["open_count"], 1);

    // Each change is announced on the global stream, with the open count.
    let events = app
        .state
        .collab
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 1000))
        .unwrap();
    let changes: Vec<_> = events
        .iter()
        .filter(|e| e.kind == "notification_changed")
        .collect();
    assert_eq!(changes.len(), 3);
    assert!(
        changes
            .iter()
            .all(|e| e.session_id.is_none() && e.thread_id.is_none())
    );
    assert_eq!(changes[2].payload["open_count"], 1);
}

#[tokio::test]
async fn notifications_refuse_bad_queries_and_unknown_ids() {
    let app = TestApp::start().await;
    app.get("/v1/notifications?status=closed")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/notifications?limit=0")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/notifications?limit=201")
        .await
        .expect_error(422, "invalid");
    app.post("/v1/notifications/999/dismiss", json!({}))
        .await
        .expect_error(404, "not_found");
    app.post("/v1/notifications/abc/dismiss", json!({}))
        .await
        .expect_error(400, "bad_request");
}
