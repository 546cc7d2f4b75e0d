//! Kernel throughput and footprint bench (hand-rolled harness).
//!
//! ```text
//! cargo bench -p troupe-engine --bench kernel -- [--threads N] [--steps M] [--idle K]
//!     [--solo S] [--mode active|idle|latency|both|all] [--durability full|normal|both]
//!     [--tool readonly|effectful|both] [--repeat R] [--database postgres://… [--nodes K]]
//! ```
//!
//! * `active`: N threads (default 1000) each run one task of M tool steps (default 10) against
//!   a zero-latency model, all at once, on a real SQLite file. Reports model calls per second,
//!   the per-step engine overhead (gap between a thread's model calls, model time excluded),
//!   CPU per step, the store's commits and WAL syncs per step (`Store::stats` over the measured
//!   window) and RSS.
//! * `idle`: K threads (default 10,000) each with one completed task; reports the time to
//!   create them and the process RSS once all are idle and driveable.
//! * `latency`: S threads (default 100) run one after another, so the step gap is the engine's
//!   own cost with no queueing behind other threads; the same figures as `active`.
//! * `both` (default) runs `active` then `idle`, `all` adds `latency`; each in its own process
//!   so one mode's memory does not show in another's RSS.
//! * `--durability` opens the store `full` (the default: `synchronous = FULL`) or `normal`;
//!   `both` runs each mode in both, back to back. `--repeat R` runs the whole round R times,
//!   so the durabilities interleave (full, normal, full, normal, …) under the same machine
//!   load; with more than one run, the medians of every figure are printed at the end.
//! * `--tool` registers the no-op tool `readonly` (the default: its calls skip the guards and
//!   the effect ledger) or `effectful` (every call passes the guards and records its start
//!   before and its outcome after, like a built-in that changes something); `both` runs the
//!   active and latency modes with each, interleaved like `--durability both`. Idle threads call
//!   no tool, so idle runs once per durability.
//!
//! * `--database postgres://…` runs on PostgreSQL: each run opens a fresh database on that
//!   server (the store's usual connections, its group commit and the event tail), instead of a
//!   SQLite file in a temp dir. `--nodes K` (active mode) splits the threads over K engines, each
//!   with its own store on that database, as K daemons would; the figures are the cluster's.
//!
//! Run without `--bench` (as `cargo test --benches` does) it does a small smoke run of
//! `--mode both --tool both`.

#[path = "kernel/args.rs"]
mod args;
#[path = "kernel/proc.rs"]
mod proc;
#[path = "kernel/provider.rs"]
mod provider;
#[path = "kernel/setup.rs"]
mod setup;
#[path = "kernel/summary.rs"]
mod summary;

