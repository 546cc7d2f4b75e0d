//! A `troupe exec` killed with SIGKILL in the middle of a shell command: the resumed process
//! records the run interrupted, ends the orphaned command, does not run it again, and still
//! answers the task queued meanwhile.

mod common;

use common::{Scratch, process_gone, read_to_string, stderr, stdout, wait_for};
use serde_json::json;
use std::process::Stdio;
use std::time::Duration;
use troupe_core::ThreadId;
use troupe_core::effect::EffectOutcome;
use troupe_core::inbox::Delivery;
use troupe_core::run::RunStatus;

#[test]
fn crash_during_shell_is_interrupted_and_not_repeated_on_resume() {
    let s = Scratch::new();
    let script = s.script(json!([
        { "tool_calls": [ { "name": "shell", "arguments": {
            "command": "echo run >> runs.txt; echo $$ > shell.pid; exec sleep 1000" } } ] },
        { "text": "resumed fine" },
        { "text": "second task answered" }
    ]));
    let out_file = std::fs::File::create(s.root.path().join("first.out")).unwrap();
    let err_file = std::fs::File::create(s.root.path().join("first.err")).unwrap();
    let mut child = s
        .exec()
        .arg("--script")
        .arg(&script)
        .arg("do the thing")
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(err_file)
        .spawn()
        .unwrap();

    // The command is running once it wrote its pid, and its process group is on record.
    let pid_file = s.workspace.join("shell.pid");
    let mut sleep_pid = 0;
    wait_for(
        "the shell command to start",
        Duration::from_secs(30),
        || {
            let text = read_to_string(&pid_file);
            match text.strip_suffix('\n').map(str::parse::<i32>) {
                Some(Ok(pid)) => {
                    sleep_pid = pid;
                    true
                }
                _ => false,
            }
        },
    );
    let store = s.store();
    wait_for(
        "the effect's process group",
        Duration::from_secs(30),
        || {
            let effects = store.read(|tx| tx.effects_for_thread(ThreadId(1))).unwrap();
            effects
                .iter()
                .any(|e| e.tool == "shell" && e.pgid.is_some())
        },
    );

    // A second task arrives from another process while the first one still runs.
    let delivered = store
        .write(|tx| tx.deliver(ThreadId(1), &Delivery::user_task("second task")))
        .unwrap();
    assert!(delivered.created);

    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !process_gone(sleep_pid),
        "the command should outlive the killed troupe until recovery ends it"
    );

    let out = s
        .exec()
        .arg("--script")
        .arg(&script)
        .args(["--resume", "th_1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (out_text, err_text) = (stdout(&out), stderr(&out));
    let context = format!("stdout: {out_text}\nstderr: {err_text}");

    // (f) the resume ends well.
    assert_eq!(out.status.code(), Some(0), "{context}");
    let (runs, effects, messages) = store
        .read(|tx| {
            Ok((
                tx.runs_for_thread(ThreadId(1), 10)?,
                tx.effects_for_thread(ThreadId(1))?,
                tx.messages(ThreadId(1), None, 1000)?,
            ))
        })
        .unwrap();
    // (a) the killed run is recorded interrupted (runs come newest first).
    let first_run = runs.last().expect("a run");
    assert_eq!(first_run.status, RunStatus::Interrupted, "{runs:#?}");
    assert!(
        runs.len() >= 2 && runs[0].status == RunStatus::Completed,
        "{runs:#?}"
    );
    // (b) the command ran exactly once.
    assert_eq!(
        read_to_string(&s.workspace.join("runs.txt")),
        "run\n",
        "{context}"
    );
    // (c) the orphaned command was ended.
    assert!(process_gone(sleep_pid), "sleep {sleep_pid} is still alive");
    // (d) the shell call's outcome is unknown, not assumed.
    let shell: Vec<_> = effects.iter().filter(|e| e.tool == "shell").collect();
    assert_eq!(shell.len(), 1, "{effects:#?}");
    assert_eq!(shell[0].outcome, EffectOutcome::Unknown, "{effects:#?}");
    // (e) Continue resumed the interrupted task first, then the task that arrived meanwhile
    // was answered in turn: nothing was lost.
    let texts: Vec<String> = messages.iter().map(|m| m.text()).collect();
    let resumed = texts.iter().position(|t| t == "resumed fine");
    let queued = texts.iter().position(|t| t == "second task");
    let answered = texts.iter().position(|t| t == "second task answered");
    assert!(
        matches!((resumed, queued, answered), (Some(r), Some(q), Some(a)) if r < q && q < a),
        "{texts:#?}"
    );
    let replies = ["second task answered".to_string()];
    assert_eq!(
        out_text.trim(),
        replies.last().unwrap().as_str(),
        "{context}"
    );
}
