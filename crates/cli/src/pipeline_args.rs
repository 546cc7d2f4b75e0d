//! `troupe pipeline …` as clap parses it.

use clap::{Args, Subcommand};
use std::path::PathBuf;

use troupe_store::Durability;

use crate::config::EndpointFlags;

/// Pipelines: chains of operator agents run as sessions on disk.
///
/// A definitions folder (operators, routing, workflows; see crates/pipeline/README.md) says
/// what may run. `run` starts a session of a workflow on a git checkout: every branch's
/// request is written and gated, its operator runs as an agent that may write only its own
/// branch's response (and, for a source writer, its write roots in the session checkout), its
/// response is gated and routed. Progress goes to stderr, one line per transition.
///
/// Exit codes: 0 the session is done; 3 it blocked (or was stopped) and stays on disk; 1 an
/// error; 2 the command line was wrong; 130 Ctrl-C (resume it with `troupe pipeline resume`).
#[derive(Debug, Args)]
pub struct PipelineArgs {
    #[command(subcommand)]
    pub command: PipelineCommand,
}

#[derive(Debug, Subcommand)]
pub enum PipelineCommand {
    Run(RunArgs),
    Status(StatusArgs),
    Resume(ResumeArgs),
    Stop(StopArgs),
    Validate(ValidateArgs),
}

/// Start a session of WORKFLOW on the checkout at --source and run it to its end or a stop.
#[derive(Debug, Args)]
#[command(
    after_help = "Example (scripted agents, no model needed):\n  troupe pipeline run deliver --defs crates/pipeline/examples/defs \\\n    --script-dir crates/pipeline/examples/scripts --source /path/to/repo"
)]
pub struct RunArgs {
    /// The workflow's name (`workflows/<name>.json` in the definitions).
    #[arg(value_name = "WORKFLOW")]
    pub workflow: String,

    /// A value laid over every branch's requirements; repeatable. VALUE is read as JSON when
    /// it parses, else as text.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,

    /// The most steps the session may open.
    #[arg(long, value_name = "N", default_value_t = 24)]
    pub max_steps: u32,

    /// The most runs of one operator (and nested exchanges of one branch).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_same_operator: u32,

    /// The project name in the session id (default: the source folder's name).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,

    #[command(flatten)]
    pub common: RunnerFlags,
}

/// Continue a session: after a crash, from its manifest; when blocked, by re-entering the
/// blocked branch in a new step with `resume` naming it.
///
/// The options `run` was given (definitions, models, data dir, durability, agents, audit
/// folder) are recorded in the session folder and used again; a flag given here replaces its
/// recorded value (any endpoint flag replaces the recorded endpoint flags together).
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The session id (the folder name under SOURCE/.worktrees/sessions/).
    #[arg(value_name = "SESSION")]
    pub session: String,

    #[command(flatten)]
    pub common: RunnerFlags,
}

/// Show a session: the chain, each branch's status and stop, leases, budget. Without SESSION,
/// list the sessions of the checkout.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[arg(value_name = "SESSION")]
    pub session: Option<String>,

    /// The checkout the sessions live in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub source: Option<PathBuf>,
}

/// End a session for a person: status `stopped`, every lease released; the folder stays.
#[derive(Debug, Args)]
pub struct StopArgs {
    #[arg(value_name = "SESSION")]
    pub session: String,

    /// The checkout the session lives in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub source: Option<PathBuf>,

    /// Why, recorded in the manifest.
    #[arg(long, value_name = "TEXT", default_value = "stopped by a person")]
    pub why: String,
}

/// Check a definitions folder and list every problem (exit 1 if there is any).
#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[arg(value_name = "DEFS_DIR")]
    pub defs: PathBuf,
}

/// Where things are and which models the operators call.
#[derive(Debug, Args)]
pub struct RunnerFlags {
    /// The definitions folder (needed by `run`; `resume` uses the one recorded at run).
    #[arg(long, value_name = "DIR")]
    pub defs: Option<PathBuf>,

    /// The git checkout the session works on (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub source: Option<PathBuf>,

    /// At most this many agents at once (default 3).
    #[arg(long, value_name = "N")]
    pub max_agents: Option<usize>,

    /// Copy the session folder into DIR/<session>/ before a done session is removed.
    #[arg(long, value_name = "DIR")]
    pub keep_audit: Option<PathBuf>,

    /// Per-operator scripted models: DIR/<operator>.json plays that operator's agent (see
    /// crates/llm/SCRIPT_FORMAT.md); operators without one use the configured model.
    #[arg(long, value_name = "DIR")]
    pub script_dir: Option<PathBuf>,

    /// Where troupe keeps its database (default: $XDG_DATA_HOME/troupe, else
    /// ~/.local/share/troupe).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// The config file (roles map each operator's profile to a model; see docs/CONFIG.md).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// How far each store commit goes before it is acknowledged: full (the default) or
    /// normal (a power loss may lose the last commits). Overrides the config file.
    #[arg(long, value_name = "MODE", value_parser = crate::args::durability_arg)]
    pub durability: Option<Durability>,

    /// Base URL of an OpenAI-compatible (or, with --provider, Anthropic) API; needs --model.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// The model every operator calls unless its profile's role says otherwise.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,

    /// The environment variable that holds the API key.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,

    /// The API flavour: openai (default) or anthropic; needs --model.
    #[arg(long, value_name = "P")]
    pub provider: Option<String>,

    /// One scripted model for every operator without its own in --script-dir.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["base_url", "model", "api_key_env", "provider", "max_output_tokens"])]
    pub script: Option<PathBuf>,

    /// The most tokens one model reply may run to (1 to 1000000); without --base-url it caps
    /// the configured default endpoint.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_output_tokens: Option<u32>,
}

impl RunnerFlags {
    pub fn endpoint_flags(&self) -> EndpointFlags {
        EndpointFlags {
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key_env: self.api_key_env.clone(),
            provider: self.provider.clone(),
            script: self.script.clone(),
            max_output_tokens: self.max_output_tokens,
        }
    }
}
