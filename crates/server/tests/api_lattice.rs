//! Lattice over HTTP (issue 17 item 11): enabling through the session's workflow shows the Run
//! in `clarifying` as the session's current one; the Runs are listed newest first and read by
//! id; bad bodies are 422 naming the field, unknown Runs and sessions without one 404, and the
//! controls answer 409 with the code that says why; disabling a pristine Run cancels it.

mod support;

use serde_json::{Value, json};
use support::TestApp;

/// A direct with a Bot that is never called while these tests run (no goal is given, so no
/// prompt reaches it).
async fn session(app: &TestApp, name: &str) -> i64 {
    let bot = app
        .scripted_bot(name, json!({"steps": [{"text": "noted"}]}))
        .await;
    app.direct(bot).await
}

async fn enable(app: &TestApp, s: i64, body: Value) -> Value {
    app.post(&format!("/v1/sessions/{s}/workflow"), body)
        .await
        .expect(200)
}

fn run_id(v: &Value) -> i64 {
    v["id"].as_i64().expect("a Run id")
}

fn ids(list: &Value) -> Vec<i64> {
    list.as_array().unwrap().iter().map(run_id).collect()
}

#[tokio::test]
async fn unknown_runs_and_sessions_without_a_run_are_404() {
    let app = TestApp::start().await;
    let s = session(&app, "Quiet").await;
    app.get(&format!("/v1/sessions/{s}/lattice"))
        .await
        .expect_error(404, "not_found");
    app.get("/v1/sessions/4242/lattice")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/lattice/runs/777")
        .await
        .expect_error(404, "not_found");
    app.get("/v1/lattice/runs/lat_777")
        .await
        .expect_error(404, "not_found");
    for action in ["resume", "approve", "cancel"] {
        app.post(&format!("/v1/lattice/runs/777/{action}"), json!({}))
            .await
            .expect_error(404, "not_found");
    }
    let r = app.get("/v1/lattice/runs/abc").await;
    r.expect_error(400, "bad_request");
    assert!(r.message().contains("LatticeRunId"), "{}", r.text);
    for (query, needle) in [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("session_id=x", "session_id"),
    ] {
        let r = app.get(&format!("/v1/lattice/runs?{query}")).await;
        r.expect_error(422, "invalid");
        assert!(r.message().contains(needle), "{query}: {}", r.text);
    }
    assert_eq!(app.get("/v1/lattice/runs").await.expect(200), json!([]));
}

#[tokio::test]
async fn a_lattice_body_with_loop_fields_or_a_bad_mode_is_422_and_writes_nothing() {
    let app = TestApp::start().await;
    let s = session(&app, "Strict").await;
    let path = format!("/v1/sessions/{s}/workflow");
    for (body, needle) in [
        (
            json!({"kind": "lattice", "instructions": "do it"}),
            "instructions",
        ),
        (
            json!({"kind": "lattice", "max_iterations": 3}),
            "max_iterations",
        ),
        (json!({"kind": "lattice", "mode": "turbo"}), "mode"),
        (json!({"kind": "plan", "mode": "auto"}), "mode"),
        (
            json!({"kind": "lightloop", "instructions": "x", "goal": "g"}),
            "goal",
        ),
    ] {
        let r = app.post(&path, body.clone()).await;
        r.expect_error(422, "invalid");
        assert!(r.message().contains(needle), "{body}: {}", r.text);
    }
    let wf = app.get(&path).await.expect(200);
    assert_eq!(wf["kind"], Value::Null, "{wf}");
    assert_eq!(wf["lattice"], Value::Null, "{wf}");
    assert_eq!(app.get("/v1/lattice/runs").await.expect(200), json!([]));
}

#[tokio::test]
async fn enabling_shows_the_run_clarifying_and_current() {
    let app = TestApp::start().await;
    let s = session(&app, "Aligner").await;
    let wf = enable(&app, s, json!({"kind": "lattice", "max_model_calls": 40})).await;
    assert_eq!(wf["kind"], "lattice", "{wf}");
    assert_eq!(wf["slot"]["kind"], "lattice", "{wf}");
    assert_eq!(
        wf["slot"]["mode"], "collaborative",
        "the default mode: {wf}"
    );
    let id = run_id(&wf["lattice"]);
    assert_eq!(wf["slot"]["run_id"], id, "{wf}");

    let run = app
        .get(&format!("/v1/sessions/{s}/lattice"))
        .await
        .expect(200);
    assert_eq!(run_id(&run), id);
    assert_eq!(run["session_id"], s);
    assert_eq!(run["status"], "active");
    assert_eq!(run["state"], "clarifying");
    assert_eq!(run["mode"], "collaborative");
    assert_eq!(run["max_model_calls"], 40);
    assert_eq!(run["model_call_count"], 0);
    assert_eq!(run["current"], true);
    assert_eq!(run["pristine"], true);
    assert_eq!(run["valid_action"], "submit_requirements");
    assert_eq!(
        run["split"],
        json!({"history": [], "current": null, "editable_future": []})
    );
    // By id, bare or prefixed.
    for path in [
        format!("/v1/lattice/runs/{id}"),
        format!("/v1/lattice/runs/lat_{id}"),
    ] {
        let got = app.get(&path).await.expect(200);
        assert_eq!((run_id(&got), &got["state"]), (id, &json!("clarifying")));
    }

    // Enabling again while it is active takes the new mode and cap; no second Run.
    let wf = enable(
        &app,
        s,
        json!({"kind": "lattice", "mode": "auto", "max_model_calls": 0}),
    )
    .await;
    assert_eq!(run_id(&wf["lattice"]), id, "{wf}");
    assert_eq!(wf["lattice"]["mode"], "auto");
    assert_eq!(wf["lattice"]["max_model_calls"], 0);
    assert_eq!(
        ids(&app
            .get(&format!("/v1/lattice/runs?session_id={s}"))
            .await
            .expect(200)),
        vec![id]
    );

    // Not awaiting execution: nothing to approve. Another workflow cannot take the slot.
    app.post(&format!("/v1/lattice/runs/{id}/approve"), json!({}))
        .await
        .expect_error(409, "not_awaiting_execution");
    app.post(
        &format!("/v1/sessions/{s}/workflow"),
        json!({"kind": "plan"}),
    )
    .await
    .expect_error(409, "workflow_active");
}

