//! End to end, as a real process: Deliverables I (issue 15) through `troupe serve` against a
//! fake OpenAI-compatible server. In a group of Maker (its lead) and Checker, the person's line
//! "@Maker write hello.txt saying hello" reaches Maker's desk; `work_on` opens a job; there
//! Maker lays out one ticket (owner Maker, reviewer Checker) with `plan_items`, writes the file
//! into the ticket's folder, hands it over with `submit`, and a repeat hand-over is refused
//! `unchanged`. Checker, woken by the review line queued into its work on the job, reads the
//! file and rejects it with a note; the note reaches Maker, who fixes the file and hands it over
//! again; Checker approves and the job is delivered. Checker runs on another model name than
//! Maker (B §5, the same-model rule); with both on one model name, Checker's approve only
//! leaves the hand-over waiting on the user's word and the job is not delivered.
//!
//! The fake's answer is a function of the request: which Bot asks, whether at its desk or in
//! its work on the job, and the tool results and mail in the conversation so far (never a count
//! of calls). One answer is held: Checker's first step waits until the fake has seen Maker's
//! request after the refused repeat, so the review cannot overtake the `unchanged` check.
//! Waiting is on the group's event stream (`GET /v1/events?session_id=`) or on the API with a
//! deadline. The tests run `target/debug/troupe` (or `$TROUPE_BIN`), on a fresh PostgreSQL
//! database when `TROUPE_TEST_DATABASE` names a server, else on SQLite.

mod daemon_support;
mod sse;

use daemon_support::deliverables::{
    Answer, Cond, GatedFake, bot_on, json_in, start_on_test_backend, tool_results,
};
use daemon_support::*;
use serde_json::{Value, json};
use sse::{SseMessage, SseStream};
use std::sync::Arc;
use std::time::Duration;

const TITLE: &str = "Greetings";
const LINE: &str = "@Maker write hello.txt saying hello";
const JOB: &str = "hello.txt";
const TICKET: &str = "Hello";
const FILE: &str = "hello.txt";
const DRAFT: &str = "helo\n";
const FIXED: &str = "hello\n";
const NOTE: &str = "It says helo: spell it hello.";
const SUBMITTED: &str = "Handed over hello.txt for review.";
const RESUBMITTED: &str = "Fixed the spelling and handed it over again.";
const REVIEWED: &str = "Review given.";
const UNEXPECTED: &str = "UNEXPECTED request";
/// Every line a Bot may say in these tests.
const SCRIPTED: &[&str] = &[SUBMITTED, RESUBMITTED, REVIEWED];

const AT_DESK: &str = "You are at your desk in this conversation";
const IN_JOB: &str = "You work on this job in its folder";
/// The reject's mail to the maker says this (crates/collab/src/reviews/mod.rs `reject`).
const SENT_BACK: &str = "back to rework";
/// How the reviewer's mail starts (crates/collab/src/submissions/pass.rs `to_reviewer`).
const REVIEW_REQUEST: &str = "Review request:";
/// The code of a repeat hand-over refused (crates/collab/src/submissions/handover.rs).
const UNCHANGED: &str = "unchanged";

/// The whole-run budget for waits on the event stream.
const LONG: Duration = Duration::from_secs(90);

// ---------- the fake model ----------

fn in_job(req: &Value) -> bool {
    system(req).contains(IN_JOB)
}

fn at_desk(req: &Value) -> bool {
    system(req).contains(AT_DESK)
}

/// Whether `req` is Maker's step right after its repeat hand-over was refused `unchanged`.
fn after_refused_repeat(req: &Value) -> bool {
    bot_of(req).as_deref() == Some("Maker")
        && after_tool(req).as_deref() == Some("submit")
        && tool_results(req)
            .last()
            .is_some_and(|(_, c)| c.contains(UNCHANGED))
}

/// The file's path relative to the job's folder (the Bots' work dir), from `plan_items`'s
/// result: `<ticket folder>/hello.txt`.
fn file_path(req: &Value) -> Option<String> {
    tool_results(req)
        .iter()
        .filter(|(name, _)| name == "plan_items")
        .find_map(|(_, c)| {
            let laid = json_in(c)?;
            let folder = laid["tickets"][0]["folder"].as_str()?.to_string();
            Some(format!("{folder}/{FILE}"))
        })
}

