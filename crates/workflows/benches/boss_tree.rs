//! Boss Mode's tree on a large tree (issue 18): a root with 1,000 workers, then, per iteration,
//! (a) the subtree read the tree route and `boss_status` make (`BossService::tree`) and (b) the
//! root's `<boss-context>` with its live `<boss-tree>`, as a root's model call gets it (the
//! workflow projection's `contribute`, which reads the slot and the tree and renders it).
//! p50, p99 and max over the iterations are printed.
//!
//! The tree is made through the real service on a real engine and a SQLite file opened as the
//! daemon opens it (`Store::open`, durability `full`): 10 direct workers, each with 9 workers,
//! each of those with 10 (10 + 90 + 900 = 1,000, depth 3), every one spawned with
//! `BossService::spawn`. Then every worker gets one task through `BossService::assign` (which
//! wakes it); the Bots' model is a scripted endpoint whose rule answers an assignment with a
//! `boss_report`, so every worker runs one task, reports, and its parent runs a turn on the
//! report. Once every thread is idle, every third worker gets a second assignment, delivered in
//! the store exactly as `assign` delivers it but without the wake, so it stays queued (status
//! `queued`, its current task the pending one). So the tree read meets what a live tree has:
//! histories with an assignment and a report, pending inbox items, idle and queued nodes.
//!
//! The tree is bounded by the spec (depth 16, 200 nodes: `troupe_core::boss::MAX_NODES`), so
//! the read visits 200 of the 1,001 sessions; the line before the timings says how many.
//!
//! cargo bench -p troupe-workflows --bench boss_tree -- [--iterations 1000] [--fanout 10,9,10]
//!
//! Run without `--bench` (as `cargo test --benches` does) it makes a 2 × 2 × 2 tree and does 20
//! iterations.

use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe_collab::{Collab, NewBotRequest, NewSessionRequest, SessionProjector, SharedRoles};
use troupe_core::boss::{TreeNode, assignment_text};
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::thread::EndpointSpec;
use troupe_core::{Clock, SessionId, SystemClock, ThreadId};
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_engine::models::SecretSource;
use troupe_engine::{Engine, RoleTable};
use troupe_store::Store;
use troupe_workflows::boss::members::{self, ASSIGN_ORIGIN, assignment_key};
use troupe_workflows::boss::{AssignRequest, SpawnRequest};
use troupe_workflows::projection::WorkflowProjection;
use troupe_workflows::{SetWorkflowRequest, Workflows};

