//! A person's lines and the holds (§15, HOLD-L*): only the model reader's pure stop is carried
//! out, at once and reaching nobody; the word lists never stop anything; a line lifts the
//! holds it is the person's word on, and no other.

mod support;

use std::time::Duration;
use support::*;
use troupe_collab::holds::HoldRequest;
use troupe_core::ThreadId;
use troupe_core::hold::{HoldScope, HoldSource, HoldStatus};
use troupe_core::run::RunStatus;

/// A reader that reads lines with "stop" as a pure stop and everything else as nothing.
fn stop_reader(w: &World) {
    let spec = script(
        w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],"on_exhausted":"repeat_last",
            "rules":[{"when_user_contains":"stop now","reply":{"text":"{\"control\":\"stop\",\"only_control\":true}"}},
                     {"when_user_contains":"night","reply":{"text":"{\"control\":\"stop\",\"only_control\":false}"}},
                     {"when_user_contains":"how is it going","reply":{"text":"{\"control\":\"neither\",\"status_question\":true}"}}]}"#,
    );
    w.collab.set_role("reading", spec).unwrap();
}

const LONG: &str = r#"{"steps":[
    {"tool_calls":[{"name":"shell","arguments":{"command":"touch started; sleep 30"}}]},
    {"text":"finished"}],
    "rules":[{"when_user_contains":"停下","reply":{"text":"ok, pausing"}}]}"#;

/// A person's line stored but not yet read and routed, as a restart leaves one (S-STOP-3).
fn stored_unread(
    w: &World,
    s: troupe_core::SessionId,
    text: &str,
) -> troupe_core::conversation::SessionMessage {
    w.collab
        .store()
        .write(|tx| {
            tx.insert_line(&troupe_store::NewLine {
                routing: Some("reading"),
                ..troupe_store::NewLine::plain(
                    s,
                    troupe_core::conversation::Author::User,
                    text.into(),
                )
            })
        })
        .unwrap()
}

