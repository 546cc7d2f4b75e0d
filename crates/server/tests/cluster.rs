//! Several real `troupe serve` processes on one PostgreSQL database, with a fake
//! OpenAI-compatible model: a conversation's events stream in one order from any node, a stop
//! asked on one node ends the turn another node runs, and when a node is killed its turn is
//! taken over by another node after the heartbeat expiry.
//!
//! PostgreSQL only: skipped without `TROUPE_TEST_DATABASE` (failed with
//! `TROUPE_REQUIRE_POSTGRES`). Runs `target/debug/troupe` (or `$TROUPE_BIN`).

mod daemon_support;
mod sse;

use daemon_support::*;
use serde_json::{Value, json};
use sse::SseStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// "slow" starts a command that hangs; anything else is answered at once.
fn answer(req: &Value) -> String {
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or_default();
    let body = if last["role"] == "user" && last["content"].to_string().contains("slow") {
        shell_call("echo started > started.txt; exec sleep 1000")
    } else {
        text("done")
    };
    body + "data: [DONE]\n\n"
}

struct Cluster {
    nodes: Vec<Daemon>,
    /// Numbers the Bots, whose names must differ.
    bots: std::sync::atomic::AtomicUsize,
    client: reqwest::Client,
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

const CLUSTER_TOKEN: &str = "cluster-test-token";

/// `n` daemons on one fresh database, each with its own data dir, started one after another.
async fn cluster(test: &str, n: usize) -> Option<Cluster> {
    let server = troupe_store::testing::postgres_or_skip(test)?;
    let url = troupe_store::testing::fresh_postgres_database(&server).unwrap();
    let bin = troupe_binary();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let model = serve_fake_model(answer).await;
    let config = root.join("config.toml");
    write_fake_config(&config, &model, &["default"]);
    let nodes = (0..n)
        .map(|i| {
            let data = root.join(format!("node{i}"));
            let log = root.join(format!("node{i}.log"));
            // One token for every node, so one client reaches each of them.
            Daemon::start_with(
                &bin,
                &data,
                &config,
                &log,
                &["--database", &url, "--token", CLUSTER_TOKEN],
            )
        })
        .collect();
    Some(Cluster {
        nodes,
        bots: std::sync::atomic::AtomicUsize::new(0),
        client: client_with(Some(CLUSTER_TOKEN)),
        _tmp: tmp,
        root,
    })
}

impl Cluster {
    async fn conversation(&self) -> i64 {
        let n = self.bots.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let bot = post(
            &self.client,
            self.nodes[0].url("/v1/bots"),
            json!({"name": format!("Worker {n}")}),
        )
        .await;
        let session = post(
            &self.client,
            self.nodes[0].url("/v1/sessions"),
            json!({"kind": "direct", "bot_ids": [bot["id"]]}),
        )
        .await;
        session["id"].as_i64().unwrap()
    }

    async fn say(&self, node: usize, sid: i64, body: &str) {
        let url = self.nodes[node].url(&format!("/v1/sessions/{sid}/messages"));
        let r = self
            .client
            .post(&url)
            .json(&json!({"body": body}))
            .send()
            .await
            .unwrap();
        let status = r.status();
        let text = r.text().await.unwrap_or_default();
        assert!(status.is_success(), "POST {url}: {status} {text}");
    }

    fn workspace(&self, node: usize, sid: i64) -> PathBuf {
        self.root
            .join(format!("node{node}/workspaces/session-{sid}"))
    }

    /// Wait until node `node` lists a finished Bot line saying "done".
    async fn wait_for_answer(&self, node: usize, sid: i64) {
        let url = self.nodes[node].url(&format!("/v1/sessions/{sid}/messages"));
        wait_until("the Bot answers", || async {
            let lines = get(&self.client, url.clone()).await;
            lines
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["author"] == "bot" && l["body"] == "done")
                .then_some(())
        })
        .await;
    }

    fn log(&self, node: usize) -> String {
        std::fs::read_to_string(self.root.join(format!("node{node}.log"))).unwrap_or_default()
    }
}

