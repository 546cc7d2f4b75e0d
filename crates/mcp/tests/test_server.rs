//! The in-repo MCP test server (examples/mcp_test_server) behaves as its tests rely on,
//! checked through the official SDK's client over real stdio pipes and real HTTP.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::Arc,
    time::Duration,
};

use rmcp::{
    ClientHandler, RoleClient, ServiceExt,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ContentBlock,
        JsonObject, PaginatedRequestParams,
    },
    service::{NotificationContext, PeerRequestOptions, RunningService},
    transport::StreamableHttpClientTransport,
};
use serde_json::json;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
    sync::Notify,
};

/// Long enough for a loaded 2-core machine, short enough that a broken test fails visibly.
const PATIENCE: Duration = Duration::from_secs(20);

/// The example binary `cargo test` builds next to this test's own binary.
fn server_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its own path");
    let debug_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binaries live in target/<profile>/deps");
    let binary = debug_dir.join("examples").join("mcp_test_server");
    assert!(
        binary.exists(),
        "{} is missing: build it with `cargo build -p troupe-mcp --examples`",
        binary.display()
    );
    binary
}

/// A client that wakes a waiter on every `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct ListWatcher {
    changed: Arc<Notify>,
}

impl ClientHandler for ListWatcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

struct StdioServer {
    child: Child,
    client: RunningService<RoleClient, ListWatcher>,
    watcher: ListWatcher,
}

async fn start_stdio(env: &[(&str, &str)]) -> StdioServer {
    let mut command = Command::new(server_binary());
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("the test server starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stdin = child.stdin.take().expect("stdin is piped");
    let watcher = ListWatcher::default();
    let client = tokio::time::timeout(PATIENCE, watcher.clone().serve((stdout, stdin)))
        .await
        .expect("the MCP handshake finishes in time")
        .expect("the MCP handshake succeeds");
    StdioServer {
        child,
        client,
        watcher,
    }
}

fn call(name: &str, arguments: serde_json::Value) -> CallToolRequestParams {
    let arguments: JsonObject = serde_json::from_value(arguments).expect("arguments are an object");
    CallToolRequestParams::new(name.to_string()).with_arguments(arguments)
}

fn only_text(result: &CallToolResult) -> &str {
    match result.content.as_slice() {
        [ContentBlock::Text(text)] => &text.text,
        other => panic!("expected one text part, got {other:?}"),
    }
}

/// Waits until `path` holds the line `line`, reading the file as the server appends to it.
async fn wait_for_line(path: &Path, line: &str) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().any(|l| l == line) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} never got the line {line:?}; it holds {text:?}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn lists_every_tool_with_its_read_only_hint_and_no_resources_or_prompts() {
    let server = start_stdio(&[]).await;
    let info = server
        .client
        .peer_info()
        .expect("the server introduced itself");
    let tools_capability = info.capabilities.tools.as_ref().expect("tools offered");
    assert_eq!(tools_capability.list_changed, Some(true));
    assert!(info.capabilities.resources.is_none());
    assert!(info.capabilities.prompts.is_none());

    let tools = server.client.list_all_tools().await.expect("tools/list");
    let listed: Vec<(String, Option<bool>)> = tools
        .iter()
        .map(|tool| {
            let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint);
            (tool.name.to_string(), read_only)
        })
        .collect();
    let expected = [
        ("echo", Some(true)),
        ("add", Some(true)),
        ("write_note", None),
        ("slow", None),
        ("fail", Some(true)),
        ("exit_now", None),
        ("freeze", None),
        ("picture", Some(true)),
        ("env_names", Some(true)),
        ("big", Some(true)),
        ("unlock", Some(true)),
    ]
    .map(|(name, hint)| (name.to_string(), hint));
    assert_eq!(listed, expected);
}

