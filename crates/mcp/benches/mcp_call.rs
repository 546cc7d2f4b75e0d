//! What an MCP call adds to a step, over stdio, against the in-repo test server (hand-rolled
//! harness).
//!
//! ```text
//! cargo build --release -p troupe-mcp --examples    # the test server, next to the bench
//! cargo bench -p troupe-mcp --bench mcp_call -- [--steps M] [--repeat R] [--warmup W]
//!     [--durability full|normal]
//! ```
//!
//! One engine on a real SQLite file (`full` durability unless told), a zero-latency model, and
//! five variants of a step's one tool call, all offered in the same engine:
//!
//! * `noop_readonly`: a registered no-op (`ToolReply::ok("ok")`), `effectful: false,
//!   read_only: true` — the kernel bench's read-only tool, the cheapest built-in path;
//! * `noop_no_effect`: the no-op registered as the MCP source registers a `readOnlyHint` tool
//!   (`effectful: false, read_only: false`: no ledger, the reply committed before the call);
//! * `noop_effectful`: the no-op through the guards and the effect ledger;
//! * `mcp_echo`: the test server's `echo` (`readOnlyHint: true`) through `Mcp`;
//! * `mcp_write_note`: its `write_note` (an effect: the ledger, and a line appended to a file).
//!
//! Each round runs every variant once (a fresh thread, one task of M tool steps and an answer),
//! one after another, in an order that rotates per round; one untimed run of each (W steps)
//! comes first. The figure is the step gap: from one model call returning to the next one
//! beginning, the whole engine step with its tool call. Reported per variant: p50, p99, max and
//! CPU per step over all rounds, and each round's p50; then the added cost per MCP call (the MCP
//! variant's step minus its baseline no-op's: `noop_no_effect` for `echo`, `noop_effectful` for
//! `write_note`) and, as the floor, `echo`'s round trip straight through rmcp's client.
//!
//! After every run the bench checks its work (`check.rs`): the run completed, the model read
//! every expected result, every MCP call is recorded, the ledger holds one settled effect per
//! effectful step, and the notes file grew by one line per `write_note` step.
//!
//! Run without `--bench` (as `cargo test --benches` does) it does a smoke run of 3 steps.

#[path = "mcp_call/args.rs"]
mod args;
#[path = "mcp_call/check.rs"]
mod check;
#[path = "mcp_call/direct.rs"]
mod direct;
#[path = "mcp_call/model.rs"]
mod model;
#[path = "mcp_call/setup.rs"]
mod setup;
#[path = "mcp_call/stats.rs"]
mod stats;

use args::Args;
use setup::{Bench, Variant};
use stats::{cpu_time, load1, quantile, show, show_diff, show_signed};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;
use troupe_core::inbox::Delivery;

