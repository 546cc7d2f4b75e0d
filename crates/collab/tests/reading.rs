//! Line reading and lines in a row over a real engine and store: a scripted model on the
//! `reading` role answers the reader's prompts.

mod support;

use std::time::Duration;
use support::*;
use troupe_collab::CollabError;
use troupe_core::SessionId;

/// The reader: a status question is read as one; a prompt with "slow" (and not "quick",
/// which a later line's prompt has) takes a while.
fn reader(w: &World) {
    let spec = script(
        w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],"on_exhausted":"repeat_last",
            "rules":[
              {"when_user_contains":"quick","reply":{"text":"{\"control\":\"neither\"}"}},
              {"when_user_contains":"slow","reply":{"text":"{\"control\":\"neither\"}","delay_ms":400}},
              {"when_user_contains":"final cut","reply":{"text":"```json\n{\"control\":\"neither\",\"status_question\":true}\n```"}}
            ]}"#,
    );
    w.collab.set_role("reading", spec).unwrap();
}

async fn settle(w: &World, s: SessionId) {
    let t = w.collab.direct_thread(s).unwrap();
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_status_question_is_read_once_and_the_bot_answers_it() {
    // S-SQ-1: asked twice while the Bot is idle, each wakes it and it answers.
    let w = world();
    reader(&w);
    let b = bot(
        &w,
        "Director",
        r#"{"steps":[{"text":"Rendering; 80% done."},{"text":"Now 95%."}]}"#,
    );
    let s = direct(&w, b);
    for _ in 0..2 {
        let line = w
            .collab
            .post_line(s, "where's the final cut?".into(), None)
            .await
            .unwrap();
        settle(&w, s).await;
        assert_eq!(line.routing.as_deref(), Some("routed"));
        let readings = w.collab.line_readings(line.id).unwrap();
        assert_eq!(readings.len(), 1, "one reading per line");
        assert_eq!(readings[0].failure, None);
        assert_eq!(readings[0].model.as_deref(), Some("reader-model"));
        assert_eq!(readings[0].reading["status_question"], true);
    }
    let said: Vec<String> = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .map(|l| l.body)
        .collect();
    assert_eq!(
        said,
        [
            "where's the final cut?",
            "Rendering; 80% done.",
            "where's the final cut?",
            "Now 95%."
        ]
    );
    assert!(
        said.iter().all(|b| !b.contains("status")),
        "the app never answers a status question itself"
    );
}

#[tokio::test]
async fn reader_fallback_is_logged_and_the_line_still_goes() {
    // No reading or default role: the word lists read the line and say why.
    let w = world();
    let b = bot(
        &w,
        "Ada",
        r#"{"steps":[{"text":"Stopping? I'll keep going."}]}"#,
    );
    let s = direct(&w, b);
    let line = w.collab.post_line(s, "停下".into(), None).await.unwrap();
    settle(&w, s).await;
    let r = w.collab.line_readings(line.id).unwrap().remove(0);
    assert!(
        r.failure.as_deref().unwrap().contains("no reading model"),
        "{r:?}"
    );
    assert_eq!(r.reading["control"], "stop", "the lists find the stop…");
    // …but a stop found by the lists is not carried out: the line reaches the Bot.
    assert_eq!(w.collab.turns(s, 10).unwrap().len(), 1);
}

#[tokio::test]
async fn reader_contract_junk_answer_falls_back_to_the_word_lists() {
    let w = world();
    let spec = script(&w, "junk", r#"{"steps":[{"text":"I think it is a stop"}]}"#);
    w.collab.set_role("reading", spec).unwrap();
    let b = bot(&w, "Ada", r#"{"steps":[{"text":"ok"}]}"#);
    let s = direct(&w, b);
    let line = w
        .collab
        .post_line(s, "go on please".into(), None)
        .await
        .unwrap();
    settle(&w, s).await;
    let r = w.collab.line_readings(line.id).unwrap().remove(0);
    assert!(
        r.failure
            .as_deref()
            .unwrap()
            .starts_with("unreadable answer"),
        "{r:?}"
    );
    assert_eq!(r.raw.as_deref(), Some("I think it is a stop"));
}

#[tokio::test]
async fn line_queue_a_later_line_read_first_is_still_routed_second() {
    let w = world();
    reader(&w);
    let b = bot(
        &w,
        "Ada",
        r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#,
    );
    let s = direct(&w, b);
    let mut events = w.collab.store().subscribe();
    let first = w.collab.post_line(s, "a slow one to read".into(), None);
    let second = async {
        // Sent once the first is stored (and being read).
        loop {
            let e = events.recv().await.unwrap();
            if e.kind == "session_message" {
                break;
            }
        }
        w.collab.post_line(s, "quick".into(), None).await
    };
    let (a, b2) = tokio::join!(first, second);
    let (a, b2) = (a.unwrap(), b2.unwrap());
    settle(&w, s).await;
    let events = w
        .collab
        .store()
        .read(|tx| tx.session_events_after(troupe_core::EventId(0), s, 1000))
        .unwrap();
    let routed: Vec<i64> = events
        .iter()
        .filter(|e| e.kind == "line_routed")
        .map(|e| e.payload["message_id"].as_i64().unwrap())
        .collect();
    assert_eq!(routed, vec![a.id.0, b2.id.0], "routed in arrival order");
    let queued = events.iter().any(|e| {
        e.kind == "line_routing"
            && e.payload["message_id"] == b2.id.0
            && e.payload["routing"] == "queued"
    });
    assert!(queued, "the second line waited for the first");
}

#[tokio::test]
async fn withdraw_after_read_is_refused() {
    let w = world();
    let slow = r#"{"steps":[{"text":"a long answer that streams slowly","chunks":30,"chunk_delay_ms":20},{"text":"second"},{"text":"third"}]}"#;
    let b = bot(&w, "Slow", slow);
    let s = direct(&w, b);
    let mut stream = w.collab.engine().subscribe_stream();
    w.collab.post_line(s, "first".into(), None).await.unwrap();
    while !matches!(
        stream.recv().await.unwrap(),
        troupe_engine::StreamNotice::TextDelta { .. }
    ) {}
    // Sent while the Bot streams: it waits in the inbox, unread, and can be taken back.
    let taken = w
        .collab
        .post_line(s, "never mind this".into(), None)
        .await
        .unwrap();
    // UQ-16: the line is listed as unread, read at the Bot's next step, and can be taken back.
    let unread = w.collab.unread_lines(s).unwrap();
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert_eq!(unread[0].message_id, taken.id);
    assert_eq!(
        unread[0].unread_by,
        [troupe_collab::UnreadBy {
            bot_id: b,
            read_at: troupe_collab::ReadAt::NextStep
        }]
    );
    assert!(unread[0].can_take_back);
    let back = w.collab.withdraw_line(taken.id).unwrap();
    assert_eq!(back.routing.as_deref(), Some("withdrawn"));
    assert!(
        w.collab.unread_lines(s).unwrap().is_empty(),
        "a line taken back is no longer waiting"
    );
    settle(&w, s).await;
    let t = w.collab.direct_thread(s).unwrap();
    let history = w
        .collab
        .store()
        .read(|tx| tx.messages(t, None, 1000))
        .unwrap();
    assert!(
        history
            .iter()
            .all(|m| !format!("{:?}", m.parts).contains("never mind this")),
        "a withdrawn line is in no Bot transcript"
    );
    // A line the Bot has read cannot be taken back.
    let read = w
        .collab
        .post_line(s, "read this".into(), None)
        .await
        .unwrap();
    settle(&w, s).await;
    assert!(
        w.collab.unread_lines(s).unwrap().is_empty(),
        "read lines have no row"
    );
    assert!(matches!(
        w.collab.withdraw_line(read.id),
        Err(CollabError::Conflict {
            code: "already_read",
            ..
        })
    ));
}

/// A Bot whose first hop runs two commands: the first waits for `go` in the workspace (after
/// writing `started`), the second appends to `log`.
const TWO_CALLS: &str = r#"{"steps":[
    {"tool_calls":[
        {"name":"shell","arguments":{"command":"echo a >> log; touch started; while [ ! -f go ]; do sleep 0.02; done"}},
        {"name":"shell","arguments":{"command":"echo b >> log"}}]},
    {"text":"done"}]}"#;

/// Post `line` while the Bot's first command waits, then let it finish; the log and the second
/// call's record.
async fn line_during_first_call(line: &str) -> (String, troupe_store::ToolCallRecord) {
    let w = world();
    let b = bot(&w, "Worker", TWO_CALLS);
    let s = direct(&w, b);
    w.collab
        .post_line(s, "run the two steps".into(), None)
        .await
        .unwrap();
    let t = w.collab.direct_thread(s).unwrap();
    let dir = std::path::PathBuf::from(w.collab.store().read(|tx| tx.thread(t)).unwrap().workspace);
    // An explicit wait on the command's own marker, with a deadline.
    tokio::time::timeout(Duration::from_secs(20), async {
        while !dir.join("started").exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the first command started");
    w.collab.post_line(s, line.into(), None).await.unwrap();
    std::fs::write(dir.join("go"), "").unwrap();
    settle(&w, s).await;
    let run = w.collab.turns(s, 10).unwrap().pop().unwrap();
    let calls = w.collab.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    (
        std::fs::read_to_string(dir.join("log")).unwrap(),
        calls[1].clone(),
    )
}

#[tokio::test]
async fn a_change_defers_the_hops_remaining_calls() {
    let (log, second) = line_during_first_call("actually, use the other file").await;
    assert_eq!(log, "a\n", "the second command did not run");
    assert_eq!(second.status, "refused");
    assert!(second.result.starts_with("deferred:"), "{}", second.result);
}

#[tokio::test]
async fn a_question_does_not_defer_the_hops_calls() {
    let (log, second) = line_during_first_call("is this going ok?").await;
    assert_eq!(log, "a\nb\n");
    assert_eq!(second.status, "ok");
}

#[tokio::test]
async fn insert_now_cuts_the_model_call() {
    let w = world();
    // The first answer streams slowly; cut, the run calls again and reads the inserted line.
    let slow = r#"{"steps":[{"text":"a very long answer that streams slowly","chunks":40,"chunk_delay_ms":50}],
        "rules":[{"when_user_contains":"short","reply":{"text":"Short answer."}}]}"#;
    let b = bot(&w, "Slow", slow);
    let s = direct(&w, b);
    let mut stream = w.collab.engine().subscribe_stream();
    w.collab
        .post_line(s, "tell me everything".into(), None)
        .await
        .unwrap();
    while !matches!(
        stream.recv().await.unwrap(),
        troupe_engine::StreamNotice::TextDelta { .. }
    ) {}
    let line = w
        .collab
        .post_line(s, "keep it short".into(), None)
        .await
        .unwrap();
    assert!(w.collab.insert_line_now(line.id).await.unwrap().cut);
    settle(&w, s).await;
    let turns = w.collab.turns(s, 10).unwrap();
    assert_eq!(turns.len(), 1, "the run went on");
    assert_eq!(turns[0].status, "completed");
    let said: Vec<String> = w
        .collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .map(|l| l.body)
        .collect();
    assert_eq!(
        said,
        ["tell me everything", "keep it short", "Short answer."]
    );
    // Read now: nothing left to cut.
    assert!(!w.collab.insert_line_now(line.id).await.unwrap().cut);
}

/// A Bot that asks for an OK twice, then goes on.
const ASKS_OK: &str = r#"{"steps":[
    {"tool_calls":[{"name":"ask_user","arguments":{"question":"请确认关键帧板，确认后将正式启动视频片段生成与后期剪辑"}}]},
    {"tool_calls":[{"name":"ask_user","arguments":{"question":"请确认关键帧板，确认后将正式启动视频片段生成与后期剪辑"}}]},
    {"text":"x"}]}"#;

