//! End to end, as a real process: Lattice Runs through `troupe serve` against a fake
//! OpenAI-compatible server whose script answers from each request alone (see
//! `daemon_support/lattice.rs`). An auto Run of two Steps, its auditor rejecting Step 1 once,
//! ends with one completion mail and is kept beside the next Run; a cap of 3 calls pauses a Run
//! and a resume grants exactly one more call; a SIGKILL at the handoff from review to the
//! Step's BlueprintLoop leaves exactly one loop for the Step after the restart.
//!
//! Like `daemon.rs`, the tests run `target/debug/troupe` (or `$TROUPE_BIN`), building it with
//! `cargo build -p troupe-cli` only when it is missing.

mod daemon_support;
mod sse;

use daemon_support::lattice::*;
use daemon_support::*;

use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// The valid actions the planner was asked for, in order, each once however often it was asked.
fn planner_steps(fake: &FakeModel) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in fake.requests() {
        if !is_planner(&r) || after_tool(&r).is_some() {
            continue;
        }
        let a = valid_action(&r).unwrap_or_else(|| "?".into());
        if out.last() != Some(&a) {
            out.push(a);
        }
    }
    out
}

async fn session(api: &Api) -> i64 {
    let bot = api.bot("Builder").await;
    api.direct(bot).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_auto_run_of_two_steps_completes_with_one_completion_mail() {
    let script = Script::new(2);
    let (rig, fake) = lattice_rig(script.clone()).await;
    let (_daemon, api) = rig.start();
    let sid = session(&api).await;
    let mut events = sse::SseStream::connect(
        &api.client,
        &api.url(&format!("/v1/events?session_id={sid}")),
        None,
    )
    .await;

    let on = enable_auto(&api, sid, None).await;
    assert_eq!(on["kind"], "lattice", "{on:#}");
    assert_eq!(on["slot"]["mode"], "auto", "{on:#}");
    let run_id = on["lattice"]["id"].clone();
    assert!(run_id.is_i64(), "{on:#}");
    assert_eq!(on["lattice"]["goal_seed"], GOAL, "{on:#}");

    let done = run_when(&api, sid, "the Run completes", |r| r["status"] != "active").await;
    assert_eq!(done["status"], "completed", "{done:#}\n{}", rig.log());
    assert_eq!(done["id"], run_id, "{done:#}");
    assert!(
        done["effect"].is_null(),
        "the completion was delivered: {done:#}"
    );
    assert_eq!(done["requirements"]["goal"], GOAL, "{done:#}");

    // Both Steps completed, each by one lattice loop on the session's thread, the first after
    // one rejection.
    let steps = done["pathway"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{done:#}");
    let thread = done["thread_id"].clone();
    let loops = lattice_loops(&api, &thread).await;
    assert_eq!(loops.len(), 2, "one loop per Step: {loops:#?}");
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step["title"], STEPS[i].0, "{step:#}");
        assert_eq!(step["status"], "completed", "{step:#}");
        assert_eq!(step["result_summary"], APPROVAL, "{step:#}");
        let attempts = step["loop_history"].as_array().unwrap();
        assert_eq!(attempts.len(), 1, "{step:#}");
        assert_eq!(attempts[0]["status"], "completed", "{step:#}");
        let l = api
            .get(&format!("/v1/blueprint-loops/{}", attempts[0]["loop_id"]))
            .await;
        assert_eq!(l["source"], "lattice", "{l:#}");
        assert_eq!(l["status"], "completed", "{l:#}");
        assert_eq!(
            l["note_id"], step["blueprint"]["note_id"],
            "{l:#}\n{step:#}"
        );
        assert_eq!(l["title"], blueprint_title(i + 1), "{l:#}");
        let rejections = if i == 0 { 1 } else { 0 };
        assert_eq!(l["audit"]["attempts"], rejections, "{l:#}");
    }

    // The planner was asked for each action in the table's order; after Step 1 the Run went
    // back to reviewing its Pathway (LAT-11). While a Step executed, no Lattice tool was shown
    // (LAT-14).
    assert_eq!(
        planner_steps(&fake),
        [
            "submit_requirements",
            "submit_pathway",
            "submit_pathway_review",
            "submit_blueprint",
            "submit_blueprint_review",
            "submit_pathway_review",
            "submit_blueprint",
            "submit_blueprint_review",
        ],
    );
    let reqs = fake.requests();
    assert!(
        reqs.iter()
            .filter(|r| is_executor(r))
            .all(|r| !offers(r, "lattice_submit") && !offers(r, "pathway_write")),
        "an executor saw Lattice tools"
    );
    let odd = script.unexpected.lock().unwrap().clone();
    assert!(odd.is_empty(), "{odd:#?}");

    // Exactly one completion mail: one message under its key in the session's events up to
    // the Bot's summing up, which the mail asked for; the Bot saw it once.
    let seen = events
        .until(WAIT, |m| {
            m.event == "message_created" && m.data.contains(SUMMED_UP)
        })
        .await;
    let key = format!("lattice:{run_id}:completion");
    let mails: Vec<Value> = seen
        .iter()
        .filter(|m| m.event == "message_created")
        .map(|m| m.json()["payload"]["message"].clone())
        .filter(|msg| msg["delivery_key"] == key.as_str())
        .collect();
    assert_eq!(
        mails.len(),
        1,
        "one completion mail: {mails:#?}\n{}",
        rig.log()
    );
    assert!(
        mails[0].to_string().contains("2 of 2 Steps done"),
        "{:#}",
        mails[0]
    );
    let summing_up = bot_calls(&fake)
        .into_iter()
        .filter(|r| fresh_user(r).contains(COMPLETED_MAIL))
        .collect::<Vec<_>>();
    assert_eq!(summing_up.len(), 1, "{summing_up:#?}");
    let mail_messages = messages(&summing_up[0])
        .iter()
        .filter(|m| content(m).contains(COMPLETED_MAIL))
        .count();
    assert_eq!(mail_messages, 1, "{:#?}", summing_up[0]);

    // The slot is cleared; the workflow view still shows the finished Run.
    let wf = api.get(&format!("/v1/sessions/{sid}/workflow")).await;
    assert!(wf["kind"].is_null() && wf["slot"].is_null(), "{wf:#}");
    assert_eq!(wf["lattice"]["status"], "completed", "{wf:#}");

    // A re-enable makes a new Run; the completed one is kept (LAT-1).
    let again = api
        .post(
            &format!("/v1/sessions/{sid}/workflow"),
            json!({"kind": "lattice", "mode": "auto"}),
        )
        .await;
    let second = again["lattice"]["id"].clone();
    assert_ne!(second, run_id, "{again:#}");
    assert_eq!(again["lattice"]["state"], "clarifying", "{again:#}");
    let runs = api
        .list(&format!("/v1/lattice/runs?session_id={sid}"))
        .await;
    let listed: Vec<(Value, Value)> = runs
        .iter()
        .map(|r| (r["id"].clone(), r["status"].clone()))
        .collect();
    assert_eq!(
        listed,
        [
            (second.clone(), json!("active")),
            (run_id.clone(), json!("completed"))
        ],
        "{runs:#?}"
    );
    assert_eq!(runs[0]["current"], true, "{runs:#?}");
    assert_eq!(runs[1]["current"], false, "{runs:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_budget_pause_resumes_with_exactly_one_more_call() {
    let script = Script::new(2);
    let (rig, fake) = lattice_rig(script).await;
    let (_daemon, api) = rig.start();
    let sid = session(&api).await;
    let wf_path = format!("/v1/sessions/{sid}/workflow");

    let on = enable_auto(&api, sid, Some(3)).await;
    assert_eq!(on["lattice"]["max_model_calls"], 3, "{on:#}");
    let run_id = on["lattice"]["id"].clone();

    let paused = run_when(&api, sid, "the Run pauses", |r| r["status"] != "active").await;
    assert_eq!(paused["status"], "paused", "{paused:#}\n{}", rig.log());
    assert_eq!(
        paused["status_reason"], "model_call_budget_exhausted",
        "{paused:#}"
    );
    assert_eq!(paused["model_call_count"], 3, "{paused:#}");
    // The gate checks the budget before it takes an action: the third call's submit waits.
    assert_eq!(paused["state"], "planning", "{paused:#}");
    assert_eq!(
        paused["pending_action"]["kind"]["action"], "submit_pathway",
        "{paused:#}"
    );
    let wf = wait_until("the session is idle and latched", || async {
        let wf = api.get(&wf_path).await;
        (wf["running"] == false && !wf["paused"].is_null()).then_some(wf)
    })
    .await;
    assert_eq!(wf["paused"]["reason"], "workflow", "{wf:#}");
    assert!(
        wf["paused"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("model call budget exhausted")),
        "{wf:#}"
    );
    assert_eq!(wf["lattice"]["id"], run_id, "{wf:#}");
    let before = bot_calls(&fake).len();
    assert_eq!(
        before,
        3,
        "the count is the calls made: {:#?}",
        bot_calls(&fake)
    );

    // Resume: one more call is granted, made, and the Run pauses again.
    let resumed = api
        .post(&format!("/v1/lattice/runs/{run_id}/resume"), json!({}))
        .await;
    assert_eq!(resumed["status"], "active", "{resumed:#}");
    assert_eq!(resumed["max_model_calls"], 4, "{resumed:#}");
    let again = run_when(&api, sid, "the Run pauses again", |r| {
        r["status"] == "paused" && r["model_call_count"] == 4
    })
    .await;
    assert_eq!(
        again["status_reason"], "model_call_budget_exhausted",
        "{again:#}"
    );
    assert_eq!(again["max_model_calls"], 4, "{again:#}");
    let wf = wait_until("the session is idle and latched again", || async {
        let wf = api.get(&wf_path).await;
        (wf["running"] == false && !wf["paused"].is_null()).then_some(wf)
    })
    .await;
    assert_eq!(wf["paused"]["reason"], "workflow", "{wf:#}");
    let after = bot_calls(&fake);
    assert_eq!(after.len(), before + 1, "exactly one more call: {after:#?}");
    // The kept submit was taken on resume, and the one call was the next decision (the Pathway
    // review), which waits behind the pause that followed it.
    assert_eq!(again["state"], "reviewing_pathway", "{again:#}");
    assert_eq!(
        again["pending_action"]["kind"]["action"], "submit_pathway_review",
        "{again:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
/// The controller consumes the review, writes `executing` with its `create_blueprint_loop`
/// effect, creates the loop and starts it in one transaction, so a pending create is never on
/// disk for a kill to find (and the state change's event is only sent once it committed). The
/// kill lands as soon as `executing` shows: the loop exists and runs, its executor's turn may
/// have started. After the restart there is still exactly one lattice loop for the Step, and
/// the Run goes on to completion on it.
async fn sigkill_at_the_handoff_leaves_one_loop_after_restart() {
    let script = Script::new(1);
    // The executor's first call never answers in the first daemon: whatever the kill lands
    // on, the first daemon gets no further than a started loop.
    script.hold_executor.store(true, Ordering::SeqCst);
    let (rig, fake) = lattice_rig(script.clone()).await;
    let (mut daemon, api) = rig.start();
    let sid = session(&api).await;
    let mut events = sse::SseStream::connect(
        &api.client,
        &api.url(&format!("/v1/events?session_id={sid}")),
        None,
    )
    .await;
    let on = enable_auto(&api, sid, None).await;
    let run_id = on["lattice"]["id"].clone();

    // The review is consumed and the Step handed to its loop. Kill at once.
    events
        .until(WAIT, |m| {
            m.event == "lattice_state_changed" && m.json()["payload"]["to"] == "executing"
        })
        .await;
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    let mut seen = Vec::new();
    while let Ok(m) = events.rx.try_recv() {
        seen.push(m.event);
    }
    let created_before_kill = seen.iter().any(|e| e == "lattice_step_started");
    eprintln!(
        "killed after executing was written; the loop {} recorded as created before the kill (events after: {seen:?})",
        if created_before_kill {
            "was"
        } else {
            "was not"
        }
    );
    drop(daemon);

    script.hold_executor.store(false, Ordering::SeqCst);
    let (_daemon, api) = rig.start();
    // A turn the kill cut off latches the session `interrupted` (startup recovery never drives
    // past it); the person's Continue goes on. Without a cut-off turn nothing is latched.
    let wf = api.get(&format!("/v1/sessions/{sid}/workflow")).await;
    match wf["paused"]["reason"].as_str() {
        None => {}
        Some("interrupted") => {
            let c = api
                .post(&format!("/v1/sessions/{sid}/continue"), json!({}))
                .await;
            eprintln!("the kill cut off the executor's turn: Continue {c}");
        }
        Some(other) => panic!("unexpected latch {other}: {wf:#}"),
    }
    let done = run_when(&api, sid, "the Run completes after the restart", |r| {
        r["status"] != "active"
    })
    .await;
    assert_eq!(done["status"], "completed", "{done:#}\n{}", rig.log());
    assert_eq!(done["id"], run_id, "{done:#}");

    let step = &done["pathway"][0];
    let attempts = step["loop_history"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "one attempt for the Step: {step:#}");
    let loops = lattice_loops(&api, &done["thread_id"]).await;
    assert_eq!(loops.len(), 1, "exactly one lattice loop: {loops:#?}");
    assert_eq!(
        loops[0]["id"], attempts[0]["loop_id"],
        "{loops:#?}\n{step:#}"
    );
    assert_eq!(loops[0]["status"], "completed", "{loops:#?}");
    assert_eq!(
        loops[0]["note_id"], step["blueprint"]["note_id"],
        "{loops:#?}"
    );

    // The executor was given the loop's first prompt once, however the kill fell.
    let last = bot_calls(&fake)
        .into_iter()
        .rfind(is_executor)
        .expect("the executor was asked");
    let firsts = messages(&last)
        .iter()
        .filter(|m| content(m).contains(EXECUTOR_FIRST_PROMPT))
        .count();
    assert_eq!(firsts, 1, "{last:#}");
}
