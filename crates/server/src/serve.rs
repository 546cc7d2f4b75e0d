//! Running the daemon: bind, decide on access, build the state, serve until SIGTERM or
//! Ctrl-C, then drain the engine and end every MCP server's process group.
//!
//! Once listening, the first line on stdout is `listening on http://HOST:PORT log in: URL`
//! (the web page's one-time login link; with `--no-token`, a warning instead), and
//! `DATA_DIR/daemon.json` holds `{"addr", "pid"}` until a graceful exit removes it.

use crate::bootstrap::build_state;
use anyhow::Context;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use troupe_core::run::RunLimits;
use troupe_engine::RoleTable;
use troupe_engine::models::SecretSource;
use troupe_store::Durability;

/// How long live runs get to reach a step boundary on shutdown.
pub const DRAIN_GRACE: Duration = Duration::from_secs(10);
/// How long open connections get to finish once the daemon stops accepting.
const HTTP_GRACE: Duration = Duration::from_secs(5);

pub struct ServeOptions {
    pub data_dir: PathBuf,
    /// `HOST:PORT`; port 0 picks a free one.
    pub addr: String,
    pub roles: RoleTable,
    pub secrets: SecretSource,
    pub limits: RunLimits,
    /// The continuation guard every new loop starts with (`[workflows]` in the config).
    pub loops: troupe_core::continuation_guard::GuardLimits,
    /// An explicit token; without one, the one in `DATA_DIR/token`, generated on first start.
    pub token: Option<String>,
    /// `--no-token`: check no token at all (tests on loopback only; refused elsewhere).
    pub no_token: bool,
    /// Names besides the bound address and loopback that `Host` may carry (`--allowed-host`).
    pub allowed_hosts: Vec<String>,
    /// Which variables an endpoint set through the API may name as its key.
    pub key_env: troupe_collab::KeyEnvRule,
    /// How the store syncs its commits.
    pub durability: Durability,
    /// The database's URL; `None`: `DATA_DIR/troupe.db`.
    pub database: Option<String>,
    /// How long one line reading may take, the wait for a reading slot included.
    pub reading_timeout: std::time::Duration,
    /// The config file's MCP servers (`[mcp_servers.NAME]`).
    pub mcp_servers: Vec<troupe_mcp::ServerDef>,
    /// The config file's chat channel accounts (`[channels.NAME]`).
    pub channels: Vec<troupe_channels::ChannelDef>,
    /// `--manual-clock`: time moves only through `POST /v1/debug/clock` and the scheduler
    /// ticks only through `POST /v1/debug/tick`. Loopback binds only.
    pub manual_clock: bool,
    /// The config file's `[experimental]` Runtime Boss settings (seeds; a stored value wins).
    pub runtime_boss: troupe_core::runtime_boss::RuntimeSettingsPatch,
}

/// `--manual-clock` lets any caller move the daemon's time: refused unless `addr` is loopback.
pub fn check_manual_clock_addr(addr: &SocketAddr) -> anyhow::Result<()> {
    anyhow::ensure!(
        !token_required(addr),
        "--manual-clock is for tests on a loopback address; {addr} is not loopback"
    );
    Ok(())
}

/// Whether clients must present a bearer token to a daemon bound to `addr`: anything that
/// is not a loopback address (the unspecified address included) can be reached by others.
pub fn token_required(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(ip) => !ip.is_loopback(),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => !v4.is_loopback(),
            None => !ip.is_loopback(),
        },
    }
}

/// 32 random bytes from the system, as 64 hex digits.
pub fn generate_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Write `contents` to `path` through a temporary file and a rename, so a reader never sees a
/// half-written file; the file gets `mode` from its creation on.
pub fn write_atomically(path: &Path, contents: &[u8], mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)?;
    f.write_all(contents)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// Write the access token to `DATA_DIR/token`, readable by its owner only.
pub fn write_token_file(data_dir: &Path, token: &str) -> std::io::Result<PathBuf> {
    let path = data_dir.join("token");
    write_atomically(&path, format!("{token}\n").as_bytes(), 0o600)?;
    Ok(path)
}

