//! Built-in tools through the loop: the effect ledger, bad input from the model, workspace
//! confinement, model failures, reminders, limits and stopping a running command.

mod support;

use std::time::Duration;
use support::{Reply, build, call, call_results, last_run, run_task};
use troupe_core::effect::EffectOutcome;
use troupe_core::inbox::Delivery;
use troupe_core::message::Finish;
use troupe_core::pause::PauseReason;
use troupe_core::run::{EndReason, RunLimits};
use troupe_core::thread::Interaction;
use troupe_engine::{EngineConfig, StopMode, StreamNotice};
use troupe_llm::{ChatMessage, LlmError};

/// The thread's effect-ledger rows, in order.
fn effects_of(h: &support::Harness, t: troupe_core::ThreadId) -> Vec<troupe_store::EffectRecord> {
    h.engine
        .store()
        .read(|tx| tx.effects_for_thread(t))
        .unwrap()
}

#[tokio::test]
async fn an_effect_is_recorded_as_started_then_settled() {
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![call(
                "c1",
                "write_file",
                r#"{"path":"notes/a.md","content":"hello"}"#,
            )],
        )],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("write a note"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("notes/a.md")).unwrap(),
        "hello"
    );
    let effects = effects_of(&h, t);
    assert_eq!(effects.len(), 1);
    assert_eq!(effects[0].outcome, EffectOutcome::Succeeded);
    assert!(effects[0].summary.contains("notes/a.md"));
    // The event log shows the start before the settlement.
    let kinds: Vec<String> = h
        .engine
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), Some(t), 1000))
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .filter(|k| k.starts_with("effect_"))
        .collect();
    assert_eq!(kinds, ["effect_started", "effect_settled"]);
}

#[tokio::test]
async fn an_edit_changes_its_piece_of_the_file_and_is_ledgered_as_an_effect() {
    let edit = r#"{"path":"calc.py","old_text":"/ len(xs)","new_text":"/ len(xs) if xs else 0"}"#;
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![call("e1", "edit_file", edit)],
        )],
        |b| b,
    );
    std::fs::write(
        h.workspace.join("calc.py"),
        "def average(xs):\n    return sum(xs) / len(xs)\n",
    )
    .unwrap();
    let (t, run) = run_task(&h, "mend average").await;
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("calc.py")).unwrap(),
        "def average(xs):\n    return sum(xs) / len(xs) if xs else 0\n"
    );
    assert_eq!(
        call_results(&h, &run),
        ["edited calc.py at line 2; it now has 2 lines"]
    );
    let effects = effects_of(&h, t);
    assert_eq!(effects.len(), 1);
    assert_eq!(effects[0].outcome, EffectOutcome::Succeeded);
    assert_eq!(effects[0].summary, "edit_file calc.py (22 bytes for 9)");
}

#[tokio::test]
async fn a_repeat_of_a_started_call_is_not_run_again() {
    // The same call id twice in one answer: the ledger key repeats, the second never runs.
    let cmd = r#"{"command":"echo ran >> log.txt"}"#;
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![call("same", "shell", cmd), call("same", "shell", cmd)],
        )],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("log once"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("log.txt")).unwrap(),
        "ran\n"
    );
    let run = last_run(&h, t);
    let calls = h.engine.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    assert_eq!(
        calls.iter().map(|c| c.status.as_str()).collect::<Vec<_>>(),
        ["ok", "repeated"]
    );
    assert!(calls[1].result.starts_with("repeated_effect"));
}

