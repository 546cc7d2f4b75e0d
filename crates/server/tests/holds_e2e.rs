//! End to end, as a real process: holds (issue 14, digest A §13–16) through `troupe serve`
//! against a fake OpenAI-compatible server that is also the `reading` role (or, in one test,
//! whose reading endpoint answers 500). The composer Stop ends a long shell turn and its
//! process group (SIGTERM ignored → SIGKILL after the 3 s grace); "stop" read by the model in a
//! group holds the group; a go-on filed under one job lifts only that job's stop; with the
//! reader down "stop" is an ordinary line and nothing is held; a hold on everything survives a
//! SIGKILL of the daemon, and a kill during the request leaves the hold and its stops all there
//! or none. No test sees a conversation line of the app's about stopping or going on (HOLD-L9).
//!
//! The fake's answer is a function of the request alone: the app's readings by the line they
//! read (and, for filing, the jobs shown), a Bot's by what it was given since it last spoke.
//! Long commands ignore SIGTERM (`trap '' TERM`, inherited by the `exec`'d sleep) and record
//! their pid — which is their process group, `sh` leading it — as `<tag>-<pid>.pid` in a
//! directory of the test's, so the test can ask the kernel (`kill -0`) whether they live. The
//! fake, the lines and the waits are in `daemon_support/holds.rs`.

mod daemon_support;

use daemon_support::holds::*;
use daemon_support::*;