/// A Bot that ends blocked on an OK twice.
const BLOCKED_ON_OK: &str = r#"{"steps":[
    {"tool_calls":[{"name":"end_turn","arguments":{"reason":"blocked","needs_from_user":"请确认关键帧板，确认后将正式启动视频片段生成"}}]},
    {"tool_calls":[{"name":"end_turn","arguments":{"reason":"blocked","needs_from_user":"请确认关键帧板，确认后将正式启动视频片段生成"}}]},
    {"text":"x"}]}"#;

/// A reader that reads every Bot's question as asking only for an OK.
fn ok_reader(w: &World) {
    let spec = script(
        w,
        "ok-reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],
            "rules":[{"when_user_contains":"troupe-reader:bot","reply":{"text":"{\"asks_ok_only\":true}"}}]}"#,
    );
    w.collab.set_role("reading", spec).unwrap();
}

async fn ask_for_ok(with_reader: bool, script_json: &str) -> (World, SessionId) {
    let w = world();
    if with_reader {
        ok_reader(&w);
    }
    let b = bot(&w, "Director", script_json);
    let s = direct(&w, b);
    w.collab
        .post_line(
            s,
            "make the One Punch Man keyframe board and the video".into(),
            None,
        )
        .await
        .unwrap();
    settle(&w, s).await;
    (w, s)
}

