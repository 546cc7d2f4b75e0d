//! `troupe bench golden` on the command line.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Measure Troupe on fixed jobs against a model.
#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub command: BenchCommand,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    Golden(Box<GoldenArgs>),
    Groups(crate::bench_groups::GroupsArgs),
}

/// Run the golden-path jobs (bench/golden) against a model, each through a real `troupe serve`
/// on a fresh data dir and workspace, judged by the job's deterministic checks.
///
/// Name the model with --base-url and --model (an OpenAI-compatible server; --kind anthropic for
/// Anthropic), or pass your own --config file, or --script-set for scripted answers (the CI
/// test). Writes results.json and results.md into --out, and prints the table.
#[derive(Debug, Args)]
pub struct GoldenArgs {
    /// The endpoint's base URL, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL", requires = "model", conflicts_with_all = ["config", "script_set"])]
    pub base_url: Option<String>,

    /// The model name to send.
    #[arg(long, value_name = "NAME", requires = "base_url")]
    pub model: Option<String>,

    /// The wire protocol of --base-url: openai (any OpenAI-compatible server) or anthropic.
    #[arg(long, value_name = "KIND", default_value = "openai", value_parser = ["openai", "anthropic"])]
    pub kind: String,

    /// The environment variable holding the API key (never the key itself).
    #[arg(long, value_name = "VAR", requires = "base_url")]
    pub api_key_env: Option<String>,

    /// Use this config file's endpoints and roles as they are (no prompt-reuse figures), or,
    /// with --role, the endpoint of one of its roles for every role.
    #[arg(long, value_name = "FILE", conflicts_with = "script_set")]
    pub config: Option<PathBuf>,

    /// With --config: measure this role's endpoint (e.g. default), through the bench's proxy.
    #[arg(long, value_name = "ROLE", requires = "config")]
    pub role: Option<String>,

    /// Scripted answers instead of a model: each job's scripts/<SET>.json (the CI test uses
    /// `work` and `noop`).
    #[arg(long, value_name = "SET")]
    pub script_set: Option<String>,

    /// The jobs directory.
    #[arg(long, value_name = "DIR", default_value = "bench/golden")]
    pub jobs_dir: PathBuf,

    /// Only these jobs, by id (comma-separated).
    #[arg(long, value_name = "A,B,…", value_delimiter = ',')]
    pub jobs: Vec<String>,

    /// Run each job this many times.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,

    /// Where the results and each run's data dir go.
    #[arg(long, value_name = "DIR", default_value = "golden-results")]
    pub out: PathBuf,

    /// Price per million input tokens (for the cost column).
    #[arg(long, value_name = "PRICE", requires = "price_out")]
    pub price_in: Option<f64>,

    /// Price per million output tokens.
    #[arg(long, value_name = "PRICE", requires = "price_in")]
    pub price_out: Option<f64>,

    /// Cap every job's wall-clock limit at this many seconds (for slow local models).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_wall_secs: Option<u64>,

    /// The most tokens one model reply may run to (1 to 1000000), for the measured endpoint
    /// (replaces what --config --role gives it): a slow local model's runaway answer then ends
    /// at the cap instead of at the job's wall-clock limit.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_output_tokens: Option<u32>,

    /// Plain progress lines even in a terminal.
    #[arg(long)]
    pub plain: bool,
}
