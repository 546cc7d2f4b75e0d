//! End to end, as a real process: `troupe serve` against a fake OpenAI-compatible server.
//! A Bot writes a file, runs a command and answers; then a turn whose command hangs is cut
//! off by SIGKILL, and the restarted daemon records it interrupted, keeps the person's line
//! and ends the orphaned process. Finally SIGTERM stops the daemon cleanly.
//!
//! The test runs `target/debug/troupe` (or `$TROUPE_BIN`). When that binary is missing it
//! runs `cargo build -p troupe-cli` first; a present binary is used as is, so build it
//! (`cargo build -p troupe-cli`) before running this test after changing the CLI.

mod daemon_support;
mod sse;

use daemon_support::*;

use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

// ---------- the fake model server ----------

fn tool_call(name: &str, args: Value) -> String {
    let args = args.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    let mut s = chunk(json!({"role": "assistant", "content": null}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": a}}]}),
        None,
    );
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}

fn answer(req: &Value) -> String {
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let body = if last["role"] == "user" && last["content"].to_string().contains("slow") {
        tool_call(
            "shell",
            json!({"command": "echo started > started.txt; exec sleep 1000"}),
        )
    } else {
        match messages.iter().filter(|m| m["role"] == "assistant").count() {
            0 => tool_call("write_file", json!({"path": "a.txt", "content": "hi"})),
            1 => tool_call("shell", json!({"command": "echo done"})),
            _ => text("all done"),
        }
    };
    body + "data: [DONE]\n\n"
}

/// A live process whose working directory is `dir` and whose command line is `sleep 1000`.
fn sleeper_in(dir: &Path) -> Option<i32> {
    let dir = dir.canonicalize().ok()?;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
        if cmd == b"sleep\x001000\x00" && cwd.as_deref() == Some(dir.as_path()) && alive(pid) {
            return Some(pid);
        }
    }
    None
}

/// Running, and not a zombie waiting to be reaped.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

fn lines_with(lines: &Value, author: &str, body: &str) -> bool {
    lines
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["author"] == author && l["body"] == body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn daemon_runs_a_bot_survives_sigkill_and_stops_on_sigterm() {
    let bin = troupe_binary();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let log = tmp.path().join("daemon.log");
    let model = serve_fake_model(answer).await;
    let config = tmp.path().join("config.toml");
    write_fake_config(&config, &model, &["default"]);
    let mut daemon = Daemon::start(&bin, &data, &config, &log);
    // The token stays in the data dir, so this client outlives the restart below.
    let client = daemon.client();
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("daemon.json")).unwrap()).unwrap();
    assert_eq!(info["addr"], daemon.addr.as_str());
    assert_eq!(info["pid"], daemon.child.id());

    let bot = post(&client, daemon.url("/v1/bots"), json!({"name": "Builder"})).await;
    let session = post(
        &client,
        daemon.url("/v1/sessions"),
        json!({"kind": "direct", "bot_ids": [bot["id"]]}),
    )
    .await;
    let sid = session["id"].as_i64().unwrap();
    let workspace = data.join(format!("workspaces/session-{sid}"));
    let mut events = sse::SseStream::connect(
        &client,
        &daemon.url(&format!("/v1/events?session_id={sid}")),
        None,
    )
    .await;

    post(
        &client,
        daemon.url(&format!("/v1/sessions/{sid}/messages")),
        json!({"body": "build it"}),
    )
    .await;
    let lines_url = daemon.url(&format!("/v1/sessions/{sid}/messages?limit=1000"));
    wait_until("the Bot says all done", || async {
        lines_with(&get(&client, lines_url.clone()).await, "bot", "all done").then_some(())
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(workspace.join("a.txt")).unwrap(),
        "hi"
    );

    let turns_url = daemon.url(&format!("/v1/turns?session_id={sid}"));
    let turn = wait_until("the turn ends", || async {
        let turns = get(&client, turns_url.clone()).await;
        (turns[0]["status"] != "running").then(|| turns[0].clone())
    })
    .await;
    assert_eq!(turn["status"], "completed", "{turn:#}");
    let commands = get(
        &client,
        daemon.url(&format!("/v1/turns/{}/commands", turn["id"])),
    )
    .await;
    let commands = commands.as_array().unwrap();
    assert_eq!(commands.len(), 1, "{commands:#?}");
    assert_eq!(commands[0]["command"], "echo done");
    assert_eq!(commands[0]["exit_code"], 0);

    let seen = events
        .until(WAIT, |m| {
            m.event == "session_message" && m.json()["payload"]["message"]["body"] == "all done"
        })
        .await;
    let said = |author: &str, body: &str| {
        seen.iter().any(|m| {
            let line = &m.json()["payload"]["message"];
            m.event == "session_message" && line["author"] == author && line["body"] == body
        })
    };
    assert!(said("user", "build it"), "{seen:#?}");
    assert!(said("bot", "all done"));
    drop(events);

    // A turn whose command hangs; the daemon dies under it.
    post(
        &client,
        daemon.url(&format!("/v1/sessions/{sid}/messages")),
        json!({"body": "slow please"}),
    )
    .await;
    wait_until("the slow command started", || async {
        workspace.join("started.txt").exists().then_some(())
    })
    .await;
    let sleeper = wait_until("the sleep process shows", || async {
        sleeper_in(&workspace)
    })
    .await;
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    assert!(
        alive(sleeper),
        "the command outlives the killed daemon until recovery ends it"
    );

    let daemon = Daemon::start(&bin, &data, &config, &log);
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("daemon.json")).unwrap()).unwrap();
    assert_eq!(info["pid"], daemon.child.id());
    assert_eq!(info["addr"], daemon.addr.as_str());

    let turns = get(&client, daemon.url(&format!("/v1/turns?session_id={sid}"))).await;
    assert_eq!(turns[0]["status"], "interrupted", "{turns:#}");
    assert_eq!(turns[1]["status"], "completed");
    let lines = get(
        &client,
        daemon.url(&format!("/v1/sessions/{sid}/messages?limit=1000")),
    )
    .await;
    assert!(
        lines_with(&lines, "user", "slow please"),
        "the person's line survives: {lines:#}"
    );
    wait_until("the orphaned sleep is ended", || async {
        (!alive(sleeper)).then_some(())
    })
    .await;

    // SIGTERM: a clean exit that removes daemon.json.
    let mut daemon = daemon;
    let pid = daemon.child.id() as i32;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = daemon.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the daemon did not exit within 15 s of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        status.success(),
        "exit {status}; log:\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert!(
        !data.join("daemon.json").exists(),
        "daemon.json is removed on a clean exit"
    );
}