#[tokio::test]
async fn bad_tool_input_becomes_a_result_and_three_failures_in_a_row_are_reported() {
    let h = build(
        vec![
            Reply::Tools(
                String::new(),
                vec![call("a", "read_file", r#"{"path": "no"#)],
            ),
            Reply::Tools(
                String::new(),
                vec![call("b", "read_file", r#"{"path": 7}"#)],
            ),
            Reply::Tools(
                String::new(),
                vec![call("c", "read_file", r#"{"path":"missing.txt"}"#)],
            ),
            Reply::Tools(String::new(), vec![call("d", "teleport", "{}")]),
            Reply::Text("gave up".into()),
        ],
        |b| b,
    );
    let (_, run) = run_task(&h, "read things").await;
    assert_eq!(run.end_reason, Some(EndReason::Completed));
    assert_eq!(run.failure_notes, ["read_file failed 3 times in a row"]);
    let results = call_results(&h, &run);
    assert!(
        results[0].contains("not valid JSON (12 characters, cut off before its end: ")
            && results[0].contains("nothing was run"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("path"), "{}", results[1]);
    assert!(results[3].contains("unknown tool"), "{}", results[3]);
}

/// A reply the output cap ended: a call it finished runs, the call it cut is refused saying
/// the cap cut it (with the cap's size) and how to make it smaller, and nothing of it runs.
#[tokio::test]
async fn a_call_the_output_cap_cut_off_is_told_so_and_not_run() {
    let h = build(
        vec![
            Reply::CutTools(vec![
                call(
                    "a",
                    "write_file",
                    r#"{"path":"first.txt","content":"whole"}"#,
                ),
                call(
                    "b",
                    "write_file",
                    r#"{"path":"big.txt","content":"line 1\nline"#,
                ),
            ]),
            Reply::Text("split it".into()),
        ],
        |b| b,
    );
    h.provider
        .cap
        .store(4096, std::sync::atomic::Ordering::SeqCst);
    let (_, run) = run_task(&h, "write the files").await;
    assert_eq!(run.end_reason, Some(EndReason::Completed));
    let results = call_results(&h, &run);
    assert!(!results[0].contains("output"), "{}", results[0]);
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("first.txt")).unwrap(),
        "whole"
    );
    assert!(
        results[1].starts_with(
            "write_file: your reply reached the most one reply may run to (4096 tokens) before \
             this call's arguments ended (41 characters came); nothing was run. Make the call \
             smaller: write a long file in parts"
        ),
        "{}",
        results[1]
    );
    assert!(!h.workspace.join("big.txt").exists());
}

/// A whole number sent as a string where the tool's schema takes only an integer is read as the
/// number: the call runs, and the stored call (what the model is shown again) has the number.
#[tokio::test]
async fn a_number_sent_as_a_string_is_read_as_the_number_the_schema_takes() {
    let h = build(
        vec![
            Reply::Tools(
                String::new(),
                vec![call(
                    "a",
                    "read_file",
                    r#"{"path":"lines.txt","offset_line":"2","limit_lines":"1"}"#,
                )],
            ),
            Reply::Text("read".into()),
        ],
        |b| b,
    );
    std::fs::write(h.workspace.join("lines.txt"), "one\ntwo\nthree\n").unwrap();
    let (_, run) = run_task(&h, "read line two").await;
    let results = call_results(&h, &run);
    assert!(
        results[0].contains("two") && !results[0].contains("three"),
        "{}",
        results[0]
    );
    let stored = h.engine.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    let args: serde_json::Value = serde_json::from_str(&stored[0].arguments).unwrap();
    assert_eq!(args["offset_line"], 2);
    assert_eq!(args["limit_lines"], 1);
    let asked_again = &h.provider.requests()[1];
    let shown = serde_json::to_string(&asked_again.messages).unwrap();
    assert!(shown.contains(r#"\"offset_line\":2"#), "{shown}");
}

/// A refused edit sent again after only a read (which changes nothing the edit meets) is a
/// repeat too; a write between makes the same refusal news again.
#[tokio::test]
async fn a_refused_edit_sent_again_after_a_read_is_told_it_is_a_repeat() {
    let edit = r#"{"path":"poem.txt","old_text":"the moon","new_text":"the sun"}"#;
    let h = build(
        vec![
            Reply::Tools(
                String::new(),
                vec![call(
                    "w",
                    "write_file",
                    r#"{"path":"poem.txt","content":"the sea"}"#,
                )],
            ),
            Reply::Tools(String::new(), vec![call("a", "edit_file", edit)]),
            Reply::Tools(
                String::new(),
                vec![call("b", "read_file", r#"{"path":"poem.txt"}"#)],
            ),
            Reply::Tools(String::new(), vec![call("c", "edit_file", edit)]),
            Reply::Tools(
                String::new(),
                // The same words again: the file and the edit's answer stay the same, so only
                // the write having happened makes the next miss news.
                vec![call(
                    "d",
                    "write_file",
                    r#"{"path":"poem.txt","content":"the sea"}"#,
                )],
            ),
            Reply::Tools(String::new(), vec![call("e", "edit_file", edit)]),
            Reply::Text("gave up".into()),
        ],
        |b| b,
    );
    let (_, run) = run_task(&h, "edit it").await;
    let results = call_results(&h, &run);
    assert_eq!(results.len(), 6);
    assert!(results[1].contains("not found"), "{}", results[1]);
    assert!(
        !results[1].contains("same edit_file call"),
        "{}",
        results[1]
    );
    assert!(
        results[3].contains("2 times with only calls that changed nothing in between"),
        "{}",
        results[3]
    );
    assert_eq!(
        results[5], results[1],
        "the same answer as the first miss, and no note"
    );
}

/// A model that sends a refused call again unchanged reads, with the same error, that
/// repeating it will not help; one that repeats a call that worked reads that it changed
/// nothing; a changed call reads only its own answer.
#[tokio::test]
async fn a_call_repeated_unchanged_is_told_so_in_its_result() {
    let missing = r#"{"path":"missing.txt"}"#;
    let write = r#"{"path":"poem.txt","content":"the sea"}"#;
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![call("a", "read_file", missing)]),
            Reply::Tools(
                String::new(),
                vec![call("b", "read_file", r#"{ "path" : "missing.txt" }"#)],
            ),
            Reply::Tools(String::new(), vec![call("c", "read_file", missing)]),
            Reply::Tools(
                String::new(),
                vec![call("d", "read_file", r#"{"path":"other.txt"}"#)],
            ),
            Reply::Tools(String::new(), vec![call("e", "write_file", write)]),
            Reply::Tools(String::new(), vec![call("f", "write_file", write)]),
            Reply::Text("gave up".into()),
        ],
        |b| b,
    );
    let (t, run) = run_task(&h, "read it").await;
    let results = call_results(&h, &run);
    assert_eq!(results.len(), 6);
    assert!(!results[0].contains("in a row"), "{}", results[0]);
    assert!(
        results[1].contains("failing the same way 2 times in a row"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("3 times in a row"), "{}", results[2]);
    assert!(!results[3].contains("in a row"), "{}", results[3]);
    // A call that worked, sent again unchanged: the second answer says it changed nothing.
    assert!(!results[4].contains("in a row"), "{}", results[4]);
    assert!(
        results[5].contains("same result, 2 times in a row. Repeating it has changed nothing"),
        "{}",
        results[5]
    );
    // The ledger keeps what the write did, not what the model was told about repeating it.
    let details: Vec<Option<String>> = h
        .engine
        .store()
        .read(|tx| tx.effects_for_run(run.id))
        .unwrap()
        .into_iter()
        .map(|e| e.detail)
        .collect();
    assert_eq!(details.len(), 2, "{details:?}");
    assert!(
        details
            .iter()
            .all(|d| d.as_deref().is_some_and(|d| !d.contains("in a row"))),
        "{details:?}"
    );
    // The model read the note: it is in the result part of its history.
    let history = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, u32::MAX))
        .unwrap();
    let read: Vec<String> = history
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.body {
            troupe_core::message::PartBody::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(read, results);
}

/// While a model writes a tool call, watchers hear which call and how many characters of its
/// arguments have come, from the first piece on (at most once a second after that).
#[tokio::test]
async fn a_tool_call_being_written_is_reported_as_its_arguments_stream() {
    let args = r#"{"path":"poem.txt","content":"The sea, the sea, the sea."}"#;
    let h = build(
        vec![Reply::StreamedTools(vec![call("w", "write_file", args)])],
        |b| b,
    );
    let mut notices = h.engine.subscribe_stream();
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("write a poem"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let mut seen = Vec::new();
    while let Ok(n) = notices.try_recv() {
        match n {
            StreamNotice::ToolCallStarted { name, .. } => seen.push((name, None)),
            StreamNotice::ToolCallWriting {
                name,
                chars,
                call_id,
                ..
            } => {
                assert_eq!(call_id, "w");
                seen.push((name, Some(chars)))
            }
            _ => {}
        }
    }
    let total = args.chars().count();
    assert_eq!(
        seen.first(),
        Some(&("write_file".to_string(), None)),
        "{seen:?}"
    );
    assert_eq!(
        seen.get(1),
        Some(&("write_file".to_string(), Some(total.div_ceil(3)))),
        "the first piece is reported at once: {seen:?}"
    );
    assert!(
        seen[1..].iter().all(|(_, c)| c.is_some_and(|c| c <= total)),
        "{seen:?}"
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("poem.txt")).unwrap(),
        "The sea, the sea, the sea."
    );
}

#[tokio::test]
async fn workspace_escapes_are_refused_to_the_model() {
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![
                call(
                    "a",
                    "write_file",
                    r#"{"path":"../escaped.txt","content":"x"}"#,
                ),
                call("b", "read_file", r#"{"path":"/etc/hostname"}"#),
            ],
        )],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("escape"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    assert!(!h.dir.path().join("escaped.txt").exists());
    let run = last_run(&h, t);
    let calls = h.engine.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    assert!(calls.iter().all(|c| c.status == "error"));
    assert!(
        calls[0].result.contains("outside the workspace"),
        "{}",
        calls[0].result
    );
}

#[tokio::test]
async fn a_failed_model_call_fails_the_run_says_why_and_leaves_the_thread_usable() {
    let h = build(
        vec![
            Reply::Error(LlmError::Connection {
                endpoint: "http://127.0.0.1:9/v1".into(),
                model: "m".into(),
                detail: "connection refused".into(),
            }),
            Reply::Text("back again".into()),
        ],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("hello"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let run = last_run(&h, t);
    assert_eq!(run.status.as_str(), "failed");
    assert!(matches!(&run.end_reason, Some(EndReason::ModelError(d)) if d.contains("127.0.0.1:9")));
    let thread = h.engine.store().read(|tx| tx.thread(t)).unwrap();
    assert_eq!(thread.lease.holder, None, "the lease is released");
    assert_eq!(thread.paused.unwrap().reason, PauseReason::Failed);
    let msgs = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 10))
        .unwrap();
    let failure = msgs.last().unwrap();
    assert_eq!(failure.finish, Some(Finish::Error));
    assert!(failure.text().contains("127.0.0.1:9") && failure.parts[0].visible);
    let calls = h.engine.store().read(|tx| tx.model_calls(run.id)).unwrap();
    assert!(
        calls[0]
            .error
            .as_deref()
            .unwrap()
            .contains("connection refused")
    );
    assert_eq!(
        calls[0].cached_input_tokens, 0,
        "a failed call used no tokens"
    );
    // The next line works and the failure text is not fed back to the model.
    h.engine
        .deliver(t, Delivery::user_task("try again"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    assert_eq!(last_run(&h, t).status.as_str(), "completed");
    let req = h.provider.requests().pop().unwrap();
    assert!(!format!("{:?}", req.messages).contains("The model call failed"));
}

#[tokio::test]
async fn a_failed_attempt_is_recorded_even_when_the_retry_succeeds() {
    let retry = troupe_llm::RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(1),
    };
    let dropped = LlmError::Protocol {
        endpoint: "test:queue".into(),
        model: "queue-model".into(),
        detail: "stream dropped mid-answer".into(),
    };
    let h = support::build_with_retry(
        retry,
        vec![Reply::Error(dropped), Reply::Text("second try".into())],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("hello"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let run = last_run(&h, t);
    assert_eq!(run.status.as_str(), "completed");
    let calls = h.engine.store().read(|tx| tx.model_calls(run.id)).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].attempts, 2);
    assert_eq!(calls[0].error, None);
    assert_eq!(calls[0].attempt_errors.len(), 1);
    assert!(calls[0].attempt_errors[0].contains("stream dropped"));
    // The usage of the attempt that answered, cached part included.
    assert_eq!(
        (
            calls[0].input_tokens,
            calls[0].cached_input_tokens,
            calls[0].output_tokens
        ),
        (10, 4, 5)
    );
}

#[tokio::test]
async fn every_fortieth_hop_adds_a_reminder_and_keeps_the_tools() {
    let mut replies: Vec<Reply> = (0..41)
        .map(|i| {
            Reply::Tools(
                String::new(),
                vec![call(&format!("c{i}"), "list_dir", "{}")],
            )
        })
        .collect();
    replies.push(Reply::Text("done at last".into()));
    let h = build(replies, |b| b);
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("loop a while"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 42);
    let reminder = |r: &troupe_llm::ModelRequest| matches!(r.messages.last(), Some(ChatMessage::User { text, .. }) if text.starts_with("[runtime reminder]"));
    let reminded: Vec<usize> = reqs
        .iter()
        .enumerate()
        .filter(|(_, r)| reminder(r))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(reminded, [40]);
    assert_eq!(reqs[39].tools.len(), reqs[0].tools.len());
    // The reminder is never stored.
    let stored = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 1000))
        .unwrap();
    assert!(!stored.iter().any(|m| m.text().contains("runtime reminder")));
}

#[tokio::test]
async fn the_hop_limit_ends_the_run_as_failed() {
    let replies = (0..10)
        .map(|i| {
            Reply::Tools(
                String::new(),
                vec![call(&format!("c{i}"), "list_dir", "{}")],
            )
        })
        .collect();
    let h = build(replies, |b| {
        b.config(EngineConfig {
            limits: RunLimits {
                max_hops: 3,
                ..Default::default()
            },
            boot_id: "hop-test".into(),
            ..EngineConfig::default()
        })
    });
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("never ends"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let run = last_run(&h, t);
    assert_eq!(run.end_reason, Some(EndReason::HopLimit(3)));
    assert_eq!(h.provider.calls(), 3);
}

fn alive(pid: i32) -> bool {
    troupe_tools::process_running(pid)
}

async fn wait_for_file(path: &std::path::Path) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && s.ends_with('\n')
        {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn stop_ends_the_command_s_process_group_and_marks_its_effect_unknown() {
    // The child ignores SIGTERM: only the kill after the grace period ends it.
    let cmd =
        r#"{"command":"sh -c 'trap \"\" TERM; exec sleep 1000' & echo $! > child.pid; wait"}"#;
    let h = build(
        vec![Reply::Tools(String::new(), vec![call("c1", "shell", cmd)])],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("run forever"))
        .await
        .unwrap();
    let pid: i32 = wait_for_file(&h.workspace.join("child.pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));
    let run = h.engine.stop(t, StopMode::User).await.unwrap();
    assert_eq!(run.status.as_str(), "stopped");
    assert!(!alive(pid), "the SIGTERM-ignoring child survived the stop");
    let effects = effects_of(&h, t);
    assert_eq!(effects[0].outcome, EffectOutcome::Unknown);
    // Its tool call is answered honestly in the history, and the loop wrote nothing after the stop.
    let msgs = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 10))
        .unwrap();
    let reply = msgs
        .iter()
        .rev()
        .find(|m| m.tool_calls().count() > 0)
        .unwrap();
    assert!(format!("{:?}", reply.parts).contains("stopped before it finished"));
    assert!(!h.engine.is_running(t));
    // Unknown outcome: nothing resumes it by itself, not even new delivery-driven drives.
    let out = h.engine.request_drive(t, "test", false).await.unwrap();
    assert!(out.started().is_none());
}
