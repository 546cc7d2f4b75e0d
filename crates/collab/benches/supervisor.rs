//! One supervisor pass (the scheduler tick's first part) over a large team: 1,000 jobs with 3
//! tickets each and 10,000 open work items (10 Bots on each job). Measured: `Collab::supervise`
//! with nothing due, and with 1% due (100 work items and 10 jobs armed before each pass, none
//! needing a wake, so the pass reads and judges them and writes their next deadline). The
//! candidates come from the indexed `supervise_at` columns; nothing scans every row.
//! Store: a SQLite file at full durability, as `troupe serve` opens it.
//!
//! cargo bench -p troupe-collab --bench supervisor -- [--jobs 1000] [--bots-per-job 10] [--passes 200]

use std::sync::Arc;
use std::time::Instant;
use troupe_collab::{Collab, SharedRoles};
use troupe_core::conversation::SessionKind;
use troupe_core::plan::{PlanSpec, RevisionCause};
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, ManualClock, PlanId};
use troupe_engine::{Engine, RoleTable};
use troupe_store::{Layout, LayoutItem, NewBot, NewPlan, NewThread, NewWorkItem};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn item(title: String, owner: BotId) -> LayoutItem {
    LayoutItem {
        ticket: None,
        key: None,
        title,
        description: String::new(),
        done_when: String::new(),
        owner_bot_id: Some(owner),
        reviewer_bot_id: None,
        depends_on: Vec::new(),
        parts: Vec::new(),
        sample: false,
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let jobs = arg("--jobs", 1000);
    let per_job = arg("--bots-per-job", 10);
    let passes = arg("--passes", 200);
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(1_760_000_000_000);
    let store =
        troupe_store::Store::open(dir.path().join("troupe.db"), Arc::new(clock.clone())).unwrap();
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = troupe_collab::tools::ToolHost::new();
    let builder = troupe_collab::extend(Engine::builder(store, roles.clone()), &host).unwrap();
    let collab = Collab::new(builder.build(), roles, dir.path().join("workspaces"));
    host.attach(&collab);
    let store = collab.store().clone();

    let began = Instant::now();
    let (bots, sessions) = store
        .write(|tx| {
            let mut bots = Vec::new();
            let mut sessions = Vec::new();
            for i in 0..per_job.max(1) * 10 {
                let b = tx.create_bot(&NewBot {
                    name: format!("Bot{i:03}"),
                    persona: String::new(),
                    endpoint: None,
                    scripted: true,
                })?;
                sessions.push(tx.create_session(SessionKind::Direct, "d", &[b.id])?.id);
                bots.push(b.id);
            }
            Ok((bots, sessions))
        })
        .unwrap();
    let mut plans: Vec<PlanId> = Vec::with_capacity(jobs);
    let mut items = Vec::with_capacity(jobs * per_job);
    for chunk in (0..jobs).collect::<Vec<_>>().chunks(50) {
        store
            .write(|tx| {
                for &j in chunk {
                    let home = sessions[j % sessions.len()];
                    let plan = tx.create_plan(
                        &NewPlan {
                            name: format!("Job {j}"),
                            original_request: format!("job {j}"),
                            home_session_id: home,
                            opening_line_id: None,
                            spec: PlanSpec::default(),
                            cause: RevisionCause::User,
                        },
                        |id| format!("/bench/jobs/{}", id.0),
                    )?;
                    let owner = bots[j % bots.len()];
                    tx.lay_out(
                        plan.id,
                        &Layout {
                            items: (1..=3).map(|n| item(format!("T{n}"), owner)).collect(),
                            drops: Vec::new(),
                        },
                        |n, title| format!("/bench/jobs/{}/{n:02}-{title}", plan.id.0),
                    )?;
                    for k in 0..per_job {
                        let bot = bots[(j + k) % bots.len()];
                        let thread = tx.create_thread(&NewThread {
                            workspace_root: None,
                            parent_id: None,
                            title: format!("job {j} bot {k}"),
                            agent: AgentBinding::new("scripted", "bot"),
                            workspace: "/bench".into(),
                            interaction: Interaction::Interactive,
                        })?;
                        let w = tx.create_work_item(&NewWorkItem {
                            bot_id: bot,
                            mode: WorkMode::Work,
                            plan_id: Some(plan.id),
                            session_id: None,
                            thread_id: thread.id,
                            speaks_in: Some(home),
                        })?;
                        items.push(w.id);
                    }
                    plans.push(plan.id);
                }
                Ok(())
            })
            .unwrap();
    }
    println!(
        "set up {} jobs, {} tickets, {} work items in {:.1} s",
        plans.len(),
        plans.len() * 3,
        items.len(),
        began.elapsed().as_secs_f64()
    );

    // Nothing due: whatever set-up armed is looked at once first.
    collab.supervise().unwrap();
    let mut idle = Vec::with_capacity(passes);
    for _ in 0..passes {
        let t = Instant::now();
        let r = collab.supervise().unwrap();
        idle.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(r.is_empty(), "nothing is due: {r:?}");
    }

    // 1% due: armed (outside the timing) before each pass.
    let due_items: Vec<_> = items.iter().step_by(100).copied().collect();
    let due_plans: Vec<_> = plans.iter().step_by(100).copied().collect();
    let mut busy = Vec::with_capacity(passes);
    for _ in 0..passes {
        clock.advance(15_000);
        store
            .write(|tx| {
                let now = tx.now();
                for &w in &due_items {
                    tx.set_work_supervise_at(w, Some(now))?;
                }
                for &p in &due_plans {
                    tx.set_plan_supervise_at(p, Some(now))?;
                }
                Ok(())
            })
            .unwrap();
        let t = Instant::now();
        let r = collab.supervise().unwrap();
        busy.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(r.work.len(), due_items.len());
    }
    for (name, mut v) in [("nothing due", idle), ("1% due", busy)] {
        v.sort_by(f64::total_cmp);
        println!(
            "supervise, {name}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms over {} passes",
            percentile(&v, 0.5),
            percentile(&v, 0.99),
            v[v.len() - 1],
            v.len()
        );
    }
}
