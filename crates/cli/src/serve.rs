//! `troupe serve`: the daemon with its HTTP API, event stream and web page.

use anyhow::anyhow;
use std::sync::Arc;
use std::time::Duration;
use troupe_core::run::RunLimits;
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;
use troupe_server::serve::ServeOptions;

use crate::args::ServeArgs;
use crate::config::Config;
use crate::paths;

/// Run the daemon until SIGTERM or Ctrl-C; returns the exit code.
pub async fn serve(args: ServeArgs) -> anyhow::Result<u8> {
    let opts = options(args)?;
    troupe_server::serve::serve(opts).await?;
    Ok(0)
}

/// The daemon's options from the command line and the config file. API keys are read from
/// the process environment when a model is called, never stored.
pub fn options(args: ServeArgs) -> anyhow::Result<ServeOptions> {
    if args.manual_clock {
        manual_clock_addr(&args.addr)?;
    }
    if args.no_token {
        loopback_only(&args.addr, "--no-token")?;
    }
    let data_dir = match args.data_dir {
        Some(d) => d,
        None => paths::data_dir(&paths::process_env)?,
    };
    let config = Config::locate(args.config.as_deref(), &paths::process_env)?;
    let mut allowed_hosts = config.serve.allowed_hosts.clone();
    for host in args.allowed_hosts {
        troupe_server::hosts::normalize_allowed_host(&host)
            .map_err(|m| anyhow!("--allowed-host: {m}"))?;
        allowed_hosts.push(host);
    }
    let secrets: SecretSource = Arc::new(|name| std::env::var(name).ok());
    let mut roles = RoleTable::new(secrets.clone());
    for (role, spec) in config.role_endpoints() {
        roles
            .set_role(role.as_str(), spec)
            .map_err(|e| anyhow!("role {role}: {e}"))?;
    }
    roles.timeout = Duration::from_secs(config.limits.request_timeout_secs);
    roles.retry.max_attempts = config.limits.max_attempts;
    let limits = RunLimits {
        max_hops: config.limits.max_hops,
        ..RunLimits::default()
    };
    let runtime_boss = config
        .experimental
        .runtime_boss()
        .map_err(|m| anyhow!("experimental.{m}"))?;
    Ok(ServeOptions {
        data_dir,
        addr: args.addr,
        roles,
        secrets,
        limits,
        loops: config.workflows.guard_limits(),
        token: args.token,
        no_token: args.no_token,
        allowed_hosts,
        key_env: config.key_env_rule()?,
        durability: config.durability(args.durability),
        database: config.database_url(args.database),
        reading_timeout: Duration::from_millis(config.reading.timeout_ms),
        mcp_servers: config.mcp_servers.into_values().collect(),
        channels: config.channels.into_values().collect(),
        manual_clock: args.manual_clock,
        runtime_boss,
    })
}

/// `--manual-clock` only with an address every resolution of which is loopback, checked before
/// anything is opened (the daemon checks the bound address again).
fn manual_clock_addr(addr: &str) -> anyhow::Result<()> {
    loopback_only(addr, "--manual-clock")
}

/// `flag` (a test switch that opens the daemon to every local account) only with an address
/// every resolution of which is loopback; the daemon checks the bound address again.
fn loopback_only(addr: &str, flag: &str) -> anyhow::Result<()> {
    use std::net::ToSocketAddrs;
    let resolved: Vec<_> = addr
        .to_socket_addrs()
        .map_err(|e| anyhow!("--addr {addr}: {e}"))?
        .collect();
    anyhow::ensure!(!resolved.is_empty(), "--addr {addr} resolves to no address");
    for a in &resolved {
        anyhow::ensure!(
            !troupe_server::serve::token_required(a),
            "{flag} is for tests on a loopback address; {a} is not loopback (--addr {addr})"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use clap::Parser;

    fn serve_args(extra: &[&str]) -> ServeArgs {
        let dir = std::env::temp_dir();
        let mut argv = vec!["troupe", "serve", "--data-dir"];
        argv.push(dir.to_str().unwrap());
        argv.extend(["--config", "/dev/null"]);
        argv.extend(extra);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Serve(a) => a,
            other => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn manual_clock_is_refused_off_loopback() {
        for addr in ["0.0.0.0:0", "[::]:7878", "192.0.2.7:7878"] {
            let err = options(serve_args(&["--manual-clock", "--addr", addr]))
                .err()
                .unwrap_or_else(|| panic!("{addr} was accepted"));
            let text = format!("{err:#}");
            assert!(text.contains("--manual-clock"), "{text}");
            assert!(text.contains("not loopback"), "{text}");
        }
        // Without the flag the same address is fine (it gets a token instead).
        assert!(
            !options(serve_args(&["--addr", "0.0.0.0:0"]))
                .unwrap()
                .manual_clock
        );
    }

    #[test]
    fn no_token_is_refused_off_loopback() {
        for addr in ["0.0.0.0:0", "[::]:7878", "192.0.2.7:7878"] {
            let err = options(serve_args(&["--no-token", "--addr", addr]))
                .err()
                .unwrap_or_else(|| panic!("{addr} was accepted"));
            let text = format!("{err:#}");
            assert!(text.contains("--no-token"), "{text}");
            assert!(text.contains("not loopback"), "{text}");
        }
        assert!(
            options(serve_args(&["--no-token", "--addr", "127.0.0.1:0"]))
                .unwrap()
                .no_token
        );
        assert!(!options(serve_args(&[])).unwrap().no_token);
    }

    #[test]
    fn manual_clock_on_loopback_is_passed_on() {
        for addr in ["127.0.0.1:0", "[::1]:0", "localhost:0"] {
            let o = options(serve_args(&["--manual-clock", "--addr", addr])).unwrap();
            assert!(o.manual_clock, "{addr}");
        }
        assert!(!options(serve_args(&[])).unwrap().manual_clock);
    }
}
