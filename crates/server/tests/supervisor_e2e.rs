//! End to end, as a real process: the supervisor's pick-ups (issue 16, C §12) through
//! `troupe serve --manual-clock` against a fake OpenAI-compatible server. Time moves only by
//! `POST /v1/debug/clock` and the scheduler ticks only on `POST /v1/debug/tick`, so nothing here
//! sleeps: each step waits, with a deadline, for the state the daemon reports.
//!
//! - A job's turn whose model call fails is picked up on the tick (attempts 1, 2, 3), never
//!   while a hold covers it (lifted: the next tick), and after the third the user is told once
//!   with a `retry_budget` line (SV-7, SV-10, SV-18, S-SV-10).
//! - A daemon SIGKILLed while a job's shell command runs comes back with that effect unknown:
//!   the tick continues nothing, tells the user once with an `unknown_effect` line, and the
//!   model is asked nothing (SV-19, S-SV-9).
//! - A quiet ticket's owner is called back twice in its progress cycle, each after the quiet
//!   threshold, then only a `stalled` notice is logged, with no line (SV-12…SV-14, S-SV-6).

mod daemon_support;
mod e2e_rig;

use daemon_support::*;
use e2e_rig::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const FAILING_LINE: &str = "Ada, draw the poster";
const SHELL_LINE: &str = "Ada, build the site";
const STALLED_LINE: &str = "Ada, write the brochure";
const LAID_OUT: &str = "Laid out the brochure ticket.";
const STILL_ON_IT: &str = "Still on it.";
/// How a call-back starts (troupe_core::supervisor::callback_line).
const CALLED_BACK: &str = "has been quiet for";

// ---------- the tests ----------

/// SV-7/SV-10/S-SV-10: a failing job turn is picked up on the tick until the hourly budget of
/// three is spent, then the user is told once; a hold over the Bot keeps every tick off it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s_sv_10_a_failing_turn_is_picked_up_until_retry_budget_and_never_while_held() {
    let setup = Setup::new(|req| ada(req, FAILING_LINE, &|_| None)).await;
    let (_d, api) = setup.start();
    let fake = &setup.fake;
    let bot = ada_bot(&api, fake).await;
    let s = api.direct(bot).await;
    api.say(s, FAILING_LINE).await;
    let item = job_item_in(&api, bot, "needs_attention").await;
    let plan = item["plan_id"].clone();
    assert_eq!(fake.job_calls().len(), 1, "the first turn failed once");

    // Held: the ticks pass it by; nothing is asked of the model, nothing is logged.
    let hold = api
        .post(
            "/v1/holds",
            json!({"scope": {"kind": "bot", "bot_id": bot}, "session_id": s}),
        )
        .await;
    for _ in 0..2 {
        tick(&api).await;
    }
    assert_eq!(fake.job_calls().len(), 1, "no pick-up while held");
    assert!(
        !kinds(&work_log(&api, &plan).await).contains(&"supervisor_picked_up".to_string()),
        "{:#?}",
        work_log(&api, &plan).await
    );

    // Lifted: the next tick picks it up; each failure is picked up again, three times in all.
    api.post(&format!("/v1/holds/{}/lift", hold["id"]), json!({}))
        .await;
    for attempt in 1..=3 {
        let report = tick(&api).await;
        wait_until(&format!("pick-up {attempt} reached the model"), || async {
            (fake.job_calls().len() > attempt).then_some(())
        })
        .await;
        job_item_in(&api, bot, "needs_attention").await;
        let picked: Vec<Value> = work_log(&api, &plan)
            .await
            .into_iter()
            .filter(|r| r["kind"] == "supervisor_picked_up")
            .collect();
        assert_eq!(picked.len(), attempt, "{report:#}");
        assert_eq!(picked[attempt - 1]["payload"]["attempt"], attempt);
        assert_eq!(picked[attempt - 1]["work_item_id"], item["id"]);
    }
    assert!(supervisor_lines(&api, s).await.is_empty(), "no line yet");

    // Spent: the user is told once, and no fourth attempt is made however often it ticks.
    for _ in 0..3 {
        tick(&api).await;
    }
    assert_eq!(fake.job_calls().len(), 4, "no fourth attempt");
    assert_eq!(supervisor_lines(&api, s).await, vec!["retry_budget"]);
    let log = kinds(&work_log(&api, &plan).await);
    assert_eq!(
        log.iter()
            .filter(|k| *k == "supervisor_retry_budget")
            .count(),
        1,
        "{log:?}"
    );
    // The pick-ups were written as fired supervisor check-backs (SV-2).
    let rows = api.list(&format!("/v1/check-backs?bot_id={bot}")).await;
    assert_eq!(
        rows.iter().filter(|r| r["state"] == "fired").count(),
        3,
        "{rows:#?}"
    );
}

/// The shell command the job runs: records its process group for the test's cleanup, says it
/// started, and runs until killed.
fn long_command(dir: &Path) -> String {
    format!(
        "echo > {dir}/ada-$$.pid; touch {dir}/started; sleep 600",
        dir = dir.display()
    )
}

