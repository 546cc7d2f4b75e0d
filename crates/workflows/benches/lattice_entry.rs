//! The Lattice policy entry's read path on a large Run (issue 17): a Run of 100 Steps and 200
//! BlueprintLoop attempts stored through the store, then, per iteration, what the gate does on
//! each model call — read the session's current Run (`Tx::peek_current_lattice_run`), split its
//! Pathway (`pathway::split`) and count the call (`lattice::step` with `Event::CountCalls`).
//! p50, p99 and max over the iterations are printed. The same loop with the counted Run saved
//! back (`Tx::save_lattice_run`, as a flush that changed the count does) is timed too, as a
//! second line.
//!
//! The store is a real SQLite file in a temp dir, opened as the daemon opens it.
//!
//! cargo bench -p troupe-workflows --bench lattice_entry -- [--iterations 2000]
//!
//! Run without `--bench` (as `cargo test --benches` does) it does 50 iterations.

use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe_core::blueprint_loop::BlueprintLoopId;
use troupe_core::lattice::{
    AttemptStatus, BlueprintBinding, Event, LatticeRun, LoopAttempt, Mode, RunStatus, Step,
    StepStatus, WorkState, pathway, step,
};
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{Clock, SystemClock, ThreadId};
use troupe_store::{NewThread, Store};

const STEPS: usize = 100;
const ATTEMPTS_PER_STEP: usize = 2;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn binding(note: i64, version: i64, now: i64) -> BlueprintBinding {
    let digest = format!("{:064x}", note * 1_000 + version);
    BlueprintBinding {
        note_id: note,
        bound_version: version,
        content_digest: digest.clone(),
        reviewed_version: Some(version),
        reviewed_digest: Some(digest),
        bound_at: now,
        reviewed_at: Some(now),
    }
}

/// Attempt `k` of Step `i`: every Step's first attempt failed and was retried; the last Step's
/// second attempt is still running, every other second attempt completed.
fn attempt(i: usize, k: usize, now: i64) -> LoopAttempt {
    let last = i + 1 == STEPS;
    let (status, summary, error) = match (k, last) {
        (0, _) => (
            AttemptStatus::Failed,
            None,
            Some(format!(
                "attempt {k} of step {i}: tests failed, see the audit"
            )),
        ),
        (_, true) => (AttemptStatus::Running, None, None),
        _ => (
            AttemptStatus::Completed,
            Some(format!(
                "step {i} carried out per its Blueprint, every outcome verified"
            )),
            None,
        ),
    };
    LoopAttempt {
        loop_id: BlueprintLoopId((i * ATTEMPTS_PER_STEP + k + 1) as i64),
        status,
        source_digest: format!("{:064x}", i * 10 + k),
        summary,
        error,
        created_at: now,
        started_at: Some(now),
        completed_at: (status != AttemptStatus::Running).then_some(now),
    }
}