async fn started(w: &World, t: ThreadId) {
    let dir = std::path::PathBuf::from(w.collab.store().read(|tx| tx.thread(t)).unwrap().workspace);
    tokio::time::timeout(Duration::from_secs(20), async {
        while !dir.join("started").exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the command started");
}

async fn idle(w: &World, t: ThreadId) {
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .expect("the thread went idle");
}

#[tokio::test]
async fn a_pure_stop_read_by_the_model_holds_the_bot_and_reaches_nobody() {
    let w = world();
    stop_reader(&w);
    let b = bot(&w, "Worker", LONG);
    let s = direct(&w, b);
    w.collab.post_line(s, "run it".into(), None).await.unwrap();
    let t = w.collab.direct_thread(s).unwrap();
    started(&w, t).await;
    let run = w
        .collab
        .store()
        .read(|tx| tx.thread(t))
        .unwrap()
        .lease
        .holder
        .unwrap();

    let line = w
        .collab
        .post_line(s, "stop now".into(), None)
        .await
        .unwrap();
    let holds = w.collab.holds(false).unwrap();
    assert_eq!(holds.len(), 1);
    let h = &holds[0].hold;
    // CL-S1: in a direct, the Bot on the other side.
    assert_eq!(h.scope, HoldScope::Bot { bot_id: b });
    assert_eq!(
        (h.source, h.source_message_id),
        (HoldSource::UserText, Some(line.id))
    );
    assert_eq!(
        w.collab.store().read(|tx| tx.run(run)).unwrap().status,
        RunStatus::Stopped
    );
    idle(&w, t).await;
    // Not filed, no turn: the line reached no thread, and the Bot said nothing.
    let deliveries = w
        .collab
        .store()
        .read(|tx| tx.line_deliveries(line.id))
        .unwrap();
    assert!(deliveries.is_empty(), "{deliveries:?}");
    assert_eq!(runs_of(&w, t).len(), 1);
    assert_eq!(
        w.collab.line(line.id).unwrap().routing.as_deref(),
        Some("routed")
    );
}

#[tokio::test]
async fn reader_down_a_stop_holds_nothing_and_reaches_the_bot() {
    // S-LR-3, CL-1: with no reader the lists see a stop, but nothing is held; the line goes
    // to the Bot as said.
    let w = world();
    let b = bot(&w, "Worker", LONG);
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    w.collab.post_line(s, "停下".into(), None).await.unwrap();
    idle(&w, t).await;
    assert!(w.collab.holds(true).unwrap().is_empty());
    let said: Vec<String> = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.author == troupe_core::conversation::Author::Bot)
        .map(|l| l.body)
        .collect();
    assert_eq!(said, vec!["ok, pausing".to_string()]);
}

#[tokio::test]
async fn a_line_to_another_bot_leaves_the_stop_and_a_line_naming_nobody_lifts_it() {
    // S-STOP-2: X stopped in a group; "@Y use blue" keeps X held; "continue" naming nobody
    // is said to X too and lifts it.
    let w = world();
    let quiet = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;
    let x = bot(&w, "Xavier", quiet);
    let y = bot(&w, "Yolanda", quiet);
    let g = group(&w, &[x, y]);
    let (h, _) = w
        .collab
        .post_hold(support::holds::bot_stop(x))
        .await
        .unwrap();
    let ty = thread_of(&w, g, y);
    w.collab
        .post_line(g, "@Yolanda use blue".into(), None)
        .await
        .unwrap();
    idle(&w, ty).await;
    assert_eq!(
        w.collab.hold(h.hold.id).unwrap().hold.status,
        HoldStatus::InForce
    );
    let line = w
        .collab
        .post_line(g, "continue".into(), None)
        .await
        .unwrap();
    let lifted = w.collab.hold(h.hold.id).unwrap().hold;
    assert_eq!(lifted.status, HoldStatus::Lifted);
    assert_eq!(lifted.lift_message_id, Some(line.id));
}

#[tokio::test]
async fn a_line_sent_before_the_stop_does_not_lift_it() {
    // S-STOP-3: a line already stored when the hold is made is no word on it.
    let w = world();
    let quiet = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;
    let x = bot(&w, "Xavier", quiet);
    let s = direct(&w, x);
    let early = stored_unread(&w, s, "and one more thing");
    let (h, _) = w
        .collab
        .post_hold(support::holds::bot_stop(x))
        .await
        .unwrap();
    // The early line is routed only now (as a line left by a restart would be).
    w.collab.resume_lines().await.unwrap();
    assert_eq!(
        w.collab.line(early.id).unwrap().routing.as_deref(),
        Some("routed")
    );
    assert_eq!(
        w.collab.hold(h.hold.id).unwrap().hold.status,
        HoldStatus::InForce
    );
}

#[tokio::test]
async fn a_stop_with_more_words_gets_a_stop_button_pressed_once() {
    // §15.1 "stop + other words", HOLD-B1: delivered as usual, nothing executed; the Stop
    // button makes the stop the line meant, once.
    let w = world();
    stop_reader(&w);
    let quiet = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;
    let b = bot(&w, "Worker", quiet);
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    let line = w
        .collab
        .post_line(s, "stop, and make shot three a night scene".into(), None)
        .await
        .unwrap();
    idle(&w, t).await;
    assert!(w.collab.holds(true).unwrap().is_empty(), "nothing executed");
    let line = w.collab.line(line.id).unwrap();
    let control = line.control.expect("buttons on the line");
    assert_eq!(control["kind"], "possible_control");
    assert_eq!(control["offer"], serde_json::json!(["stop"]));
    assert_eq!(runs_of(&w, t).len(), 1, "the line reached the Bot");
    let press = |action: &str| troupe_collab::holds::ControlRequest {
        action: action.into(),
        task_id: None,
    };
    let err = w
        .collab
        .press_control(line.id, press("continue"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no continue button"), "{err}");
    let first = w
        .collab
        .press_control(line.id, press("stop"))
        .await
        .unwrap();
    assert_eq!(first.made.len(), 1);
    let again = w
        .collab
        .press_control(line.id, press("stop"))
        .await
        .unwrap();
    assert_eq!(again, first);
    let holds = w.collab.holds(false).unwrap();
    assert_eq!(holds.len(), 1);
    assert_eq!(holds[0].hold.scope, HoldScope::Bot { bot_id: b });
    assert_eq!(holds[0].hold.source_message_id, Some(line.id));
}

#[tokio::test]
async fn a_status_question_under_a_stop_gets_a_read_only_answer_and_lifts_nothing() {
    // SQ-3, HOLD-L5, HOLD-R1..R3: the Bot answers, still stopped; nothing with an effect runs.
    let w = world();
    stop_reader(&w);
    let b = bot(
        &w,
        "Worker",
        r#"{"steps":[
            {"tool_calls":[{"name":"shell","arguments":{"command":"touch ran"}}]},
            {"text":"Stopped at the second shot; say go on and I resume."}]}"#,
    );
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    let (h, _) = w
        .collab
        .post_hold(support::holds::bot_stop(b))
        .await
        .unwrap();
    w.collab
        .post_line(s, "how is it going?".into(), None)
        .await
        .unwrap();
    idle(&w, t).await;
    assert_eq!(
        w.collab.hold(h.hold.id).unwrap().hold.status,
        HoldStatus::InForce
    );
    let run = runs_of(&w, t).pop().expect("a read-only turn ran");
    assert!(segment_of(&w, run.id).readonly);
    let calls = calls_of(&w, run.id);
    assert!(calls[0].status != "ok", "{calls:?}");
    let dir = std::path::PathBuf::from(w.collab.store().read(|tx| tx.thread(t)).unwrap().workspace);
    assert!(!dir.join("ran").exists(), "nothing with an effect runs");
    let said: Vec<String> = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.author == troupe_core::conversation::Author::Bot)
        .map(|l| l.body)
        .collect();
    assert_eq!(
        said,
        vec!["Stopped at the second shot; say go on and I resume.".to_string()]
    );
}