/// SV-19/S-SV-9: SIGKILL while a job's shell command runs; after the restart the tick picks
/// nothing up, tells the user once that the command's outcome is unknown, and no model is
/// asked anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s_sv_9_sigkill_during_a_shell_is_an_unknown_effect_with_no_new_turn() {
    let pids = tempfile::tempdir().unwrap();
    let _cleanup = KillRecordedOnDrop(pids.path().to_path_buf());
    let cmd = long_command(pids.path());
    let setup = Setup::new(move |req| {
        ada(req, SHELL_LINE, &|r| {
            Some(match after_tool(r) {
                None => shell_call(&cmd),
                Some(_) => text(UNEXPECTED),
            })
        })
    })
    .await;
    let started: PathBuf = pids.path().join("started");
    let (mut daemon, api) = setup.start();
    let bot = ada_bot(&api, &setup.fake).await;
    let s = api.direct(bot).await;
    api.say(s, SHELL_LINE).await;
    wait_until("the job's shell command started", || async {
        started.exists().then_some(())
    })
    .await;
    daemon.child.kill().unwrap(); // SIGKILL
    daemon.child.wait().unwrap();
    let asked_before = setup.fake.all();

    let (_daemon, api) = setup.start();
    let item = job_item_in(&api, bot, "needs_attention").await;
    let plan = item["plan_id"].clone();
    for _ in 0..3 {
        tick(&api).await;
    }
    assert_eq!(supervisor_lines(&api, s).await, vec!["unknown_effect"]);
    let log = kinds(&work_log(&api, &plan).await);
    assert!(
        !log.contains(&"supervisor_picked_up".to_string()),
        "{log:?}"
    );
    assert_eq!(
        log.iter()
            .filter(|k| *k == "supervisor_unknown_effect")
            .count(),
        1,
        "{log:?}"
    );
    assert_eq!(
        setup.fake.all(),
        asked_before,
        "no new turn after the restart\n{}",
        setup.rig.log()
    );
    let turns = api.turns(s).await;
    assert!(turns.iter().all(|t| t["status"] != "running"), "{turns:#?}");
}

/// SV-12…SV-14/S-SV-6: a quiet ticket's owner is called back after the threshold, again after
/// another one with no progress, and then only a notice is logged: no third call, no line.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s_sv_6_a_stalled_ticket_is_called_back_twice_then_only_noticed() {
    let setup = Setup::new(|req| {
        ada(req, STALLED_LINE, &|r| {
            Some(if fresh_user(r).contains(CALLED_BACK) {
                text(STILL_ON_IT)
            } else {
                match after_tool(r).as_deref() {
                    None if fresh_user(r).contains(STALLED_LINE) => tool_call(
                        "plan_items",
                        json!({"items": [{"title": "Brochure", "owner": "Ada",
                                "done_when": "brochure.md in the ticket's folder"}]}),
                    ),
                    Some("plan_items") => text(LAID_OUT),
                    _ => text(UNEXPECTED),
                }
            })
        })
    })
    .await;
    let (_d, api) = setup.start();
    let fake = &setup.fake;
    let bot = ada_bot(&api, fake).await;
    let s = api.direct(bot).await;
    api.say(s, STALLED_LINE).await;
    let item = job_item_in(&api, bot, "idle").await;
    let plan = item["plan_id"].clone();
    let tickets = api.get(&format!("/v1/tasks/{plan}/tickets")).await;
    assert_eq!(
        tickets["tickets"].as_array().map(Vec::len),
        Some(1),
        "{tickets:#}\n{}",
        setup.rig.log()
    );
    let called_back = || {
        fake.job_calls()
            .iter()
            .filter(|r| fresh_user(r).contains(CALLED_BACK))
            .count()
    };

    // Not quiet long enough yet: nothing.
    tick(&api).await;
    assert_eq!(called_back(), 0);
    // Ada's last line in the direct is after the user's: the threshold is 10 minutes (SV-13).
    for n in 1..=2 {
        advance(&api, 10 * MINUTE).await;
        tick(&api).await;
        wait_until(&format!("call-back {n} reached Ada"), || async {
            (called_back() == n).then_some(())
        })
        .await;
        job_item_in(&api, bot, "idle").await;
    }
    for _ in 0..3 {
        advance(&api, 10 * MINUTE).await;
        tick(&api).await;
    }
    assert_eq!(called_back(), 2, "no third call-back in the cycle");
    let log = kinds(&work_log(&api, &plan).await);
    let count = |k: &str| log.iter().filter(|x| *x == k).count();
    assert_eq!(count("supervisor_called_back"), 2, "{log:?}");
    assert_eq!(count("supervisor_notice"), 1, "{log:?}");
    assert!(
        supervisor_lines(&api, s).await.is_empty(),
        "no line for stalled"
    );
    let lines = api.lines(s).await;
    assert!(
        lines.iter().all(|l| l["body"] != UNEXPECTED),
        "{lines:#?}\n{}",
        setup.rig.log()
    );
}