fn main() -> ExitCode {
    let args = match args::parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mcp_call bench: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    // The body runs as a task so it shares the runtime's workers like any other caller.
    let result = runtime.block_on(async move {
        tokio::spawn(run(args))
            .await
            .map_err(|e| format!("bench task failed: {e}"))?
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_call bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What the timed runs of one variant gave.
#[derive(Default)]
struct Figures {
    gaps_ns: Vec<u64>,
    round_p50s: Vec<u64>,
    cpu: Duration,
    model_calls: u64,
}

async fn run(args: Args) -> Result<(), String> {
    let bench = setup::build(args.steps, args.durability).await?;
    println!(
        "troupe mcp_call bench: steps={} repeat={} warmup={} durability={} cpus={} load1={}",
        args.steps,
        args.repeat,
        args.warmup,
        args.durability.as_str(),
        stats::cpus(),
        load1()
    );
    println!("  test server: {}", bench.server.display());
    let mut threads = 0usize;
    for v in Variant::ALL {
        one_run(&bench, v, args.warmup, &mut threads).await?;
    }
    let mut figures: BTreeMap<&'static str, Figures> = BTreeMap::new();
    for round in 0..args.repeat {
        for i in 0..Variant::ALL.len() {
            let v = Variant::ALL[(i + round) % Variant::ALL.len()];
            let (gaps, cpu, calls) = one_run(&bench, v, args.steps, &mut threads).await?;
            let f = figures.entry(v.label()).or_default();
            let mut sorted = gaps.clone();
            sorted.sort_unstable();
            f.round_p50s.push(quantile(&sorted, 0.5));
            f.gaps_ns.extend(gaps);
            f.cpu += cpu;
            f.model_calls += calls;
        }
    }
    for f in figures.values_mut() {
        f.gaps_ns.sort_unstable();
    }
    let mut direct = direct::echo_round_trips(&bench.server, args.warmup, args.repeat * args.steps)
        .await
        .map_err(|e| format!("direct echo: {e}"))?;
    direct.sort_unstable();
    bench.mcp.shutdown().await;

    println!(
        "  step gap (model call returned -> next model call began; {} steps per variant, load1={}):",
        args.repeat * args.steps,
        load1()
    );
    for v in Variant::ALL {
        let f = &figures[v.label()];
        println!(
            "  {:<15} p50={:>7} p99={:>7} max={:>7}  cpu/step={:>6}  round p50s: {}",
            v.label(),
            show(quantile(&f.gaps_ns, 0.5)),
            show(quantile(&f.gaps_ns, 0.99)),
            show(f.gaps_ns.last().copied().unwrap_or(0)),
            show(f.cpu.as_nanos() as u64 / f.model_calls.max(1)),
            f.round_p50s
                .iter()
                .map(|n| show(*n))
                .collect::<Vec<_>>()
                .join(" · ")
        );
    }
    println!("  added per MCP call (MCP step minus its baseline no-op's step):");
    for v in Variant::ALL.into_iter().filter(|v| v.is_mcp()) {
        let base = v.baseline().expect("an MCP variant has a baseline");
        let (m, b) = (&figures[v.label()], &figures[base.label()]);
        // Each round's two runs are minutes apart at most, so their difference is less
        // exposed to the machine's load changing than the pooled figures are.
        let mut paired: Vec<i64> = m
            .round_p50s
            .iter()
            .zip(&b.round_p50s)
            .map(|(x, y)| *x as i64 - *y as i64)
            .collect();
        let shown: Vec<String> = paired.iter().map(|d| show_signed(*d)).collect();
        paired.sort_unstable();
        let cpu = |f: &Figures| f.cpu.as_nanos() as u64 / f.model_calls.max(1);
        println!(
            "  {:<15} vs {}: pooled p50 {}  p99 {}  cpu/step {}   per-round p50 differences: {} (median {})",
            v.label(),
            base.label(),
            show_diff(quantile(&m.gaps_ns, 0.5), quantile(&b.gaps_ns, 0.5)),
            show_diff(quantile(&m.gaps_ns, 0.99), quantile(&b.gaps_ns, 0.99)),
            show_diff(cpu(m), cpu(b)),
            shown.join(" · "),
            show_signed(paired[(paired.len() - 1) / 2]),
        );
    }
    println!(
        "  echo straight through rmcp's client over stdio (no engine): p50={} p99={} max={}",
        show(quantile(&direct, 0.5)),
        show(quantile(&direct, 0.99)),
        show(direct.last().copied().unwrap_or(0))
    );
    for v in Variant::ALL {
        let f = &figures[v.label()];
        let us = |ns: u64| ns as f64 / 1e3;
        println!(
            "result variant={} durability={} steps={} repeat={} gap_p50_us={:.1} gap_p99_us={:.1} cpu_per_step_us={:.1} load1={}",
            v.label(),
            args.durability.as_str(),
            args.steps,
            args.repeat,
            us(quantile(&f.gaps_ns, 0.5)),
            us(quantile(&f.gaps_ns, 0.99)),
            us(f.cpu.as_nanos() as u64 / f.model_calls.max(1)),
            load1()
        );
    }
    println!(
        "result variant=direct_echo gap_p50_us={:.1} gap_p99_us={:.1}",
        quantile(&direct, 0.5) as f64 / 1e3,
        quantile(&direct, 0.99) as f64 / 1e3
    );
    Ok(())
}

/// One task of `steps` calls of `v` on a fresh thread, checked; answers its step gaps, the
/// process's CPU time over it and its model calls.
async fn one_run(
    bench: &Bench,
    v: Variant,
    steps: usize,
    threads: &mut usize,
) -> Result<(Vec<u64>, Duration, u64), String> {
    let t = bench.create_thread(v, *threads)?;
    *threads += 1;
    let notes_before = check::notes_lines(bench)?;
    bench.model.take();
    let cpu0 = cpu_time();
    bench
        .engine
        .deliver(t, Delivery::user_task(Bench::task_text(v, steps)))
        .await
        .map_err(|e| format!("deliver: {e}"))?;
    bench.engine.wait_idle(t).await;
    let cpu = cpu_time() - cpu0;
    let taken = bench.model.take();
    check::run(bench, v, t, steps, &taken, notes_before)?;
    Ok((taken.gaps_ns, cpu, taken.calls))
}