/// 99 completed Steps and the 100th executing, each with a bound Blueprint, one earlier
/// binding in its history and two attempts: 200 in all.
fn big_run(base: &LatticeRun, now: i64) -> LatticeRun {
    let mut run = base.clone();
    run.mode = Mode::Auto;
    run.requirements = Some(troupe_core::lattice::Requirements {
        goal: "migrate the service to the new storage layer".into(),
        success_criteria: vec!["every endpoint answers from the new layer".into()],
        constraints: vec!["no downtime".into()],
        non_goals: vec!["new endpoints".into()],
        assumptions: vec!["the schema is frozen".into()],
    });
    run.pathway = (0..STEPS)
        .map(|i| {
            let last = i + 1 == STEPS;
            Step {
                id: format!("step_{}", i + 1),
                title: format!("Step {} of the migration", i + 1),
                objective: format!("move part {} of the service to the new layer", i + 1),
                status: if last {
                    StepStatus::Executing
                } else {
                    StepStatus::Completed
                },
                acceptance_criteria: vec![
                    format!("part {} reads and writes through the new layer", i + 1),
                    "its tests pass".into(),
                ],
                assumptions: vec!["the old layer stays readable".into()],
                addresses_failed_step_ids: vec![],
                blueprint: Some(binding(i as i64 + 1, 2, now)),
                blueprint_history: vec![binding(i as i64 + 1, 1, now)],
                loop_history: (0..ATTEMPTS_PER_STEP).map(|k| attempt(i, k, now)).collect(),
                result_summary: (!last).then(|| format!("part {} moved", i + 1)),
                failure_reason: None,
                created_at: now,
                updated_at: now,
                started_at: Some(now),
                completed_at: (!last).then_some(now),
            }
        })
        .collect();
    run.current_step_id = Some(format!("step_{STEPS}"));
    run.state = WorkState::Executing;
    run.status = RunStatus::Active;
    run.state_revision = 5 * STEPS as u64;
    run.pathway_revision = STEPS as u64;
    run.next_step_no = STEPS as u64 + 1;
    run.next_effect_id = 6 * STEPS as u64;
    run.model_call_count = 1_000;
    run
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
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

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let iterations = if benching {
        arg("--iterations", 2_000)
    } else {
        50
    };
    let dir = tempfile::tempdir().unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let store = Store::open(dir.path().join("troupe.db"), clock.clone()).expect("open the store");

    let thread: ThreadId = store
        .write(|tx| {
            Ok(tx
                .create_thread(&NewThread {
                    workspace_root: None,
                    parent_id: None,
                    title: "lattice bench".into(),
                    agent: AgentBinding::new("builder", "be brief"),
                    workspace: "/tmp".into(),
                    interaction: Interaction::Interactive,
                })?
                .id)
        })
        .unwrap();
    let created = store
        .write(|tx| tx.create_lattice_run(thread, Mode::Auto, 0, Some("migrate".into())))
        .unwrap();
    let run = big_run(&created, clock.now_ms());
    store
        .write(|tx| tx.save_lattice_run(&run, &[]))
        .expect("save the large Run");
    let record_bytes = serde_json::to_string(&run).unwrap().len();
    let attempts: usize = run.pathway.iter().map(|s| s.loop_history.len()).sum();
    println!(
        "Run {}: {} Steps, {attempts} attempts, record {record_bytes} bytes; {iterations} iterations",
        run.id,
        run.pathway.len()
    );

    // The gate's entry per call: read, split, count; with the time each part took.
    let entry = |count: u32| -> (LatticeRun, usize, [Duration; 3]) {
        let t0 = Instant::now();
        let current = store
            .read(|tx| tx.peek_current_lattice_run(thread))
            .unwrap()
            .expect("the thread has a current Run");
        let t1 = Instant::now();
        let view = pathway::split(&current);
        let t2 = Instant::now();
        let t = step(&current, Event::CountCalls { count }, clock.now_ms()).unwrap();
        let t3 = Instant::now();
        assert!(t.changed, "a higher count changes the Run");
        (t.run, view.history.len(), [t1 - t0, t2 - t1, t3 - t2])
    };

    // Warm the reader connection and the page cache first.
    for i in 0..20 {
        entry(run.model_call_count + 1 + i);
    }
    let mut took = Vec::with_capacity(iterations);
    let mut parts: [Vec<Duration>; 3] = Default::default();
    for i in 0..iterations {
        let t0 = Instant::now();
        let (next, history, part) = entry(run.model_call_count + 100 + i as u32);
        took.push(t0.elapsed());
        for (all, p) in parts.iter_mut().zip(part) {
            all.push(p);
        }
        assert_eq!(history, STEPS - 1);
        assert_eq!(next.pathway.len(), STEPS);
    }
    let p50 = report("entry (read + split + count)", took);
    let [read_t, split_t, count_t] = parts;
    report("  of which peek_current_lattice_run", read_t);
    report("  of which pathway::split", split_t);
    report("  of which step(CountCalls)", count_t);

    let mut took = Vec::with_capacity(iterations);
    let mut count = run.model_call_count + 100 + iterations as u32;
    for _ in 0..iterations {
        count += 1;
        let t0 = Instant::now();
        let (next, _, _) = entry(count);
        store.write(|tx| tx.save_lattice_run(&next, &[])).unwrap();
        took.push(t0.elapsed());
    }
    report("entry with the counted Run saved", took);

    let stored = store
        .read(|tx| tx.peek_current_lattice_run(thread))
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.model_call_count, count,
        "the last save is what is read"
    );
    if benching {
        println!(
            "goal p50 < 1 ms: {}",
            if p50 < Duration::from_millis(1) {
                "met"
            } else {
                "NOT met"
            }
        );
    }
}
