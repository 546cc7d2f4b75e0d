//! `troupe mcp`: the daemon's MCP servers from the command line (list, add, remove through its
//! API), `test` (connect once, list the tools; no daemon needed), and the `--mcp` flag of
//! `troupe exec`.

use anyhow::{Context, anyhow, bail};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use troupe_mcp::{ServerDef, ToolInfo};

use crate::config::Config;
use crate::exec::UsageError;
use crate::paths;

/// Manage the MCP servers whose tools Bots may use.
///
/// list, add and remove talk to the running daemon (`troupe serve`), found through
/// DATA_DIR/daemon.json or --addr; its token comes from --token, TROUPE_TOKEN or DATA_DIR/token.
/// test connects to a server once and prints its tools; it takes the server's definition from
/// the daemon when one runs, else from the config file's [mcp_servers.NAME].
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  troupe mcp list\n  troupe mcp add files -- npx -y @modelcontextprotocol/server-filesystem /srv/notes\n  troupe mcp add docs --url https://mcp.example.com/mcp --bearer-token-env-var DOCS_TOKEN\n  troupe mcp test files\n  troupe mcp remove files"
)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,

    /// Where troupe keeps its database, daemon.json and token (default: $XDG_DATA_HOME/troupe,
    /// else ~/.local/share/troupe).
    #[arg(long, value_name = "DIR", global = true)]
    pub data_dir: Option<PathBuf>,

    /// The daemon's address, instead of the one DATA_DIR/daemon.json names.
    #[arg(long, value_name = "HOST:PORT", global = true)]
    pub addr: Option<String>,

    /// The daemon's bearer token (default: DATA_DIR/token when that file exists).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TROUPE_TOKEN",
        hide_env_values = true,
        global = true
    )]
    pub token: Option<String>,

    /// The config file `test` reads a definition from when no daemon runs (default:
    /// $XDG_CONFIG_HOME/troupe/config.toml, else ~/.config/troupe/config.toml).
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Print the daemon's MCP servers with their status.
    List,
    /// Add a server to the daemon: `add NAME -- COMMAND ARG…` (stdio) or `add NAME --url URL`.
    Add(AddArgs),
    /// Remove a server from the daemon: its process ends and its tools leave the next turn.
    Remove {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Connect to a server once, list its tools and print them (read-only or effect).
    Test {
        #[arg(value_name = "NAME")]
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The server's name, 1 to 32 of a-z, 0-9, '_' and '-'; its tools are offered as NAME__TOOL.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// The endpoint of a streamable HTTP server (instead of a command after `--`).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// The environment variable of the daemon that holds the HTTP server's bearer token.
    #[arg(long, value_name = "VAR", requires = "url")]
    pub bearer_token_env_var: Option<String>,

    /// A variable set for the stdio server; repeatable.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,

    /// A variable passed through from the daemon's environment to the server; repeatable.
    #[arg(long = "env-var", value_name = "NAME")]
    pub env_vars: Vec<String>,

    /// The working directory of the stdio server (default: DATA_DIR/mcp, as the daemon has it).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// How long one tool call may take, 1 to 1800 seconds (default 120).
    #[arg(long = "timeout", value_name = "SECS")]
    pub timeout: Option<u64>,

    /// A Bot allowed to use it; repeatable (default: every Bot).
    #[arg(long = "bot", value_name = "NAME")]
    pub bots: Vec<String>,

    /// Store it disabled: it is not started and its tools are not offered.
    #[arg(long)]
    pub disabled: bool,

    /// The stdio server's command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Run `troupe mcp`; returns the exit code.
pub async fn mcp(args: McpArgs) -> anyhow::Result<u8> {
    let data_dir = match &args.data_dir {
        Some(d) => d.clone(),
        None => paths::data_dir(&paths::process_env)?,
    };
    let daemon = Daemon::find(&data_dir, args.addr.as_deref(), args.token.clone())?;
    match &args.command {
        McpCommand::List => list(&need(daemon, &data_dir)?).await,
        McpCommand::Add(add_args) => {
            let def = definition(add_args)?;
            add(&need(daemon, &data_dir)?, &def).await
        }
        McpCommand::Remove { name } => {
            need(daemon, &data_dir)?
                .send(reqwest::Method::DELETE, &server_path(name), None)
                .await?;
            println!("removed {name}");
            Ok(0)
        }
        McpCommand::Test { name } => test(&args, daemon, &data_dir, name).await,
    }
}

pub(crate) fn need(daemon: Option<Daemon>, data_dir: &Path) -> anyhow::Result<Daemon> {
    daemon.ok_or_else(|| {
        anyhow!(
            "no troupe daemon is running for {} (no live daemon.json there): start one with \
             `troupe serve`, or give --addr HOST:PORT (and --data-dir if it uses another)",
            data_dir.display()
        )
    })
}

fn server_path(name: &str) -> String {
    // Server names are [a-z0-9_-]; anything else cannot name one, so it is sent escaped and
    // the daemon answers 404.
    let escaped: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("/v1/mcp-servers/{escaped}")
}

/// A running daemon's API, sending its token (`--token`, `TROUPE_TOKEN`, else DATA_DIR/token).
pub(crate) struct Daemon {
    pub(crate) base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Daemon {
    /// The daemon `--addr` names, else the live one DATA_DIR/daemon.json names, else none.
    pub(crate) fn find(
        data_dir: &Path,
        addr: Option<&str>,
        token: Option<String>,
    ) -> anyhow::Result<Option<Daemon>> {
        let addr = match addr {
            Some(a) => a.to_string(),
            None => {
                let file = data_dir.join("daemon.json");
                let text = match std::fs::read_to_string(&file) {
                    Ok(t) => t,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(e).context(format!("cannot read {}", file.display())),
                };
                let info: Value = serde_json::from_str(&text)
                    .with_context(|| format!("{} is not JSON", file.display()))?;
                let (Some(addr), Some(pid)) = (
                    info.get("addr").and_then(Value::as_str),
                    info.get("pid").and_then(Value::as_i64),
                ) else {
                    bail!("{} lacks its addr or pid", file.display());
                };
                // A daemon killed without its graceful exit leaves the file behind.
                if !alive(pid) {
                    return Ok(None);
                }
                addr.to_string()
            }
        };
        let token = match token.filter(|t| !t.trim().is_empty()) {
            Some(t) => Some(t.trim().to_string()),
            None => match std::fs::read_to_string(data_dir.join("token")) {
                Ok(t) if !t.trim().is_empty() => Some(t.trim().to_string()),
                _ => None,
            },
        };
        let base = if addr.starts_with("http://") || addr.starts_with("https://") {
            addr.trim_end_matches('/').to_string()
        } else {
            format!("http://{addr}")
        };
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .context("cannot build the HTTP client")?;
        Ok(Some(Daemon { base, token, http }))
    }

    /// Send a request; an API error becomes an error with the daemon's message.
    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Value> {
        self.try_send(method, path, body)
            .await?
            .map_err(|(_, message)| anyhow!("{message}"))
    }

    /// Send a request; `Err((status, message))` when the daemon refused it.
    async fn try_send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Result<Value, (u16, String)>> {
        let url = format!("{}{path}", self.base);
        let mut req = self.http.request(method, &url);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req
            .send()
            .await
            .with_context(|| format!("cannot reach the troupe daemon at {}", self.base))?;
        let status = resp.status();
        let text = resp
            .text()
            .await
            .with_context(|| format!("reading the daemon's answer to {path}"))?;
        let json: Value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text.clone()))
        };
        if status.is_success() {
            return Ok(Ok(json));
        }
        let message = json
            .pointer("/error/message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("the daemon answered {status}: {}", text.trim()));
        Ok(Err((status.as_u16(), message)))
    }
}

fn alive(pid: i64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// How a definition reaches its server, in one line.
fn transport(def: &ServerDef) -> String {
    match (&def.command, &def.url) {
        (Some(c), _) => {
            let mut line = format!("stdio: {c}");
            for a in &def.args {
                line.push(' ');
                line.push_str(a);
            }
            line
        }
        (None, Some(u)) => format!("http: {u}"),
        (None, None) => "no transport".into(),
    }
}

/// The state of a server view in a few words: `ready, 3 tools`, `failed: why`.
fn state_words(view: &Value) -> String {
    let status = &view["status"];
    let state = status["state"].as_str().unwrap_or("unknown");
    match state {
        "ready" => {
            let n = status["tool_count"].as_u64().unwrap_or(0);
            format!("ready, {n} tool{}", if n == 1 { "" } else { "s" })
        }
        "failed" => match status["last_error"].as_str() {
            Some(e) => format!("failed: {}", e.lines().next().unwrap_or(e)),
            None => "failed".into(),
        },
        other => other.to_string(),
    }
}

async fn list(daemon: &Daemon) -> anyhow::Result<u8> {
    let views = daemon
        .send(reqwest::Method::GET, "/v1/mcp-servers", None)
        .await?;
    let views = views.as_array().cloned().unwrap_or_default();
    if views.is_empty() {
        println!("no MCP servers (add one with: troupe mcp add NAME -- COMMAND ARG…)");
        return Ok(0);
    }
    for v in &views {
        let def: ServerDef = serde_json::from_value(v["definition"].clone())
            .context("the daemon sent a server definition this troupe cannot read")?;
        let mut line = format!("{}  {}  {}", def.name, state_words(v), transport(&def));
        if !def.bots.is_empty() {
            line.push_str(&format!("  (bots: {})", def.bots.join(", ")));
        }
        println!("{line}");
    }
    Ok(0)
}

/// The definition `troupe mcp add` describes, checked before it is sent.
fn definition(a: &AddArgs) -> anyhow::Result<ServerDef> {
    let (command, args) = match a.command.split_first() {
        Some((c, rest)) => (Some(c.clone()), rest.to_vec()),
        None => (None, Vec::new()),
    };
    if command.is_none() && a.url.is_none() {
        return Err(UsageError(format!(
            "say how to reach {}: `troupe mcp add {} -- COMMAND ARG…` or `--url URL`",
            a.name, a.name
        ))
        .into());
    }
    let mut env = BTreeMap::new();
    for kv in &a.env {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(UsageError(format!("--env {kv}: expected KEY=VALUE")).into());
        };
        env.insert(k.to_string(), v.to_string());
    }
    let cwd = match &a.cwd {
        Some(d) => Some(
            std::path::absolute(d)
                .with_context(|| format!("--cwd {}", d.display()))?
                .to_str()
                .ok_or_else(|| UsageError(format!("--cwd {}: not valid UTF-8", d.display())))?
                .to_string(),
        ),
        None => None,
    };
    let def = ServerDef {
        name: a.name.clone(),
        command,
        args,
        cwd,
        url: a.url.clone(),
        bearer_token_env_var: a.bearer_token_env_var.clone(),
        env,
        env_vars: a.env_vars.clone(),
        tool_timeout_sec: a
            .timeout
            .unwrap_or(troupe_mcp::def::DEFAULT_TOOL_TIMEOUT_SEC),
        enabled: !a.disabled,
        bots: a.bots.clone(),
    };
    def.validate()
        .map_err(|e| UsageError(format!("MCP server {}: {e}", a.name)))?;
    Ok(def)
}

async fn add(daemon: &Daemon, def: &ServerDef) -> anyhow::Result<u8> {
    let body = serde_json::to_value(def)?;
    let view = daemon
        .send(reqwest::Method::POST, "/v1/mcp-servers", Some(&body))
        .await?;
    println!(
        "added {}: {} ({})",
        def.name,
        state_words(&view),
        transport(def)
    );
    if def.enabled {
        println!(
            "see its status with: troupe mcp list, or troupe mcp test {}",
            def.name
        );
    }
    Ok(0)
}

async fn test(
    args: &McpArgs,
    daemon: Option<Daemon>,
    data_dir: &Path,
    name: &str,
) -> anyhow::Result<u8> {
    let from_daemon = match &daemon {
        Some(d) => match d
            .try_send(reqwest::Method::GET, &server_path(name), None)
            .await?
        {
            // A ServerView's JSON; its definition is what is tested.
            Ok(view) => Some(
                serde_json::from_value::<ServerDef>(view["definition"].clone())
                    .context("the daemon sent a server definition this troupe cannot read")?,
            ),
            Err((404, _)) => None,
            Err((_, message)) => bail!("{message}"),
        },
        None => None,
    };
    let def = match from_daemon {
        Some(def) => def,
        None => {
            let config = Config::locate(args.config.as_deref(), &paths::process_env)?;
            match config.mcp_servers.get(name) {
                Some(def) => def.clone(),
                None => bail!(
                    "no MCP server is named '{name}' ({}, nor in the config file's \
                     [mcp_servers] tables)",
                    if daemon.is_some() {
                        "not in the running daemon"
                    } else {
                        "no daemon runs"
                    }
                ),
            }
        }
    };
    println!("{}: {}", def.name, transport(&def));
    // A stdio server without a cwd starts where the daemon would start it: DATA_DIR/mcp.
    let cwd = data_dir.join("mcp");
    std::fs::create_dir_all(&cwd).with_context(|| format!("cannot create {}", cwd.display()))?;
    match troupe_mcp::probe(&def, &cwd).await {
        Ok((tools, left_out)) => {
            print_tools(&tools, &left_out);
            Ok(0)
        }
        Err(e) => {
            // Printed here rather than returned: the server's stderr keeps its lines.
            eprintln!("troupe: cannot use the MCP server {}: {e}", def.name);
            Ok(1)
        }
    }
}

fn print_tools(tools: &[ToolInfo], left_out: &[String]) {
    println!(
        "connected: {} tool{}",
        tools.len(),
        if tools.len() == 1 { "" } else { "s" }
    );
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for t in tools {
        let kind = if t.read_only { "read-only" } else { "effect" };
        let first = t.description.lines().next().unwrap_or("").trim();
        println!("  {:width$}  {kind:9}  {first}", t.name);
    }
    if !left_out.is_empty() {
        println!("left out ({}):", left_out.len());
        for l in left_out {
            println!("  {l}");
        }
    }
}

/// `troupe exec --mcp NAME=COMMAND ARG…`: the definitions of a one-off run's servers. The
/// command line is split on whitespace, without quoting.
pub fn exec_servers(flags: &[String]) -> Result<Vec<ServerDef>, UsageError> {
    let mut defs: Vec<ServerDef> = Vec::new();
    for flag in flags {
        let Some((name, line)) = flag.split_once('=') else {
            return Err(UsageError(format!(
                "--mcp {flag}: expected NAME=COMMAND ARG… (e.g. --mcp \"files=npx -y \
                 @modelcontextprotocol/server-filesystem /tmp\")"
            )));
        };
        let name = name.trim();
        let mut words = line.split_whitespace().map(str::to_string);
        let Some(command) = words.next() else {
            return Err(UsageError(format!(
                "--mcp {name}=: the command is empty; give NAME=COMMAND ARG…"
            )));
        };
        let def = ServerDef {
            name: name.to_string(),
            command: Some(command),
            args: words.collect(),
            cwd: None,
            url: None,
            bearer_token_env_var: None,
            env: BTreeMap::new(),
            env_vars: Vec::new(),
            tool_timeout_sec: troupe_mcp::def::DEFAULT_TOOL_TIMEOUT_SEC,
            enabled: true,
            bots: Vec::new(),
        };
        def.validate()
            .map_err(|e| UsageError(format!("--mcp {name}: {e}")))?;
        if defs.iter().any(|d| d.name == def.name) {
            return Err(UsageError(format!(
                "--mcp {name} is given twice; each server needs its own name"
            )));
        }
        defs.push(def);
    }
    Ok(defs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_flags_split_the_command_on_whitespace() {
        let defs = exec_servers(&["files=npx  -y server /tmp".into(), "t=srv".into()]).unwrap();
        assert_eq!(defs[0].name, "files");
        assert_eq!(defs[0].command.as_deref(), Some("npx"));
        assert_eq!(defs[0].args, ["-y", "server", "/tmp"]);
        assert!(defs[1].args.is_empty());
    }

    #[test]
    fn bad_exec_flags_say_what_is_wrong() {
        let e = exec_servers(&["files".into()]).unwrap_err().0;
        assert!(e.contains("expected NAME=COMMAND"), "{e}");
        let e = exec_servers(&["files=  ".into()]).unwrap_err().0;
        assert!(e.contains("the command is empty"), "{e}");
        let e = exec_servers(&["Files=x".into()]).unwrap_err().0;
        assert!(e.contains("--mcp Files: name:"), "{e}");
        let e = exec_servers(&["a=x".into(), "a=y".into()]).unwrap_err().0;
        assert!(e.contains("given twice"), "{e}");
    }

    #[test]
    fn server_paths_escape_what_cannot_be_a_name() {
        assert_eq!(server_path("files"), "/v1/mcp-servers/files");
        assert_eq!(server_path("a/b"), "/v1/mcp-servers/a%2Fb");
    }
}
