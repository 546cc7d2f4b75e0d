//! `[mcp_servers.NAME]`: the MCP servers `troupe serve` starts, in the shape codex users know.
//!
//! ```toml
//! [mcp_servers.files]
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"]
//! # cwd = "/srv"                   # absolute, or relative to the directory of this file
//! # env = { LOG_LEVEL = "warn" }   # set for the server
//! # env_vars = ["GITHUB_TOKEN"]    # passed through from troupe's environment
//! # tool_timeout_sec = 120         # 1 to 1800
//! # enabled = true
//! # bots = ["ada"]                 # the Bots that may use it; absent: all
//!
//! [mcp_servers.docs]
//! url = "https://mcp.example.com/mcp"
//! # bearer_token_env_var = "DOCS_MCP_TOKEN"
//! ```
//!
//! The table's key is the server's name; each table is checked by [`ServerDef::validate`].

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::path::Path;
use troupe_mcp::ServerDef;
use troupe_mcp::def::DEFAULT_TOOL_TIMEOUT_SEC;

/// One table as written in the file: a [`ServerDef`] without its name (the key is the name),
/// with unknown fields refused so typos surface with their line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileServer {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    bearer_token_env_var: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    env_vars: Vec<String>,
    #[serde(default)]
    tool_timeout_sec: Option<u64>,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    bots: Vec<String>,
}

pub(super) fn strict_servers<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, ServerDef>, D::Error> {
    let raw = BTreeMap::<String, FileServer>::deserialize(d)?;
    Ok(raw
        .into_iter()
        .map(|(name, s)| {
            let def = ServerDef {
                name: name.clone(),
                command: s.command,
                args: s.args,
                cwd: s.cwd,
                url: s.url,
                bearer_token_env_var: s.bearer_token_env_var,
                env: s.env,
                env_vars: s.env_vars,
                tool_timeout_sec: s.tool_timeout_sec.unwrap_or(DEFAULT_TOOL_TIMEOUT_SEC),
                enabled: s.enabled.unwrap_or(true),
                bots: s.bots,
            };
            (name, def)
        })
        .collect())
}

/// A relative `cwd` is taken relative to the config file's directory, as scripts are.
pub(super) fn resolve_cwds(servers: &mut BTreeMap<String, ServerDef>, base: &Path) {
    for def in servers.values_mut() {
        if let Some(cwd) = &def.cwd
            && !cwd.is_empty()
            && !Path::new(cwd).is_absolute()
            && let Ok(abs) = std::path::absolute(base.join(cwd))
            && let Some(abs) = abs.to_str()
        {
            def.cwd = Some(abs.to_string());
        }
    }
}