fn maker(req: &Value) -> String {
    if at_desk(req) {
        return if fresh_user(req).contains(LINE) {
            tool_call("work_on", json!({"new": {"title": JOB}}))
        } else {
            text(UNEXPECTED)
        };
    }
    if !in_job(req) {
        return text(UNEXPECTED);
    }
    let results = tool_results(req);
    // The reject's note reached Maker (as a waking task or a steer).
    let sent_back = messages(req)
        .iter()
        .any(|m| m["role"] == "user" && content(m).contains(SENT_BACK));
    let refused_repeat = results
        .iter()
        .any(|(n, c)| n == "submit" && c.contains(UNCHANGED));
    let Some(path) = file_path(req) else {
        return if fresh_user(req).contains(LINE) && results.is_empty() {
            tool_call(
                "plan_items",
                json!({"items": [{"title": TICKET, "owner": "Maker", "reviewer": "Checker",
                        "done_when": "hello.txt in the ticket's folder says hello"}]}),
            )
        } else {
            text(UNEXPECTED)
        };
    };
    match after_tool(req).as_deref() {
        Some("plan_items") => tool_call("write_file", json!({"path": path, "content": DRAFT})),
        // The first hand-over keeps the turn going, so the repeat comes in the same segment.
        Some("write_file") => tool_call(
            "submit",
            json!({"artifacts": [path], "continue": !sent_back, "note": "hello.txt as asked"}),
        ),
        Some("submit") if !sent_back && !refused_repeat => tool_call(
            "submit",
            json!({"artifacts": [path], "continue": true, "note": "hello.txt as asked"}),
        ),
        Some("submit") if !sent_back => text(SUBMITTED),
        Some("submit") => text(RESUBMITTED),
        None if sent_back && fresh_user(req).contains(SENT_BACK) => {
            tool_call("write_file", json!({"path": path, "content": FIXED}))
        }
        _ => text(UNEXPECTED),
    }
}

/// The submission id and first file a review request names ("… — submission sub_7:
/// 01-Hello/hello.txt (sha256 …)").
fn review_request(mail: &str) -> Option<(i64, String)> {
    let at = mail.rfind(REVIEW_REQUEST)?;
    let rest = &mail[at..];
    let (_, after) = rest.split_once("— submission ")?;
    let (id, after) = after.split_once(": ")?;
    let (path, _) = after.split_once(" (sha256")?;
    let id = id.trim().trim_start_matches("sub_").parse().ok()?;
    Some((id, path.trim().to_string()))
}

fn checker(req: &Value, held: &Cond) -> Answer {
    if !in_job(req) {
        return Answer::Now(text(UNEXPECTED));
    }
    let results = tool_results(req);
    match after_tool(req).as_deref() {
        Some("read_file") => {
            let mail: String = messages(req)
                .iter()
                .filter(|m| m["role"] == "user")
                .map(content)
                .collect();
            let Some((id, _)) = review_request(&mail) else {
                return Answer::Now(text(UNEXPECTED));
            };
            let seen = &results.last().unwrap().1;
            let body = if seen.contains(FIXED.trim()) {
                tool_call(
                    "review",
                    json!({"submission_id": id, "outcome": "approve",
                           "note": "It says hello."}),
                )
            } else {
                tool_call(
                    "review",
                    json!({"submission_id": id, "outcome": "reject", "note": NOTE}),
                )
            };
            Answer::Now(body)
        }
        Some("review") => Answer::Now(text(REVIEWED)),
        None => match review_request(&fresh_user(req)) {
            Some((_, path)) => {
                Answer::When(held.clone(), tool_call("read_file", json!({"path": path})))
            }
            None => Answer::Now(text(UNEXPECTED)),
        },
        Some(_) => Answer::Now(text(UNEXPECTED)),
    }
}

fn script(req: &Value, held: &Cond) -> Answer {
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
    } else if tagged(req, "troupe-reader:large_job") {
        // The scheduler re-reads a job's size once three segments ended unapproved (LJ3); a
        // slow run reaches its tick before the scenario ends.
        text(r#"{"large":false,"evidence":""}"#)
    } else {
        match bot_of(req).as_deref() {
            Some("Maker") => maker(req),
            Some("Checker") => return checker(req, held),
            _ => text(UNEXPECTED),
        }
    };
    Answer::Now(body)
}

/// The fake, and a rig whose `default` and `reading` roles are it (model `fake`); the Bots get
/// their own endpoints on it with their own model names.
async fn rig() -> (Rig, Arc<GatedFake>) {
    // Checker's first step waits for Maker's step after the refused repeat.
    let held: Cond = Arc::new(|seen: &[Value]| seen.iter().any(after_refused_repeat));
    let fake = GatedFake::serve(move |req| script(req, &held)).await;
    let rig = Rig::new(|_| {});
    write_config(
        &rig.path("config.toml"),
        &[("fake", &fake.url)],
        &[("default", "fake"), ("reading", "fake")],
        "",
    );
    (rig, fake)
}

