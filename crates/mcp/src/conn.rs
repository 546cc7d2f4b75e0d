//! One live connection to a server, on rmcp's client: a stdio child in its own process group
//! with an environment built like the shell tool's, or a streamable HTTP endpoint with an
//! optional bearer token. The SDK negotiates the protocol version when it initializes.

use crate::def::{ServerDef, Transport};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use troupe_tools::ShellEnv;

/// The most of a server's stderr kept for its status.
pub const STDERR_KEPT: usize = 64 * 1024;

/// The last [`STDERR_KEPT`] bytes a server wrote to stderr.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        q.extend(bytes);
        let over = q.len().saturating_sub(STDERR_KEPT);
        q.drain(..over);
    }
    pub fn text(&self) -> String {
        let q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (a, b) = q.as_slices();
        let mut v = a.to_vec();
        v.extend_from_slice(b);
        String::from_utf8_lossy(&v).into_owned()
    }
}

/// What the client tells the server's life about.
#[derive(Debug)]
pub enum Notice {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
}

/// The client side's handler: it asks nothing of the server and reports tool list changes;
/// the SDK answers sampling and other server requests with the protocol's refusal.
pub struct Handler {
    notices: mpsc::UnboundedSender<Notice>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.notices.send(Notice::ToolsChanged);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("troupe", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A live connection and what ends it.
pub struct Conn {
    pub service: RunningService<RoleClient, Handler>,
    /// The stdio server's child; `None` for HTTP.
    pub child: Option<tokio::process::Child>,
    pub pgid: Option<i32>,
}

/// The environment a stdio server starts with: the shell tool's whitelist, the variables the
/// definition passes through by name, then those it sets. Nothing else of the daemon's reaches it.
pub fn server_env(def: &ServerDef, lookup: impl Fn(&str) -> Option<String>) -> ShellEnv {
    let mut env = ShellEnv::from_process_env();
    for name in &def.env_vars {
        if let Some(v) = lookup(name) {
            env = env.with(name.clone(), v);
        }
    }
    for (k, v) in &def.env {
        env = env.with(k.clone(), v.clone());
    }
    env
}

/// Connect to the server `def` names, initialize, and return the live connection. Stderr of a
/// stdio server goes to `stderr`.
pub async fn connect(
    def: &ServerDef,
    default_cwd: &Path,
    stderr: &StderrTail,
    notices: mpsc::UnboundedSender<Notice>,
) -> Result<Conn, String> {
    let handler = Handler { notices };
    match def.transport() {
        Transport::Stdio { command, args, cwd } => {
            let env = server_env(def, |n| std::env::var(n).ok());
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .current_dir(cwd.map(Path::new).unwrap_or(default_cwd))
                .env_clear()
                .envs(env.vars.iter().map(|(k, v)| (k, v)))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                // Its own group, so a stop or the daemon's shutdown ends everything it started.
                .process_group(0)
                .kill_on_drop(true);
            let mut child = cmd
                .spawn()
                .map_err(|e| format!("cannot start '{command}': {e}"))?;
            let pgid = child.id().map(|p| p as i32);
            let mut reader = None;
            if let Some(mut err) = child.stderr.take() {
                let tail = stderr.clone();
                reader = Some(tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = err.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        tail.push(&buf[..n]);
                    }
                }));
            }
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err("the server's stdin or stdout could not be opened".into());
            };
            match handler.serve((stdout, stdin)).await {
                Ok(service) => Ok(Conn {
                    service,
                    child: Some(child),
                    pgid,
                }),
                Err(e) => {
                    let status = child.try_wait().ok().flatten();
                    end_group(pgid).await;
                    let _ = child.wait().await;
                    // What it wrote before it ended is the reason people need: read it to the
                    // end (bounded, in case something it started keeps the pipe open).
                    if let Some(reader) = reader {
                        let _ =
                            tokio::time::timeout(std::time::Duration::from_secs(2), reader).await;
                    }
                    Err(match status {
                        Some(s) => format!("the server exited ({s}) before it initialized: {e}"),
                        None => format!("the server did not initialize: {e}"),
                    })
                }
            }
        }
        Transport::Http {
            url,
            bearer_token_env_var,
        } => {
            install_tls_provider();
            let mut config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url);
            if let Some(var) = bearer_token_env_var {
                let token = std::env::var(var)
                    .map_err(|_| format!("the bearer token variable {var} is not set"))?;
                config = config.auth_header(token);
            }
            let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
            let service = handler
                .serve(transport)
                .await
                .map_err(|e| format!("cannot initialize with {url}: {e}"))?;
            Ok(Conn {
                service,
                child: None,
                pgid: None,
            })
        }
    }
}

/// End a stdio server's process group: SIGTERM, then SIGKILL if it is still there after the
/// grace; resolves once it is gone. Awaited, not dropped: the reaper thread signals on its
/// next pass, and a daemon (or `troupe mcp test`) that exits first would leave the group
/// running.
pub async fn end_group(pgid: Option<i32>) {
    if let Some(p) = pgid {
        troupe_tools::end_groups(&[p], std::time::Duration::from_secs(2)).await;
    }
}

/// reqwest is built without a crypto provider of its own; https needs one installed once.
fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_servers_env_has_the_whitelist_and_what_it_names_only() {
        let def = ServerDef::from_json(&json!({
            "name": "s", "command": "x",
            "env": {"MODE": "test"}, "env_vars": ["GITHUB_TOKEN", "ABSENT"]
        }))
        .unwrap();
        let env = server_env(&def, |n| (n == "GITHUB_TOKEN").then(|| "gh".to_string()));
        assert_eq!(env.get("MODE"), Some("test"));
        assert_eq!(env.get("GITHUB_TOKEN"), Some("gh"));
        assert_eq!(env.get("ABSENT"), None);
        for (k, _) in &env.vars {
            assert!(
                troupe_tools::SHELL_ENV_WHITELIST.contains(&k.as_str())
                    || ["MODE", "GITHUB_TOKEN"].contains(&k.as_str()),
                "{k} should not reach a server"
            );
        }
    }

    #[test]
    fn the_stderr_tail_keeps_the_last_bytes() {
        let t = StderrTail::default();
        t.push(&vec![b'a'; STDERR_KEPT]);
        t.push(b"end");
        let text = t.text();
        assert_eq!(text.len(), STDERR_KEPT);
        assert!(text.ends_with("aend"));
    }
}
