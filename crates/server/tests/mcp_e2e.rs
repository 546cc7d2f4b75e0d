//! Issue 19 end to end through a real `troupe serve` and a fake OpenAI-compatible model:
//!
//! - `effectful_mcp_call_in_ledger_once`: a Bot's call to the in-repo test server's effectful
//!   `slow` tool is in flight when the whole daemon is SIGKILLed; restarted on the same data,
//!   the call's effect is unknown, the turn interrupted, nothing resumes by itself (the server
//!   saw the call once) and the server is ready again.
//! - `a_real_filesystem_server_lists_and_reads_through_a_bot`: the published reference server
//!   `@modelcontextprotocol/server-filesystem` (npm, installed by `.ci/run`) is added through
//!   the API, its real tools are offered with the read-only flags it gives them, and a scripted
//!   Bot lists a directory and reads a file through it; what the server returned reaches the
//!   model, the conversation and the turn's MCP call records.
//!
//! Both run on PostgreSQL when `TROUPE_TEST_DATABASE` names a server, else on SQLite. They run
//! `target/debug/troupe` (or `$TROUPE_BIN`) and the test server beside it
//! (`cargo build -p troupe-mcp --examples`, built here when missing).

mod daemon_support;

use daemon_support::deliverables::tool_results;
use daemon_support::mcp::*;
use daemon_support::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

const SLOW_LINE: &str = "run the slow step";
const SLOW_DONE: &str = "The slow step ended.";
const UNEXPECTED: &str = "UNEXPECTED request";

/// The Bot calls `t__slow` for two minutes when asked; any tool result gets a closing line.
fn slow_script(req: &Value) -> Reply {
    if let Some(r) = neutral_reading(req) {
        return Reply::Now(r);
    }
    Reply::Now(if after_tool(req).is_some() {
        text(SLOW_DONE)
    } else if fresh_user(req).contains(SLOW_LINE) {
        tool_call_as("call_slow", "t__slow", &json!({"secs": 120}))
    } else {
        text(UNEXPECTED)
    })
}

fn count(file: &std::path::Path, line: &str) -> usize {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == line)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn effectful_mcp_call_in_ledger_once() {
    let server = mcp_test_server();
    let fake = FakeModel::serve(slow_script).await;
    let rig = Rig::new(|p| write_fake_config(p, &fake.url, &["default"]));
    let database = test_database();
    let (notes, events) = (rig.path("notes.txt"), rig.path("events.txt"));
    let (mut daemon, api) = start_on(&rig, database.as_deref());

    let (status, added) = api
        .post_status(
            "/v1/mcp-servers",
            json!({"name": "t", "command": server.display().to_string(),
                   "env": {"MCP_TEST_NOTES": notes.display().to_string(),
                           "MCP_TEST_EVENTS": events.display().to_string()}}),
        )
        .await;
    assert_eq!(status.as_u16(), 201, "{added:#}");
    let view = wait_ready(&api, "t", WAIT).await;
    let slow = view["status"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "t__slow")
        .unwrap_or_else(|| panic!("t__slow is offered: {view:#}"))
        .clone();
    assert_eq!(slow["read_only"], false, "slow is an effect: {slow:#}");

    let bot = api.bot("Writer").await;
    let d = api.direct(bot).await;
    api.say(d, SLOW_LINE).await;
    wait_until("the server started the slow call", || async {
        (count(&events, "started slow") > 0).then_some(())
    })
    .await;
    let turn = api.running_turn(d, bot).await;
    let run = turn["id"].as_i64().unwrap();
    let daemon_pid = daemon.child.id() as i32;
    let server_pids = children_running(daemon_pid, &server);
    assert_eq!(server_pids.len(), 1, "one server process: {server_pids:?}");
    let bot_calls = fake.bot_requests().len();
    let turns_before = api.turns(d).await.len();

    // The whole daemon dies mid-call; its server, in a group of its own, is not signalled but
    // loses its stdin and exits.
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    wait_until("the old server process exits", || async {
        (!process_alive(server_pids[0])).then_some(())
    })
    .await;

    // Started again on the same data. It prints its address only once boot recovery is done,
    // and logs what recovery did: this run interrupted, one effect unknown, nothing woken.
    let log_from = rig.log().len();
    let (_daemon, api) = start_on(&rig, database.as_deref());
    let log = rig.log();
    let recovered = log[log_from..]
        .lines()
        .find(|l| l.contains("recovered") && l.contains("RecoveryReport"))
        .unwrap_or_else(|| panic!("the restart logs its recovery:\n{}", &log[log_from..]))
        .to_string();
    assert!(
        recovered.contains(&format!("interrupted_runs: [RunId({run})]")),
        "{recovered}"
    );
    assert!(recovered.contains("unknown_effects: 1,"), "{recovered}");
    assert!(recovered.contains("woken: []"), "{recovered}");

    let t = api.turn(&turn["id"]).await;
    assert_eq!(t["status"], "interrupted", "{t:#}");
    // The ledger through the API: the conversation is held back by the call whose outcome is
    // unknown, and latched as found unfinished.
    let view = api.get(&format!("/v1/sessions/{d}")).await;
    assert_eq!(view["running"], false, "{view:#}");
    assert_eq!(view["blocked_by"]["reason"], "unknown_effect", "{view:#}");
    assert_eq!(view["blocked_by"]["call"]["tool"], "t__slow", "{view:#}");
    assert_eq!(view["paused"]["reason"], "interrupted", "{view:#}");
    // A call cut off by a crash never answered: no record of it succeeding.
    let calls = api.list(&format!("/v1/turns/{run}/mcp-calls")).await;
    assert!(!calls.iter().any(|c| c["ok"] == true), "{calls:#?}");

    // The server is started again at boot; once it is ready, nothing was sent again.
    let view = wait_ready(&api, "t", WAIT).await;
    assert!(
        view["status"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "t__slow"),
        "{view:#}"
    );
    assert_eq!(
        count(&events, "started slow"),
        1,
        "the slow call reached the server once: {:?}",
        std::fs::read_to_string(&events)
    );
    assert!(!notes.exists(), "no note was written");
    assert_eq!(api.turns(d).await.len(), turns_before, "no turn ran again");
    assert_eq!(
        fake.bot_requests().len(),
        bot_calls,
        "no model call after the crash: {:#?}",
        &fake.bot_requests()[bot_calls..]
    );
    let lines = api.lines(d).await;
    assert!(
        !lines.iter().any(|l| l["author"] == "bot"),
        "the Bot said nothing: {lines:#?}"
    );
}

