//! A server definition: how to reach one MCP server and who may use it. The API, the database
//! and the config file's `[mcp_servers.NAME]` tables share this one shape (codex's, so its users
//! can paste theirs), and every path goes through [`ServerDef::validate`].

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A call's timeout when the definition names none.
pub const DEFAULT_TOOL_TIMEOUT_SEC: u64 = 120;
/// The longest a call may be allowed to take: 30 minutes.
pub const MAX_TOOL_TIMEOUT_SEC: u64 = 30 * 60;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerDef {
    /// `[a-z0-9_-]{1,32}`; the prefix of its tools' names.
    pub name: String,
    /// The program of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The stdio server's working directory (absolute); when unset, the daemon's
    /// `DATA_DIR/mcp` (for `troupe exec --mcp`, the run's workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The endpoint of a streamable HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The environment variable holding an HTTP server's bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env_var: Option<String>,
    /// Variables set, with these values, for a stdio server.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Variables passed through, by name, from the daemon's environment to a stdio server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_vars: Vec<String>,
    #[serde(default = "default_timeout")]
    pub tool_timeout_sec: u64,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The Bots allowed to use it; empty: every Bot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bots: Vec<String>,
}

fn default_timeout() -> u64 {
    DEFAULT_TOOL_TIMEOUT_SEC
}

fn yes() -> bool {
    true
}

/// How a server is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport<'a> {
    Stdio {
        command: &'a str,
        args: &'a [String],
        cwd: Option<&'a str>,
    },
    Http {
        url: &'a str,
        bearer_token_env_var: Option<&'a str>,
    },
}

/// What is wrong with a definition, and in which field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct DefError {
    pub field: String,
    pub message: String,
}

fn bad(field: &str, message: impl Into<String>) -> DefError {
    DefError {
        field: field.into(),
        message: message.into(),
    }
}

/// Whether a name may be a server's: `[a-z0-9_-]{1,32}`.
pub fn valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