fn asks(w: &World, s: SessionId) -> usize {
    w.collab
        .lines(s, None, 100)
        .unwrap()
        .iter()
        .filter(|l| l.kind == troupe_core::conversation::LineKind::Ask)
        .count()
}

#[tokio::test]
async fn asking_only_for_a_go_ahead_is_sent_back_once_then_reaches_the_person() {
    // S-ASK-2, ASK-7, ASK-8.
    let (w, s) = ask_for_ok(true, ASKS_OK).await;
    let turn = w.collab.turns(s, 10).unwrap().remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(turn.id)).unwrap();
    assert!(
        calls[0].result.starts_with("asks_go_ahead"),
        "{}",
        calls[0].result
    );
    assert!(calls[0].result.contains("alone can give"));
    assert_eq!(
        asks(&w, s),
        1,
        "the second ask of the turn reaches the person"
    );
    let refused = w
        .collab
        .store()
        .read(|tx| tx.session_events_after(troupe_core::EventId(0), s, 1000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "ask_go_ahead_refused")
        .count();
    assert_eq!(refused, 1);
}

#[tokio::test]
async fn a_blocked_ending_asking_only_for_a_go_ahead_is_sent_back_once() {
    // ASK-6, ASK-8: the needs of a `blocked` ending are read like an ask; sent back once
    // (spending one of the turn's two bounces), the second ending posts the card.
    let (w, s) = ask_for_ok(true, BLOCKED_ON_OK).await;
    let turn = w.collab.turns(s, 10).unwrap().remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(turn.id)).unwrap();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(
        calls[0].result.starts_with("asks_go_ahead"),
        "{}",
        calls[0].result
    );
    assert_eq!(calls[1].status, "ok", "{}", calls[1].result);
    assert_eq!(
        asks(&w, s),
        1,
        "the second ending's card reaches the person"
    );
    let seg = w
        .collab
        .store()
        .read(|tx| tx.segment_work(turn.id))
        .unwrap()
        .unwrap();
    assert_eq!(seg.bounces, 1, "the refusal spent one of the budget's two");
}