// ---------- a real published server ----------

const FILES_LINE: &str = "look at the shared folder";
/// The file's text, with no trailing newline so the Bot's line can quote it whole.
const HELLO: &str = "Hello from Troupe's MCP test.\nSecond line: ünïcode ✓ — 42";
/// The installed server may take a while to start (node loads its modules).
const FS_READY: Duration = Duration::from_secs(60);

/// The published filesystem server on PATH; `None` (with the reason printed) when it is
/// absent, unless TROUPE_REQUIRE_MCP_FILESYSTEM=1, when its absence fails.
fn filesystem_server() -> Option<std::path::PathBuf> {
    let found = on_path("mcp-server-filesystem");
    if found.is_none() {
        assert!(
            std::env::var("TROUPE_REQUIRE_MCP_FILESYSTEM").as_deref() != Ok("1"),
            "TROUPE_REQUIRE_MCP_FILESYSTEM=1 but mcp-server-filesystem is not on PATH \
             (npm install -g @modelcontextprotocol/server-filesystem)"
        );
        eprintln!(
            "a_real_filesystem_server_lists_and_reads_through_a_bot skipped: \
             mcp-server-filesystem is not on PATH"
        );
    }
    found
}

/// The Bot lists `root`, then reads `root/hello.txt`, then says what it got, quoting both
/// results as the model was given them.
fn files_script(root: &str, req: &Value) -> Reply {
    if let Some(r) = neutral_reading(req) {
        return Reply::Now(r);
    }
    Reply::Now(match after_tool(req).as_deref() {
        Some("files__list_directory") => tool_call_as(
            "call_read",
            "files__read_text_file",
            &json!({"path": format!("{root}/hello.txt")}),
        ),
        Some("files__read_text_file") => {
            let results = tool_results(req);
            let of = |tool: &str| {
                results
                    .iter()
                    .find(|(name, _)| name == tool)
                    .map(|(_, text)| text.clone())
                    .unwrap_or_default()
            };
            text(&format!(
                "Listing:\n{}\nFile:\n{}",
                of("files__list_directory"),
                of("files__read_text_file")
            ))
        }
        Some(_) => text(UNEXPECTED),
        None if fresh_user(req).contains(FILES_LINE) => {
            tool_call_as("call_list", "files__list_directory", &json!({"path": root}))
        }
        None => text(UNEXPECTED),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_real_filesystem_server_lists_and_reads_through_a_bot() {
    let Some(fs_server) = filesystem_server() else {
        return;
    };
    let shared = tempfile::tempdir().unwrap();
    // The server resolves symlinks in its allowed directories; the Bot names the real path.
    let root = std::fs::canonicalize(shared.path()).unwrap();
    std::fs::write(root.join("hello.txt"), HELLO).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let root = root.display().to_string();
    let r = root.clone();
    let fake = FakeModel::serve(move |req| files_script(&r, req)).await;
    let rig = Rig::new(|p| write_fake_config(p, &fake.url, &["default"]));
    let database = test_database();
    let (_daemon, api) = start_on(&rig, database.as_deref());

    let (status, added) = api
        .post_status(
            "/v1/mcp-servers",
            json!({"name": "files", "command": fs_server.display().to_string(),
                   "args": [root]}),
        )
        .await;
    assert_eq!(status.as_u16(), 201, "{added:#}");
    let view = wait_ready(&api, "files", FS_READY).await;

    // Its real tools, named <server>__<tool>, read-only exactly where the server says so.
    let tools: Vec<(String, bool)> = view["status"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["read_only"].as_bool().unwrap(),
            )
        })
        .collect();
    for (name, read_only) in [
        ("files__read_text_file", true),
        ("files__list_directory", true),
        ("files__directory_tree", true),
        ("files__search_files", true),
        ("files__get_file_info", true),
        ("files__write_file", false),
        ("files__edit_file", false),
        ("files__create_directory", false),
        ("files__move_file", false),
    ] {
        assert!(
            tools.contains(&(name.to_string(), read_only)),
            "{name} read_only={read_only} in {tools:?}"
        );
    }
    assert_eq!(view["status"]["tool_count"], tools.len(), "{view:#}");
    let read = view["status"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "files__read_text_file")
        .unwrap();
    assert_eq!(read["tool"], "read_text_file", "{read:#}");
    assert_eq!(
        read["input_schema"]["properties"]["path"]["type"], "string",
        "the server's schema is passed through: {read:#}"
    );

    let bot = api.bot("Reader").await;
    let d = api.direct(bot).await;
    api.say(d, FILES_LINE).await;
    let line = wait_until("the Bot reports what it read", || async {
        api.lines(d).await.into_iter().find(|l| {
            l["author"] == "bot"
                && l["body"]
                    .as_str()
                    .is_some_and(|b| b.starts_with("Listing:"))
        })
    })
    .await;
    let body = line["body"].as_str().unwrap();

    // What the server returned reached the model: the listing's two entries, the file's text.
    let asked = fake.of("Reader");
    let last = asked.last().unwrap();
    let results = tool_results(last);
    assert_eq!(results.len(), 2, "{results:#?}");
    assert_eq!(results[0].0, "files__list_directory");
    let entries: BTreeSet<&str> = results[0].1.lines().collect();
    assert_eq!(
        entries,
        BTreeSet::from(["[DIR] sub", "[FILE] hello.txt"]),
        "{results:#?}"
    );
    assert_eq!(results[1], ("files__read_text_file".into(), HELLO.into()));
    // … and, quoted by the Bot, the conversation.
    assert_eq!(
        body,
        format!("Listing:\n{}\nFile:\n{HELLO}", results[0].1),
        "{line:#}"
    );

    // The turn's MCP calls: both, read-only, ok, timed, with what the server said.
    // The Bot's line is posted before its turn is recorded as ended.
    let turn = wait_until("the Bot's turn ends", || async {
        api.turns(d)
            .await
            .into_iter()
            .find(|t| t["bot_id"] == bot && t["status"] != "running")
    })
    .await;
    assert_eq!(turn["status"], "completed", "{turn:#}");
    let calls = api
        .list(&format!("/v1/turns/{}/mcp-calls", turn["id"]))
        .await;
    assert_eq!(calls.len(), 2, "{calls:#?}");
    for (c, (tool, id)) in calls.iter().zip([
        ("list_directory", "call_list"),
        ("read_text_file", "call_read"),
    ]) {
        assert_eq!(c["server"], "files", "{c:#}");
        assert_eq!(c["tool"], tool, "{c:#}");
        assert_eq!(c["call_id"], id, "{c:#}");
        assert_eq!(c["ok"], true, "{c:#}");
        assert_eq!(c["read_only"], true, "{c:#}");
        assert!(c["error"].is_null(), "{c:#}");
        assert!(c["duration_ms"].is_u64(), "{c:#}");
    }
    assert!(
        calls[0]["result"]
            .as_str()
            .unwrap()
            .contains("[FILE] hello.txt"),
        "{calls:#?}"
    );
    assert_eq!(calls[1]["result"], HELLO, "{calls:#?}");
}
