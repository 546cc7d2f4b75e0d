//! Holds (issue 14): what a person's stop costs.
//!
//! * `make`: an in-process daemon (`bootstrap::build_state`, a SQLite file at `full`
//!   durability, as `troupe serve` opens it) with `--live` scripted Bots, each in a direct of
//!   its own and each turn live mid tool call (a shell command that writes its process group
//!   id, then `exec sleep 60`). `POST /v1/holds {scope: {kind: "everything"}}` over real HTTP on
//!   loopback, timed from sending the request to reading the whole response: the one write that
//!   makes the hold and ends and records every covered turn has committed by then. After the
//!   response every turn's run must be `stopped` and the hold must name all of them. Also
//!   timed: until the commit is visible to a reader (a plain thread polling the store every
//!   0.5 ms, off the runtime's workers), so the write and the wait for the answer show apart.
//!   Reported apart: the time from sending the request until every process group is gone
//!   (SIGTERM, then SIGKILL after the 3 s grace, both after the response). Each sample has fresh live turns
//!   (new directs); the hold is then lifted with the Lift route and the reopened turns finish
//!   before the next. One warm-up sample is not counted; `--term-ignored` samples at the end run
//!   a command that ignores SIGTERM, so their groups last the grace.
//! * `kernel`: the kernel's step in a Bot's direct (the hold admission check at every run start,
//!   the hold guard on every effectful call) with no holds in the store, against a store with
//!   `--holds` holds made and lifted through the Collab API (scopes everything, the Bot, a
//!   direct, in turn). The kernel bench's measure: a zero-latency model that times, per thread,
//!   the gap from one model call returning to the next beginning (one whole step: records,
//!   the guards, the tool, the inbox, the history). Each turn is `--steps` calls of an
//!   effectful no-op tool, then a text answer, one turn at a time. Also: from posting the line to
//!   the first model call (reading, routing, admission, run start), and `Tx::covering_holds`
//!   alone. The two stores are measured in alternating rounds.
//!
//! cargo bench -p troupe-server --bench holds -- [--part make|kernel|both] [--live 100]
//!     [--samples 30] [--term-ignored 1] [--holds 1000] [--threads 30] [--steps 10] [--rounds 3]
//!
//! Run without `--bench` (as `cargo test --benches` does) it does a tiny smoke run.

#[path = "holds/args.rs"]
mod args;
#[path = "holds/kernel.rs"]
mod kernel;
#[path = "holds/make.rs"]
mod make;

use kernel::kernel_part;
use make::make_part;

/// The value at quantile `q` of sorted values (nearest rank, as the other benches do).
fn quantile<T: Copy>(sorted: &[T], q: f64) -> T {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

/// The machine's 1-minute load average, for the result lines (other work shares the cores).
fn load1() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let o = args::opts();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if o.part != "kernel" {
        rt.block_on(make_part(&o));
    }
    if o.part != "make" {
        rt.block_on(kernel_part(&o));
    }
}
