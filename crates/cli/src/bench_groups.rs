//! `troupe bench groups`: the groups benchmark (`troupe_collab::bench_groups`) on this
//! machine, in a temporary directory, without a daemon or a model.

use anyhow::Result;
use clap::Args;
use troupe_collab::bench_groups::{GroupsBench, run};

/// Route a person's lines in a large group of scripted Bots (an instant line reader, a
/// confirmed lead, lines naming one to three Bots) and time each from its posting to the
/// commit of its deliveries, on a SQLite store at full durability. Prints p50/p99/max and a
/// `result` line.
#[derive(Debug, Args)]
pub struct GroupsArgs {
    /// Lines posted, one after another.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub lines: u32,

    /// Bots in the group (the first is its lead).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub bots: u32,

    /// The store's durability: full (the default, as `troupe serve`) or normal, to see how
    /// much of a line's time is the disk's sync.
    #[arg(long, value_name = "MODE", default_value = "full", value_parser = crate::args::durability_arg)]
    pub durability: troupe_store::Durability,
}

pub async fn groups(a: GroupsArgs) -> Result<u8> {
    let dir = tempfile::tempdir()?;
    let opts = GroupsBench {
        lines: a.lines as usize,
        bots: a.bots as usize,
        durability: a.durability,
    };
    eprintln!(
        "routing {} lines in a group of {} scripted Bots, durability {}…",
        opts.lines,
        opts.bots,
        opts.durability.as_str()
    );
    let report = run(dir.path(), opts).await.map_err(anyhow::Error::msg)?;
    println!(
        "post → deliveries committed: p50 {:.2} ms · p99 {:.2} ms · max {:.2} ms ({} of {} lines routed, {:.0} lines/s)",
        report.p50_ms,
        report.p99_ms,
        report.max_ms,
        report.routed,
        report.lines,
        report.lines_per_s
    );
    println!("{}", report.result_line());
    Ok(0)
}