// ---------- reading the daemon ----------

/// The group's event stream from its first event.
async fn events(api: &Api, g: i64) -> SseStream {
    SseStream::connect(
        &api.client,
        &api.url(&format!("/v1/events?session_id={g}")),
        None,
    )
    .await
}

/// The deliverables events among `got`, as (kind, payload).
fn deliverables(got: &[SseMessage]) -> Vec<(String, Value)> {
    got.iter()
        .filter(|m| m.id.is_some())
        .filter(|m| {
            m.event.starts_with("submission_")
                || m.event.starts_with("review_")
                || m.event.starts_with("ticket_")
                || m.event.starts_with("plan_delivered")
                || m.event.starts_with("plan_reopened")
        })
        .map(|m| (m.event.clone(), m.json()["payload"].clone()))
        .collect()
}

/// Each event as `kind` or `ticket_stage_changed:<to>` / `review_recorded:<outcome>`.
fn steps(events: &[(String, Value)]) -> Vec<String> {
    events
        .iter()
        .map(|(k, p)| match k.as_str() {
            "ticket_stage_changed" => format!("{k}:{}", p["to"].as_str().unwrap_or("?")),
            "review_recorded" | "review_awaiting_user" | "review_refused" => {
                format!("{k}:{}", p["outcome"].as_str().unwrap_or("?"))
            }
            _ => k.clone(),
        })
        .collect()
}

/// Whether `want` appears in `got` in order (other steps may come between).
fn in_order(got: &[String], want: &[&str]) -> bool {
    let mut it = got.iter();
    want.iter().all(|w| it.any(|g| g == w))
}

async fn the_plan(api: &Api, g: i64) -> Value {
    let plans = api.list(&format!("/v1/tasks?session_id={g}")).await;
    assert_eq!(plans.len(), 1, "one job for the group: {plans:#?}");
    plans[0].clone()
}

async fn submissions(api: &Api, plan: &Value) -> Vec<Value> {
    let mut subs = api
        .list(&format!("/v1/tasks/{}/submissions", plan["id"]))
        .await;
    subs.sort_by_key(|s| s["id"].as_i64());
    subs
}

async fn tickets(api: &Api, plan: &Value) -> Vec<Value> {
    api.get(&format!("/v1/tasks/{}/tickets", plan["id"])).await["tickets"]
        .as_array()
        .unwrap()
        .clone()
}

/// Once no work item of `bots` runs or is queued.
async fn settled(api: &Api, bots: &[i64]) {
    wait_until("every work item settled", || async {
        for b in bots {
            let items = api.list(&format!("/v1/bots/{b}/work-items")).await;
            if items
                .iter()
                .any(|w| w["state"] == "running" || w["state"] == "queued")
            {
                return None;
            }
        }
        Some(())
    })
    .await
}

fn file_of(sub: &Value) -> (String, String) {
    let files = sub["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{sub:#}");
    (
        files[0]["path"].as_str().unwrap().to_string(),
        files[0]["sha256"].as_str().unwrap().to_string(),
    )
}

/// The SHA-256 the app records for a file holding `bytes` (its own streamed hasher).
fn sha256_hex(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    std::fs::write(&f, bytes).unwrap();
    troupe_collab::submissions::files::sha256_file(&f)
        .unwrap()
        .0
}

/// Requests the script had no answer for (it said UNEXPECTED), read again from the requests.
fn surprised(fake: &GatedFake) -> Vec<Value> {
    let open: Cond = Arc::new(|_: &[Value]| true);
    let unexpected = text(UNEXPECTED);
    fake.requests()
        .into_iter()
        .filter(|r| match script(r, &open) {
            Answer::Now(b) | Answer::When(_, b) => b == unexpected,
        })
        .collect()
}

/// Every line the Bots said was one the script has, and no request surprised the fake.
async fn only_scripted(api: &Api, g: i64, rig: &Rig) {
    for l in api.lines(g).await {
        if l["author"] != "bot" {
            continue;
        }
        let body = l["body"].as_str().unwrap_or_default();
        assert!(
            SCRIPTED.contains(&body) || body.starts_with("Handed over for #"),
            "a Bot said {body:?}\n{}",
            rig.log()
        );
    }
}

