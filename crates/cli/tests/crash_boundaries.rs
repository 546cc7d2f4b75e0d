//! `troupe exec` killed with SIGKILL right after each commit a step makes, while the next model
//! call is in flight: a read-only step (one commit: the call's record, the reply and its results)
//! and an effectful step (the reply with the effect's start, then the outcome with the result).
//! The resumed process keeps what was committed once, runs nothing again, and finishes the task.

mod common;

use common::{Scratch, read_to_string, stdout, wait_for};
use serde_json::json;
use std::process::{Child, Stdio};
use std::time::Duration;
use troupe_core::ThreadId;
use troupe_core::effect::EffectOutcome;
use troupe_core::message::PartBody;
use troupe_core::run::RunStatus;
use troupe_store::Store;

/// A model that never answers its second call (within the test), so the process is killed
/// while that call is in flight.
const HANG: u64 = 600_000;

fn start(s: &Scratch, first_step: serde_json::Value) -> Child {
    let script = s.script(json!([first_step, { "text": "never", "delay_ms": HANG }]));
    s.exec()
        .arg("--script")
        .arg(&script)
        .arg("do the thing")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Resume with a model whose second answer comes at once.
fn resume(s: &Scratch, first_step: serde_json::Value) -> std::process::Output {
    let script = s.file(
        "resume.json",
        &json!({"name": "resume", "steps": [first_step, { "text": "resumed fine" }]}).to_string(),
    );
    s.exec()
        .arg("--script")
        .arg(&script)
        .args(["--resume", "th_1"])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn tool_call_count(store: &Store, name: &str) -> usize {
    let runs = store
        .read(|tx| tx.runs_for_thread(ThreadId(1), 10))
        .unwrap();
    runs.iter()
        .map(|r| {
            store
                .read(|tx| tx.tool_calls(r.id))
                .unwrap()
                .iter()
                .filter(|c| c.name == name)
                .count()
        })
        .sum()
}

fn results_of(store: &Store, name: &str) -> usize {
    store
        .read(|tx| tx.messages(ThreadId(1), None, 1000))
        .unwrap()
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter(|p| matches!(&p.body, PartBody::ToolResult { name: n, .. } if n == name))
        .count()
}

fn assert_resumed(store: &Store, out: &std::process::Output) {
    assert_eq!(out.status.code(), Some(0), "stdout: {}", stdout(out));
    assert_eq!(stdout(out).trim(), "resumed fine");
    let runs = store
        .read(|tx| tx.runs_for_thread(ThreadId(1), 10))
        .unwrap();
    assert_eq!(
        runs.last().unwrap().status,
        RunStatus::Interrupted,
        "{runs:#?}"
    );
    assert_eq!(runs[0].status, RunStatus::Completed, "{runs:#?}");
}

#[test]
fn a_kill_after_a_read_only_step_keeps_its_one_commit() {
    let s = Scratch::new();
    std::fs::write(s.workspace.join("notes.txt"), "hello").unwrap();
    let step =
        json!({ "tool_calls": [ { "name": "read_file", "arguments": { "path": "notes.txt" } } ] });
    let mut child = start(&s, step.clone());
    let store = s.store();
    // The step's one commit carries its tool call record: once it shows, the next call is out.
    wait_for(
        "the read-only step to commit",
        Duration::from_secs(30),
        || tool_call_count(&store, "read_file") == 1,
    );
    assert_eq!(
        results_of(&store, "read_file"),
        1,
        "the result came in the same commit"
    );
    child.kill().unwrap();
    child.wait().unwrap();

    let out = resume(&s, step);
    assert_resumed(&store, &out);
    // Committed once, never run again: the resumed run went on from the stored result.
    assert_eq!(tool_call_count(&store, "read_file"), 1);
    assert_eq!(results_of(&store, "read_file"), 1);
}

#[test]
fn a_kill_after_an_effectful_step_keeps_its_outcome_and_does_not_repeat_it() {
    let s = Scratch::new();
    let step = json!({ "tool_calls": [ { "name": "shell", "arguments": { "command": "echo ran >> runs.txt" } } ] });
    let mut child = start(&s, step.clone());
    let store = s.store();
    // The outcome's commit carries the result: once the effect is settled, the next call is out.
    wait_for(
        "the effect's outcome to commit",
        Duration::from_secs(30),
        || {
            store
                .read(|tx| tx.effects_for_thread(ThreadId(1)))
                .unwrap()
                .iter()
                .any(|e| e.outcome == EffectOutcome::Succeeded)
        },
    );
    assert_eq!(results_of(&store, "shell"), 1);
    child.kill().unwrap();
    child.wait().unwrap();

    let out = resume(&s, step);
    assert_resumed(&store, &out);
    assert_eq!(read_to_string(&s.workspace.join("runs.txt")), "ran\n");
    let effects = store.read(|tx| tx.effects_for_thread(ThreadId(1))).unwrap();
    assert_eq!(effects.len(), 1, "{effects:#?}");
    assert_eq!(effects[0].outcome, EffectOutcome::Succeeded);
    assert_eq!(tool_call_count(&store, "shell"), 1);
}
