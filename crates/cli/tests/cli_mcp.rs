//! `troupe mcp` and `troupe exec --mcp` as a user runs them: the real binary, the in-repo MCP
//! test server (built by `cargo build -p troupe-mcp --examples`) and, for list/add/remove, a
//! real `troupe serve`.

mod common;

use common::{Scratch, stderr, stdout, wait_for};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

/// The test server next to the `troupe` binary: target/debug/examples/mcp_test_server.
fn test_server() -> PathBuf {
    let troupe = Path::new(env!("CARGO_BIN_EXE_troupe"));
    let path = troupe
        .parent()
        .expect("the binary's directory")
        .join("examples")
        .join("mcp_test_server");
    assert!(
        path.is_file(),
        "{} is missing: build it with `cargo build -p troupe-mcp --examples`",
        path.display()
    );
    path
}

/// `troupe mcp ARGS…` with the scratch data dir and a home without a config file.
fn mcp(s: &Scratch, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_troupe"))
        .env("HOME", &s.home)
        .env("XDG_CONFIG_HOME", s.home.join(".config"))
        .env("XDG_DATA_HOME", s.home.join(".local/share"))
        .env_remove("TROUPE_LOG")
        .env_remove("TROUPE_TOKEN")
        .arg("mcp")
        // Before ARGS: after `add … --` it would be part of the server's command.
        .arg("--data-dir")
        .arg(&s.data)
        .args(args)
        .output()
        .expect("run troupe mcp")
}

fn config_with(s: &Scratch, tables: &str) -> PathBuf {
    s.file("config.toml", tables)
}

fn server_table(name: &str, extra: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = \"{}\"\n{extra}",
        test_server().display()
    )
}

#[test]
fn mcp_test_prints_the_servers_tools_from_the_config_file() {
    let s = Scratch::new();
    let config = config_with(&s, &server_table("t", ""));
    let out = mcp(&s, &["test", "t", "--config", config.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    assert!(connected(&text) >= 10, "{text}");
    let line = |tool: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(tool))
            .unwrap_or_else(|| panic!("no line for {tool}: {text}"))
            .to_string()
    };
    let echo = line("t__echo");
    assert!(
        echo.contains("read-only") && echo.contains("Returns the given text."),
        "{echo}"
    );
    let note = line("t__write_note");
    assert!(
        note.contains("effect") && note.contains("Appends the text"),
        "{note}"
    );
}

