//! The test controls of `troupe serve --manual-clock` (issue 16 item 1), through the real
//! binary: without the flag `POST /v1/debug/clock` and `POST /v1/debug/tick` are 404 like an
//! unknown route (with a valid token too); with it the clock moves only when told, a tick
//! answers its report, and a check-back booked for 5 minutes fires on the first tick after the
//! clock has passed its due time, never before. Waits are on the API with a deadline.

mod daemon_support;
mod support;

use daemon_support::deliverables::tool_results;
use daemon_support::*;
use serde_json::{Value, json};
use std::sync::Arc;

const LINE: &str = "Ada, check the render again later";
const JOB: &str = "render";
const NOTE: &str = "look at the render again";
const BOOKED: &str = "Booked a look in five minutes.";
const CHECKED: &str = "Looked again: the render is fine.";
const ON_IT: &str = "On it.";
const UNEXPECTED: &str = "UNEXPECTED request";
const AT_DESK: &str = "You are at your desk in this conversation";
const IN_JOB: &str = "You work on this job in its folder";
const MINUTE: i64 = 60_000;

// ---------- the fake model ----------

/// Ada opens a job for the line, books `check_back(5, NOTE)` in it, and answers the wake.
fn ada(req: &Value) -> String {
    let fresh = fresh_user(req);
    if fresh.contains(&format!("Check-back: {NOTE}")) {
        return text(CHECKED);
    }
    let after = after_tool(req);
    if after.as_deref() == Some("check_back") {
        return text(BOOKED);
    }
    let sys = system(req);
    if sys.contains(AT_DESK) {
        return if after.is_none() && fresh.contains(LINE) {
            tool_call("work_on", json!({"new": {"title": JOB}}))
        } else {
            text(ON_IT)
        };
    }
    let booked = tool_results(req).iter().any(|(n, _)| n == "check_back");
    if sys.contains(IN_JOB) && !booked {
        return tool_call("check_back", json!({"after_minutes": 5, "note": NOTE}));
    }
    text(UNEXPECTED)
}