/// ASK-9: with the segment's two bounces already spent, a question asking only for a go-ahead
/// is not sent back: it reaches the person, and the work does not end needing attention.
#[tokio::test]
async fn with_the_bounce_budget_spent_a_go_ahead_question_reaches_the_person() {
    let w = world();
    ok_reader(&w);
    let b = bot(
        &w,
        "Director",
        &format!(
            r#"{{"steps":[{{"tool_calls":[{GATE}]}},
                {{"tool_calls":[{{"name":"ask_user","arguments":{{"question":"请确认关键帧板，确认后将正式启动视频片段生成"}}}}]}},
                {{"text":"x"}}]}}"#
        ),
    );
    let s = direct(&w, b);
    let job = open_job_work(&w, s, b, "Keyframes");
    let mut events = w.collab.store().subscribe();
    w.collab
        .engine()
        .deliver(
            job.thread,
            troupe_core::inbox::Delivery::user_task("Make the keyframe board."),
        )
        .await
        .unwrap();
    until(&mut events, "the work is at its gate", || {
        at_gate(&w, job.thread)
    })
    .await;
    let item = |w: &World| w.collab.store().read(|tx| tx.work_item(job.item)).unwrap();
    let run = live_run(&w, &item(&w)).unwrap();
    for _ in 0..2 {
        w.collab
            .store()
            .write(|tx| tx.bump_segment_bounces(run))
            .unwrap();
    }
    open_gate(&w, job.plan);
    until(&mut events, "the question is posted", || asks(&w, s) == 1).await;
    let calls = calls_of(&w, run);
    let ask = calls.iter().find(|c| c.name == "ask_user").unwrap();
    assert!(!ask.result.starts_with("asks_go_ahead"), "{}", ask.result);
    w.collab.engine().wait_idle(job.thread).await;
    assert_ne!(
        item(&w).state,
        troupe_core::work_item::WorkState::NeedsAttention,
        "a question that reached the person never ends the work needing attention"
    );
}

