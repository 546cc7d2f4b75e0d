//! Through a real `troupe serve`: a config file's MCP server is started at boot and shown by the
//! API, and SIGTERM ends its whole process group (issue 19 item 6), not only the server.
//!
//! Runs `target/debug/troupe` (or `$TROUPE_BIN`) and the in-repo test server beside it
//! (`cargo build -p troupe-mcp --examples`).

mod daemon_support;

use daemon_support::*;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_every_mcp_server_process_group() {
    let bin = troupe_binary();
    let server = bin
        .parent()
        .unwrap()
        .join("examples")
        .join("mcp_test_server");
    assert!(
        server.is_file(),
        "the MCP test server is not built at {}: run `cargo build -p troupe-mcp --examples` first",
        server.display()
    );
    let rig = Rig::new(|_| {});
    let pgid_file = rig.path("keeper.pgid");
    // The server's shell records its process group (its own pid: it leads the group) and
    // leaves a sleep behind in it, which outlives the server unless the group is ended.
    let script = format!(
        "echo $$ > {}; sleep 300 & exec {}",
        pgid_file.display(),
        server.display()
    );
    write_config(
        &rig.path("config.toml"),
        &[("fake", "http://127.0.0.1:9/v1")],
        &[("default", "fake")],
        &format!(
            "[mcp_servers.keeper]\ncommand = \"sh\"\nargs = [\"-c\", {}]\n",
            serde_json::to_string(&script).unwrap()
        ),
    );
    let (mut daemon, api) = rig.start();

    let view = wait_until("the config file's server is ready", || async {
        let v = api.get("/v1/mcp-servers/keeper").await;
        (v["status"]["state"] == "ready").then_some(v)
    })
    .await;
    assert_eq!(view["definition"]["command"], "sh", "{view}");
    assert!(
        view["status"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "keeper__echo"),
        "{view}"
    );
    let pgid: i32 = std::fs::read_to_string(&pgid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(group_alive(pgid), "the server's group runs");

    let pid = daemon.child.id() as i32;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = daemon.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the daemon did not exit within 30 s of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "exit {status}; log:\n{}", rig.log());
    // The group was sent its end before the daemon exited; its members may take a moment to go.
    wait_until("the server's process group is ended", || async {
        (!group_alive(pgid)).then_some(())
    })
    .await;
}
