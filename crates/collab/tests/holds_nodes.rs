//! A hold across nodes (HOLD-4 with several daemons on one PostgreSQL database): the node
//! that makes the hold records the stop in its write; the run itself lives on another node,
//! which is handed the stop and cancels the model stream and ends the command's process
//! group. Only PostgreSQL has nodes: without one this skips (with TROUPE_REQUIRE_POSTGRES set,
//! it fails).

mod support;

use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use troupe_collab::holds::{HoldRequest, ScopeRequest};
use troupe_collab::{Collab, NewBotRequest, NewSessionRequest, SharedRoles};
use troupe_core::hold::HoldStatus;
use troupe_core::run::RunStatus;
use troupe_engine::{Engine, EngineConfig, RoleTable};
use troupe_store::{OpenOptions, Store, testing};

/// One daemon of the cluster: the conversation layer on its own engine and store.
struct Node {
    collab: Collab,
    shutdown: CancellationToken,
}

fn node(url: &str, id: &str, workspaces: &std::path::Path) -> Node {
    let store = Store::open_url(
        url,
        Arc::new(troupe_core::SystemClock),
        OpenOptions::default(),
    )
    .unwrap();
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = troupe_collab::tools::ToolHost::new();
    let builder = Engine::builder(store, roles.clone()).config(EngineConfig {
        boot_id: id.into(),
        kill_grace: Duration::from_millis(500),
        ..EngineConfig::default()
    });
    let engine = troupe_collab::extend(builder, &host).unwrap().build();
    engine.register_node(None).unwrap();
    let shutdown = CancellationToken::new();
    engine.spawn_node_tasks(shutdown.clone());
    let collab = Collab::new(engine, roles, workspaces.to_path_buf());
    host.attach(&collab);
    Node { collab, shutdown }
}

fn alive(pid: i32) -> bool {
    // A zombie is gone for this purpose: it runs nothing.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_made_on_one_node_ends_the_turn_another_node_runs() {
    let test = "a_hold_made_on_one_node_ends_the_turn_another_node_runs";
    let Some(server) = testing::postgres_or_skip(test) else {
        return;
    };
    let url = testing::fresh_postgres_database(&server).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspaces = dir.path().join("workspaces");
    let a = node(&url, "node-a", &workspaces);
    let b = node(&url, "node-b", &workspaces);

    // The Bot's command says who it is and would run for half a minute.
    let script = dir.path().join("worker.json");
    std::fs::write(
        &script,
        r#"{"steps":[
            {"tool_calls":[{"name":"shell","arguments":{"command":"echo $$ > pid; exec sleep 30"}}]},
            {"text":"finished"}]}"#,
    )
    .unwrap();
    let bot = a
        .collab
        .create_bot(NewBotRequest {
            name: "Worker".into(),
            persona: None,
            endpoint: Some(troupe_core::thread::EndpointSpec {
                kind: "scripted".into(),
                base_url: None,
                model: "worker-model".into(),
                api_key_env: None,
                script: Some(script.display().to_string()),
                takes_pictures: false,
                thinking_levels: Vec::new(),
                max_output_tokens: None,
            }),
        })
        .unwrap()
        .id;
    let s = a
        .collab
        .create_session(NewSessionRequest {
            workspace: None,
            kind: "direct".into(),
            bot_ids: vec![bot],
            title: None,
        })
        .unwrap()
        .session
        .id;
    let t = a.collab.direct_thread(s).unwrap();

    // Node B takes the line and runs the turn.
    b.collab.post_line(s, "run it".into(), None).await.unwrap();
    let workspace =
        std::path::PathBuf::from(b.collab.store().read(|tx| tx.thread(t)).unwrap().workspace);
    let pid: i32 = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Some(p) = std::fs::read_to_string(workspace.join("pid"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                return p;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the command started on node B");
    let run = b
        .collab
        .store()
        .read(|tx| tx.thread(t))
        .unwrap()
        .lease
        .holder
        .expect("node B holds the thread");
    let owner = b.collab.store().read(|tx| tx.run(run)).unwrap().owner_boot;
    assert_eq!(owner, "node-b");
    assert!(b.collab.engine().is_running(t) && !a.collab.engine().is_running(t));

    // Node A stops all of the Bot's work.
    let (hold, created) = a
        .collab
        .post_hold(HoldRequest {
            scope: ScopeRequest {
                kind: "bot".into(),
                bot_id: Some(bot),
                session_id: None,
                task_id: None,
                ticket_id: None,
                turn_id: None,
            },
            session_id: None,
            action: None,
        })
        .await
        .unwrap();
    assert!(created);
    // A's write ended the turn: recorded stopped, and on the hold as what it stopped.
    assert_eq!(
        a.collab.store().read(|tx| tx.run(run)).unwrap().status,
        RunStatus::Stopped
    );
    let stopped: Vec<_> = hold
        .hold
        .effect
        .stopped_turns
        .iter()
        .map(|s| s.run_id)
        .collect();
    assert_eq!(stopped, vec![run]);

    // Node B was handed the stop: its loop ends and the command's group is gone, long
    // before the command's 30 s.
    tokio::time::timeout(Duration::from_secs(10), b.collab.engine().wait_idle(t))
        .await
        .expect("node B's loop ended");
    tokio::time::timeout(Duration::from_secs(10), async {
        while alive(pid) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the command's process ended");

    // The stop stays the hold's: the turn is still stopped, the hold in force, no turn after.
    assert_eq!(
        b.collab.store().read(|tx| tx.run(run)).unwrap().status,
        RunStatus::Stopped
    );
    assert_eq!(
        b.collab.hold(hold.hold.id).unwrap().hold.status,
        HoldStatus::InForce
    );
    let runs = b
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(t, 10))
        .unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    a.shutdown.cancel();
    b.shutdown.cancel();
}