#[tokio::test]
async fn disabling_a_pristine_run_cancels_it_and_the_controls_say_why_they_refuse() {
    let app = TestApp::start().await;
    let s = session(&app, "Leaver").await;
    let first = run_id(&enable(&app, s, json!({"kind": "lattice"})).await["lattice"]);
    let wf = enable(&app, s, json!({"kind": "none"})).await;
    assert_eq!(wf["kind"], Value::Null, "the slot is cleared: {wf}");
    let run = app
        .get(&format!("/v1/lattice/runs/{first}"))
        .await
        .expect(200);
    assert_eq!(run["status"], "cancelled", "{run}");
    // Cancel is idempotent on a cancelled Run; a finished Run cannot be resumed.
    let again = app
        .post(&format!("/v1/lattice/runs/{first}/cancel"), json!({}))
        .await
        .expect(200);
    assert_eq!(again["status"], "cancelled");
    let r = app
        .post(&format!("/v1/lattice/runs/{first}/resume"), json!({}))
        .await;
    r.expect_error(409, "run_finished");

    // A new Run leaves the old one in history; the old one is no longer current.
    let second =
        run_id(&enable(&app, s, json!({"kind": "lattice", "mode": "auto"})).await["lattice"]);
    assert_ne!(first, second);
    let current = app
        .get(&format!("/v1/sessions/{s}/lattice"))
        .await
        .expect(200);
    assert_eq!(
        (run_id(&current), &current["current"]),
        (second, &json!(true))
    );
    let old = app
        .get(&format!("/v1/lattice/runs/{first}"))
        .await
        .expect(200);
    assert_eq!(
        (&old["status"], &old["current"]),
        (&json!("cancelled"), &json!(false))
    );
    // An older, finished Run: resume says it is finished, cancel answers it unchanged.
    app.post(&format!("/v1/lattice/runs/{first}/resume"), json!({}))
        .await
        .expect_error(409, "run_finished");
    let unchanged = app
        .post(&format!("/v1/lattice/runs/{first}/cancel"), json!({}))
        .await
        .expect(200);
    assert_eq!(
        (&unchanged["status"], &unchanged["current"]),
        (&json!("cancelled"), &json!(false))
    );

    // Cancelling the current Run ends it; then a resume is refused as finished.
    let c = app
        .post(&format!("/v1/lattice/runs/{second}/cancel"), json!({}))
        .await
        .expect(200);
    assert_eq!(c["status"], "cancelled", "{c}");
    app.post(&format!("/v1/lattice/runs/{second}/resume"), json!({}))
        .await
        .expect_error(409, "run_finished");
    app.post(&format!("/v1/lattice/runs/{second}/approve"), json!({}))
        .await
        .expect_error(409, "not_awaiting_execution");
    let wf = app
        .get(&format!("/v1/sessions/{s}/workflow"))
        .await
        .expect(200);
    assert_eq!(
        wf["kind"],
        Value::Null,
        "a cancelled Run clears its slot: {wf}"
    );
}

#[tokio::test]
async fn runs_are_listed_newest_first() {
    let app = TestApp::start().await;
    let a = session(&app, "First").await;
    let b = session(&app, "Second").await;
    let r1 = run_id(&enable(&app, a, json!({"kind": "lattice"})).await["lattice"]);
    enable(&app, a, json!({"kind": "none"})).await;
    let r2 = run_id(&enable(&app, a, json!({"kind": "lattice"})).await["lattice"]);
    let r3 = run_id(&enable(&app, b, json!({"kind": "lattice", "mode": "auto"})).await["lattice"]);
    assert_eq!(
        ids(&app
            .get(&format!("/v1/lattice/runs?session_id={a}"))
            .await
            .expect(200)),
        vec![r2, r1]
    );
    assert_eq!(
        ids(&app
            .get(&format!("/v1/lattice/runs?session_id=ses_{b}"))
            .await
            .expect(200)),
        vec![r3]
    );
    assert_eq!(
        ids(&app.get("/v1/lattice/runs").await.expect(200)),
        vec![r3, r2, r1]
    );
    assert_eq!(
        ids(&app.get("/v1/lattice/runs?limit=2").await.expect(200)),
        vec![r3, r2]
    );
}
