//! A stop asked on one node for a turn another node runs (issue 11: it reaches that node within
//! 100 ms and ends the turn there as if it were local). Two real `troupe serve` processes on one
//! PostgreSQL database and a fake OpenAI-compatible model. Each sample starts a turn on node 0
//! whose command hangs (`sleep`), waits until the command runs, then sends `POST
//! /v1/turns/stop` to node 1 (remote) or to node 0 itself (local, for comparison; the two
//! alternate). Measured: the stop's response time; from the request to the turn's end as stored
//! (`ended_at`, the same machine clock, 1 ms resolution); and from the request to the moment
//! the command's process is gone on node 0 (polled in `/proc` every millisecond): the stop has
//! then reached node 0 and node 0 has acted on it.
//!
//! ```text
//! cargo build --release -p troupe-cli
//! TROUPE_BIN=target/release/troupe cargo bench -p troupe-server --bench cluster_stop -- \
//!     --database postgres://… [--samples 20]
//! ```
//!
//! Without `--database` (or `TROUPE_TEST_DATABASE`) it says so and does nothing, as a test
//! without PostgreSQL skips.

#[path = "../tests/daemon_support/mod.rs"]
mod daemon_support;

use daemon_support::{
    Daemon, client_with, get, post, serve_fake_model, shell_call, text, troupe_binary,
    write_fake_config,
};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const TOKEN: &str = "cluster-stop-bench";

/// "slow" starts a command that hangs; anything else is answered at once.
fn answer(req: &Value) -> String {
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or_default();
    let body = if last["role"] == "user" && last["content"].to_string().contains("slow") {
        shell_call("echo $$ > pid.txt; echo started > started.txt; exec sleep 1000")
    } else {
        text("done")
    };
    body + "data: [DONE]\n\n"
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Poll every 2 ms until `f` yields, for at most 30 s.
async fn poll<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn load1() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = arg("--database").or_else(|| std::env::var("TROUPE_TEST_DATABASE").ok());
    let Some(server) = server else {
        eprintln!("cluster_stop: skipped, no --database postgres://… (nor TROUPE_TEST_DATABASE)");
        return;
    };
    // Without `--bench` (as `cargo test --benches` runs it) a smoke run of two samples.
    let bench = std::env::args().any(|a| a == "--bench");
    let samples: usize = match arg("--samples") {
        Some(n) => n.parse().expect("--samples takes a number"),
        None if bench => 20,
        None => 2,
    };
    let url = troupe_store::testing::fresh_postgres_database(&server).expect("a fresh database");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let model = serve_fake_model(answer).await;
    let config = root.join("config.toml");
    write_fake_config(&config, &model, &["default"]);
    let bin = troupe_binary();
    let nodes: Vec<Daemon> = (0..2)
        .map(|i| {
            Daemon::start_with(
                &bin,
                &root.join(format!("node{i}")),
                &config,
                &root.join(format!("node{i}.log")),
                &["--database", &url, "--token", TOKEN],
            )
        })
        .collect();
    let client = client_with(Some(TOKEN));

    // (response, ended, command gone) in ms from the request.
    let mut remote: Vec<(f64, f64, f64)> = Vec::new();
    let mut local: Vec<(f64, f64, f64)> = Vec::new();
    for i in 0..samples + 1 {
        let bot = post(
            &client,
            nodes[0].url("/v1/bots"),
            json!({"name": format!("Worker {i}")}),
        )
        .await;
        let session = post(
            &client,
            nodes[0].url("/v1/sessions"),
            json!({"kind": "direct", "bot_ids": [bot["id"]]}),
        )
        .await;
        let sid = session["id"].as_i64().unwrap();
        post(
            &client,
            nodes[0].url(&format!("/v1/sessions/{sid}/messages")),
            json!({"body": "run the slow build"}),
        )
        .await;
        let started = root.join(format!("node0/workspaces/session-{sid}/started.txt"));
        poll("the command runs", || async { started_file(&started) }).await;
        let pid: u32 = std::fs::read_to_string(started.with_file_name("pid.txt"))
            .expect("the command wrote its pid")
            .trim()
            .parse()
            .expect("a pid");
        // The first sample is a warm-up; then remote and local alternate.
        let via = if i % 2 == 1 { 1 } else { 0 };
        let t0 = now_ms();
        let clock = Instant::now();
        let stop = post(
            &client,
            nodes[via].url("/v1/turns/stop"),
            json!({"session_id": sid}),
        )
        .await;
        let response_ms = clock.elapsed().as_secs_f64() * 1e3;
        let gone = tokio::task::spawn_blocking(move || {
            let deadline = Instant::now() + Duration::from_secs(30);
            while alive(pid) {
                assert!(Instant::now() < deadline, "the command outlived its stop");
                std::thread::sleep(Duration::from_millis(1));
            }
            clock.elapsed().as_secs_f64() * 1e3
        })
        .await
        .unwrap();
        let turn = stop["id"]
            .as_i64()
            .expect("the stopped turn (flattened into the answer)");
        let turn_url = nodes[0].url(&format!("/v1/turns/{turn}"));
        let ended_at = poll("the turn ends on node 0", || async {
            get(&client, turn_url.clone()).await["ended_at"].as_i64()
        })
        .await;
        let ended_ms = (ended_at - t0) as f64;
        if i == 0 {
            continue;
        }
        if via == 1 {
            remote.push((response_ms, ended_ms, gone));
        } else {
            local.push((response_ms, ended_ms, gone));
        }
    }

    for (name, rows) in [("remote", remote), ("local", local)] {
        let mut response: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let mut ended: Vec<f64> = rows.iter().map(|r| r.1).collect();
        let mut gone: Vec<f64> = rows.iter().map(|r| r.2).collect();
        response.sort_by(|a, b| a.total_cmp(b));
        ended.sort_by(|a, b| a.total_cmp(b));
        gone.sort_by(|a, b| a.total_cmp(b));
        println!(
            "result bench=cluster_stop stop_on={name} samples={} response_p50_ms={:.1} response_p99_ms={:.1} ended_p50_ms={:.0} ended_max_ms={:.0} gone_p50_ms={:.1} gone_max_ms={:.1} load1={}",
            rows.len(),
            quantile(&response, 0.5),
            quantile(&response, 0.99),
            quantile(&ended, 0.5),
            ended.last().copied().unwrap_or(f64::NAN),
            quantile(&gone, 0.5),
            gone.last().copied().unwrap_or(f64::NAN),
            load1(),
        );
    }
}

/// Whether the process runs (a zombie, ended but not yet reaped, does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after_name = stat.rsplit_once(')')?.1;
            after_name
                .split_whitespace()
                .next()
                .map(|state| state != "Z")
        })
        .unwrap_or(false)
}

fn started_file(path: &Path) -> Option<()> {
    path.exists().then_some(())
}