const ROLES: [&str; 4] = ["code", "test", "docs", "research"];

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// A worker answers an assignment (its text carries `bench-task`) with a report; anything else
/// (a report from a child, the tool's result) with a short text.
fn script() -> serde_json::Value {
    serde_json::json!({
        "name": "boss-tree-bench",
        "steps": [{"text": "noted"}],
        "rules": [{
            "when_user_contains": "bench-task",
            "reply": {"tool_calls": [{"name": "boss_report", "arguments": {
                "summary": "part done, tests pass", "status": "completed", "refs": ["src/lib.rs"]
            }}]}
        }],
        "on_exhausted": "repeat_last"
    })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn report(label: &str, mut took: Vec<Duration>) -> Duration {
    took.sort();
    let p50 = percentile(&took, 0.50);
    println!(
        "{label}: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {} iterations",
        p50.as_secs_f64() * 1e3,
        percentile(&took, 0.99).as_secs_f64() * 1e3,
        took.last().unwrap().as_secs_f64() * 1e3,
        took.len()
    );
    p50
}

fn count(n: &TreeNode) -> (usize, usize) {
    let queued = usize::from(n.status == "queued");
    n.children
        .iter()
        .map(count)
        .fold((1, queued), |(a, q), (b, r)| (a + b, q + r))
}

fn assign(worker: SessionId, task_id: &str, n: usize) -> AssignRequest {
    AssignRequest {
        worker_session_id: worker,
        task_id: task_id.into(),
        task: format!("Implement part {n} of the migration (bench-task)"),
        context: Some("The storage layer moves to the new schema; keep the API stable.".into()),
        acceptance: vec!["its tests pass".into(), "the old path still reads".into()],
    }
}

/// Wait until no thread of the tree runs: every thread idle in one pass and no live run.
async fn settle(engine: &Engine, threads: &[ThreadId]) {
    loop {
        for t in threads {
            engine.wait_idle(*t).await;
        }
        if engine.live_runs() == 0 && threads.iter().all(|t| !engine.is_running(*t)) {
            return;
        }
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let iterations: usize = arg("--iterations")
        .and_then(|v| v.parse().ok())
        .unwrap_or(if benching { 1_000 } else { 20 });
    let fanout: Vec<usize> = arg("--fanout")
        .unwrap_or_else(|| if benching { "10,9,10" } else { "2,2,2" }.into())
        .split(',')
        .map(|f| f.trim().parse().expect("--fanout: numbers, like 10,9,10"))
        .collect();

    let dir = tempfile::tempdir().unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let store = Store::open(dir.path().join("troupe.db"), clock).expect("open the store");
    let secrets: SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let builder = Engine::builder(store, roles.clone())
        .message_observer(Arc::new(SessionProjector::default()));
    let engine = troupe_workflows::build_engine(builder).expect("build the engine");
    let collab = Collab::new(engine.clone(), roles, dir.path().join("workspaces"));
    let wf = Workflows::new(collab.clone());

    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, script().to_string()).unwrap();
    let bot = collab
        .create_bot(NewBotRequest {
            name: "Chief".into(),
            persona: None,
            endpoint: Some(EndpointSpec {
                kind: "scripted".into(),
                base_url: None,
                model: "bench".into(),
                api_key_env: None,
                script: Some(script_path.display().to_string()),
                takes_pictures: false,
                thinking_levels: Vec::new(),
                max_output_tokens: None,
            }),
        })
        .unwrap();
    let root = collab
        .create_session(NewSessionRequest {
            workspace: None,
            kind: "direct".into(),
            bot_ids: vec![bot.id],
            title: Some("Storage migration".into()),
        })
        .unwrap()
        .session
        .id;
    wf.set_workflow(
        root,
        SetWorkflowRequest {
            kind: "boss".into(),
            instructions: Some("Split the migration by service part; report daily.".into()),
            max_iterations: None,
            max_model_calls: None,
            mode: None,
            goal: None,
        },
    )
    .await
    .expect("make the root a Boss");

    // The tree, level by level, through the service: (worker, its parent).
    let began = Instant::now();
    let mut level = vec![root];
    let mut workers: Vec<(SessionId, SessionId)> = Vec::new();
    for (depth, &k) in fanout.iter().enumerate() {
        let mut next = Vec::new();
        for parent in &level {
            for i in 0..k {
                let s = wf
                    .boss()
                    .spawn(
                        *parent,
                        SpawnRequest {
                            role: ROLES[(depth + i) % ROLES.len()].into(),
                            agent: None,
                            instructions: Some(format!("level {} worker", depth + 1)),
                            workspace: None,
                        },
                    )
                    .await
                    .expect("spawn a worker");
                next.push(s.session_id);
                workers.push((s.session_id, *parent));
            }
        }
        level = next;
    }
    let spawned = began.elapsed();
    let mut threads: Vec<ThreadId> = vec![collab.direct_thread(root).unwrap()];
    for (w, _) in &workers {
        threads.push(collab.direct_thread(*w).unwrap());
    }

    // One task each through the service: each worker runs it and reports to its parent.
    let began = Instant::now();
    for (n, (w, parent)) in workers.iter().enumerate() {
        let a = wf
            .boss()
            .assign(*parent, assign(*w, &format!("p{n}"), n))
            .await
            .expect("assign");
        assert!(a.delivered);
    }
    settle(&engine, &threads).await;
    let ran = began.elapsed();
    let reported = collab
        .store()
        .read(|tx| {
            let mut n = 0;
            for t in &threads[1..] {
                if let Some((root_msg, ..)) = members::latest_assignment(tx, *t)?
                    && members::reported(tx, *t, root_msg)?
                {
                    n += 1;
                }
            }
            Ok(n)
        })
        .unwrap();
    assert_eq!(
        reported,
        workers.len(),
        "every worker ran its task and reported"
    );

    // A second task for every third worker, as `assign` writes it, left queued (no wake).
    let mut queued = 0;
    for (n, (w, parent)) in workers.iter().enumerate().step_by(3) {
        let req = assign(*w, &format!("q{n}"), n);
        let text = assignment_text(&req.task, req.context.as_deref(), &req.acceptance);
        let thread = threads[n + 1];
        let created = collab
            .store()
            .write(|tx| {
                Ok(tx
                    .deliver(
                        thread,
                        &Delivery {
                            mode: InboxMode::Task,
                            priority: Priority::DELEGATION_RESULT,
                            origin: Origin::System(ASSIGN_ORIGIN.into()),
                            text,
                            visible: true,
                            delivery_key: Some(assignment_key(*parent, &req.task_id)),
                            order_key: None,
                            defers_calls: false,
                        },
                    )?
                    .created)
            })
            .unwrap();
        assert!(created);
        queued += 1;
    }
    println!(
        "tree: root + {} workers (fan-out {fanout:?}), spawned in {:.1} s; {} tasks run and reported in {:.1} s; {queued} more queued",
        workers.len(),
        spawned.as_secs_f64(),
        workers.len(),
        ran.as_secs_f64()
    );

    // (a) The tree route's and boss_status's read.
    let tree = wf.boss().tree(root, None).unwrap();
    let (nodes, queued_seen) = count(&tree);
    let json_bytes = serde_json::to_vec(&tree).unwrap().len();
    println!(
        "the read returns {nodes} nodes ({queued_seen} queued), {json_bytes} bytes as JSON; {iterations} iterations"
    );
    assert!(nodes <= troupe_core::boss::MAX_NODES);
    for _ in 0..20 {
        wf.boss().tree(root, None).unwrap();
    }
    let mut took = Vec::with_capacity(iterations);
    let mut json = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let t0 = Instant::now();
        let t = wf.boss().tree(root, None).unwrap();
        let t1 = Instant::now();
        let body = serde_json::to_vec(&t).unwrap();
        json.push(t1.elapsed());
        took.push(t1 - t0);
        assert_eq!(body.len(), json_bytes);
    }
    let p50_tree = report("(a) BossService::tree (route, boss_status)", took);
    report("    the route's JSON of it", json);

    // (b) The root's context section, as its model call assembles it.
    let root_thread = threads[0];
    let thread = collab.store().read(|tx| tx.thread(root_thread)).unwrap();
    let mut parts = ContextParts::default();
    WorkflowProjection.contribute(&thread, collab.store(), &mut parts);
    let section = parts.system.concat();
    assert!(
        section.contains("<boss-tree>"),
        "the root's context has the tree"
    );
    let lines = section.lines().filter(|l| l.contains("- session ")).count();
    println!(
        "<boss-context> + <boss-tree>: {} bytes, {lines} tree lines",
        section.len()
    );
    let mut took = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let mut parts = ContextParts::default();
        let t0 = Instant::now();
        WorkflowProjection.contribute(&thread, collab.store(), &mut parts);
        took.push(t0.elapsed());
        assert_eq!(parts.system.concat().len(), section.len());
    }
    let p50_ctx = report("(b) <boss-tree> for the root's context", took);

    // Where the read's time goes: the per-node reads `members::tree` makes, each timed alone
    // over the nodes the read returns, summed per pass (same read transaction per pass).
    let mut sessions = Vec::new();
    fn walk(n: &TreeNode, out: &mut Vec<SessionId>) {
        out.push(SessionId(n.session_id));
        n.children.iter().for_each(|c| walk(c, out));
    }
    walk(&tree, &mut sessions);
    let passes = iterations.min(200);
    let mut parts: [Vec<Duration>; 4] = Default::default();
    for _ in 0..passes {
        let sums = collab
            .store()
            .read(|tx| {
                let mut sums = [Duration::ZERO; 4];
                for s in &sessions {
                    let t0 = Instant::now();
                    let n = members::node(tx, *s)?.expect("a node");
                    let t1 = Instant::now();
                    let kids = members::children(tx, &n)?;
                    let t2 = Instant::now();
                    let _ = tx.inbox(n.thread)?;
                    let _ = members::pending(tx, n.thread)?;
                    let t3 = Instant::now();
                    let _ = members::latest_assignment(tx, n.thread)?;
                    let t4 = Instant::now();
                    std::hint::black_box(kids);
                    for (sum, d) in sums.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2, t4 - t3]) {
                        *sum += d;
                    }
                }
                Ok(sums)
            })
            .unwrap();
        for (all, d) in parts.iter_mut().zip(sums) {
            all.push(d);
        }
    }
    let [node_t, children_t, inbox_t, latest_t] = parts;
    println!(
        "where a read's time goes, summed over its {} nodes ({passes} passes):",
        sessions.len()
    );
    report("  each node's own rows (members::node)", node_t);
    report("  its children's rows (members::children)", children_t);
    report("  its inbox, twice (status, pending task)", inbox_t);
    report(
        "  its latest assignment (latest_root_with_origin)",
        latest_t,
    );

    if benching {
        let goal = Duration::from_millis(5);
        let met = |d: Duration| if d < goal { "met" } else { "NOT met" };
        println!(
            "goal p50 < 5 ms: tree {}, <boss-tree> {}",
            met(p50_tree),
            met(p50_ctx)
        );
    }
    let _ = engine.shutdown(Duration::from_secs(5)).await;
}
