//! Several nodes on one PostgreSQL database, each an engine with its own store: a thread runs on
//! one node at a time, a stop asked on one node ends a run held by another, and a node that stops
//! beating has its runs taken over. These only mean something on PostgreSQL and skip (or, with
//! TROUPE_REQUIRE_POSTGRES set, fail) without one.

mod support;

use std::sync::Arc;
use std::time::Duration;
use support::{QueueProvider, Reply};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use troupe_core::inbox::Delivery;
use troupe_core::message::Role;
use troupe_core::run::RunStatus;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{ManualClock, ThreadId};
use troupe_engine::models::FixedModel;
use troupe_engine::{Engine, EngineConfig, StopMode};
use troupe_llm::RetryPolicy;
use troupe_store::{NODE_EXPIRY_MS, NewThread, OpenOptions, Store, testing};

struct Node {
    engine: Engine,
    provider: Arc<QueueProvider>,
    shutdown: CancellationToken,
}

struct Cluster {
    nodes: Vec<Node>,
    clock: ManualClock,
    _dir: tempfile::TempDir,
    workspace: String,
}

/// `n` nodes on one fresh database, each registered, with its node tasks running unless
/// `tasks` is false (a node that stops beating).
fn cluster(test: &str, n: usize) -> Option<Cluster> {
    let server = testing::postgres_or_skip(test)?;
    let url = testing::fresh_postgres_database(&server).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let clock = ManualClock::new(1_700_000_000_000);
    let nodes = (0..n)
        .map(|i| {
            let store =
                Store::open_url(&url, Arc::new(clock.clone()), OpenOptions::default()).unwrap();
            let provider = QueueProvider::new(vec![]);
            let models = Arc::new(FixedModel {
                provider: provider.clone(),
                retry: RetryPolicy::none(),
            });
            let config = EngineConfig {
                kill_grace: Duration::from_millis(300),
                boot_id: format!("node-{i}"),
                ..Default::default()
            };
            let engine = Engine::builder(store, models).config(config).build();
            engine.register_node(None).unwrap();
            Node {
                engine,
                provider,
                shutdown: CancellationToken::new(),
            }
        })
        .collect();
    Some(Cluster {
        nodes,
        clock,
        _dir: dir,
        workspace: workspace.display().to_string(),
    })
}