use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stop_on_a_long_shell_turn_ends_it_and_its_process_group() {
    let (rig, fake, dirs) = rig(false).await;
    let (_daemon, api) = rig.start();
    let runner = api.bot("Runner").await;
    let d = api.direct(runner).await;

    api.say(d, LONG_BUILD).await;
    let pid = pid_of(&dirs, "Runner_build").await;
    let turn = api.running_turn(d, runner).await;
    assert!(process_alive(pid) && group_alive(pid), "the command runs");

    // The composer Stop: 200, the turn stopped, the hold that stopped it.
    let calls_at_stop = fake.of("Runner").len();
    let t0 = Instant::now();
    let (status, stop) = api
        .post_status("/v1/turns/stop", json!({"session_id": d}))
        .await;
    let answered = t0.elapsed();
    assert_eq!(status.as_u16(), 200, "{stop:#}");
    assert_eq!(stop["id"], turn["id"], "{stop:#}");
    assert_eq!(stop["status"], "stopped", "{stop:#}");
    let hold_id = stop["hold_id"].clone();
    assert!(hold_id.is_i64(), "{stop:#}");
    // S-STOP-1: SIGTERM is ignored, so the group lives through the grace …
    if answered < GRACE - Duration::from_millis(500) {
        assert!(
            process_alive(pid),
            "the group was killed before the grace ran out"
        );
    }
    // … and SIGKILL ends it once the grace is over: nothing of it is left.
    let after = gone(pid, t0).await;
    assert!(after >= GRACE, "gone after {after:?}, within the grace");
    assert!(!process_alive(pid), "pid {pid} outlived the stop");
    assert_eq!(status_of(&api, &turn).await, "stopped");

    // GET /v1/holds shows it: the person's button, in force.
    let holds = api.holds(false).await;
    assert_eq!(holds.len(), 1, "{holds:#?}");
    let h = &holds[0];
    assert_eq!(h["id"], hold_id, "{h:#}");
    assert_eq!(h["status"], "in_force", "{h:#}");
    assert_eq!(h["source"], "user_button", "{h:#}");
    assert_eq!(h["composer_stop"], true, "{h:#}");
    assert_eq!(h["session_id"], d, "{h:#}");
    // The Bot's first effect bound the direct's line to a job (DS-5): the Stop holds the Bot's
    // work in that job.
    let items = api.list(&format!("/v1/bots/{runner}/work-items")).await;
    let item = items
        .iter()
        .find(|w| w["id"] == turn["work_item_id"])
        .unwrap_or_else(|| panic!("the turn's work item: {items:#?}"));
    assert_eq!(
        h["scope"],
        json!({"kind": "bot_plan", "bot_id": runner, "plan_id": item["plan_id"]}),
        "{h:#}"
    );
    assert_eq!(stopped_runs(h), std::slice::from_ref(&turn["id"]), "{h:#}");
    // The hold is the latch: the direct is not paused.
    let view = api.get(&format!("/v1/sessions/{d}")).await;
    assert!(view["paused"].is_null(), "{view:#}");

    // The next line lifts it, and the Bot answers that line (a Stop's lift reopens nothing).
    let line = api.say(d, THERE).await;
    let h = api.hold(&hold_id).await;
    assert_eq!(h["status"], "lifted", "{h:#}");
    assert_eq!(h["lifted_by"], "user_text", "{h:#}");
    assert_eq!(h["lift_message_id"], line["id"], "{h:#}");
    api.line_by(d, runner, STILL_HERE).await;
    assert!(api.holds(false).await.is_empty());
    let asked = &fake.of("Runner")[calls_at_stop..];
    assert_eq!(asked.len(), 1, "one model call, for the line: {asked:#?}");
    let given = fresh_user(&asked[0]);
    assert!(given.contains(THERE), "{given}");
    assert!(
        !given.contains("stopped this work"),
        "a Stop's lift reopens nothing: {given}"
    );
    let turns = api.turns(d).await;
    assert_eq!(
        turns.iter().filter(|t| t["status"] == "stopped").count(),
        1,
        "{turns:#?}"
    );
    assert_no_app_line(&api.lines(d).await, &rig.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stop_read_as_a_stop_in_a_group() {
    let (rig, fake, dirs) = rig(false).await;
    let (_daemon, api) = rig.start();
    let alpha = api.bot("Alpha").await;
    let beta = api.bot("Beta").await;
    let g = api.group(&[alpha, beta], TITLE).await;

    // Alpha (the lead) takes the build as a job and runs a long command in it.
    api.say(g, LONG_BUILD).await;
    let pid = pid_of(&dirs, "Alpha_build").await;
    let plan = plan_named(&api, g, LONG_BUILD).await;
    let (_, turn) = running_work(&api, alpha, &plan).await;
    let before = api.lines(g).await;

    // "stop", read by the model as nothing but a stop: the group is held, nobody named.
    let line = api.say(g, STOP).await;
    let holds = api.holds(false).await;
    assert_eq!(holds.len(), 1, "{holds:#?}");
    let h = holds[0].clone();
    assert_eq!(
        h["scope"],
        json!({"kind": "session", "session_id": g}),
        "{h:#}"
    );
    assert_eq!(h["source"], "user_text", "{h:#}");
    assert_eq!(h["source_message_id"], line["id"], "{h:#}");
    assert_eq!(h["composer_stop"], false, "{h:#}");
    assert_eq!(stopped_runs(&h), std::slice::from_ref(&turn), "{h:#}");
    assert_eq!(
        status_of(&api, &json!({"id": turn})).await,
        "stopped",
        "Alpha's turn"
    );
    let readings = api
        .list(&format!("/v1/messages/{}/readings", line["id"]))
        .await;
    let user: Vec<&Value> = readings.iter().filter(|r| r["kind"] == "user").collect();
    assert_eq!(user.len(), 1, "{readings:#?}");
    assert!(user[0]["failure"].is_null(), "read by the model: {user:#?}");
    assert_eq!(user[0]["reading"]["control"], "stop", "{user:#?}");
    // The whole-group hold parks the group's job (HOLD-P1).
    let parked = api.get(&format!("/v1/tasks/{}", plan["id"])).await;
    assert_eq!(parked["status"], "parked", "{parked:#}");
    gone(pid, Instant::now()).await;

    // The line reached nobody and the app said nothing: the only new line is the person's.
    let after = api.lines(g).await;
    let mut want = ids(&before);
    want.push(line["id"].clone());
    assert_eq!(ids(&after), want, "{after:#?}");
    assert!(fake.of("Beta").is_empty(), "Beta heard nothing");
    assert!(
        fake.of("Alpha").iter().all(|r| !given_stop(&fresh_user(r))),
        "no Bot was given the stop"
    );

    // "go on" lifts it (any later line in the group); Alpha goes on; still no app line.
    let go = api.say(g, GO_ON).await;
    let h = api.hold(&h["id"]).await;
    assert_eq!(h["status"], "lifted", "{h:#}");
    assert_eq!(h["lifted_by"], "user_text", "{h:#}");
    assert_eq!(h["lift_message_id"], go["id"], "{h:#}");
    api.line_by(g, alpha, BACK).await;
    let restored = api.get(&format!("/v1/tasks/{}", plan["id"])).await;
    assert_ne!(restored["status"], "parked", "{restored:#}");
    assert_no_app_line(&api.lines(g).await, &rig.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn continue_lifts_one_jobs_stop_only() {
    let (rig, fake, dirs) = rig(false).await;
    let (_daemon, api) = rig.start();
    let alpha = api.bot("Alpha").await;
    let beta = api.bot("Beta").await;
    let g = api.group(&[alpha, beta], TITLE).await;

    // Two jobs of Alpha's, each running a long command.
    api.say(g, REPORT).await;
    let pid_a = pid_of(&dirs, "Alpha_report").await;
    let a = plan_named(&api, g, REPORT).await;
    let (_, turn_a) = running_work(&api, alpha, &a).await;
    api.say(g, SUMMARY).await;
    let pid_b = pid_of(&dirs, "Alpha_summary").await;
    let b = plan_named(&api, g, SUMMARY).await;
    let (item_b, turn_b) = running_work(&api, alpha, &b).await;
    assert_ne!(a["id"], b["id"]);

    // A stop on Alpha's work in each job (the menu's "Stop this job" for one Bot).
    let stop_in = |plan: Value| {
        let api = api.clone();
        async move {
            let (status, h) = api
                .post_status(
                    "/v1/holds",
                    json!({"scope": {"kind": "bot_plan", "bot_id": alpha, "task_id": plan["id"]},
                           "session_id": g}),
                )
                .await;
            assert_eq!(status.as_u16(), 201, "{h:#}");
            h
        }
    };
    let t0 = Instant::now();
    let hold_a = stop_in(a.clone()).await;
    let hold_b = stop_in(b.clone()).await;
    assert_eq!(
        stopped_runs(&hold_a),
        std::slice::from_ref(&turn_a),
        "{hold_a:#}"
    );
    assert_eq!(
        stopped_runs(&hold_b),
        std::slice::from_ref(&turn_b),
        "{hold_b:#}"
    );
    gone(pid_a, t0).await;
    gone(pid_b, t0).await;
    assert_eq!(api.holds(false).await.len(), 2);

    // A go-on filed under the report (the reader files it there) lifts that job's stop only.
    let go = api.say(g, GO_ON_REPORT).await;
    let filed_under = |plan: &Value| {
        let api = api.clone();
        let path = format!("/v1/tasks/{}/messages", plan["id"]);
        async move { ids(&api.list(&path).await) }
    };
    assert!(
        filed_under(&a).await.contains(&go["id"]),
        "filed under the report"
    );
    assert!(
        !filed_under(&b).await.contains(&go["id"]),
        "not under the summary"
    );
    let ha = api.hold(&hold_a["id"]).await;
    assert_eq!(ha["status"], "lifted", "{ha:#}");
    assert_eq!(ha["lifted_by"], "user_text", "{ha:#}");
    assert_eq!(ha["lift_message_id"], go["id"], "{ha:#}");
    let hb = api.hold(&hold_b["id"]).await;
    assert_eq!(hb["status"], "in_force", "{hb:#}");
    let in_force = api.holds(false).await;
    assert_eq!(
        ids(&in_force),
        std::slice::from_ref(&hold_b["id"]),
        "{in_force:#?}"
    );

    // Alpha goes on with the report; the summary stays stopped and nothing of it runs.
    let reply = api.line_by(g, alpha, BACK).await;
    let reply_turn = api.turn(&reply["turn_id"]).await;
    let items = api.list(&format!("/v1/bots/{alpha}/work-items")).await;
    let item_a = items
        .iter()
        .find(|w| w["mode"] == "work" && w["plan_id"] == a["id"])
        .unwrap();
    assert_eq!(reply_turn["work_item_id"], item_a["id"], "{reply_turn:#}");
    assert_eq!(status_of(&api, &json!({"id": turn_b})).await, "stopped");
    let item_b_now = items.iter().find(|w| w["id"] == item_b["id"]).unwrap();
    assert_ne!(item_b_now["state"], "running", "{item_b_now:#}");
    let b_turns: Vec<Value> = api
        .turns(g)
        .await
        .into_iter()
        .filter(|t| t["work_item_id"] == item_b["id"])
        .collect();
    assert_eq!(
        b_turns.len(),
        1,
        "the summary ran nothing more: {b_turns:#?}"
    );
    let summary_calls = fake
        .of("Alpha")
        .iter()
        .filter(|r| system(r).contains(b["folder"].as_str().unwrap()))
        .count();
    assert_eq!(summary_calls, 1, "one model call in the summary's work");
    assert_no_app_line(&api.lines(g).await, &rig.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reader_answering_500_holds_nothing() {
    let (rig, fake, dirs) = rig(true).await;
    let (_daemon, api) = rig.start();
    let worker = api.bot("Worker").await;
    let d = api.direct(worker).await;

    // The Bot works on a command that waits for the test's release.
    api.say(d, GATED_BUILD).await;
    wait_until("the gated build started", || async {
        dirs.started().exists().then_some(())
    })
    .await;
    let turn = api.running_turn(d, worker).await;

    // "stop" with the reader down: the word lists read a stop, and nothing is carried out.
    let line = api.say(d, STOP).await;
    assert!(api.holds(true).await.is_empty(), "nothing is held");
    assert_eq!(
        status_of(&api, &turn).await,
        "running",
        "the Bot's turn goes on"
    );
    let readings = api
        .list(&format!("/v1/messages/{}/readings", line["id"]))
        .await;
    let user: Vec<&Value> = readings.iter().filter(|r| r["kind"] == "user").collect();
    assert_eq!(user.len(), 1, "{readings:#?}");
    assert!(!user[0]["failure"].is_null(), "no model read it: {user:#?}");
    assert_eq!(user[0]["reading"]["control"], "stop", "{user:#?}");
    let line = api.get(&format!("/v1/messages/{}", line["id"])).await;
    assert!(line["control"].is_null(), "no buttons either: {line:#}");
    assert!(
        fake.failed()
            .iter()
            .any(|r| read_line(r).as_deref() == Some(STOP)),
        "the reading went to the endpoint that answers 500"
    );
    assert!(
        fake.requests().iter().all(|r| !tagged(r, "troupe-reader:")),
        "no reading reached the working endpoint"
    );

    // The command ends; the Bot is given "stop" as said, and answers it.
    std::fs::write(dirs.release(), b"").unwrap();
    api.line_by(d, worker, HEARD_STOP).await;
    assert!(
        fake.of("Worker").iter().any(|r| given_stop(&fresh_user(r))),
        "the Bot was given the line"
    );
    assert!(api.holds(true).await.is_empty(), "still nothing held");
    let turns = api.turns(d).await;
    assert!(turns.iter().all(|t| t["status"] != "stopped"), "{turns:#?}");
    assert_no_app_line(&api.lines(d).await, &rig.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_line_about_any_stop() {
    // The stops and lifts the other tests do not make — a menu's stop on a Bot lifted with the
    // Lift button, which reopens the work on a note; "Stop everything" with nothing running —
    // post nothing in the conversation; the note reaches only the Bot's turn.
    let (rig, fake, dirs) = rig(false).await;
    let (_daemon, api) = rig.start();
    let worker = api.bot("Worker").await;
    let d = api.direct(worker).await;
    api.say(d, LONG_BUILD).await;
    let pid = pid_of(&dirs, "Worker_build").await;
    let turn = api.running_turn(d, worker).await;

    let t0 = Instant::now();
    let (status, h) = api
        .post_status(
            "/v1/holds",
            json!({"scope": {"kind": "bot", "bot_id": worker}, "session_id": d}),
        )
        .await;
    assert_eq!(status.as_u16(), 201, "{h:#}");
    assert_eq!(stopped_runs(&h), std::slice::from_ref(&turn["id"]), "{h:#}");
    gone(pid, t0).await;
    let lifted = api
        .post(&format!("/v1/holds/{}/lift", h["id"]), json!({}))
        .await;
    assert_eq!(lifted["status"], "lifted", "{lifted:#}");
    assert_eq!(lifted["lifted_by"], "user_button", "{lifted:#}");
    // The stopped work reopens on a note the Bot alone is given, and goes on.
    api.line_by(d, worker, BACK).await;
    let noted = fake.of("Worker");
    assert!(
        noted
            .last()
            .is_some_and(|r| fresh_user(r).contains("stopped this work")),
        "{noted:#?}"
    );

    // Stop everything with nothing running, then Lift: nothing stopped, nothing said.
    let (status, all) = api
        .post_status("/v1/holds", json!({"scope": {"kind": "everything"}}))
        .await;
    assert_eq!(status.as_u16(), 201, "{all:#}");
    assert!(stopped_runs(&all).is_empty(), "{all:#}");
    let lifted = api
        .post(&format!("/v1/holds/{}/lift", all["id"]), json!({}))
        .await;
    assert_eq!(lifted["status"], "lifted", "{lifted:#}");

    let lines = api.lines(d).await;
    let said: Vec<(Value, Value)> = lines
        .iter()
        .map(|l| (l["author"].clone(), l["body"].clone()))
        .collect();
    assert_eq!(
        said,
        [
            (json!("user"), json!(LONG_BUILD)),
            (json!("bot"), json!(BACK))
        ],
        "{lines:#?}"
    );
    assert_no_app_line(&lines, &rig.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hold_survives_sigkill() {
    let (rig, fake, dirs) = rig(false).await;
    let (mut daemon, api) = rig.start();
    let work = twenty_mid_tool_call(&api, &dirs).await;
    let calls_before = fake.bot_requests().len();
    let mut turns_before = Vec::new();
    for (_, d, _, _) in &work {
        turns_before.push(ids(&api.turns(*d).await));
    }

    // Stop everything; the daemon is killed before the grace is over (SIGTERM is ignored, so
    // the groups are still alive when it dies).
    let t0 = Instant::now();
    let (status, hold) = api
        .post_status("/v1/holds", json!({"scope": {"kind": "everything"}}))
        .await;
    assert_eq!(status.as_u16(), 201, "{hold:#}");
    let mut stopped = stopped_runs(&hold);
    let mut want: Vec<Value> = work.iter().map(|(_, _, t, _)| t.clone()).collect();
    stopped.sort_by_key(|v| v.as_i64());
    want.sort_by_key(|v| v.as_i64());
    assert_eq!(stopped, want, "every turn stopped in the hold's write");
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    let killed_at = t0.elapsed();
    let alive_at_kill = work.iter().filter(|(_, _, _, p)| process_alive(*p)).count();
    eprintln!("killed {killed_at:?} after the request; {alive_at_kill} of 20 groups alive");
    if killed_at < GRACE - Duration::from_millis(500) {
        assert_eq!(
            alive_at_kill, 20,
            "SIGTERM is ignored: every group outlives the dead daemon"
        );
    }

    // Restarted on the same data: every turn stopped, no group from before left, the hold in
    // force, nothing resumed.
    let (_daemon, api) = rig.start();
    for (_, _, _, pid) in &work {
        gone(*pid, Instant::now()).await;
    }
    let holds = api.holds(false).await;
    assert_eq!(holds.len(), 1, "{holds:#?}");
    assert_eq!(holds[0]["id"], hold["id"], "{holds:#?}");
    assert_eq!(holds[0]["status"], "in_force");
    assert_eq!(holds[0]["scope"]["kind"], "everything");
    for ((bot, d, turn, _), before) in work.iter().zip(&turns_before) {
        let t = api.turn(turn).await;
        assert_eq!(t["status"], "stopped", "{t:#}");
        let turns = api.turns(*d).await;
        assert_eq!(
            &ids(&turns),
            before,
            "bot {bot} ran nothing more: {turns:#?}"
        );
    }
    assert_eq!(
        fake.bot_requests().len(),
        calls_before,
        "no model call after the restart: {:#?}",
        &fake.bot_requests()[calls_before..]
    );

    // Lifted, the same threads go on — what kept them was the hold, nothing else.
    let lifted = api
        .post(&format!("/v1/holds/{}/lift", hold["id"]), json!({}))
        .await;
    assert_eq!(lifted["status"], "lifted", "{lifted:#}");
    for (bot, d, _, _) in &work {
        api.line_by(*d, *bot, BACK).await;
    }
    for (_, d, _, _) in &work {
        assert_no_app_line(&api.lines(*d).await, &rig.log());
    }
}

/// One try: twenty turns mid tool call, `POST /v1/holds` on everything written whole on a raw
/// connection, the daemon SIGKILLed `delay` after; restarted, either the hold and all twenty
/// stops are there or neither is. Returns whether the hold was.
async fn kill_during_the_hold_request(delay: Duration) -> bool {
    // SIGTERM ends these commands at once: the point is the write, not the grace.
    let (rig, fake, dirs) = rig_with(false, true).await;
    let (mut daemon, api) = rig.start();
    let work = twenty_mid_tool_call(&api, &dirs).await;
    let calls_before = fake.bot_requests().len();
    let mut turns_before = Vec::new();
    for (_, d, _, _) in &work {
        turns_before.push(ids(&api.turns(*d).await));
    }

    let body = json!({"scope": {"kind": "everything"}}).to_string();
    let mut conn = tokio::net::TcpStream::connect(&api.addr).await.unwrap();
    let request = format!(
        "POST /v1/holds HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        api.addr,
        body.len()
    );
    tokio::io::AsyncWriteExt::write_all(&mut conn, request.as_bytes())
        .await
        .unwrap();
    // Not a wait for anything: where in the request's handling the kill lands.
    tokio::time::sleep(delay).await;
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    drop(conn);

    let (_daemon, api) = rig.start();
    let holds = api.holds(true).await;
    let mut statuses = Vec::new();
    for (_, _, turn, _) in &work {
        statuses.push(api.turn(turn).await["status"].as_str().unwrap().to_string());
    }
    let made = match holds.as_slice() {
        [] => {
            assert!(
                statuses.iter().all(|s| s == "interrupted"),
                "no hold, so no stop: {statuses:?}"
            );
            false
        }
        [h] => {
            assert_eq!(h["status"], "in_force", "{h:#}");
            assert_eq!(stopped_runs(h).len(), 20, "{h:#}");
            assert!(
                statuses.iter().all(|s| s == "stopped"),
                "the hold and every stop: {statuses:?}"
            );
            true
        }
        more => panic!("one request made {} holds: {more:#?}", more.len()),
    };
    for (_, _, _, pid) in &work {
        gone(*pid, Instant::now()).await;
    }
    for ((_, d, _, _), before) in work.iter().zip(&turns_before) {
        assert_eq!(&ids(&api.turns(*d).await), before, "nothing ran again");
    }
    assert_eq!(
        fake.bot_requests().len(),
        calls_before,
        "no model call after the restart"
    );
    made
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hold_killed_during_the_request_is_all_or_nothing() {
    // The kill moves later each try (the write takes milliseconds), until both sides of the
    // commit have been seen; every try must find all of it or none.
    let mut seen = (false, false);
    for ms in [0, 5, 10, 15, 20, 30, 40] {
        let made = kill_during_the_hold_request(Duration::from_millis(ms)).await;
        eprintln!(
            "killed {ms} ms after the request: {}",
            if made {
                "hold and stops there"
            } else {
                "none there"
            }
        );
        if made {
            seen.1 = true;
        } else {
            seen.0 = true;
        }
        if seen == (true, true) {
            break;
        }
    }
    eprintln!("outcomes seen (none, all): {seen:?}");
}