#[tokio::test]
async fn a_held_bot_is_not_asked_to_judge_a_line_naming_nobody() {
    // HOLD-W7: Beta's work was dropped (an app hold no line lifts); an unaddressed line in the
    // leaderless group asks only Alpha whether it joins.
    let w = world();
    let joins = r#"{"steps":[{"text":"I can help."}],
        "rules":[{"when_user_contains":"troupe-judgement","reply":{"text":"{\"join\": true}"}}]}"#;
    let a = bot(&w, "Alpha", joins);
    let b = bot(&w, "Beta", joins);
    let g = group(&w, &[a, b]);
    w.collab
        .post_hold(HoldRequest {
            action: Some("cancel".into()),
            ..support::holds::bot_stop(b)
        })
        .await
        .unwrap();
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(g, "who can help with taxes".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, thread_of(&w, g, a), 1).await;
    let judged = w.collab.store().read(|tx| tx.judgements(line.id)).unwrap();
    assert_eq!(judged, vec![(a, Some(true))]);
    assert_eq!(runs(&w, thread_of(&w, g, b)), 0);
}

#[tokio::test]
async fn a_line_under_a_dropped_job_gets_a_read_only_answer_and_is_handed_back_on_lift() {
    // HOLD-L7, HOLD-N5, S-HOLD-2's second half: under an app hold a line to the Bot opens a
    // read-only turn; the line is kept and, on the lift, becomes the Bot's work.
    let w = world();
    let b = bot(
        &w,
        "Worker",
        r#"{"steps":[{"text":"That work is dropped for now."}],"on_exhausted":"repeat_last",
            "rules":[{"when_user_contains":"While the work was stopped","reply":{"text":"Making the logo bigger now."}}]}"#,
    );
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    let (h, _) = w
        .collab
        .post_hold(HoldRequest {
            action: Some("cancel".into()),
            ..support::holds::bot_stop(b)
        })
        .await
        .unwrap();
    let line = w
        .collab
        .post_line(s, "make the logo bigger".into(), None)
        .await
        .unwrap();
    idle(&w, t).await;
    let kept = w.collab.hold(h.hold.id).unwrap().hold;
    assert_eq!(
        kept.status,
        HoldStatus::InForce,
        "no line lifts an app hold"
    );
    assert_eq!(kept.effect.answered_lines, vec![line.id]);
    assert!(segment_of(&w, runs_of(&w, t)[0].id).readonly);
    w.collab.lift_hold(h.hold.id).await.unwrap();
    idle(&w, t).await;
    let said: Vec<String> = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.author == troupe_core::conversation::Author::Bot)
        .map(|l| l.body)
        .collect();
    assert_eq!(
        said,
        vec![
            "That work is dropped for now.".to_string(),
            "Making the logo bigger now.".to_string()
        ]
    );
    assert!(!segment_of(&w, runs_of(&w, t).last().unwrap().id).readonly);
}