impl Cluster {
    fn thread(&self, interaction: Interaction) -> ThreadId {
        self.nodes[0]
            .engine
            .create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: "t".into(),
                agent: AgentBinding::new("tester", "You are a test agent."),
                workspace: self.workspace.clone(),
                interaction,
            })
            .unwrap()
            .id
    }
    fn store(&self) -> &Store {
        self.nodes[0].engine.store()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_on_other_node_ends_run() {
    let Some(c) = cluster("stop_on_other_node_ends_run", 2) else {
        return;
    };
    for n in &c.nodes {
        n.engine.spawn_node_tasks(n.shutdown.clone());
    }
    let (a, b) = (&c.nodes[0], &c.nodes[1]);
    let started = Arc::new(Notify::new());
    b.provider.push(Reply::Hang {
        partial: "half an answ".into(),
        started: started.clone(),
    });
    let t = c.thread(Interaction::Interactive);
    b.engine
        .deliver(t, Delivery::user_task("think long"))
        .await
        .unwrap();
    started.notified().await;
    assert!(b.engine.is_running(t) && !a.engine.is_running(t));

    let asked = std::time::Instant::now();
    let record = a.engine.stop(t, StopMode::User).await.unwrap();
    let took = asked.elapsed();
    assert_eq!(record.status, RunStatus::Stopped);
    // B ended it as a local stop: its loop is gone and the partial reply is the breakpoint.
    tokio::time::timeout(Duration::from_secs(5), b.engine.wait_idle(t))
        .await
        .expect("node B's loop ends");
    let messages = c.store().read(|tx| tx.messages(t, None, 100)).unwrap();
    let last = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert!(
        format!("{:?}", last.parts).contains("half an answ"),
        "{last:?}"
    );
    let paused = c.store().read(|tx| tx.thread(t)).unwrap().paused;
    assert!(paused.is_some(), "a person's stop latches the thread");
    // Reported, not asserted as a timing rule: the budget is PERFORMANCE.md's to measure.
    eprintln!("stop across nodes took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_never_drive_one_thread() {
    let Some(c) = cluster("two_nodes_never_drive_one_thread", 3) else {
        return;
    };
    let threads: Vec<ThreadId> = (0..500)
        .map(|_| c.thread(Interaction::Unattended))
        .collect();
    for t in &threads {
        c.store()
            .write(|tx| tx.deliver(*t, &Delivery::user_task("answer once")))
            .unwrap();
    }
    // Every node tries to drive every thread at once.
    let mut drives = Vec::new();
    for n in &c.nodes {
        for t in &threads {
            let (engine, t) = (n.engine.clone(), *t);
            drives.push(tokio::spawn(async move {
                engine.request_drive(t, "test", false).await
            }));
        }
    }
    for d in drives {
        d.await.unwrap().unwrap();
    }
    for n in &c.nodes {
        for t in &threads {
            n.engine.wait_idle(*t).await;
        }
    }
    for t in &threads {
        let runs = c.store().read(|tx| tx.runs_for_thread(*t, 100)).unwrap();
        let mut spans: Vec<(i64, i64)> = runs
            .iter()
            .map(|r| (r.started_at, r.ended_at.expect("every run ended")))
            .collect();
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "thread {t}: runs overlap: {spans:?}");
        }
        let messages = c.store().read(|tx| tx.messages(*t, None, 100)).unwrap();
        let roots = messages.iter().filter(|m| m.is_root).count();
        let answers = messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        assert_eq!(
            (roots, answers),
            (1, 1),
            "thread {t}: the task answered exactly once"
        );
    }
    let calls: usize = c.nodes.iter().map(|n| n.provider.calls()).sum();
    assert_eq!(
        calls,
        threads.len(),
        "one model call per task across the cluster"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_killed_mid_turn_work_moves() {
    let Some(c) = cluster("node_killed_mid_turn_work_moves", 2) else {
        return;
    };
    let (a, b) = (&c.nodes[0], &c.nodes[1]);
    let threads: Vec<ThreadId> = (0..50).map(|_| c.thread(Interaction::Unattended)).collect();
    for t in &threads {
        let started = Arc::new(Notify::new());
        b.provider.push(Reply::Hang {
            partial: "mid-turn".into(),
            started: started.clone(),
        });
        b.engine
            .deliver(*t, Delivery::user_task("work"))
            .await
            .unwrap();
        started.notified().await;
        // The next task waits in the inbox behind the live turn.
        b.engine
            .deliver(*t, Delivery::user_task("next"))
            .await
            .unwrap();
    }
    // B stops beating (its node tasks never ran); within the expiry A leaves it alone.
    c.clock.advance(NODE_EXPIRY_MS);
    let early = a.engine.node_tick().await.unwrap();
    assert!(
        early.reaped.is_empty(),
        "never while it may still be writing"
    );
    c.clock.advance(1);
    let tick = a.engine.node_tick().await.unwrap();
    assert_eq!(tick.reaped, vec!["node-1".to_string()]);
    assert_eq!(tick.recovery.interrupted_runs.len(), threads.len());
    for t in &threads {
        a.engine.wait_idle(*t).await;
        // Newest first: A took the waiting task and answered it; B's run was cut.
        let runs = c.store().read(|tx| tx.runs_for_thread(*t, 10)).unwrap();
        assert_eq!(runs.len(), 2, "thread {t}: {runs:?}");
        assert_eq!(
            (runs[1].owner_boot.as_str(), runs[1].status),
            ("node-1", RunStatus::Interrupted)
        );
        assert_eq!(
            (runs[0].owner_boot.as_str(), runs[0].status),
            ("node-0", RunStatus::Completed)
        );
        let messages = c.store().read(|tx| tx.messages(*t, None, 100)).unwrap();
        assert_eq!(
            messages.iter().filter(|m| m.is_root).count(),
            2,
            "no task lost or doubled"
        );
        assert!(c.store().read(|tx| tx.inbox(*t)).unwrap().is_empty());
    }
    assert_eq!(
        a.provider.calls(),
        threads.len(),
        "A answered each waiting task once"
    );
    // B learns at its next heartbeat that it was taken over.
    assert!(b.engine.node_tick().await.unwrap().taken_over);
    let record = c.store().read(|tx| tx.node("node-1")).unwrap().unwrap();
    assert_eq!(record.reaped_by.as_deref(), Some("node-0"));
}