/// The token the daemon will require: the given one; else the one in `DATA_DIR/token`; else
/// a generated one, written there (owner-only) for the CLI to read. `None` only with
/// `no_token`, which a non-loopback address refuses.
pub fn decide_token(
    data_dir: &Path,
    addr: &SocketAddr,
    given: Option<String>,
    no_token: bool,
) -> anyhow::Result<Option<String>> {
    if no_token {
        anyhow::ensure!(
            given.is_none(),
            "--no-token and --token contradict each other"
        );
        anyhow::ensure!(
            !token_required(addr),
            "--no-token is for tests on a loopback address; {addr} is not loopback"
        );
        return Ok(None);
    }
    if let Some(t) = given {
        let t = t.trim().to_string();
        anyhow::ensure!(!t.is_empty(), "--token is empty");
        return Ok(Some(t));
    }
    let path = data_dir.join("token");
    match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => {
            // Kept for the next start: the CLI and any open page stay logged in.
            owner_only(&path)?;
            return Ok(Some(t.trim().to_string()));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    let token = generate_token().context("cannot generate an access token")?;
    let path = write_token_file(data_dir, &token).context("cannot write the token file")?;
    tracing::info!(path = %path.display(), "generated the access token: clients send it as a bearer token");
    Ok(Some(token))
}

/// A token file others can read is tightened to owner-only (one written by hand, say).
fn owner_only(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot make {} owner-only", path.display()))?;
        tracing::warn!(path = %path.display(), "the token file was readable by others: now owner-only");
    }
    Ok(())
}

/// What `--no-token` opens, said on the listening line and in the log.
pub const NO_TOKEN_WARNING: &str = "WARNING --no-token: no token is checked, so every local account can drive this daemon (run its shell commands); for tests only";

/// Serve until SIGTERM or Ctrl-C, then shut down gracefully.
pub async fn serve(opts: ServeOptions) -> anyhow::Result<()> {
    std::fs::create_dir_all(&opts.data_dir)
        .with_context(|| format!("cannot create data dir {}", opts.data_dir.display()))?;
    let listener = tokio::net::TcpListener::bind(&opts.addr)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {} (--addr takes HOST:PORT, e.g. 127.0.0.1:7878; port 0 picks a free one)",
                opts.addr
            )
        })?;
    let local = listener.local_addr()?;
    // Checked again on the address actually bound: a host name may resolve anywhere.
    if opts.manual_clock {
        check_manual_clock_addr(&local)?;
    }
    let host_rule =
        crate::hosts::HostRule::new(local, &opts.allowed_hosts).map_err(anyhow::Error::msg)?;
    let token = decide_token(&opts.data_dir, &local, opts.token, opts.no_token)?;
    let boot = build_state(
        &opts.data_dir,
        crate::bootstrap::BootOptions {
            roles: opts.roles,
            secrets: opts.secrets,
            limits: opts.limits,
            loops: opts.loops,
            token: token.map(Arc::from),
            key_env: opts.key_env,
            durability: opts.durability,
            database: opts.database,
            addr: Some(local.to_string()),
            reading_timeout: opts.reading_timeout,
            mcp_servers: opts.mcp_servers,
            channels: opts.channels,
            manual_clock: opts.manual_clock.then(|| {
                use troupe_core::Clock;
                troupe_core::ManualClock::new(troupe_core::SystemClock.now_ms())
            }),
            runtime_boss: opts.runtime_boss,
        },
    )
    .await?;
    let r = &boot.recovery;
    tracing::info!(recovery = ?r, "recovered");
    let mut state = boot.state;
    state.login = crate::access::LoginDesk::kept_in(opts.data_dir.join("web-sessions"))
        .context("cannot read DATA_DIR/web-sessions")?;
    let engine = state.collab.engine().clone();
    let mcp = state.mcp.clone();
    let shutdown = state.shutdown.clone();
    let daemon_file = opts.data_dir.join("daemon.json");
    let info = serde_json::json!({"addr": local.to_string(), "pid": std::process::id()});
    write_atomically(&daemon_file, info.to_string().as_bytes(), 0o644)
        .with_context(|| format!("cannot write {}", daemon_file.display()))?;
    // The first line names the address first (rigs read its third word), then how to log
    // the web page in, or what `--no-token` opens.
    let access = if state.token.is_some() {
        let once = state
            .login
            .issue()
            .context("cannot draw a one-time login code")?;
        format!("log in: http://{local}/login?once={once}")
    } else {
        tracing::warn!("{NO_TOKEN_WARNING}");
        NO_TOKEN_WARNING.to_string()
    };
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{local} {access}")?;
        out.flush()?;
    }
    tracing::info!(addr = %local, data_dir = %opts.data_dir.display(), "troupe daemon serving");

    let app = crate::app(state, host_rule);
    let signal = {
        let shutdown = shutdown.clone();
        async move {
            stop_signal().await;
            tracing::info!("shutting down: no new connections");
            shutdown.cancel();
        }
    };
    let server = axum::serve(listener, app).with_graceful_shutdown(signal);
    let served = tokio::select! {
        r = server => r.map_err(anyhow::Error::from),
        () = async { shutdown.cancelled().await; tokio::time::sleep(HTTP_GRACE).await } => {
            tracing::warn!("open connections did not finish in time; closing them");
            Ok(())
        }
    };
    let interrupted = engine.shutdown(DRAIN_GRACE).await;
    if !interrupted.is_empty() {
        tracing::info!(runs = ?interrupted, "recorded interrupted by the shutdown");
    }
    // After the runs: a draining turn may still be calling a server's tool.
    mcp.shutdown().await;
    if let Err(e) = engine.leave_cluster() {
        tracing::warn!(error = %e, "cannot record this node's stop");
    }
    if let Err(e) = std::fs::remove_file(&daemon_file) {
        tracing::warn!(error = %e, "cannot remove {}", daemon_file.display());
    }
    served.context("the HTTP server failed")?;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGTERM or Ctrl-C (SIGINT).