#[tokio::test]
async fn s_lr_5_a_quick_stop_overtakes_the_line_still_being_read() {
    // S-LR-5, TURN-10, CL-2: the person sends L1 and, right after, a pure stop. L1's reading
    // is slow; the stop's is quick and is carried out at once, ahead of L1, which is routed
    // only afterwards — into the held Bot's inbox, where it waits (HOLD-L8) and, having come
    // before the stop, lifts nothing (S-STOP-3).
    let w = world();
    let spec = script(
        &w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],"on_exhausted":"repeat_last",
            "rules":[{"when_user_contains":"stop now","reply":{"text":"{\"control\":\"stop\",\"only_control\":true}"}},
                     {"when_user_contains":"write the report","reply":{"text":"{\"control\":\"neither\"}","delay_ms":8000}}]}"#,
    );
    w.collab.set_role("reading", spec).unwrap();
    let quiet = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;
    let b = bot(&w, "Worker", quiet);
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();

    let first = {
        let c = w.collab.clone();
        tokio::spawn(async move { c.post_line(s, "write the report".into(), None).await })
    };
    // L1 is stored and being read.
    let l1 = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let lines = w.collab.lines(s, None, 10).unwrap();
            if let Some(l) = lines.into_iter().find(|l| l.body == "write the report") {
                return l;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("L1 was stored");
    assert_eq!(l1.routing.as_deref(), Some("reading"));

    let stop = w
        .collab
        .post_line(s, "stop now".into(), None)
        .await
        .unwrap();
    // The stop is carried out while L1 is still unread and unrouted.
    let holds = w.collab.holds(false).unwrap();
    assert_eq!(holds.len(), 1);
    assert_eq!(holds[0].hold.scope, HoldScope::Bot { bot_id: b });
    assert_eq!(holds[0].hold.source_message_id, Some(stop.id));
    let l1_now = w.collab.line(l1.id).unwrap();
    assert!(
        matches!(l1_now.routing.as_deref(), Some("reading" | "queued")),
        "L1 was routed before the stop: {:?}",
        l1_now.routing
    );
    assert!(
        w.collab
            .store()
            .read(|tx| tx.line_deliveries(l1.id))
            .unwrap()
            .is_empty()
    );

    // L1 goes on to be routed: to the Bot's inbox, held; no turn starts, the stop stands.
    first.await.unwrap().unwrap();
    assert_eq!(
        w.collab.line(l1.id).unwrap().routing.as_deref(),
        Some("routed")
    );
    assert!(
        !w.collab
            .store()
            .read(|tx| tx.line_deliveries(l1.id))
            .unwrap()
            .is_empty()
    );
    idle(&w, t).await;
    assert!(runs_of(&w, t).is_empty(), "the held Bot ran");
    assert_eq!(
        w.collab.hold(holds[0].hold.id).unwrap().hold.status,
        HoldStatus::InForce
    );
    // UQ-16: its row says the person's own stop holds it (the next line, or Insert now, lifts it).
    let unread = w.collab.unread_lines(s).unwrap();
    let row = unread
        .iter()
        .find(|u| u.message_id == l1.id)
        .expect("L1 unread");
    assert_eq!(row.unread_by[0].read_at, troupe_collab::ReadAt::Stopped);
    assert!(row.can_take_back);

    // UQ-18: Insert now lifts that stop, and the Bot opens a segment on L1.
    let out = w.collab.insert_line_now(l1.id).await.unwrap();
    assert_eq!(out.lifted, vec![b]);
    assert!(out.held.is_empty());
    assert_eq!(
        w.collab.hold(holds[0].hold.id).unwrap().hold.status,
        HoldStatus::Lifted
    );
    tokio::time::timeout(Duration::from_secs(20), async {
        while runs_of(&w, t).is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the Bot started on L1");
    idle(&w, t).await;
    assert!(w.collab.unread_lines(s).unwrap().is_empty(), "L1 was read");
}

#[tokio::test]
async fn insert_now_leaves_a_lasting_stop_and_says_so() {
    // UQ-18: a line held back by a stop no word of the person's lifts (here an app hold,
    // HOLD-L7, beside the person's own stop) is not inserted: the row says it waits for the
    // lift, and Insert now names the Bot as held and lifts nothing.
    let w = world();
    let quiet = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;
    let b = bot(&w, "Worker", quiet);
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    // A line stored before the person's stop (S-STOP-3) is routed into the held Bot's inbox
    // and waits.
    let line = stored_unread(&w, s, "write the report");
    let (own, _) = w
        .collab
        .post_hold(support::holds::bot_stop(b))
        .await
        .unwrap();
    w.collab.resume_lines().await.unwrap();
    // Then a stop comes that no line lifts.
    let app = support::holds::app_hold_on_bot(&w, b);
    idle(&w, t).await;
    let unread = w.collab.unread_lines(s).unwrap();
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert_eq!(unread[0].message_id, line.id);
    assert_eq!(unread[0].unread_by[0].read_at, troupe_collab::ReadAt::Held);

    let before = runs_of(&w, t).len();
    let out = w.collab.insert_line_now(line.id).await.unwrap();
    assert!(!out.cut);
    assert!(out.lifted.is_empty());
    assert_eq!(out.held, vec![b]);
    for h in [own.hold.id, app.id] {
        assert_eq!(w.collab.hold(h).unwrap().hold.status, HoldStatus::InForce);
    }
    idle(&w, t).await;
    assert_eq!(
        runs_of(&w, t).len(),
        before,
        "Insert now ran a Bot under a lasting stop"
    );
    assert_eq!(w.collab.unread_lines(s).unwrap().len(), 1);
}

/// The person's stop on `bot`'s work on one job, as the job's menu makes it.
fn job_stop(bot: troupe_core::BotId, plan: troupe_core::PlanId) -> HoldRequest {
    HoldRequest {
        scope: troupe_collab::holds::ScopeRequest {
            kind: "bot_plan".into(),
            bot_id: Some(bot),
            session_id: None,
            task_id: Some(plan),
            ticket_id: None,
            turn_id: None,
        },
        session_id: None,
        action: None,
    }
}

#[tokio::test]
async fn cl4_a_go_on_in_a_direct_lifts_only_the_job_it_is_filed_under() {
    // CL-4: with two jobs' work in the direct stopped, "continue" lifts nothing until the
    // Bot's desk files it; then only that job's stop goes, and the Bot hears the line there.
    let w = world();
    let reader = script(
        &w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],"on_exhausted":"repeat_last",
            "rules":[{"when_user_contains":"continue","reply":{"text":"{\"control\":\"go_on\",\"only_control\":true}"}}]}"#,
    );
    w.collab.set_role("reading", reader).unwrap();
    let x = bot(
        &w,
        "Xavier",
        r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last",
            "rules":[{"when_user_contains":"continue","reply":{"tool_calls":[{"name":"work_on","arguments":{"plan":"plan_1"}}]}}]}"#,
    );
    let s = direct(&w, x);
    let a = open_job_work(&w, s, x, "Poster");
    let b = open_job_work(&w, s, x, "Flyer");
    let (ha, _) = w.collab.post_hold(job_stop(x, a.plan)).await.unwrap();
    let (hb, _) = w.collab.post_hold(job_stop(x, b.plan)).await.unwrap();
    let mut events = w.collab.store().subscribe();
    let line = w
        .collab
        .post_line(s, "continue".into(), None)
        .await
        .unwrap();
    until(
        &mut events,
        "the desk filed the line under the poster",
        || {
            w.collab
                .store()
                .read(|tx| tx.filings_of_line(line.id))
                .unwrap()
                .iter()
                .any(|f| f.plan_id == a.plan)
        },
    )
    .await;
    let status = |h: troupe_core::HoldId| w.collab.hold(h).unwrap().hold;
    let lifted = status(ha.hold.id);
    assert_eq!(lifted.status, HoldStatus::Lifted);
    assert_eq!(lifted.lift_message_id, Some(line.id));
    assert_eq!(
        status(hb.hold.id).status,
        HoldStatus::InForce,
        "the flyer stays stopped"
    );
    // The poster's work runs on the line; the flyer's does not.
    until(&mut events, "the poster's work ran", || {
        !runs_of(&w, a.thread).is_empty()
    })
    .await;
    assert!(runs_of(&w, b.thread).is_empty());
}