#[test]
fn mcp_test_of_a_server_that_exits_at_once_fails_with_its_stderr() {
    let s = Scratch::new();
    let config = config_with(
        &s,
        &server_table("dead", "env = { MCP_TEST_FAIL_START = \"1\" }\n"),
    );
    let out = mcp(&s, &["test", "dead", "--config", config.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "stdout: {}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("cannot use the MCP server dead"), "{err}");
    assert!(err.contains("cannot start: told to fail"), "{err}");
}

#[test]
fn mcp_test_of_an_unknown_server_and_a_bad_table_say_so() {
    let s = Scratch::new();
    let config = config_with(&s, &server_table("t", ""));
    let out = mcp(&s, &["test", "nope", "--config", config.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no MCP server is named 'nope'"),
        "{}",
        stderr(&out)
    );
    let bad = config_with(&s, &server_table("t", "tool_timeout_sec = 0\n"));
    let out = mcp(&s, &["test", "t", "--config", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("[mcp_servers.t] tool_timeout_sec"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn mcp_list_without_a_daemon_says_how_to_start_one() {
    let s = Scratch::new();
    let out = mcp(&s, &["list"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no troupe daemon is running"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn exec_mcp_tool_result_reaches_the_run() {
    let s = Scratch::new();
    let script = s.script(json!([
        { "tool_calls": [ { "name": "t__echo", "arguments": { "text": "hello from mcp" } } ] },
        { "text": "echoed" }
    ]));
    let out = s
        .exec()
        .arg("--json")
        .arg("--script")
        .arg(&script)
        .arg("--mcp")
        .arg(format!("t={}", test_server().display()))
        .arg("echo something")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(stderr(&out).contains("mcp t: ready, "), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    // The tool's answer is in the run's events, after the call the model made.
    let result = lines
        .iter()
        .find(|l| {
            l["kind"] == "message_part_added" && l["payload"]["part"]["kind"] == "tool_result"
        })
        .unwrap_or_else(|| panic!("no tool result: {}", stdout(&out)));
    let part = &result["payload"]["part"];
    assert_eq!(part["name"], "t__echo", "{result}");
    assert_eq!(part["content"], "hello from mcp", "{result}");
    assert_eq!(part["is_error"], false, "{result}");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["status"], "completed");

    let store = s.store();
    let run = store
        .read(|tx| tx.runs_for_thread(troupe_core::ThreadId(1), 1))
        .unwrap()
        .pop()
        .expect("a run");
    let calls = store.read(|tx| tx.mcp_calls(run.id)).unwrap();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(
        (calls[0].server.as_str(), calls[0].tool.as_str()),
        ("t", "echo")
    );
    assert!(calls[0].ok && calls[0].read_only);
    assert!(calls[0].result.contains("hello from mcp"), "{calls:?}");
    // A one-off run's server does not stay in the database.
    assert!(store.read(|tx| tx.mcp_servers()).unwrap().is_empty());
}

#[test]
fn exec_mcp_server_that_fails_to_start_is_named_and_the_run_goes_on() {
    let s = Scratch::new();
    let script = s.script(json!([{ "text": "did without it" }]));
    let out = s
        .exec()
        .arg("--script")
        .arg(&script)
        .arg("--mcp")
        .arg("dead=/bin/false")
        .arg("try it")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("mcp dead: failed: ") && err.contains("its tools are not offered"),
        "{err}"
    );
    assert_eq!(stdout(&out).trim(), "did without it");
}

#[test]
fn exec_mcp_with_a_bad_flag_is_a_usage_error() {
    let s = Scratch::new();
    let out = s
        .exec()
        .arg("--demo")
        .arg("--mcp")
        .arg("Bad Name=x")
        .arg("task")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--mcp Bad Name: name:"),
        "{}",
        stderr(&out)
    );
}

/// A `troupe serve` on a free loopback port, stopped with SIGTERM (its graceful exit ends
/// the MCP servers' process groups).
struct Serve {
    child: Child,
}

impl Serve {
    fn start(s: &Scratch, config: &Path) -> Serve {
        let log = std::fs::File::create(s.root.path().join("serve.log")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_troupe"))
            .env("HOME", &s.home)
            .env_remove("TROUPE_TOKEN")
            .env_remove("TROUPE_DATABASE_URL")
            .args(["serve", "--addr", "127.0.0.1:0", "--data-dir"])
            .arg(&s.data)
            .arg("--config")
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawn troupe serve");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(first.starts_with("listening on http://"), "{first:?}");
        wait_for("daemon.json", WAIT, || s.data.join("daemon.json").exists());
        Serve { child }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let pid = self.child.id() as i32;
        // SAFETY: a signal to the daemon this test started.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// N of `connected: N tools` in `troupe mcp test`'s output.
fn connected(text: &str) -> usize {
    text.lines()
        .find_map(|l| l.strip_prefix("connected: "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no 'connected: N tools' line: {text}"))
}

/// N of the `NAME  ready, N tools` line in `troupe mcp list`'s output, if the server is ready.
fn ready_tools(listing: &str, name: &str) -> Option<usize> {
    listing
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}  ready, ")))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

fn listed(s: &Scratch) -> String {
    let out = mcp(s, &["list"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn mcp_add_list_test_remove_through_the_daemon() {
    let s = Scratch::new();
    // The config file's server reaches the daemon.
    let config = config_with(&s, &server_table("cfg", ""));
    let _serve = Serve::start(&s, &config);
    wait_for("cfg ready", WAIT, || {
        ready_tools(&listed(&s), "cfg").is_some()
    });
    let base = ready_tools(&listed(&s), "cfg").unwrap();

    let server = test_server();
    let out = mcp(
        &s,
        &[
            "add",
            "t",
            "--env",
            "MCP_TEST_MANY_TOOLS=2",
            "--timeout",
            "30",
            "--bot",
            "ada",
            "--",
            server.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(stdout(&out).starts_with("added t: "), "{}", stdout(&out));
    wait_for("t ready", WAIT, || ready_tools(&listed(&s), "t").is_some());
    assert_eq!(ready_tools(&listed(&s), "t"), Some(base + 2));
    assert!(listed(&s).contains("(bots: ada)"), "{}", listed(&s));

    // test reads the daemon's definition: the extra tools are there.
    let out = mcp(&s, &["test", "t"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(connected(&stdout(&out)), base + 2, "{}", stdout(&out));

    let out = mcp(&s, &["add", "t", "--", server.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("an MCP server named 't' exists already"),
        "{}",
        stderr(&out)
    );
    let out = mcp(&s, &["add", "u", "--timeout", "0", "--", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("tool_timeout_sec"),
        "{}",
        stderr(&out)
    );

    let out = mcp(&s, &["remove", "t"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "removed t");
    let now = listed(&s);
    assert!(!now.lines().any(|l| l.starts_with("t  ")), "{now}");
    let out = mcp(&s, &["remove", "t"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no MCP server is named 't'"),
        "{}",
        stderr(&out)
    );
}

/// `troupe login-link ARGS…` with the scratch data dir.
fn login_link(s: &Scratch, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_troupe"))
        .env("HOME", &s.home)
        .env_remove("TROUPE_LOG")
        .env_remove("TROUPE_TOKEN")
        .arg("login-link")
        .arg("--data-dir")
        .arg(&s.data)
        .args(args)
        .output()
        .expect("run troupe login-link")
}

/// The daemon wants its token on loopback too; the CLI's daemon clients read it from
/// DATA_DIR/token (what they send is that file's content: a changed file is refused),
/// and `--token` overrides the file.
#[test]
fn cli_reads_token_file() {
    let s = Scratch::new();
    let config = config_with(&s, "");
    let _serve = Serve::start(&s, &config);
    let token_file = s.data.join("token");
    let token = std::fs::read_to_string(&token_file).expect("the daemon wrote its token");

    let out = mcp(&s, &["list"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));

    let out = mcp(&s, &["list", "--token", "not-the-token"]);
    assert_eq!(out.status.code(), Some(1), "stdout: {}", stdout(&out));
    assert!(stderr(&out).contains("bearer token"), "{}", stderr(&out));
    let out = mcp(&s, &["list", "--token", token.trim()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));

    // A new one-time link for the web page, from the same file.
    let out = login_link(&s, &[]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let link = stdout(&out).trim().to_string();
    assert!(
        link.starts_with("http://127.0.0.1:") && link.contains("/login?once="),
        "{link}"
    );
    assert_ne!(
        stdout(&login_link(&s, &[])).trim(),
        link,
        "each link is new"
    );

    // The file is what is sent: replaced, it no longer opens the daemon.
    std::fs::write(&token_file, "0".repeat(64)).unwrap();
    let out = mcp(&s, &["list"]);
    assert_eq!(out.status.code(), Some(1), "stdout: {}", stdout(&out));
    assert!(stderr(&out).contains("bearer token"), "{}", stderr(&out));
    let out = login_link(&s, &[]);
    assert_eq!(out.status.code(), Some(1), "stdout: {}", stdout(&out));
    let out = login_link(&s, &["--token", token.trim()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    std::fs::write(&token_file, &token).unwrap();
}