#[tokio::test]
async fn with_no_reading_the_question_goes_to_the_person() {
    // ASK-10.
    let (w, s) = ask_for_ok(false, ASKS_OK).await;
    assert_eq!(asks(&w, s), 1);
    let turn = w.collab.turns(s, 10).unwrap().remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(turn.id)).unwrap();
    assert_eq!(calls.len(), 1, "the turn ended on its first ask");
}

#[tokio::test]
async fn only_a_stop_skips_the_queue_of_lines_left_unrouted() {
    // LR-3, CL-2 at a start: a stop of the process left L1 ("write the report") and, after
    // it, L2 (only a stop) unrouted. The stop is carried out first, so L1 reaches the Bot only
    // once it is held: delivered, but no turn starts, and L1 (older than the stop) lifts
    // nothing. Stored times on a manual clock; no reader delays.
    let clock = std::sync::Arc::new(troupe_core::ManualClock::new(1_760_000_000_000));
    let w = world_on(clock.clone());
    let spec = script(
        &w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],"on_exhausted":"repeat_last",
            "rules":[{"when_user_contains":"stop now","reply":{"text":"{\"control\":\"stop\",\"only_control\":true}"}}]}"#,
    );
    w.collab.set_role("reading", spec).unwrap();
    let b = bot(
        &w,
        "Worker",
        r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#,
    );
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    let left = |body: &str| {
        w.collab
            .store()
            .write(|tx| {
                tx.insert_line(&troupe_store::NewLine {
                    routing: Some("reading"),
                    ..troupe_store::NewLine::plain(
                        s,
                        troupe_core::conversation::Author::User,
                        body.into(),
                    )
                })
            })
            .unwrap()
    };
    let l1 = left("write the report");
    clock.advance(1_000);
    let l2 = left("stop now");
    clock.advance(1_000);

    assert_eq!(w.collab.resume_lines().await.unwrap(), 2);

    let events = w
        .collab
        .store()
        .read(|tx| tx.session_events_after(troupe_core::EventId(0), s, 1000))
        .unwrap();
    let routed: Vec<i64> = events
        .iter()
        .filter(|e| e.kind == "line_routed")
        .map(|e| e.payload["message_id"].as_i64().unwrap())
        .collect();
    assert_eq!(routed, vec![l2.id.0, l1.id.0], "the stop went first");
    let holds = w.collab.holds(false).unwrap();
    assert_eq!(holds.len(), 1);
    assert_eq!(holds[0].hold.source_message_id, Some(l2.id));
    // L1 kept its place behind nothing but its own reading: it was delivered, into a held
    // Bot's inbox, and started nothing.
    assert_eq!(
        w.collab.line(l1.id).unwrap().routing.as_deref(),
        Some("routed")
    );
    assert_eq!(
        w.collab
            .store()
            .read(|tx| tx.line_deliveries(l1.id))
            .unwrap()
            .len(),
        1
    );
    settle(&w, s).await;
    assert_eq!(runs(&w, t), 0, "the held Bot ran");
    assert_eq!(
        w.collab.hold(holds[0].hold.id).unwrap().hold.status,
        troupe_core::hold::HoldStatus::InForce
    );
}