async fn stop_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_loopback_goes_without_a_token() {
        for (addr, required) in [
            ("127.0.0.1:7878", false),
            ("127.9.9.9:1", false),
            ("[::1]:7878", false),
            ("[::ffff:127.0.0.1]:7878", false),
            ("0.0.0.0:7878", true),
            ("[::]:7878", true),
            ("192.168.1.20:7878", true),
            ("[::ffff:10.0.0.1]:7878", true),
            ("[2001:db8::1]:80", true),
        ] {
            let a: SocketAddr = addr.parse().unwrap();
            assert_eq!(token_required(&a), required, "{addr}");
        }
    }

    #[test]
    fn a_token_is_generated_owner_only_once_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        for addr in ["127.0.0.1:0", "0.0.0.0:0"] {
            let dir = dir.path().join(addr.replace(':', "_"));
            std::fs::create_dir_all(&dir).unwrap();
            let addr: SocketAddr = addr.parse().unwrap();
            let token = decide_token(&dir, &addr, None, false)
                .unwrap()
                .expect("a token, loopback or not");
            assert_eq!(token.len(), 64);
            assert!(token.chars().all(|c| c.is_ascii_hexdigit()));
            let path = dir.join("token");
            assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), token);
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            // The next start reuses it.
            let again = decide_token(&dir, &addr, None, false).unwrap().unwrap();
            assert_eq!(again, token);
        }
    }

    #[test]
    fn a_readable_token_file_is_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "hand-written\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let t = decide_token(dir.path(), &addr, None, false).unwrap();
        assert_eq!(t.as_deref(), Some("hand-written"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_given_token_wins_and_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        for addr in ["127.0.0.1:0", "0.0.0.0:0"] {
            let addr: SocketAddr = addr.parse().unwrap();
            assert_eq!(
                decide_token(dir.path(), &addr, Some("s3cret".into()), false)
                    .unwrap()
                    .as_deref(),
                Some("s3cret")
            );
        }
        assert!(
            !dir.path().join("token").exists(),
            "a given token is not written"
        );
    }

    #[test]
    fn no_token_is_loopback_only() {
        let dir = tempfile::tempdir().unwrap();
        let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
        assert_eq!(decide_token(dir.path(), &lo, None, true).unwrap(), None);
        assert!(!dir.path().join("token").exists());
        for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.7:1"] {
            let a: SocketAddr = addr.parse().unwrap();
            let err = decide_token(dir.path(), &a, None, true).unwrap_err();
            assert!(err.to_string().contains("not loopback"), "{addr}: {err}");
        }
        assert!(decide_token(dir.path(), &lo, Some("t".into()), true).is_err());
    }
}
