//! `troupe exec` as a user runs it: a real process, a temp workspace, a scripted model.

mod common;

use common::{Scratch, stderr, stdout};
use serde_json::{Value, json};

fn write_then_answer() -> Value {
    json!([
        { "tool_calls": [ { "name": "write_file",
                            "arguments": { "path": "hello.txt", "content": "hi" } } ] },
        { "text": "wrote hello.txt" }
    ])
}

#[test]
fn exec_runs_a_scripted_task_and_prints_the_final_text() {
    let s = Scratch::new();
    let script = s.script(write_then_answer());
    let out = s
        .exec()
        .arg("--script")
        .arg(&script)
        .arg("write hello.txt")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "wrote hello.txt");
    assert_eq!(
        std::fs::read_to_string(s.workspace.join("hello.txt")).unwrap(),
        "hi"
    );
    let first = stderr(&out).lines().next().unwrap_or("").to_string();
    assert_eq!(first, "thread th_1", "stderr: {}", stderr(&out));
}

#[test]
fn exec_json_prints_one_event_per_line() {
    let s = Scratch::new();
    let script = s.script(write_then_answer());
    let out = s
        .exec()
        .arg("--json")
        .arg("--script")
        .arg(&script)
        .arg("write hello.txt")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines.len() > 2, "{text}");
    for l in &lines {
        let ty = l["type"].as_str().unwrap_or("");
        assert!(["event", "stream", "result"].contains(&ty), "{l}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "event" && l["kind"] == "tool_call"),
        "{text}"
    );
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["status"], "completed");
    assert_eq!(last["text"], "wrote hello.txt");
    assert_eq!(last["thread_id"], "th_1");
}

#[test]
fn exec_fails_with_a_one_line_reason_when_the_model_is_unreachable() {
    let s = Scratch::new();
    let config = s.file("config.toml", "[limits]\nmax_attempts = 1\n");
    let out = s
        .exec()
        .arg("--config")
        .arg(&config)
        .args(["--base-url", "http://127.0.0.1:1/v1", "--model", "m"])
        .arg("say hi")
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "stdout: {}", stdout(&out));
    let err = stderr(&out);
    let last = err.lines().last().unwrap_or("");
    assert!(last.starts_with("troupe:"), "stderr: {err}");
    assert!(last.contains("http://127.0.0.1:1/v1"), "stderr: {err}");
    assert!(last.contains("--resume th_1"), "stderr: {err}");
    assert!(stdout(&out).is_empty(), "stdout: {}", stdout(&out));
}

#[test]
fn exec_without_any_model_says_how_to_configure_one() {
    let s = Scratch::new();
    let out = s.exec().arg("do something").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "stderr: {err}");
    assert!(err.starts_with("troupe: "), "{err}");
    assert!(
        err.contains("--script") && err.contains("--base-url"),
        "{err}"
    );
}

#[test]
fn exec_refuses_an_empty_task_as_a_usage_error() {
    let s = Scratch::new();
    let script = s.script(write_then_answer());
    let out = s
        .exec()
        .arg("--script")
        .arg(&script)
        .arg("  ")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(&out));
    assert!(stderr(&out).starts_with("troupe: "), "{}", stderr(&out));
}

#[test]
fn resuming_an_unknown_thread_is_a_clear_error() {
    let s = Scratch::new();
    let script = s.script(write_then_answer());
    let out = s
        .exec()
        .arg("--script")
        .arg(&script)
        .args(["--resume", "th_7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.trim() == format!("troupe: there is no thread th_7 in {}", s.db().display()),
        "{err}"
    );
}

#[test]
fn resuming_a_finished_thread_reports_nothing_to_resume_and_a_new_task_runs() {
    let s = Scratch::new();
    let script = s.script(json!([
        { "text": "first answer" },
        { "text": "second answer" }
    ]));
    let run = |extra: &[&str]| {
        s.exec()
            .arg("--script")
            .arg(&script)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["first"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["--resume", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing to resume"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out).trim(), "first answer");
    let out = run(&["--resume", "th_1", "again"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "second answer");
}

#[test]
fn exec_demo_runs_with_no_key_and_no_network() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("visible.txt"), "x").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_troupe"))
        .args(["exec", "--demo", "--data-dir"])
        .arg(dir.path().join("data"))
        .arg("--workspace")
        .arg(&ws)
        .arg("show me around")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Demo finished"), "{stdout}");
}
