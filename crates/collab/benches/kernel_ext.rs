//! What the collaboration layer's extensions cost the kernel on threads that are not a Bot's
//! work (child tasks, pipeline operators): N plain threads, each one task of M effectful steps
//! (a `write_file` per step, through the guards and the effect ledger) then a text answer, on a
//! scripted zero-latency model; the same engine built without and with `troupe_collab::extend`
//! (run observer, work slots, desk guard, ending hook, situation), interleaved `--repeat` times.
//! A SQLite file at `full` durability.
//!
//! cargo bench -p troupe-collab --bench kernel_ext -- [--threads 200] [--steps 10] [--repeat 3]

use std::sync::Arc;
use std::time::Instant;
use troupe_collab::{Collab, SharedRoles};
use troupe_core::inbox::Delivery;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_engine::models::FixedModel;
use troupe_engine::{Engine, RoleTable};
use troupe_llm::{RetryPolicy, Script, ScriptStep, ScriptedProvider};
use troupe_store::NewThread;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn run(threads: usize, steps: usize, with_collab: bool) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::Store::open(
        dir.path().join("troupe.db"),
        Arc::new(troupe_core::SystemClock),
    )
    .unwrap();
    let mut script: Vec<ScriptStep> = (0..steps)
        .map(|i| {
            ScriptStep::text("").with_tool_call(
                "write_file",
                format!(r#"{{"path":"f{i}.txt","content":"x"}}"#),
            )
        })
        .collect();
    script.push(ScriptStep::text("done"));
    let model = Arc::new(FixedModel {
        provider: Arc::new(ScriptedProvider::new(Script::new("bench", script))),
        retry: RetryPolicy::none(),
    });
    let mut builder = Engine::builder(store, model);
    let host = troupe_collab::tools::ToolHost::new();
    if with_collab {
        builder = troupe_collab::extend(builder, &host).unwrap();
    }
    let engine = builder.build();
    if with_collab {
        let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
        let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
        let collab = Collab::new(engine.clone(), roles, dir.path().join("workspaces"));
        host.attach(&collab);
    }
    let mut ids = Vec::with_capacity(threads);
    for i in 0..threads {
        let ws = dir.path().join(format!("t{i}"));
        std::fs::create_dir_all(&ws).unwrap();
        let t = engine
            .store()
            .write(|tx| {
                tx.create_thread(&NewThread {
                    workspace_root: None,
                    parent_id: None,
                    title: format!("t{i}"),
                    agent: AgentBinding::new("bench", "be brief"),
                    workspace: ws.display().to_string(),
                    interaction: Interaction::Unattended,
                })
            })
            .unwrap()
            .id;
        ids.push(t);
    }
    let began = Instant::now();
    let mut drives = Vec::new();
    for t in &ids {
        let engine = engine.clone();
        let t = *t;
        drives.push(tokio::spawn(async move {
            engine.deliver(t, Delivery::user_task("go")).await.unwrap();
            engine.wait_idle(t).await;
        }));
    }
    for d in drives {
        d.await.unwrap();
    }
    let secs = began.elapsed().as_secs_f64();
    let effects = engine
        .store()
        .read(|tx| tx.effects_for_thread(ids[0]))
        .unwrap()
        .len();
    assert_eq!(effects, steps, "every step's effect ran");
    (threads * (steps + 1)) as f64 / secs
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let threads = arg("--threads", 200);
    let steps = arg("--steps", 10);
    let repeat = arg("--repeat", 3);
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for _ in 0..repeat {
        off.push(run(threads, steps, false).await);
        on.push(run(threads, steps, true).await);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let (off, on) = (median(&mut off), median(&mut on));
    println!(
        "result bench=kernel_ext threads={threads} steps={steps} repeat={repeat} off_steps_per_s={off:.0} on_steps_per_s={on:.0} change={:+.1}%",
        (on / off - 1.0) * 100.0
    );
}