// ---------- the tests ----------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s_review_reject_then_resubmit_approved_by_another_model_delivers_the_job() {
    let (rig, fake) = rig().await;
    let (_daemon, api) = start_on_test_backend(&rig);
    let maker = bot_on(&api, "Maker", &fake.url, "maker-model").await;
    let checker = bot_on(&api, "Checker", &fake.url, "vendor/Checker-Model").await;
    let g = api.group(&[maker, checker], TITLE).await;
    let mut stream = events(&api, g).await;

    api.say(g, LINE).await;
    let got = stream.until(LONG, |m| m.event == "plan_delivered").await;
    let plan = the_plan(&api, g).await;
    settled(&api, &[maker, checker]).await;

    // The submissions: the first sent back, the second approved by its reviewer.
    let subs = submissions(&api, &plan).await;
    assert_eq!(
        subs.len(),
        2,
        "two hand-overs (the repeat was refused): {subs:#?}"
    );
    let (first, second) = (&subs[0], &subs[1]);
    let path = format!("01-{TICKET}/{FILE}");
    for s in &subs {
        assert_eq!(s["origin"], "explicit", "{s:#}");
        assert_eq!(s["producer_bot_id"], maker, "{s:#}");
        assert_eq!(s["task_id"], plan["id"], "{s:#}");
        assert_eq!(s["ticket_number"], 1, "{s:#}");
    }
    assert_eq!(file_of(first), (path.clone(), sha256_hex(DRAFT.as_bytes())));
    assert_eq!(
        file_of(second),
        (path.clone(), sha256_hex(FIXED.as_bytes()))
    );
    assert_eq!(first["state"], "rework", "{first:#}");
    assert!(first["approved_by"].is_null(), "{first:#}");
    assert_eq!(second["state"], "approved", "{second:#}");
    assert_eq!(second["approved_by"], "reviewer", "{second:#}");
    assert_eq!(second["approved_by_bot_id"], checker, "{second:#}");

    // Their reviews: Checker's reject with the note, then its approve; models told apart.
    let r1 = first["reviews"].as_array().unwrap();
    assert_eq!(r1.len(), 1, "{first:#}");
    assert_eq!(r1[0]["outcome"], "reject", "{first:#}");
    assert_eq!(r1[0]["note"], NOTE, "{first:#}");
    assert_eq!(r1[0]["reviewer_bot_id"], checker, "{first:#}");
    let r2 = second["reviews"].as_array().unwrap();
    assert_eq!(r2.len(), 1, "{second:#}");
    assert_eq!(r2[0]["outcome"], "approve", "{second:#}");
    assert_eq!(r2[0]["result"], "recorded", "{second:#}");
    assert_eq!(r2[0]["same_model"], false, "{second:#}");
    assert_eq!(r2[0]["producer_model"], "maker-model", "{second:#}");
    assert_eq!(
        r2[0]["reviewer_model"], "vendor/Checker-Model",
        "{second:#}"
    );

    // The ticket: approved, made by Maker, reviewed by Checker; the job delivered.
    let ts = tickets(&api, &plan).await;
    assert_eq!(ts.len(), 1, "{ts:#?}");
    let t = &ts[0];
    assert_eq!(t["stage"], "approved", "{t:#}");
    assert_eq!(t["owner_bot_id"], maker, "{t:#}");
    assert_eq!(t["reviewer_bot_id"], checker, "{t:#}");
    assert_eq!(t["approved_by_bot_id"], maker, "{t:#}");
    assert_eq!(t["folder"], format!("01-{TICKET}"), "{t:#}");
    let plan = the_plan(&api, g).await;
    assert!(!plan["delivered_at"].is_null(), "{plan:#}");
    let folder = plan["folder"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(std::path::Path::new(folder).join(&path)).unwrap(),
        FIXED
    );

    // The order of events in the group's stream.
    let ev = deliverables(&got);
    let order = steps(&ev);
    let want = [
        "submission_created",
        "ticket_stage_changed:submitted",
        "ticket_stage_changed:in_review",
        "review_recorded:reject",
        "ticket_stage_changed:rework",
        "submission_created",
        "ticket_stage_changed:submitted",
        "ticket_stage_changed:in_review",
        "review_recorded:approve",
        "submission_approved",
        "ticket_stage_changed:approved",
        "plan_delivered",
    ];
    assert!(in_order(&order, &want), "events: {order:#?}");
    assert_eq!(
        order.iter().filter(|s| *s == "submission_created").count(),
        2,
        "{order:#?}"
    );
    assert_eq!(order.last().map(String::as_str), Some("plan_delivered"));
    for (kind, p) in &ev {
        assert_eq!(p["task_id"], plan["id"], "{kind}: {p:#}");
        if kind != "plan_delivered" {
            assert_eq!(p["ticket_id"], t["id"], "{kind}: {p:#}");
        }
    }
    let created: Vec<&Value> = ev
        .iter()
        .filter(|(k, _)| k == "submission_created")
        .map(|(_, p)| p)
        .collect();
    assert_eq!(created[0]["submission_id"], first["id"], "{created:#?}");
    assert_eq!(created[1]["submission_id"], second["id"], "{created:#?}");

    // The note reached Maker word for word, and the repeat was refused `unchanged`.
    let maker_asked: Vec<Value> = fake
        .requests()
        .into_iter()
        .filter(|r| bot_of(r).as_deref() == Some("Maker"))
        .collect();
    assert!(
        maker_asked.iter().any(|r| messages(r)
            .iter()
            .any(|m| m["role"] == "user" && content(m).contains(NOTE))),
        "Maker never read the note"
    );
    assert!(
        maker_asked.iter().any(after_refused_repeat),
        "Maker's repeat was not refused unchanged"
    );
    only_scripted(&api, g, &rig).await;
    let odd = surprised(&fake);
    assert!(odd.is_empty(), "{odd:#?}\n{}", rig.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s_same_model_approve_only_awaits_the_user() {
    let (rig, fake) = rig().await;
    let (_daemon, api) = start_on_test_backend(&rig);
    let maker = bot_on(&api, "Maker", &fake.url, "shared-model").await;
    let checker = bot_on(&api, "Checker", &fake.url, "vendor/Shared-Model").await;
    let g = api.group(&[maker, checker], TITLE).await;
    let mut stream = events(&api, g).await;

    api.say(g, LINE).await;
    let got = stream
        .until(LONG, |m| m.event == "submission_awaiting_word")
        .await;
    let plan = the_plan(&api, g).await;
    settled(&api, &[maker, checker]).await;

    // The same course as on two models up to the approve: the draft sent back, the fix
    // handed over; Checker's approve of the fix is kept but waits on the user.
    let subs = submissions(&api, &plan).await;
    assert_eq!(subs.len(), 2, "{subs:#?}");
    assert_eq!(subs[0]["state"], "rework", "{:#}", subs[0]);
    let s = &subs[1];
    assert_eq!(s["state"], "awaiting_user", "{s:#}");
    assert!(s["approved_by"].is_null(), "{s:#}");
    let reviews = s["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 1, "{s:#}");
    let r = &reviews[0];
    assert_eq!(r["outcome"], "approve", "{r:#}");
    assert_eq!(r["result"], "awaiting_user", "{r:#}");
    assert_eq!(r["same_model"], true, "{r:#}");
    assert_eq!(r["producer_model"], "shared-model", "{r:#}");
    assert_eq!(r["reviewer_model"], "vendor/Shared-Model", "{r:#}");
    let reasons = r["reasons"].as_array().unwrap();
    assert!(
        reasons
            .iter()
            .any(|x| x.as_str().unwrap_or_default().contains("the maker's model")),
        "{r:#}"
    );
    assert_eq!(r["reviewer_bot_id"], checker, "{r:#}");

    let ts = tickets(&api, &plan).await;
    assert_eq!(ts.len(), 1, "{ts:#?}");
    assert_ne!(ts[0]["stage"], "approved", "{:#}", ts[0]);
    assert!(ts[0]["approved_by_bot_id"].is_null(), "{:#}", ts[0]);
    let plan = the_plan(&api, g).await;
    assert!(plan["delivered_at"].is_null(), "{plan:#}");

    let ev = deliverables(&got);
    let order = steps(&ev);
    assert!(
        in_order(
            &order,
            &[
                "submission_created",
                "ticket_stage_changed:submitted",
                "ticket_stage_changed:in_review",
                "review_recorded:reject",
                "ticket_stage_changed:rework",
                "submission_created",
                "ticket_stage_changed:submitted",
                "ticket_stage_changed:in_review",
                "review_awaiting_user:approve",
                "submission_awaiting_word",
            ]
        ),
        "events: {order:#?}"
    );
    // Up to the wait on the user: nothing approved or delivered it (the API says so after).
    assert!(
        !order
            .iter()
            .any(|s| s == "submission_approved" || s == "plan_delivered"),
        "{order:#?}"
    );
    only_scripted(&api, g, &rig).await;
    let odd = surprised(&fake);
    assert!(odd.is_empty(), "{odd:#?}\n{}", rig.log());
}
