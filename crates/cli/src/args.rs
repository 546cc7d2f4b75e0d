//! The command line, as clap parses it.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

use troupe_store::{Durability, UnknownDurability};

use crate::config::EndpointFlags;

/// `--durability`: the store's names, with its error for anything else.
pub fn durability_arg(s: &str) -> Result<Durability, UnknownDurability> {
    s.parse()
}

/// Troupe: a durable runtime for teams of LLM agents.
///
/// Every thread, message, tool call and side effect is recorded in a SQLite database
/// (`$XDG_DATA_HOME/troupe/troupe.db` by default), so work cut off by a crash or Ctrl-C can
/// be resumed without repeating what already ran.
#[derive(Debug, Parser)]
#[command(name = "troupe", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Exec(ExecArgs),
    Serve(ServeArgs),
    Pipeline(crate::pipeline_args::PipelineArgs),
    Bench(crate::golden::args::BenchArgs),
    Db(crate::db::DbArgs),
    Mcp(crate::mcp::McpArgs),
    LoginLink(crate::login_link::LoginLinkArgs),
}

/// Run the daemon: the HTTP API under /v1, live events over SSE, and the web page at /.
///
/// Once it listens, the first line on stdout is `listening on http://HOST:PORT log in: URL`,
/// and DATA_DIR/daemon.json holds its address and pid. Every request needs the token, on
/// loopback too (any local account can reach 127.0.0.1): clients send
/// `Authorization: Bearer TOKEN` (--token, else DATA_DIR/token, generated on the first start,
/// readable by you only, reused after); the web page logs in once through the one-time link
/// on the first line (`troupe login-link` prints a new one). SIGTERM or Ctrl-C stops it
/// gracefully: runs in progress get 10 seconds to reach a step boundary, the rest are
/// recorded interrupted.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where troupe keeps its database and the conversations' workspaces (default:
    /// $XDG_DATA_HOME/troupe, else ~/.local/share/troupe).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// The address to listen on; port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:7878")]
    pub addr: String,

    /// The config file (default: $XDG_CONFIG_HOME/troupe/config.toml, else
    /// ~/.config/troupe/config.toml; a missing default file is fine).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// How far each store commit goes before it is acknowledged: full (the default: synced
    /// to disk, a power loss loses nothing acknowledged) or normal (a power loss or OS crash
    /// may lose the last commits). Overrides the config file's `durability`.
    #[arg(long, value_name = "MODE", value_parser = durability_arg)]
    pub durability: Option<Durability>,

    /// The database: postgres://USER[:PASSWORD]@HOST[:PORT]/DB for PostgreSQL (several nodes
    /// may share one), or sqlite:///PATH or a plain path (default: DATA_DIR/troupe.db).
    /// Overrides the config file's `database_url`.
    #[arg(
        long,
        value_name = "URL",
        env = "TROUPE_DATABASE_URL",
        hide_env_values = true
    )]
    pub database: Option<String>,

    /// The bearer token clients must send (default: DATA_DIR/token, generated on the first
    /// start).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TROUPE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// For tests: check no token at all, so every local account can drive the daemon and
    /// run its shell commands. Said on the first line and in the log; refused unless --addr
    /// is a loopback address.
    #[arg(long, conflicts_with = "token")]
    pub no_token: bool,

    /// A host name the daemon also answers to, besides loopback names and the bound address
    /// (e.g. troupe.lan); repeatable, added to the config file's serve.allowed_hosts. Requests
    /// whose Host header names anything else are refused, so a web page that points its own
    /// name at this address (DNS rebinding) cannot reach the API.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,

    /// For tests: the daemon's clock starts at the system time and moves only through
    /// POST /v1/debug/clock {advance_ms}; the 15 s scheduler tick runs only on
    /// POST /v1/debug/tick. Refused unless --addr is a loopback address.
    #[arg(long)]
    pub manual_clock: bool,
}

/// Run one task with a coding agent in a workspace, until it is done.
///
/// The agent works in the workspace directory with the tools read_file, write_file,
/// edit_file, list_dir, delete_file and shell. Progress goes to stderr; the agent's final answer goes to
/// stdout. The first line on stderr names the thread (`thread th_N`), which
/// `--resume th_N` picks up again after a failure, a crash or Ctrl-C.
///
/// The model comes from the config file (see docs/CONFIG.md), or from --script FILE, or
/// from --base-url URL --model NAME, or --provider anthropic --model NAME.
///
/// Exit codes: 0 the task completed; 1 it failed, was stopped or interrupted (one line on
/// stderr says why); 2 the command line was wrong; 130 Ctrl-C stopped it.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  troupe exec --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b \"add a README\"\n  troupe exec --script demo.json \"do the thing\"\n  troupe exec --resume th_3"
)]
pub struct ExecArgs {
    /// The task, in plain words. Optional with --resume.
    #[arg(value_name = "TASK")]
    pub task: Option<String>,

    /// The directory the agent works in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// Where troupe keeps its database (default: $XDG_DATA_HOME/troupe, else
    /// ~/.local/share/troupe).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// The config file (default: $XDG_CONFIG_HOME/troupe/config.toml, else
    /// ~/.config/troupe/config.toml; a missing default file is fine).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// How far each store commit goes before it is acknowledged: full (the default: synced
    /// to disk, a power loss loses nothing acknowledged) or normal (a power loss or OS crash
    /// may lose the last commits). Overrides the config file's `durability`.
    #[arg(long, value_name = "MODE", value_parser = durability_arg)]
    pub durability: Option<Durability>,

    /// Base URL of an OpenAI-compatible (or, with --provider, Anthropic) API; needs --model.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// The model to call. Alone, it replaces the model of the configured default endpoint.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,

    /// The environment variable that holds the API key (the key itself is never passed on
    /// the command line).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,

    /// The API flavour: openai (default) or anthropic; needs --model.
    #[arg(long, value_name = "P")]
    pub provider: Option<String>,

    /// Play canned model answers from a script file instead of calling a model (see
    /// crates/llm/SCRIPT_FORMAT.md).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["base_url", "model", "api_key_env", "provider", "max_output_tokens"])]
    pub script: Option<PathBuf>,

    /// The most tokens one model reply may run to (1 to 1000000); without --base-url it caps
    /// the configured default endpoint.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_output_tokens: Option<u32>,

    /// Use the built-in scripted demo model: no API key, no network. It lists the workspace,
    /// runs one harmless shell command and explains itself.
    #[arg(long, conflicts_with_all = ["base_url", "model", "api_key_env", "provider", "script"])]
    pub demo: bool,

    /// Print one JSON object per line on stdout (every stored event and live notice, then a
    /// final `{"type":"result",...}`) instead of human progress.
    #[arg(long)]
    pub json: bool,

    /// Resume thread THREAD_ID (`th_5` or `5`): continue where it was cut off, or, with
    /// TASK, give it a new task.
    #[arg(long, value_name = "THREAD_ID")]
    pub resume: Option<String>,

    /// An MCP server the agent may use in this run only, as one argument NAME=COMMAND ARG…:
    /// the command line after `=` is split on whitespace (no quoting; use the config file's
    /// [mcp_servers.NAME] for arguments with spaces). Repeatable. Its tools are offered as
    /// NAME__TOOL. E.g. --mcp "files=npx -y @modelcontextprotocol/server-filesystem /tmp".
    #[arg(long = "mcp", value_name = "NAME=COMMAND")]
    pub mcp: Vec<String>,
}

impl ExecArgs {
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