fn script(req: &Value) -> Reply {
    let body = if tagged(req, "troupe-reader:user") {
        text(r#"{"control":"neither"}"#)
    } else if tagged(req, "troupe-reader:filing") {
        text(r#"{"belongs":"new"}"#)
    } else if tagged(req, "troupe-reader:bot") {
        text(
            r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":false,"asks_ok_only":false}"#,
        )
    } else if tagged(req, "troupe-judgement") {
        text(r#"{"join":false}"#)
    } else if bot_of(req).as_deref() == Some("Ada") {
        ada(req)
    } else {
        text(UNEXPECTED)
    };
    Reply::Now(body)
}

async fn rig() -> (Rig, Arc<FakeModel>) {
    let fake = FakeModel::serve(script).await;
    let rig = Rig::new(|p| {
        write_config(
            p,
            &[("fake", &fake.url)],
            &[("default", "fake"), ("reading", "fake")],
            "",
        )
    });
    (rig, fake)
}

fn start(rig: &Rig, extra: &[&str]) -> (Daemon, Api) {
    let d = Daemon::start_with(
        &troupe_binary(),
        &rig.path("data"),
        &rig.path("config.toml"),
        &rig.path("daemon.log"),
        extra,
    );
    let api = Api::of(&d);
    (d, api)
}

// ---------- talking to the daemon ----------

/// A POST with a raw body; the status and the JSON answer (Null when not JSON).
async fn post_raw(api: &Api, path: &str, body: &str) -> (u16, Value) {
    let r = api
        .client
        .post(api.url(path))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn advance(api: &Api, ms: i64) -> i64 {
    let (status, v) = api
        .post_status("/v1/debug/clock", json!({"advance_ms": ms}))
        .await;
    assert_eq!(status.as_u16(), 200, "{v}");
    v["now_ms"].as_i64().unwrap()
}

async fn tick(api: &Api) -> Value {
    let (status, v) = api.post_status("/v1/debug/tick", json!({})).await;
    assert_eq!(status.as_u16(), 200, "{v}");
    assert_eq!(v["failed"], json!([]), "a tick part failed: {v:#}");
    v
}

async fn check_backs(api: &Api, bot: i64) -> Vec<Value> {
    api.list(&format!("/v1/check-backs?bot_id={bot}")).await
}

/// Once none of the Bot's work items runs or is queued.
async fn settled(api: &Api, bot: i64) {
    wait_until("the Bot's work settled", || async {
        let items = api.list(&format!("/v1/bots/{bot}/work-items")).await;
        (!items
            .iter()
            .any(|w| w["state"] == "running" || w["state"] == "queued"))
        .then_some(())
    })
    .await
}

fn woken_by_the_check_back(fake: &FakeModel) -> bool {
    fake.of("Ada")
        .iter()
        .any(|r| fresh_user(r).contains(&format!("Check-back: {NOTE}")))
}

// ---------- the tests ----------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_manual_clock_the_debug_routes_are_404() {
    let (rig, _fake) = rig().await;
    let (_d, api) = start(&rig, &[]);
    let unknown = post_raw(&api, "/v1/debug/nothing", "{}").await;
    assert_eq!(unknown.0, 404);
    for (path, body) in [
        ("/v1/debug/clock", r#"{"advance_ms": 60000}"#),
        ("/v1/debug/clock", r#"{"advance_ms": -1}"#),
        ("/v1/debug/clock", "[]"),
        ("/v1/debug/clock", "{"),
        ("/v1/debug/tick", "{}"),
    ] {
        let (status, v) = post_raw(&api, path, body).await;
        assert_eq!(status, 404, "{path} {body}: {v}");
        assert_eq!(v["error"]["code"], "not_found", "{v}");
        assert_eq!(
            v["error"]["message"],
            format!("no route for {path}"),
            "answered as an unknown route is"
        );
    }
}

/// In-process, behind a token: the right token still gets 404 (the routes are not hidden by
/// access, they are off), and no token is refused first as everywhere.
#[tokio::test]
async fn with_a_token_the_debug_routes_are_still_404_without_manual_clock() {
    let mut app = support::TestApp::start_with_token(Some("s3cret-token")).await;
    for path in ["/v1/debug/clock", "/v1/debug/tick"] {
        app.post(path, json!({"advance_ms": 1000}))
            .await
            .expect_error(404, "not_found");
    }
    app.bearer = None;
    app.post("/v1/debug/tick", json!({}))
        .await
        .expect_error(401, "unauthorized");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_clock_moves_only_when_told_and_refuses_bad_advances() {
    let (rig, _fake) = rig().await;
    let (_d, api) = start(&rig, &["--manual-clock"]);
    let now = advance(&api, 0).await;
    let system_now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(
        (system_now - now).abs() < 10 * MINUTE,
        "starts at the system time"
    );
    assert_eq!(advance(&api, 0).await, now, "it does not move by itself");
    assert_eq!(advance(&api, 90 * MINUTE).await, now + 90 * MINUTE);
    let (status, v) = api
        .post_status("/v1/debug/clock", json!({"advance_ms": 1}))
        .await;
    assert_eq!(status.as_u16(), 200);
    assert_eq!(v["now_ms"], now + 90 * MINUTE + 1);
    assert!(v["now"].as_str().unwrap().ends_with('Z'), "{v}");

    for (body, code, names) in [
        ("{}", 422, "advance_ms"),
        (r#"{"advance_ms": -5}"#, 422, "advance_ms"),
        (r#"{"advance_ms": 1.5}"#, 422, "advance_ms"),
        (r#"{"advance_ms": "5"}"#, 422, "advance_ms"),
        (r#"{"advance_ms": null}"#, 422, "advance_ms"),
        (r#"{"advance_ms": 99999999999999}"#, 422, "advance_ms"),
        ("[]", 422, "JSON object"),
        ("{", 400, ""),
    ] {
        let (status, v) = post_raw(&api, "/v1/debug/clock", body).await;
        assert_eq!(status, code, "{body}: {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(names), "{body}: {v}");
    }
    assert_eq!(
        advance(&api, 0).await,
        now + 90 * MINUTE + 1,
        "a refused advance moved nothing"
    );

    let report = tick(&api).await;
    assert_eq!(report["at"], now + 90 * MINUTE + 1, "{report:#}");
    let check_backs = report["check_backs"].as_object().unwrap();
    assert!(check_backs.contains_key("fired"), "{report:#}");
    assert!(
        check_backs.values().all(|v| v == &json!([])),
        "nothing was booked, so nothing fell due: {report:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_check_back_booked_for_5_minutes_fires_only_after_the_clock_passes_it() {
    let (rig, fake) = rig().await;
    let (_d, api) = start(&rig, &["--manual-clock"]);
    let ada = api
        .post(
            "/v1/bots",
            json!({"name": "Ada", "endpoint": {"kind": "openai", "base_url": fake.url, "model": "fake"}}),
        )
        .await["id"]
        .as_i64()
        .unwrap();
    let s = api.direct(ada).await;
    api.say(s, LINE).await;
    let booked = wait_until("Ada booked a check-back", || async {
        check_backs(&api, ada).await.into_iter().next()
    })
    .await;
    settled(&api, ada).await;
    assert_eq!(booked["state"], "pending", "{booked:#}");
    let due = booked["due_at"].as_i64().unwrap();
    let now = advance(&api, 0).await;
    assert_eq!(due - now, 5 * MINUTE, "booked on the daemon's clock");

    // Not due: a tick fires nothing, however many.
    for _ in 0..2 {
        assert_eq!(tick(&api).await["check_backs"]["fired"], json!([]));
    }
    advance(&api, 5 * MINUTE - 1).await;
    assert_eq!(tick(&api).await["check_backs"]["fired"], json!([]));
    assert_eq!(check_backs(&api, ada).await[0]["state"], "pending");
    assert!(!woken_by_the_check_back(&fake));

    // Due: the clock alone fires nothing (no timer runs); the next tick does, once.
    advance(&api, 1).await;
    assert_eq!(check_backs(&api, ada).await[0]["state"], "pending");
    let report = tick(&api).await;
    assert_eq!(
        report["check_backs"]["fired"],
        json!([booked["id"]]),
        "{report:#}"
    );
    wait_until("Ada answered the check-back", || async {
        woken_by_the_check_back(&fake).then_some(())
    })
    .await;
    settled(&api, ada).await;
    let after = check_backs(&api, ada).await;
    assert_eq!(after.len(), 1, "{after:#?}");
    assert_eq!(after[0]["state"], "fired");
    assert_eq!(tick(&api).await["check_backs"]["fired"], json!([]));
    let wakes = fake
        .of("Ada")
        .iter()
        .filter(|r| fresh_user(r).contains(&format!("Check-back: {NOTE}")))
        .count();
    assert_eq!(wakes, 1, "woken once\n{}", rig.log());
    // The wake is private: nothing of it is a line in the conversation.
    let lines = api.lines(s).await;
    assert!(
        lines
            .iter()
            .all(|l| !l["body"].as_str().unwrap_or_default().contains(NOTE)),
        "{lines:#?}"
    );
}