use args::{Args, parse_args};
use proc::{cpu_time, load1, mb, micros, quantile, rss};
use setup::{Bench, Tool};
use std::io::BufRead;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};
use troupe_core::ThreadId;
use troupe_core::effect::EffectOutcome;
use troupe_core::inbox::Delivery;
use troupe_engine::{DriveOutcome, Engine};
use troupe_store::{Durability, StoreStats};

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kernel bench: {e}");
            return ExitCode::from(2);
        }
    };
    let (modes, durabilities, tools) = (args.modes(), args.durabilities(), args.tools());
    if modes.len() == 1 && durabilities.len() == 1 && tools.len() == 1 && args.repeat == 1 {
        return run_in_process(&args);
    }
    let mut results = summary::Results::default();
    for round in 1..=args.repeat {
        if args.repeat > 1 {
            println!("round {round} of {}", args.repeat);
        }
        for mode in &modes {
            // Idle threads call no tool: one run per durability, whatever the tools.
            let tools = if *mode == "idle" {
                &tools[..1]
            } else {
                &tools[..]
            };
            for durability in &durabilities {
                for tool in tools {
                    if let Err(e) = run_child(&args, mode, durability, tool, &mut results) {
                        eprintln!("kernel bench: {mode} ({durability}, {tool}): {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
        }
    }
    results.print();
    ExitCode::SUCCESS
}

/// Run one mode in a fresh process (the same binary), pass its report through and keep its
/// `result` line.
fn run_child(
    args: &Args,
    mode: &str,
    durability: &str,
    tool: &str,
    results: &mut summary::Results,
) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let mut child = Command::new(exe)
        .arg("--bench")
        .args(["--mode", mode])
        .args(["--durability", durability])
        .args(["--tool", tool])
        .args(["--threads", &args.threads.to_string()])
        .args(["--steps", &args.steps.to_string()])
        .args(["--idle", &args.idle.to_string()])
        .args(["--solo", &args.solo.to_string()])
        .args(
            args.database
                .iter()
                .flat_map(|d| ["--database", d.as_str()]),
        )
        .args(["--nodes", &args.nodes.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    let out = child.stdout.take().expect("piped stdout");
    for line in std::io::BufReader::new(out).lines() {
        let line = line.map_err(|e| format!("reading its report: {e}"))?;
        println!("{line}");
        results.take(&line);
    }
    let status = child.wait().map_err(|e| format!("waiting for it: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("exited with {status}"))
    }
}

fn run_in_process(args: &Args) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let args = args.clone();
    let d: Durability = args.durability.parse().expect("checked by parse_args");
    setup::use_database(args.database.clone(), args.nodes);
    let tool: Tool = args.tool.parse().expect("checked by parse_args");
    // The body runs as a task so it shares the runtime's workers like any other caller.
    let result = runtime.block_on(async move {
        tokio::spawn(async move {
            match args.mode.as_str() {
                "active" => active(args.threads, args.steps, d, tool).await,
                "idle" => idle(args.idle, d, tool).await,
                _ => latency(args.solo, args.steps, d, tool).await,
            }
        })
        .await
        .map_err(|e| format!("bench task failed: {e}"))?
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kernel bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Every thread ended its task normally (no pause latch, nothing left in the inbox).
fn check_all_done(engine: &Engine, threads: &[ThreadId]) -> Result<(), String> {
    engine
        .store()
        .read(|tx| {
            for t in threads {
                let thread = tx.thread(*t)?;
                if let Some(p) = thread.paused {
                    return Ok(Err(format!("thread {t} is paused: {p:?}")));
                }
                if !tx.inbox(*t)?.is_empty() {
                    return Ok(Err(format!("thread {t} has inbox work left")));
                }
            }
            Ok(Ok(()))
        })
        .map_err(|e| e.to_string())?
}

/// The effect ledger holds one settled record per tool step of an effectful tool, none for a
/// read-only one.
fn check_effects(
    engine: &Engine,
    threads: &[ThreadId],
    tool: Tool,
    m: usize,
) -> Result<(), String> {
    let expected = if tool == Tool::Effectful { m } else { 0 };
    engine
        .store()
        .read(|tx| {
            for t in threads {
                let effects = tx.effects_for_thread(*t)?;
                let settled = effects
                    .iter()
                    .filter(|e| e.outcome == EffectOutcome::Succeeded)
                    .count();
                if effects.len() != expected || settled != expected {
                    return Ok(Err(format!(
                        "thread {t}: {} effects ({settled} succeeded), expected {expected}",
                        effects.len()
                    )));
                }
            }
            Ok(Ok(()))
        })
        .map_err(|e| e.to_string())?
}

/// What the store committed per model call over a measured window.
struct PerStep {
    commits: f64,
    writes: f64,
    syncs: f64,
}

impl PerStep {
    fn of(window: StoreStats, calls: u64) -> PerStep {
        let per = |x: u64| x as f64 / calls.max(1) as f64;
        PerStep {
            commits: per(window.commits),
            writes: per(window.writes),
            syncs: per(window.syncs),
        }
    }

    fn shown(&self) -> String {
        format!(
            "commits/step={:.3}  syncs/step={:.3}  (writes/step={:.2})",
            self.commits, self.syncs, self.writes
        )
    }

    fn figures(&self) -> [(&'static str, f64); 3] {
        [
            ("commits_per_step", self.commits),
            ("syncs_per_step", self.syncs),
            ("writes_per_step", self.writes),
        ]
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

async fn active(n: usize, m: usize, d: Durability, tool: Tool) -> Result<(), String> {
    let bench = setup::build(m, n, d, tool);
    let engine = &bench.engine;
    let threads: Vec<ThreadId> = (0..n).map(|i| bench.create_thread(i)).collect();

    // Every task is in its thread's inbox before the clock starts, and then every thread is
    // woken at once: the measured window has all n threads runnable from its first moment,
    // instead of depending on how fast a one-by-one delivery loop keeps up with the runs.
    engine
        .store()
        .write(|tx| {
            for (i, t) in threads.iter().enumerate() {
                tx.deliver(*t, &Delivery::user_task(Bench::task_text(i)))?;
            }
            Ok(())
        })
        .map_err(|e| format!("deliver: {e}"))?;
    let stats = || {
        bench
            .nodes
            .iter()
            .map(|e| e.store().stats())
            .reduce(|a, b| a.plus(b))
            .unwrap_or_default()
    };
    let store0 = stats();
    let cpu0 = cpu_time();
    let start = Instant::now();
    // Thread i is woken on node i mod K, and every node drives only its own.
    let node_of = |i: usize| &bench.nodes[i % bench.nodes.len()];
    let wakes: Vec<_> = threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let engine = node_of(i).clone();
            let t = *t;
            tokio::spawn(async move { engine.request_drive(t, "bench", false).await })
        })
        .collect();
    for w in wakes {
        w.await
            .map_err(|e| format!("wake task: {e}"))?
            .map_err(|e| format!("wake: {e}"))?;
    }
    let woken = start.elapsed();
    let live = (0..n)
        .filter(|i| node_of(*i).is_running(threads[*i]))
        .count();
    for (i, t) in threads.iter().enumerate() {
        node_of(i).wait_idle(*t).await;
    }
    let wall = start.elapsed();
    let cpu = cpu_time() - cpu0;
    let window = stats().since(store0);

    let calls = bench.provider.calls();
    let expected = (n * (m + 1)) as u64;
    if calls != expected {
        return Err(format!("expected {expected} model calls, saw {calls}"));
    }
    check_all_done(engine, &threads)?;
    check_effects(engine, &threads, tool, m)?;
    let per_step = PerStep::of(window, calls);
    let mut gaps = bench.provider.gaps_ns();
    if gaps.len() != n * m {
        return Err(format!("expected {} step gaps, saw {}", n * m, gaps.len()));
    }
    gaps.sort_unstable();
    let (now_rss, peak_rss) = rss();
    let steps_per_s = calls as f64 / secs(wall);
    println!(
        "troupe kernel bench: active  threads={n} steps={m}  durability={d}  backend={}  nodes={}  tool={tool}  total_steps={calls}  wall={:.2}s  steps/s={:.0}  {}",
        setup::backend(),
        bench.nodes.len(),
        secs(wall),
        steps_per_s,
        per_step.shown()
    );
    println!(
        "  all {n} woken in {:.2}s; running right after: {live}",
        secs(woken)
    );
    println!(
        "  engine overhead per step: p50={} p99={} max={}   peak RSS={} (now {})",
        micros(quantile(&gaps, 0.50)),
        micros(quantile(&gaps, 0.99)),
        micros(gaps.last().copied().unwrap_or(0)),
        mb(peak_rss),
        mb(now_rss)
    );
    println!(
        "  cpu per step={} (user+sys {:.2}s over {calls} model calls, {:.2} cores busy)  time in model={}  db={}  load1={}",
        micros(cpu.as_nanos() as u64 / calls.max(1)),
        secs(cpu),
        secs(cpu) / secs(wall),
        micros(bench.provider.inside_ns()),
        mb(bench.db_bytes()),
        load1()
    );
    let h = history_cost(engine, &threads)?;
    println!(
        "  history load after the run (sample of {}): p50={} for p50 {} own messages spread over a p50 id span of {}",
        h.samples,
        micros(h.p50_ns),
        h.own_messages,
        h.id_span
    );
    let mut figures = vec![("steps_per_s", steps_per_s)];
    figures.extend(per_step.figures());
    figures.extend([
        (
            "cpu_per_step_us",
            cpu.as_nanos() as f64 / calls.max(1) as f64 / 1e3,
        ),
        ("gap_p50_us", quantile(&gaps, 0.50) as f64 / 1e3),
        ("gap_p99_us", quantile(&gaps, 0.99) as f64 / 1e3),
        ("cores_busy", secs(cpu) / secs(wall)),
        ("peak_rss_mb", peak_rss as f64 / (1024.0 * 1024.0)),
        ("load1", load1_number()),
    ]);
    println!(
        "{}",
        summary::result_line("active", d, Some(tool), &figures)
    );
    Ok(())
}

fn load1_number() -> f64 {
    load1().parse().unwrap_or(f64::NAN)
}

struct HistoryCost {
    samples: usize,
    p50_ns: u64,
    own_messages: u64,
    id_span: u64,
}

/// What one step's history read (`Tx::messages`, the call the loop makes every step) costs
/// once many threads' messages are interleaved in the table.
fn history_cost(engine: &Engine, threads: &[ThreadId]) -> Result<HistoryCost, String> {
    let step = (threads.len() / 100).max(1);
    let sample: Vec<ThreadId> = threads.iter().step_by(step).copied().collect();
    let mut times = Vec::new();
    let mut own = Vec::new();
    let mut spans = Vec::new();
    for t in &sample {
        let started = Instant::now();
        let history = engine
            .store()
            .read(|tx| tx.messages(*t, None, u32::MAX))
            .map_err(|e| e.to_string())?;
        times.push(started.elapsed().as_nanos() as u64);
        own.push(history.len() as u64);
        if let (Some(first), Some(last)) = (history.first(), history.last()) {
            spans.push((last.id.0 - first.id.0 + 1) as u64);
        }
    }
    times.sort_unstable();
    own.sort_unstable();
    spans.sort_unstable();
    Ok(HistoryCost {
        samples: sample.len(),
        p50_ns: quantile(&times, 0.5),
        own_messages: quantile(&own, 0.5),
        id_span: quantile(&spans, 0.5),
    })
}

/// p50 of `Tx::root_state` (read by every drive snapshot and every inbox check) over `threads`.
fn root_state_p50(engine: &Engine, threads: &[ThreadId]) -> Result<u64, String> {
    let mut times = Vec::new();
    for t in threads {
        let started = Instant::now();
        engine
            .store()
            .read(|tx| tx.root_state(*t))
            .map_err(|e| e.to_string())?;
        times.push(started.elapsed().as_nanos() as u64);
    }
    times.sort_unstable();
    Ok(quantile(&times, 0.5))
}

async fn idle(k: usize, d: Durability, tool: Tool) -> Result<(), String> {
    // Steps 0: each task is answered on the first call, so a thread ends with a user message,
    // a final reply, one completed run and an idle drive state (and the tool is never called).
    let bench = setup::build(0, 0, d, tool);
    let engine = &bench.engine;
    let (base_rss, _) = rss();

    let start = Instant::now();
    let mut threads = Vec::with_capacity(k);
    let batch = 1000;
    let mut next = 0;
    while next < k {
        let end = (next + batch).min(k);
        let first = threads.len();
        for i in next..end {
            let t = bench.create_thread(i);
            engine
                .deliver(t, Delivery::user_task(Bench::task_text(i)))
                .await
                .map_err(|e| format!("deliver: {e}"))?;
            threads.push(t);
        }
        for t in &threads[first..] {
            engine.wait_idle(*t).await;
        }
        next = end;
    }
    let create = start.elapsed();
    if bench.provider.calls() != k as u64 {
        return Err(format!(
            "expected {k} model calls, saw {}",
            bench.provider.calls()
        ));
    }
    check_all_done(engine, &threads)?;

    // Driveable: the drive answers for every thread (no work, so nothing starts).
    let probe_start = Instant::now();
    for t in &threads {
        match engine.request_drive(*t, "bench", false).await {
            Ok(DriveOutcome::NotHandled { .. }) => {}
            other => return Err(format!("drive of idle thread {t}: {other:?}")),
        }
    }
    let probe = probe_start.elapsed();
    if engine.live_runs() != 0 {
        return Err(format!("{} runs still live", engine.live_runs()));
    }

    let (now_rss, peak_rss) = rss();
    println!(
        "troupe kernel bench: idle    threads={k}  durability={d}  backend={}  create={:.2}s  RSS={} (peak {})",
        setup::backend(),
        secs(create),
        mb(now_rss),
        mb(peak_rss)
    );
    println!(
        "  baseline RSS={}  per idle thread={} B  drive probe of all={:.2}s ({}/thread)  db={}  load1={}",
        mb(base_rss),
        now_rss.saturating_sub(base_rss) / k.max(1) as u64,
        secs(probe),
        micros(probe.as_nanos() as u64 / k.max(1) as u64),
        mb(bench.db_bytes()),
        load1()
    );
    let n = threads.len().min(100);
    println!(
        "  root_state read: oldest {n} threads p50={}  newest {n} threads p50={}",
        micros(root_state_p50(engine, &threads[..n])?),
        micros(root_state_p50(engine, &threads[threads.len() - n..])?)
    );
    println!(
        "{}",
        summary::result_line(
            "idle",
            d,
            None,
            &[
                ("create_s", secs(create)),
                ("rss_mb", now_rss as f64 / (1024.0 * 1024.0)),
                (
                    "bytes_per_idle_thread",
                    now_rss.saturating_sub(base_rss) as f64 / k.max(1) as f64,
                ),
                (
                    "probe_us_per_thread",
                    probe.as_nanos() as f64 / k.max(1) as f64 / 1e3
                ),
                ("load1", load1_number()),
            ],
        )
    );
    Ok(())
}

async fn latency(s: usize, m: usize, d: Durability, tool: Tool) -> Result<(), String> {
    let bench = setup::build(m, s, d, tool);
    let engine = &bench.engine;
    let threads: Vec<ThreadId> = (0..s).map(|i| bench.create_thread(i)).collect();
    let store0 = engine.store().stats();
    let cpu0 = cpu_time();
    let start = Instant::now();
    for (i, t) in threads.iter().enumerate() {
        engine
            .deliver(*t, Delivery::user_task(Bench::task_text(i)))
            .await
            .map_err(|e| format!("deliver: {e}"))?;
        engine.wait_idle(*t).await;
    }
    let wall = start.elapsed();
    let cpu = cpu_time() - cpu0;
    let window = engine.store().stats().since(store0);
    check_all_done(engine, &threads)?;
    check_effects(engine, &threads, tool, m)?;
    let calls = bench.provider.calls();
    let per_step = PerStep::of(window, calls);
    let mut gaps = bench.provider.gaps_ns();
    gaps.sort_unstable();
    println!(
        "troupe kernel bench: latency threads={s} (one at a time) steps={m}  durability={d}  backend={}  tool={tool}  total_steps={calls}  wall={:.2}s  steps/s={:.0}  {}",
        setup::backend(),
        secs(wall),
        calls as f64 / secs(wall),
        per_step.shown()
    );
    println!(
        "  engine overhead per step: p50={} p99={} max={}   cpu per step={}  load1={}",
        micros(quantile(&gaps, 0.50)),
        micros(quantile(&gaps, 0.99)),
        micros(gaps.last().copied().unwrap_or(0)),
        micros(cpu.as_nanos() as u64 / calls.max(1)),
        load1()
    );
    let mut figures = vec![("steps_per_s", calls as f64 / secs(wall))];
    figures.extend(per_step.figures());
    figures.extend([
        ("gap_p50_us", quantile(&gaps, 0.50) as f64 / 1e3),
        ("gap_p99_us", quantile(&gaps, 0.99) as f64 / 1e3),
        (
            "cpu_per_step_us",
            cpu.as_nanos() as f64 / calls.max(1) as f64 / 1e3,
        ),
        ("load1", load1_number()),
    ]);
    println!(
        "{}",
        summary::result_line("latency", d, Some(tool), &figures)
    );
    Ok(())
}