#[tokio::test]
async fn many_tools_come_in_pages_of_ten() {
    let server = start_stdio(&[("MCP_TEST_MANY_TOOLS", "25")]).await;
    let mut sizes = Vec::new();
    let mut names = Vec::new();
    let mut cursor = None;
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor.take());
        let page = server.client.list_tools(Some(params)).await.expect("page");
        sizes.push(page.tools.len());
        names.extend(page.tools.into_iter().map(|tool| tool.name.to_string()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(sizes, [10, 10, 10, 6]);
    assert_eq!(names.len(), 36);
    assert_eq!(names.last().map(String::as_str), Some("t24"));
    let t7 = server
        .client
        .call_tool(call("t7", json!({"text": "seven"})))
        .await
        .expect("t7 answers");
    assert_eq!(only_text(&t7), "seven");
}

#[tokio::test]
async fn echo_answers_and_fail_is_an_error_result() {
    let server = start_stdio(&[]).await;
    let echoed = server
        .client
        .call_tool(call("echo", json!({"text": "hello there"})))
        .await
        .expect("echo answers");
    assert_eq!(echoed.is_error, Some(false));
    assert_eq!(only_text(&echoed), "hello there");

    let failed = server
        .client
        .call_tool(call("fail", json!({})))
        .await
        .expect("fail answers with a result, not a protocol error");
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(only_text(&failed), "it failed on purpose");

    let picture = server
        .client
        .call_tool(call("picture", json!({})))
        .await
        .expect("picture answers");
    assert!(
        matches!(picture.content.as_slice(), [ContentBlock::Image(image), ContentBlock::Text(_)] if image.mime_type == "image/png"),
        "picture gives an image and a text part: {:?}",
        picture.content
    );
}

#[tokio::test]
async fn write_note_appends_one_line_per_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    let notes = dir.path().join("notes");
    let notes_text = notes.to_str().expect("utf-8 path");
    let server = start_stdio(&[("MCP_TEST_NOTES", notes_text)]).await;
    for text in ["first", "second"] {
        let result = server
            .client
            .call_tool(call("write_note", json!({"text": text})))
            .await
            .expect("write_note answers");
        assert_eq!(only_text(&result), "noted");
    }
    assert_eq!(
        std::fs::read_to_string(&notes).expect("notes written"),
        "first\nsecond\n"
    );
}

#[tokio::test]
async fn slow_records_the_clients_cancellation() {
    let dir = tempfile::tempdir().expect("temp dir");
    let events = dir.path().join("events");
    let server = start_stdio(&[("MCP_TEST_EVENTS", events.to_str().expect("utf-8 path"))]).await;
    let request =
        ClientRequest::CallToolRequest(CallToolRequest::new(call("slow", json!({"secs": 300}))));
    let handle = server
        .client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .expect("slow is sent");
    let id = handle.id.clone();
    wait_for_line(&events, "started slow").await;
    handle
        .cancel(Some("test gave up".into()))
        .await
        .expect("notifications/cancelled is sent");
    wait_for_line(&events, &format!("cancelled {id}")).await;
}

#[tokio::test]
async fn unlock_adds_late_tool_and_announces_it() {
    let server = start_stdio(&[]).await;
    let before = server.client.list_all_tools().await.expect("tools/list");
    assert!(before.iter().all(|tool| tool.name != "late_tool"));

    let unlocked = server
        .client
        .call_tool(call("unlock", json!({})))
        .await
        .expect("unlock answers");
    assert_eq!(only_text(&unlocked), "unlocked late_tool");
    tokio::time::timeout(PATIENCE, server.watcher.changed.notified())
        .await
        .expect("notifications/tools/list_changed arrives");

    let after = server.client.list_all_tools().await.expect("tools/list");
    assert!(after.iter().any(|tool| tool.name == "late_tool"));
    let late = server
        .client
        .call_tool(call("late_tool", json!({})))
        .await
        .expect("late_tool answers");
    assert_eq!(only_text(&late), "late");
}

#[tokio::test]
async fn exit_now_ends_the_process_with_code_3_and_no_answer() {
    let mut server = start_stdio(&[]).await;
    let answer = server.client.call_tool(call("exit_now", json!({}))).await;
    assert!(answer.is_err(), "exit_now must not answer: {answer:?}");
    let status = tokio::time::timeout(PATIENCE, server.child.wait())
        .await
        .expect("the server exits")
        .expect("exit status");
    assert_eq!(status.code(), Some(3));
}

#[tokio::test]
async fn told_to_fail_it_exits_2_before_speaking_mcp() {
    let output = Command::new(server_binary())
        .env("MCP_TEST_FAIL_START", "1")
        .env("MCP_TEST_STDERR", "a line for the tail")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("the test server runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty(), "nothing on stdout: {output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "a line for the tail\ncannot start: told to fail\n"
    );
}

#[tokio::test]
async fn http_mode_announces_its_address_and_adds() {
    let mut child = Command::new(server_binary())
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the test server starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
    let line = tokio::time::timeout(PATIENCE, lines.next_line())
        .await
        .expect("the address line comes in time")
        .expect("stdout readable")
        .expect("one line before stdout ends");
    let url = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );

    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = StreamableHttpClientTransport::from_uri(url.to_string());
    let client = tokio::time::timeout(PATIENCE, ().serve(transport))
        .await
        .expect("the MCP handshake finishes in time")
        .expect("the MCP handshake succeeds");
    let sum = client
        .call_tool(call("add", json!({"a": 40, "b": 2})))
        .await
        .expect("add answers");
    assert_eq!(only_text(&sum), "42");
    client.cancel().await.expect("the client closes");
}
