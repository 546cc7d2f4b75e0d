//! Routines over HTTP: the person makes one (its standing job opens in the conversation), each
//! bad input answered with what is wrong and nothing made; lists, pauses and resumes it; runs
//! it now (a ticket of the job, the Bot woken on it and speaking in the conversation), which a
//! stop refuses; and deletes it, which closes the job and keeps its tickets.

mod support;

use serde_json::json;
use support::{TestApp, wait_until};

const BRIEFER: &str = r#"{"rules":[{"when_user_contains":"is due","reply":{"tool_calls":[{"name":"write_file","arguments":{"path":"brief.md","content":"All quiet."}}]}}],
  "steps":[{"text":"unused"},{"text":"Brief: all quiet.","tool_calls":[{"name":"submit","arguments":{"artifacts":["brief.md"]}}]},{"text":"Handed over."}],
  "on_exhausted":"repeat_last"}"#;

#[tokio::test]
async fn the_person_makes_runs_pauses_and_deletes_a_routine() {
    let app = TestApp::start().await;
    let bot = app
        .scripted_bot("Ada", serde_json::from_str(BRIEFER).unwrap())
        .await;
    let other = app
        .scripted_bot("Bea", json!({"steps": [{"text": "ok"}]}))
        .await;
    let s = app.direct(bot).await;
    let good = json!({
        "bot_id": bot, "session_id": s, "name": "Morning brief",
        "instruction": "Sum up the night in brief.md.",
        "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Paris"}
    });
    let with = |field: &str, v: serde_json::Value| {
        let mut b = good.clone();
        b[field] = v;
        b
    };
    for (body, words) in [
        (with("bot_id", json!(other)), "Bea is not a member"),
        (with("bot_id", json!(999)), "no Bot 999"),
        (with("session_id", json!(999)), "no conversation 999"),
        (with("name", json!(" ")), "name is empty"),
        (with("instruction", json!("x".repeat(4001))), "at most 4000"),
        (
            with("schedule", json!({"kind": "every", "seconds": 60})),
            "at least 900",
        ),
        (
            with(
                "schedule",
                json!({"kind": "cron", "expr": "nope", "tz": "UTC"}),
            ),
            "schedule.expr",
        ),
        (
            with(
                "schedule",
                json!({"kind": "cron", "expr": "0 9 * * *", "tz": "Mars/Base"}),
            ),
            "unknown time zone",
        ),
    ] {
        let a = app.post("/v1/routines", body).await;
        a.expect_error(422, "invalid");
        assert!(a.message().contains(words), "{words}: {}", a.message());
    }
    app.post("/v1/routines", with("extra", json!(1)))
        .await
        .expect_error(422, "invalid");
    assert_eq!(
        app.get("/v1/routines").await.expect(200),
        json!([]),
        "nothing refused was made"
    );
    let tasks = app
        .get(&format!("/v1/tasks?session_id={s}"))
        .await
        .expect(200);
    assert_eq!(tasks, json!([]), "no job either");

    let r = app.post("/v1/routines", good.clone()).await.expect(201);
    let id = r["id"].as_i64().unwrap();
    assert_eq!(r["status"], "active");
    assert!(
        r["next_due_label"].as_str().unwrap().ends_with("09:00"),
        "{r}"
    );
    assert_eq!(r["plan_name"], "Morning brief");
    app.post("/v1/routines", with("name", json!("MORNING BRIEF")))
        .await
        .expect_error(409, "routine_taken");
    assert_eq!(
        app.get(&format!("/v1/routines?bot_id={bot}"))
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        app.get(&format!("/v1/routines?bot_id={other}"))
            .await
            .expect(200),
        json!([])
    );
    app.get("/v1/routines?bot_id=x")
        .await
        .expect_error(422, "invalid");
    app.get("/v1/routines/x")
        .await
        .expect_error(400, "bad_request");
    app.get("/v1/routines/999")
        .await
        .expect_error(404, "not_found");

    // Paused, it shows no next run; resumed, it does again.
    let paused = app
        .patch(&format!("/v1/routines/{id}"), json!({"status": "paused"}))
        .await
        .expect(200);
    assert_eq!(
        (paused["status"].as_str(), &paused["next_due_label"]),
        (Some("paused"), &json!(null))
    );
    app.patch(&format!("/v1/routines/{id}"), json!({"status": "sleeping"}))
        .await
        .expect_error(422, "invalid");
    app.patch(&format!("/v1/routines/{id}"), json!({"status": "active"}))
        .await
        .expect(200);

    // Run now: a ticket of its job, the Bot woken on it, its words in the direct.
    let ran = app
        .post(&format!("/v1/routines/{id}/run"), json!({}))
        .await
        .expect(200);
    assert_eq!(ran["runs"], 1);
    let plan = ran["plan_id"].as_i64().unwrap();
    app.wait_for_bot_line(s, |l| l["body"] == "Brief: all quiet.")
        .await;
    let approved = wait_until("the run is approved by the routine", || async {
        let t = app
            .get(&format!("/v1/tasks/{plan}/tickets"))
            .await
            .expect(200);
        (t["tickets"][0]["stage"] == "approved").then_some(t)
    })
    .await;
    assert_eq!(approved["tickets"].as_array().unwrap().len(), 1);

    // A stop on the Bot refuses Run now.
    let hold = app
        .post(
            "/v1/holds",
            json!({"scope": {"kind": "bot", "bot_id": bot}}),
        )
        .await
        .expect(201);
    app.post(&format!("/v1/routines/{id}/run"), json!({}))
        .await
        .expect_error(409, "held");
    app.post(&format!("/v1/holds/{}/lift", hold["id"]), json!({}))
        .await
        .expect(200);

    // Deleted: gone, its job done, its ticket kept.
    app.delete(&format!("/v1/routines/{id}")).await.expect(200);
    app.get(&format!("/v1/routines/{id}"))
        .await
        .expect_error(404, "not_found");
    let job = app.get(&format!("/v1/tasks/{plan}")).await.expect(200);
    assert_eq!(job["status"], "done");
}
