//! Helpers for the MCP end-to-end tests through `troupe serve`: the in-repo MCP test server's
//! binary, one database kept across a daemon's restarts (PostgreSQL when `TROUPE_TEST_DATABASE`
//! names a server, else SQLite in the data dir), waiting for a server to be ready, and neutral
//! answers to the app's own reading calls so a fake model's script only decides the Bot's.

use super::fake::{filing_of, read_line, tagged};
use super::{Api, Daemon, Rig, chunk, text, troupe_binary, workspace_root};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The in-repo MCP test server, beside the `troupe` binary (`target/debug/examples/`); built
/// with `cargo build -p troupe-mcp --examples` when missing.
pub fn mcp_test_server() -> PathBuf {
    let bin = troupe_binary();
    let server = bin
        .parent()
        .expect("the troupe binary's directory")
        .join("examples")
        .join("mcp_test_server");
    if !server.is_file() {
        eprintln!(
            "{} is missing: running cargo build -p troupe-mcp --examples",
            server.display()
        );
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "troupe-mcp", "--examples"])
            .current_dir(workspace_root())
            .status()
            .expect("run cargo build");
        assert!(
            status.success(),
            "cargo build -p troupe-mcp --examples failed"
        );
    }
    server
}

/// The database a rig's daemon runs on, the same one on every start: a fresh PostgreSQL
/// database when `TROUPE_TEST_DATABASE` names a server, else none (SQLite in the data dir).
pub fn test_database() -> Option<String> {
    troupe_store::testing::postgres_server().map(|server| {
        troupe_store::testing::fresh_postgres_database(&server)
            .unwrap_or_else(|e| panic!("a fresh database on {server}: {e}"))
    })
}

/// `troupe serve` on the rig's data dir and `database` (see [`test_database`]), and its API.
/// It prints its address only after boot recovery is done.
pub fn start_on(rig: &Rig, database: Option<&str>) -> (Daemon, Api) {
    let extra: Vec<&str> = match database {
        Some(u) => vec!["--database", u],
        None => Vec::new(),
    };
    let d = Daemon::start_with(
        &troupe_binary(),
        &rig.path("data"),
        &rig.path("config.toml"),
        &rig.path("daemon.log"),
        &extra,
    );
    let api = Api::of(&d);
    (d, api)
}

/// The server `name`'s view once its state is `ready`; panics with its last view (state,
/// last error, stderr tail) once `within` has passed, or at once if it failed.
pub async fn wait_ready(api: &Api, name: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let v = api.get(&format!("/v1/mcp-servers/{name}")).await;
        match v["status"]["state"].as_str() {
            Some("ready") => return v,
            Some("failed") | Some("disabled") => {
                panic!("MCP server {name} did not become ready: {v:#}")
            }
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "MCP server {name} not ready within {within:?}: {v:#}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The app's own tool-free calls answered so nothing is held, stopped or filed anywhere
/// special (a line is neither stop nor go-on, done in place, no Bot reading flags anything);
/// `None` for a Bot's request.
pub fn neutral_reading(req: &Value) -> Option<String> {
    if read_line(req).is_some() {
        Some(text(r#"{"control":"neither"}"#))
    } else if filing_of(req).is_some() {
        Some(text(r#"{"belongs":"done_in_place"}"#))
    } else if tagged(req, "troupe-reader:bot") {
        Some(text(
            r#"{"restates":false,"still_going":null,"claims_run":false,"nothing_to_do":false,"bare_status":false,"asks_ok_only":false}"#,
        ))
    } else if tagged(req, "troupe-judgement") {
        Some(text(r#"{"join":false}"#))
    } else {
        None
    }
}

/// A streamed answer calling tool `name` with `args` under the call id `id` (each call of a
/// turn gets its own, as a real model's do).
pub fn tool_call_as(id: &str, name: &str, args: &Value) -> String {
    let mut s = chunk(json!({"role": "assistant", "content": null}), None);
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]}),
        None,
    );
    s += &chunk(json!({}), Some("tool_calls"));
    s
}

/// The live children of `parent` running the program `exe`, from /proc.
pub fn children_running(parent: i32, exe: &Path) -> Vec<i32> {
    let want = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // "pid (comm) S ppid …": comm may hold spaces, so split after the last ')'.
            let ppid = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.split(' ').nth(1))
                .and_then(|p| p.parse::<i32>().ok());
            ppid == Some(parent)
                && std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p == want)
        })
        .filter(|pid| super::process_alive(*pid))
        .collect()
}

/// An executable file named `name` in a directory of `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