async fn wait_for_file(path: &Path) {
    wait_until(&format!("{} exists", path.display()), || async {
        path.exists().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sse_on_any_node_sees_all_events_in_order() {
    let Some(c) = cluster("sse_on_any_node_sees_all_events_in_order", 3).await else {
        return;
    };
    let sid = c.conversation().await;
    let url = |n: usize| c.nodes[n].url(&format!("/v1/events?session_id={sid}"));
    let mut streams = Vec::new();
    for n in 0..3 {
        streams.push(SseStream::connect(&c.client, &url(n), None).await);
    }
    // Lines arrive on different nodes; each turn runs where its line arrived. Each line waits
    // for the reply to the one before: a line sent while a turn runs joins that turn instead.
    for (i, node) in [0usize, 1, 2, 1].iter().enumerate() {
        c.say(*node, sid, &format!("line {i}")).await;
        let url = c.nodes[*node].url(&format!("/v1/sessions/{sid}/messages"));
        wait_until("the reply to that line", || async {
            let lines = get(&c.client, url.clone()).await;
            let replies = lines
                .as_array()
                .unwrap()
                .iter()
                .filter(|l| l["author"] == "bot" && l["body"] == "done")
                .count();
            (replies > i).then_some(())
        })
        .await;
    }
    let replies = |m: &sse::SseMessage| {
        let v = m.json();
        let line = &v["payload"]["message"];
        line["author"] == "bot" && line["status"] == "done"
    };
    let mut seen: Vec<Vec<i64>> = Vec::new();
    for s in &mut streams {
        let mut done = 0;
        let got = s
            .until(Duration::from_secs(30), |m| {
                if m.event == "session_message" && replies(m) {
                    done += 1;
                }
                done == 4
            })
            .await;
        let ids: Vec<i64> = got.iter().filter_map(|m| m.event_id()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "in id order: {ids:?}");
        seen.push(ids);
    }
    assert_eq!(seen[0], seen[1], "node 1 streamed what node 0 did");
    assert_eq!(seen[0], seen[2], "node 2 streamed what node 0 did");
    // A client that reconnects to another node catches up from its last id there.
    let resume_at = seen[0][seen[0].len() / 2];
    let mut resumed = SseStream::connect(&c.client, &url(2), Some(&resume_at.to_string())).await;
    let first = resumed.until(Duration::from_secs(10), |_| true).await;
    let next = seen[0].iter().find(|id| **id > resume_at).copied();
    assert_eq!(
        first[0].event_id(),
        next,
        "catch-up starts right after the last id"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stop_on_other_node_ends_run() {
    let Some(c) = cluster("stop_on_other_node_ends_run", 2).await else {
        return;
    };
    let sid = c.conversation().await;
    c.say(0, sid, "run the slow build").await;
    wait_for_file(&c.workspace(0, sid).join("started.txt")).await;
    let stopped = post(
        &c.client,
        c.nodes[1].url("/v1/turns/stop"),
        json!({"session_id": sid}),
    )
    .await;
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    // The Stop is a hold (made on node 1, in force for every node), not a pause latch.
    assert!(stopped["hold_id"].is_i64(), "{stopped}");
    let view = get(&c.client, c.nodes[1].url(&format!("/v1/sessions/{sid}"))).await;
    assert!(view["paused"].is_null(), "{view:#}");
    // Node 0 was handed the run and ended its command's group; the next line lifts the hold
    // and gets an answer.
    c.say(1, sid, "are you there?").await;
    c.wait_for_answer(0, sid).await;
    assert!(!c.log(0).contains("panicked"), "{}", c.log(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn node_killed_mid_turn_work_moves() {
    let Some(mut c) = cluster("node_killed_mid_turn_work_moves", 2).await else {
        return;
    };
    let sid = c.conversation().await;
    c.say(0, sid, "run the slow build").await;
    wait_for_file(&c.workspace(0, sid).join("started.txt")).await;
    let killed = c.nodes[0].child.id();
    c.nodes[0].child.kill().unwrap();
    c.nodes[0].child.wait().unwrap();
    // Node 1 takes it over once node 0 has missed its heartbeats (10 s), not before.
    let turns_url = c.nodes[1].url(&format!("/v1/turns?session_id={sid}"));
    let turn = wait_until("node 1 ends the dead node's turn", || async {
        let turns = get(&c.client, turns_url.clone()).await;
        let t = turns.as_array().unwrap().first().cloned()?;
        (t["status"] != "running").then_some(t)
    })
    .await;
    assert_eq!(turn["status"], "interrupted", "{turn:#}");
    let nodes = get(&c.client, c.nodes[1].url("/v1/nodes")).await;
    let dead = nodes
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["pid"] == killed)
        .cloned()
        .unwrap();
    assert_eq!(dead["alive"], false);
    let took_over = dead["reaped_at"].as_i64().unwrap() - dead["heartbeat_at"].as_i64().unwrap();
    assert!(
        took_over > troupe_store::NODE_EXPIRY_MS,
        "only after the expiry: {dead:#}"
    );
    let survivor = nodes
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["this_node"] == true)
        .unwrap();
    assert_eq!(dead["reaped_by"], survivor["id"]);
    // The conversation goes on on the surviving node (a person's line takes over the latch).
    c.say(1, sid, "again, quickly").await;
    c.wait_for_answer(1, sid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_role_set_on_one_node_is_used_by_every_node() {
    let Some(c) = cluster("a_role_set_on_one_node_is_used_by_every_node", 2).await else {
        return;
    };
    let review =
        json!({"kind": "openai", "model": "reviewer-x", "base_url": "http://127.0.0.1:9/v1"});
    let r = c
        .client
        .put(c.nodes[0].url("/v1/roles/review"))
        .json(&review)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    wait_until("node 1 knows the role", || async {
        let roles = get(&c.client, c.nodes[1].url("/v1/roles")).await;
        roles
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["role"] == "review" && r["endpoint"]["model"] == "reviewer-x")
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_never_drive_one_thread() {
    let Some(c) = cluster("two_nodes_never_drive_one_thread", 3).await else {
        return;
    };
    let mut sessions = Vec::new();
    for _ in 0..15 {
        sessions.push(c.conversation().await);
    }
    // Every conversation gets a line on each node at once.
    let mut posts = Vec::new();
    for sid in &sessions {
        for node in 0..3 {
            let url = c.nodes[node].url(&format!("/v1/sessions/{sid}/messages"));
            let client = c.client.clone();
            posts.push(tokio::spawn(async move {
                let r = client
                    .post(&url)
                    .json(&json!({"body": format!("line from node {node}")}))
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success(), "POST {url}: {}", r.status());
            }));
        }
    }
    for p in posts {
        p.await.unwrap();
    }
    for sid in &sessions {
        let lines_url = c.nodes[0].url(&format!("/v1/sessions/{sid}/messages"));
        let turns_url = c.nodes[1].url(&format!("/v1/turns?session_id={sid}"));
        // A line that reaches the Bot while it works joins that turn (a steer), so three lines
        // make one to three turns; the last line is an answer once all are routed and every
        // turn has ended, so no line is left unread.
        let (lines, turns) = wait_until(
            "every line is answered and every turn has ended",
            || async {
                let lines = get(&c.client, lines_url.clone()).await;
                let turns = get(&c.client, turns_url.clone()).await;
                let lines = lines.as_array().unwrap().clone();
                let turns = turns.as_array().unwrap().clone();
                let all_ended = turns.iter().all(|t| t["ended_at"].is_i64());
                let last_is_answer = lines.last().is_some_and(|l| l["author"] == "bot");
                let routed = lines
                    .iter()
                    .filter(|l| l["author"] == "user")
                    .all(|l| l["routing"] == "routed");
                (all_ended && last_is_answer && routed && !turns.is_empty())
                    .then_some((lines, turns))
            },
        )
        .await;
        let asked = lines.iter().filter(|l| l["author"] == "user").count();
        let answers = lines
            .iter()
            .filter(|l| l["author"] == "bot" && l["status"] == "done")
            .count();
        assert_eq!(asked, 3, "session {sid}: every line stored once");
        // Steers taken at one step share an answer; a line is never answered twice.
        assert!(
            (turns.len()..=3).contains(&answers),
            "session {sid}: {answers} answers in {} turns",
            turns.len()
        );
        let mut spans: Vec<(i64, i64)> = turns
            .iter()
            .map(|t| {
                (
                    t["started_at"].as_i64().unwrap(),
                    t["ended_at"].as_i64().unwrap(),
                )
            })
            .collect();
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "session {sid}: turns overlap: {spans:?}");
        }
    }
}

/// Three nodes' timers tick every second on one database: Agenda items due at once, made on
/// different nodes, each fire once in the cluster — one firing recorded and one delivery,
/// answered once — whichever node claims them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn timer_fires_once_in_cluster() {
    let Some(c) = cluster("timer_fires_once_in_cluster", 3).await else {
        return;
    };
    let mut items = Vec::new();
    for i in 0..12 {
        let sid = c.conversation().await;
        let node = i % 3;
        let item = post(
            &c.client,
            c.nodes[node].url("/v1/agenda"),
            json!({"session_id": sid, "trigger": {"kind": "at", "at": 0},
                   "payload": format!("reminder {i}")}),
        )
        .await;
        items.push((sid, item["id"].as_i64().unwrap()));
    }
    for (sid, id) in &items {
        let item = wait_until("the item has fired", || async {
            let v = get(&c.client, c.nodes[1].url(&format!("/v1/agenda/{id}"))).await;
            (v["status"] == "done").then_some(v)
        })
        .await;
        assert_eq!(item["run_count"], 1, "item {id}: {item}");
        let url = c.nodes[2].url(&format!("/v1/sessions/{sid}/messages"));
        let lines = wait_until("the reminder is answered", || async {
            let lines = get(&c.client, url.clone()).await;
            let answered = lines
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["author"] == "bot" && l["body"] == "done");
            answered.then_some(lines)
        })
        .await;
        let answers = lines
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["author"] == "bot" && l["body"] == "done")
            .count();
        assert_eq!(
            answers, 1,
            "session {sid}: one delivery, one answer: {lines:#}"
        );
    }
    for n in 0..3 {
        assert!(!c.log(n).contains("panicked"), "{}", c.log(n));
    }
}
