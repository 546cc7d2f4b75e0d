//! The `troupe` binary.

use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;
use troupe_cli::args::{Cli, Command};
use troupe_cli::exec::{UsageError, exec};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The daemon reports what it does; a one-shot command only warns.
    let default_level = match cli.command {
        Command::Serve(_) => {
            "warn,troupe_server=info,troupe_engine=info,troupe_collab=info,troupe_cli=info"
        }
        Command::Exec(_)
        | Command::Pipeline(_)
        | Command::Bench(_)
        | Command::Db(_)
        | Command::Mcp(_)
        | Command::LoginLink(_) => "warn",
    };
    init_tracing(default_level);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("troupe: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Exec(args) => exec(args).await,
            Command::Serve(args) => troupe_cli::serve::serve(args).await,
            Command::Pipeline(args) => troupe_cli::pipeline::pipeline(args).await,
            Command::Db(args) => troupe_cli::db::db(args),
            Command::Mcp(args) => troupe_cli::mcp::mcp(args).await,
            Command::LoginLink(args) => troupe_cli::login_link::login_link(args).await,
            Command::Bench(args) => match args.command {
                troupe_cli::golden::args::BenchCommand::Golden(g) => {
                    troupe_cli::golden::golden(*g).await
                }
                troupe_cli::golden::args::BenchCommand::Groups(g) => {
                    troupe_cli::bench_groups::groups(g).await
                }
            },
        }
    });
    // Loops of threads this command does not wait for must not hold the exit up.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("troupe: {}", one_line(&e));
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// The error and its causes on one line.
fn one_line(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn init_tracing(default_level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TROUPE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}