fn valid_env_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.as_bytes()[0].is_ascii_digit()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl ServerDef {
    /// Read a definition from JSON, saying which field is wrong when it does not fit.
    pub fn from_json(v: &Value) -> Result<ServerDef, DefError> {
        let def: ServerDef =
            serde_json::from_value(v.clone()).map_err(|e| bad("body", e.to_string()))?;
        def.validate()?;
        Ok(def)
    }

    /// This definition with the fields of `patch` (a JSON object of fields) replaced; a
    /// `null` clears an optional field. The name cannot change.
    pub fn patched(&self, patch: &Value) -> Result<ServerDef, DefError> {
        let Some(fields) = patch.as_object() else {
            return Err(bad(
                "body",
                "a patch is a JSON object of the fields to change",
            ));
        };
        let mut merged = serde_json::to_value(self).map_err(|e| bad("body", e.to_string()))?;
        let map = merged
            .as_object_mut()
            .expect("a definition serializes as an object");
        for (k, v) in fields {
            if k == "name" && v.as_str() != Some(self.name.as_str()) {
                return Err(bad(
                    "name",
                    "a server's name cannot change; remove it and add it again",
                ));
            }
            if v.is_null() {
                map.remove(k);
            } else {
                map.insert(k.clone(), v.clone());
            }
        }
        ServerDef::from_json(&merged)
    }

    pub fn transport(&self) -> Transport<'_> {
        match (&self.command, &self.url) {
            (Some(command), _) => Transport::Stdio {
                command,
                args: &self.args,
                cwd: self.cwd.as_deref(),
            },
            (None, Some(url)) => Transport::Http {
                url,
                bearer_token_env_var: self.bearer_token_env_var.as_deref(),
            },
            (None, None) => unreachable!("a validated definition has a command or a URL"),
        }
    }

    /// Whether this Bot may use the server's tools.
    pub fn allows(&self, bot: &str) -> bool {
        self.bots.is_empty() || self.bots.iter().any(|b| b == bot)
    }

    pub fn validate(&self) -> Result<(), DefError> {
        if !valid_name(&self.name) {
            return Err(bad(
                "name",
                format!(
                    "'{}' is not a server name: use 1 to 32 of a-z, 0-9, '_' and '-'",
                    self.name
                ),
            ));
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "command",
                    "give either a command (stdio) or a url (HTTP), not both",
                ));
            }
            (None, None) => {
                return Err(bad(
                    "command",
                    "give a command (a stdio server) or a url (an HTTP server)",
                ));
            }
            (Some(command), None) => {
                if command.trim().is_empty() {
                    return Err(bad("command", "the command is empty"));
                }
                if command.contains('\0') || self.args.iter().any(|a| a.contains('\0')) {
                    return Err(bad(
                        "command",
                        "the command or an argument holds a NUL byte",
                    ));
                }
                if self.bearer_token_env_var.is_some() {
                    return Err(bad(
                        "bearer_token_env_var",
                        "a bearer token is for HTTP servers (url), not stdio ones",
                    ));
                }
                if let Some(cwd) = &self.cwd
                    && !std::path::Path::new(cwd).is_absolute()
                {
                    return Err(bad("cwd", format!("'{cwd}' is not an absolute path")));
                }
            }
            (None, Some(url)) => {
                let rest = url
                    .strip_prefix("http://")
                    .or_else(|| url.strip_prefix("https://"));
                match rest {
                    Some(rest) if !rest.is_empty() && !rest.starts_with('/') => {}
                    _ => {
                        return Err(bad(
                            "url",
                            format!("'{url}' is not an http:// or https:// URL with a host"),
                        ));
                    }
                }
                if url.chars().any(char::is_whitespace) {
                    return Err(bad("url", "the URL holds whitespace"));
                }
                if !self.args.is_empty()
                    || self.cwd.is_some()
                    || !self.env.is_empty()
                    || !self.env_vars.is_empty()
                {
                    return Err(bad(
                        "url",
                        "args, cwd, env and env_vars are for stdio servers (command), not HTTP ones",
                    ));
                }
                if let Some(var) = &self.bearer_token_env_var
                    && !valid_env_name(var)
                {
                    return Err(bad(
                        "bearer_token_env_var",
                        format!("'{var}' is not an environment variable name"),
                    ));
                }
            }
        }
        for name in self.env.keys().chain(&self.env_vars) {
            if !valid_env_name(name) {
                return Err(bad(
                    "env",
                    format!("'{name}' is not an environment variable name"),
                ));
            }
            if name.starts_with("TROUPE_") {
                return Err(bad(
                    "env",
                    format!(
                        "'{name}': TROUPE_* variables are the daemon's own and never reach a server"
                    ),
                ));
            }
        }
        if !(1..=MAX_TOOL_TIMEOUT_SEC).contains(&self.tool_timeout_sec) {
            return Err(bad(
                "tool_timeout_sec",
                format!(
                    "{} is out of range: 1 to {MAX_TOOL_TIMEOUT_SEC} seconds",
                    self.tool_timeout_sec
                ),
            ));
        }
        for bot in &self.bots {
            if bot.trim().is_empty() {
                return Err(bad("bots", "a Bot's name is empty"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stdio() -> Value {
        json!({"name": "files", "command": "npx", "args": ["-y", "server"]})
    }

    #[test]
    fn defaults_fill_a_minimal_definition() {
        let d = ServerDef::from_json(&stdio()).unwrap();
        assert_eq!(d.tool_timeout_sec, 120);
        assert!(d.enabled);
        assert!(d.allows("anyone"));
        assert!(matches!(
            d.transport(),
            Transport::Stdio { command: "npx", .. }
        ));
    }

    #[test]
    fn bad_names_are_refused() {
        for name in ["", "Files", "a b", "x".repeat(33).as_str(), "ü"] {
            let e = ServerDef::from_json(&json!({"name": name, "command": "x"})).unwrap_err();
            assert_eq!(e.field, "name", "{name}");
        }
        assert!(valid_name("a-b_9"));
    }

    #[test]
    fn a_definition_needs_exactly_one_transport() {
        let e = ServerDef::from_json(&json!({"name": "a"})).unwrap_err();
        assert_eq!(e.field, "command");
        let e = ServerDef::from_json(&json!({"name": "a", "command": "x", "url": "http://h/mcp"}))
            .unwrap_err();
        assert_eq!(e.field, "command");
    }

    #[test]
    fn bad_urls_timeouts_and_fields_are_refused() {
        for url in [
            "ftp://h",
            "http://",
            "localhost:8080",
            "http:///x",
            "http://a b",
        ] {
            let e = ServerDef::from_json(&json!({"name": "a", "url": url})).unwrap_err();
            assert_eq!(e.field, "url", "{url}");
        }
        for t in [0, 1801] {
            let e =
                ServerDef::from_json(&json!({"name": "a", "command": "x", "tool_timeout_sec": t}))
                    .unwrap_err();
            assert_eq!(e.field, "tool_timeout_sec");
        }
        let e =
            ServerDef::from_json(&json!({"name": "a", "command": "x", "colour": 1})).unwrap_err();
        assert!(e.message.contains("colour"), "{e}");
        let e = ServerDef::from_json(
            &json!({"name": "a", "command": "x", "env_vars": ["TROUPE_TOKEN"]}),
        )
        .unwrap_err();
        assert_eq!(e.field, "env");
        let e =
            ServerDef::from_json(&json!({"name": "a", "command": "x", "cwd": "rel"})).unwrap_err();
        assert_eq!(e.field, "cwd");
    }

    #[test]
    fn a_patch_replaces_fields_and_keeps_the_name() {
        let d = ServerDef::from_json(&stdio()).unwrap();
        let p = d
            .patched(&json!({"enabled": false, "bots": ["ada"]}))
            .unwrap();
        assert!(!p.enabled);
        assert!(p.allows("ada") && !p.allows("bob"));
        assert_eq!(
            d.patched(&json!({"name": "other"})).unwrap_err().field,
            "name"
        );
        let e = d.patched(&json!({"tool_timeout_sec": 0})).unwrap_err();
        assert_eq!(e.field, "tool_timeout_sec");
        let http = d
            .patched(&json!({"command": null, "args": null, "url": "http://127.0.0.1:9/mcp"}))
            .unwrap();
        assert!(matches!(http.transport(), Transport::Http { .. }));
    }
}
