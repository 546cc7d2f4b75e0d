//! The bench's command line. Run without `--bench` (as `cargo test --benches` does) the
//! defaults are a tiny smoke configuration that still covers both tools.

use crate::setup::Tool;
use troupe_store::Durability;

#[derive(Clone, Debug)]
pub struct Args {
    pub threads: usize,
    pub steps: usize,
    pub idle: usize,
    pub solo: usize,
    pub mode: String,
    /// `full`, `normal` or `both`.
    pub durability: String,
    /// `readonly`, `effectful` or `both`.
    pub tool: String,
    pub repeat: usize,
    /// A PostgreSQL server (`postgres://…`): each run gets a fresh database there instead of a
    /// SQLite file.
    pub database: Option<String>,
    /// Nodes (engines with their own stores) sharing the PostgreSQL database in `active` mode.
    pub nodes: usize,
}

impl Args {
    /// The modes to run, in order.
    pub fn modes(&self) -> Vec<&str> {
        match self.mode.as_str() {
            "both" => vec!["active", "idle"],
            "all" => vec!["active", "idle", "latency"],
            m => vec![m],
        }
    }

    pub fn durabilities(&self) -> Vec<&str> {
        match self.durability.as_str() {
            "both" => Durability::NAMES.to_vec(),
            d => vec![d],
        }
    }

    pub fn tools(&self) -> Vec<&str> {
        match self.tool.as_str() {
            "both" => Tool::NAMES.to_vec(),
            t => vec![t],
        }
    }
}

pub fn parse_args() -> Result<Args, String> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let as_bench = raw.iter().any(|a| a == "--bench");
    // `cargo test --benches` runs this without `--bench`: keep that quick.
    let mut args = if as_bench {
        Args {
            threads: 1000,
            steps: 10,
            idle: 10_000,
            solo: 100,
            mode: "both".into(),
            durability: "full".into(),
            tool: "readonly".into(),
            repeat: 1,
            database: None,
            nodes: 1,
        }
    } else {
        Args {
            threads: 8,
            steps: 2,
            idle: 50,
            solo: 4,
            mode: "both".into(),
            durability: "full".into(),
            tool: "both".into(),
            repeat: 1,
            database: None,
            nodes: 1,
        }
    };
    let mut it = raw.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (a.as_str(), None),
        };
        if flag == "--bench" {
            continue;
        }
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        let number = |v: String| {
            v.replace('_', "")
                .parse::<usize>()
                .map_err(|e| format!("{flag} {v}: {e}"))
        };
        match flag {
            "--threads" => args.threads = number(value()?)?,
            "--steps" => args.steps = number(value()?)?,
            "--idle" => args.idle = number(value()?)?,
            "--solo" => args.solo = number(value()?)?,
            "--mode" => args.mode = value()?,
            "--durability" => args.durability = value()?,
            "--tool" => args.tool = value()?,
            "--repeat" => args.repeat = number(value()?)?.max(1),
            "--database" => args.database = Some(value()?),
            "--nodes" => args.nodes = number(value()?)?.max(1),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if !matches!(
        args.mode.as_str(),
        "active" | "idle" | "latency" | "both" | "all"
    ) {
        return Err(format!(
            "--mode {} (expected active, idle, latency, both or all)",
            args.mode
        ));
    }
    if args.durability != "both" {
        args.durability
            .parse::<Durability>()
            .map_err(|e| format!("--durability: {e} (or \"both\")"))?;
    }
    if args.tool != "both" {
        args.tool
            .parse::<Tool>()
            .map_err(|e| format!("--tool: {e} (or \"both\")"))?;
    }
    if args.nodes > 1 && args.database.is_none() {
        return Err(
            "--nodes needs --database postgres://… (nodes share a PostgreSQL database)".into(),
        );
    }
    Ok(args)
}
