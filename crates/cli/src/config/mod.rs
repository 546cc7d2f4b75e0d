//! The troupe configuration file: named model endpoints, which endpoint each model role
//! uses, and a few limits.
//!
//! The file lives at `$XDG_CONFIG_HOME/troupe/config.toml` (else
//! `$HOME/.config/troupe/config.toml`, see [`crate::paths`]) or wherever `--config` points.
//! A missing file at the default location is an empty configuration; a missing file named
//! with `--config` is an error.
//!
//! ```toml
//! # Named endpoints
//! [endpoints.local]
//! kind = "openai"                     # openai | anthropic | scripted
//! base_url = "http://127.0.0.1:11434/v1"
//! model = "qwen2.5-coder:7b"
//! # api_key_env = "OPENAI_API_KEY"    # name of the env var holding the key; keys are never written in this file
//! # takes_pictures = true              # its model sees pictures (read_file images, the picture judge's frames)
//! # thinking_levels = ["minimal", "low", "medium", "high"]  # reasoning_effort values, lightest first: readings send the first
//!
//! [endpoints.claude]
//! kind = "anthropic"
//! model = "claude-sonnet-4-5"
//! api_key_env = "ANTHROPIC_API_KEY"
//!
//! [endpoints.demo]
//! kind = "scripted"
//! model = "scripted"
//! script = "scripts/demo.json"        # relative to the directory of this file
//!
//! [roles]            # role -> endpoint name; roles: default, reading, scribe, judgement, review, picture_judge
//! default = "local"
//! review = "claude"
//!
//! [limits]           # optional
//! request_timeout_secs = 300
//! max_attempts = 4
//! max_hops = 400
//!
//! [keys]             # optional: the variables an endpoint may name with api_key_env
//! env_patterns = ["*_API_KEY", "*_TOKEN", "*_KEY"]
//!
//! [serve]            # optional: names besides loopback and the bound address `Host` may carry
//! allowed_hosts = ["troupe.lan"]
//!
//! [workflows]        # optional: what every new loop's continuation guard starts with
//! max_model_calls = 200            # 0 = unlimited
//! no_progress_limit = 3            # 0 = off
//! continuation_spacing_ms = 1000
//! ```
//!
//! and `[mcp_servers.NAME]` tables, the MCP servers `troupe serve` starts (see [`mcp_servers`]
//! for their fields), and `[channels.NAME]` tables, the chat channel accounts it takes
//! messages for (see [`channels`]).
//!
//! At the top level, `durability = "full"` (the default) or `"normal"`: how far each
//! commit of the store goes before it is acknowledged (`--durability` overrides it).
//!
//! Rules, all checked by [`Config::load`]:
//! - unknown tables or fields are errors (typos are not silently ignored);
//! - a key named `api_key` anywhere is refused: keys live in environment variables, and
//!   the file only names the variable with `api_key_env`;
//! - every endpoint must be valid ([`EndpointSpec::validate`]);
//! - role names must be one of [`ROLES`], and each must point to a defined endpoint;
//! - limits must be greater than zero;
//! - every `api_key_env` must match one of `keys.env_patterns` ([`KeyEnvRule`]);
//! - `serve.allowed_hosts` are bare names or addresses, without scheme or port.
//! - `durability` is `full` or `normal`.
//! - every `[mcp_servers.NAME]` is a valid server definition ([`ServerDef::validate`]).
//! - every `[channels.NAME]` is a valid channel account ([`troupe_channels::ChannelDef::validate`]).
//!
//! Roles without an endpoint fall back to the `default` role's endpoint (that fallback is
//! applied by the engine, not here).
//!
//! Command-line flags ([`EndpointFlags`]) can then replace the `default` role's endpoint,
//! see [`Config::apply_flags`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};
use troupe_collab::KeyEnvRule;
use troupe_core::thread::EndpointSpec;
use troupe_store::Durability;

use crate::paths::{self, EnvLookup, PathError};

pub mod channels;
pub mod experimental;
pub mod mcp_servers;
mod workflows;
pub use troupe_mcp::ServerDef;
pub use workflows::Workflows;

/// The model roles an endpoint can be assigned to.
pub const ROLES: [&str; 6] = [
    "default",
    "reading",
    "scribe",
    "judgement",
    "review",
    "picture_judge",
];

/// The endpoint name under which command-line flags register the endpoint they define.
/// It cannot clash with a name written in a TOML file by accident.
pub const FLAGS_ENDPOINT: &str = "<command line>";

/// The parsed, validated configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Endpoints by name.
    #[serde(default, deserialize_with = "strict_endpoints")]
    pub endpoints: BTreeMap<String, EndpointSpec>,
    /// Role name -> endpoint name.
    #[serde(default)]
    pub roles: BTreeMap<String, String>,
    #[serde(default)]
    pub limits: Limits,
    #[serde(default)]
    pub keys: Keys,
    #[serde(default)]
    pub serve: Serve,
    #[serde(default)]
    pub workflows: Workflows,
    #[serde(default)]
    pub reading: Reading,
    /// The store's durability; `None` when the file does not say (see [`Config::durability`]).
    #[serde(default, deserialize_with = "durability_name")]
    pub durability: Option<Durability>,
    /// The database's URL (`postgres://…`, `sqlite:///…` or a path); absent: the data dir's
    /// `troupe.db`. `--database` and `TROUPE_DATABASE_URL` override it.
    #[serde(default)]
    pub database_url: Option<String>,
    /// `[mcp_servers.NAME]`: MCP servers by name (each definition's `name` is its key).
    #[serde(default, deserialize_with = "mcp_servers::strict_servers")]
    pub mcp_servers: BTreeMap<String, ServerDef>,
    /// `[channels.NAME]`: chat channel accounts by name.
    #[serde(default, deserialize_with = "channels::strict_channels")]
    pub channels: BTreeMap<String, troupe_channels::ChannelDef>,
    /// `[experimental]`: Runtime Boss Mode's settings, seeding the stored ones.
    #[serde(default)]
    pub experimental: experimental::Experimental,
}

/// `[keys]`: which environment variables an endpoint may name as its key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Keys {
    /// Glob patterns a key variable's name must match one of; absent: the defaults
    /// ([`troupe_collab::DEFAULT_KEY_ENV_PATTERNS`]).
    #[serde(default)]
    pub env_patterns: Option<Vec<String>>,
}

/// `[reading]`: the line reader (one tool-free call per line on the `reading` role).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Reading {
    /// How long one reading may take, the wait for a reading slot included (default 20000);
    /// past it the word lists read the line.
    pub timeout_ms: u64,
}

impl Default for Reading {
    fn default() -> Self {
        Reading { timeout_ms: 20_000 }
    }
}

/// `[serve]`: settings only `troupe serve` reads.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Serve {
    /// Names besides loopback and the bound address that a request's `Host` may carry.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
}

/// Per-call and per-run limits. Every field is optional in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// How long a model request may hear nothing from the server, in seconds (default 300):
    /// before its answer begins, or between the parts of a streamed answer.
    pub request_timeout_secs: u64,
    /// Attempts per model call, the first one included (default 4).
    pub max_attempts: u32,
    /// Model/tool round trips a run may make before it stops (default 400).
    pub max_hops: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_timeout_secs: 300,
            max_attempts: 4,
            max_hops: 400,
        }
    }
}

/// Endpoint settings given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointFlags {
    /// `--base-url URL`
    pub base_url: Option<String>,
    /// `--model NAME`
    pub model: Option<String>,
    /// `--api-key-env VAR`
    pub api_key_env: Option<String>,
    /// `--provider openai|anthropic`
    pub provider: Option<String>,
    /// `--script FILE`
    pub script: Option<PathBuf>,
    /// `--max-output-tokens N`
    pub max_output_tokens: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config file {} does not exist", path.display())]
    NotFound { path: PathBuf },
    #[error("cannot read config file {}: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    /// `message` is toml's error text, which names the line and column.
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error(
        "{}: '{location}' holds a literal key; put the key in an environment variable \
         and name it with api_key_env",
        path.display()
    )]
    LiteralKey { path: PathBuf, location: String },
    #[error("role '{role}' is not one of {}", ROLES.join(", "))]
    UnknownRole { role: String },
    #[error("role '{role}' points to endpoint '{endpoint}', which is not defined ({})", defined_list(.defined))]
    UndefinedEndpoint {
        role: String,
        endpoint: String,
        defined: Vec<String>,
    },
    #[error("endpoint '{name}': {message}")]
    InvalidEndpoint { name: String, message: String },
    #[error("limits.{name} must be greater than 0")]
    InvalidLimit { name: &'static str },
    #[error("keys.env_patterns: {0}")]
    InvalidKeyPatterns(String),
    #[error("reading.timeout_ms must be between 1000 and 120000 (got {0})")]
    InvalidReadingTimeout(u64),
    #[error("serve.allowed_hosts: {0}")]
    InvalidAllowedHost(String),
    #[error("workflows.{0}")]
    InvalidWorkflows(String),
    /// A `[mcp_servers.NAME]` table that is not a valid server definition.
    #[error("[mcp_servers.{name}] {field}: {message}")]
    InvalidMcpServer {
        name: String,
        field: String,
        message: String,
    },
    /// A `[channels.NAME]` table that is not a valid channel account (the message names both).
    #[error("{0}")]
    InvalidChannel(String),
    /// An `[experimental]` value out of its range (the message names the key).
    #[error("experimental.{0}")]
    InvalidExperimental(String),
    /// A validation error found in a file, with the file named.
    #[error("{}: {inner}", path.display())]
    InFile {
        path: PathBuf,
        inner: Box<ConfigError>,
    },
    /// A bad combination of command-line flags.
    #[error("{0}")]
    Flags(String),
    #[error(transparent)]
    Path(#[from] PathError),
}

fn defined_list(defined: &[String]) -> String {
    if defined.is_empty() {
        "no endpoints are defined".into()
    } else {
        format!("defined: {}", defined.join(", "))
    }
}

/// The endpoint table as written in the file: like [`EndpointSpec`], but unknown fields are
/// refused so that typos surface.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEndpoint {
    kind: String,
    #[serde(default)]
    base_url: Option<String>,
    model: String,
    #[serde(default)]
    api_key_env: Option<String>,
    #[serde(default)]
    script: Option<String>,
    /// The endpoint's model takes pictures (frames and images are sent to it).
    #[serde(default)]
    takes_pictures: bool,
    /// The thinking levels its model lists, lightest first (sent as `reasoning_effort`).
    #[serde(default)]
    thinking_levels: Vec<String>,
    /// The most tokens one reply of the model may run to.
    #[serde(default)]
    max_output_tokens: Option<u32>,
}

fn strict_endpoints<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, EndpointSpec>, D::Error> {
    let raw = BTreeMap::<String, FileEndpoint>::deserialize(d)?;
    Ok(raw
        .into_iter()
        .map(|(name, e)| {
            let spec = EndpointSpec {
                kind: e.kind,
                base_url: e.base_url,
                model: e.model,
                api_key_env: e.api_key_env,
                script: e.script,
                takes_pictures: e.takes_pictures,
                thinking_levels: e.thinking_levels,
                max_output_tokens: e.max_output_tokens,
            };
            (name, spec)
        })
        .collect())
}

fn durability_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Durability>, D::Error> {
    let name = String::deserialize(d)?;
    name.parse().map(Some).map_err(serde::de::Error::custom)
}

impl Config {
    /// The durability to open the store with: `flag` (`--durability`) if given, else the
    /// file's `durability`, else [`Durability::Full`].
    pub fn durability(&self, flag: Option<Durability>) -> Durability {
        flag.or(self.durability).unwrap_or_default()
    }

    /// The database to open: `flag` (`--database` or `TROUPE_DATABASE_URL`) if given, else
    /// the file's `database_url`, else `None` (the data dir's `troupe.db`).
    pub fn database_url(&self, flag: Option<String>) -> Option<String> {
        flag.or_else(|| self.database_url.clone())
            .filter(|u| !u.trim().is_empty())
    }

    /// Load the file at `path`; a missing file is an error (use for `--config`).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ConfigError::NotFound {
                path: path.to_path_buf(),
            }),
            Err(error) => Err(ConfigError::Read {
                path: path.to_path_buf(),
                error,
            }),
        }
    }

    /// Load the file at `path`; a missing file is an empty configuration (use for the
    /// default location).
    pub fn load_or_default(path: &Path) -> Result<Config, ConfigError> {
        match Config::load(path) {
            Err(ConfigError::NotFound { .. }) => Ok(Config::default()),
            other => other,
        }
    }

    /// Load `explicit` (the `--config` flag) strictly if given, else the default location
    /// ([`paths::config_file`]) leniently.
    pub fn locate(explicit: Option<&Path>, env: EnvLookup<'_>) -> Result<Config, ConfigError> {
        match explicit {
            Some(path) => Config::load(path),
            None => Config::load_or_default(&paths::config_file(env)?),
        }
    }

    /// Parse and validate `text`, the contents of the file at `path`. `path` names the file
    /// in error messages, and relative `script` paths are resolved against its directory.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let parse_error = |e: toml::de::Error| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        };
        // Look for literal keys before the typed parse, so that a key is refused with the
        // right advice rather than as an unknown field.
        let table: toml::Table = toml::from_str(text).map_err(parse_error)?;
        if let Some(location) = find_key(&table, "api_key", "") {
            return Err(ConfigError::LiteralKey {
                path: path.to_path_buf(),
                location,
            });
        }
        let mut config: Config = toml::from_str(text).map_err(parse_error)?;
        let in_file = |inner: ConfigError| ConfigError::InFile {
            path: path.to_path_buf(),
            inner: Box::new(inner),
        };
        let base = path.parent().unwrap_or(Path::new(""));
        mcp_servers::resolve_cwds(&mut config.mcp_servers, base);
        config.validate().map_err(in_file)?;
        for (name, spec) in &mut config.endpoints {
            if let Some(script) = &spec.script {
                let resolved = absolute(&base.join(script), name).map_err(in_file)?;
                spec.script = Some(resolved);
            }
        }
        Ok(config)
    }

    /// The rule every endpoint's `api_key_env` is held to: the file's patterns, else the
    /// defaults.
    pub fn key_env_rule(&self) -> Result<KeyEnvRule, ConfigError> {
        match &self.keys.env_patterns {
            Some(patterns) => {
                KeyEnvRule::new(patterns.clone()).map_err(ConfigError::InvalidKeyPatterns)
            }
            None => Ok(KeyEnvRule::default()),
        }
    }

    /// Check every rule that does not depend on the file's location.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let key_env = self.key_env_rule()?;
        self.workflows
            .validate()
            .map_err(ConfigError::InvalidWorkflows)?;
        for host in &self.serve.allowed_hosts {
            troupe_server::hosts::normalize_allowed_host(host)
                .map_err(ConfigError::InvalidAllowedHost)?;
        }
        for def in self.mcp_servers.values() {
            def.validate().map_err(|e| ConfigError::InvalidMcpServer {
                name: def.name.clone(),
                field: e.field,
                message: e.message,
            })?;
        }
        for def in self.channels.values() {
            def.validate().map_err(ConfigError::InvalidChannel)?;
        }
        self.experimental
            .runtime_boss()
            .map_err(ConfigError::InvalidExperimental)?;
        if !(1_000..=120_000).contains(&self.reading.timeout_ms) {
            return Err(ConfigError::InvalidReadingTimeout(self.reading.timeout_ms));
        }
        for (name, spec) in &self.endpoints {
            if name.trim().is_empty() {
                return Err(ConfigError::InvalidEndpoint {
                    name: name.clone(),
                    message: "endpoint names must not be empty".into(),
                });
            }
            spec.validate()
                .and_then(|()| {
                    spec.api_key_env
                        .as_ref()
                        .map_or(Ok(()), |v| key_env.check(v))
                })
                .map_err(|message| ConfigError::InvalidEndpoint {
                    name: name.clone(),
                    message,
                })?;
        }
        for (role, endpoint) in &self.roles {
            if !ROLES.contains(&role.as_str()) {
                return Err(ConfigError::UnknownRole { role: role.clone() });
            }
            if !self.endpoints.contains_key(endpoint) {
                return Err(ConfigError::UndefinedEndpoint {
                    role: role.clone(),
                    endpoint: endpoint.clone(),
                    defined: self.endpoints.keys().cloned().collect(),
                });
            }
        }
        let Limits {
            request_timeout_secs,
            max_attempts,
            max_hops,
        } = self.limits;
        for (name, value) in [
            ("request_timeout_secs", request_timeout_secs),
            ("max_attempts", u64::from(max_attempts)),
            ("max_hops", u64::from(max_hops)),
        ] {
            if value == 0 {
                return Err(ConfigError::InvalidLimit { name });
            }
        }
        Ok(())
    }

    /// The endpoint of each role that has one. Roles left out use `default`'s endpoint.
    pub fn role_endpoints(&self) -> BTreeMap<String, EndpointSpec> {
        self.roles
            .iter()
            .filter_map(|(role, name)| Some((role.clone(), self.endpoints.get(name)?.clone())))
            .collect()
    }

    /// The endpoint of the `default` role, if any.
    pub fn default_endpoint(&self) -> Option<&EndpointSpec> {
        self.endpoints.get(self.roles.get("default")?)
    }

    /// Apply command-line endpoint flags to the `default` role:
    ///
    /// - `--script FILE`: default becomes a scripted endpoint on FILE (alone only);
    /// - `--base-url URL --model NAME [--api-key-env VAR] [--provider P]`: default becomes a
    ///   new endpoint of kind P (openai unless given);
    /// - `--provider P --model NAME` (base URL optional): the same, with the provider's own
    ///   base URL;
    /// - `--model NAME` and/or `--api-key-env VAR` alone: default keeps its endpoint but with
    ///   that model / key variable (an error if there is no default endpoint); other roles
    ///   sharing that endpoint are unchanged;
    /// - `--base-url` or `--provider` without `--model` is an error.
    ///
    /// The resulting endpoint is registered as [`FLAGS_ENDPOINT`]. No flags: no change.
    pub fn apply_flags(&mut self, flags: &EndpointFlags) -> Result<(), ConfigError> {
        let EndpointFlags {
            base_url,
            model,
            api_key_env,
            provider,
            script,
            max_output_tokens,
        } = flags;
        let spec = if let Some(script) = script {
            if base_url.is_some()
                || model.is_some()
                || api_key_env.is_some()
                || provider.is_some()
                || max_output_tokens.is_some()
            {
                return Err(ConfigError::Flags(
                    "--script cannot be combined with --base-url, --model, --provider, \
                     --api-key-env or --max-output-tokens: a scripted endpoint calls no model"
                        .into(),
                ));
            }
            let script = script.to_str().ok_or_else(|| {
                ConfigError::Flags(format!(
                    "--script {}: the path is not valid UTF-8",
                    script.display()
                ))
            })?;
            EndpointSpec {
                kind: "scripted".into(),
                base_url: None,
                model: "scripted".into(),
                api_key_env: None,
                script: Some(absolute(Path::new(script), FLAGS_ENDPOINT)?),
                takes_pictures: false,
                thinking_levels: Vec::new(),
                max_output_tokens: None,
            }
        } else if base_url.is_some() || provider.is_some() {
            let Some(model) = model else {
                let flag = if base_url.is_some() {
                    "--base-url"
                } else {
                    "--provider"
                };
                return Err(ConfigError::Flags(format!(
                    "{flag} needs --model too: name the model to call there \
                     (e.g. {flag} ... --model NAME); --model alone changes only the model \
                     of the configured default endpoint"
                )));
            };
            let kind = provider.as_deref().unwrap_or("openai");
            if kind != "openai" && kind != "anthropic" {
                return Err(ConfigError::Flags(format!(
                    "--provider must be openai or anthropic, not '{kind}' \
                     (use --script for a scripted endpoint)"
                )));
            }
            EndpointSpec {
                kind: kind.into(),
                base_url: base_url.clone(),
                model: model.clone(),
                api_key_env: api_key_env.clone(),
                script: None,
                takes_pictures: false,
                thinking_levels: Vec::new(),
                max_output_tokens: *max_output_tokens,
            }
        } else if model.is_some() || api_key_env.is_some() || max_output_tokens.is_some() {
            let what = if model.is_some() {
                "--model"
            } else if api_key_env.is_some() {
                "--api-key-env"
            } else {
                "--max-output-tokens"
            };
            let Some(current) = self.default_endpoint() else {
                return Err(ConfigError::Flags(format!(
                    "{what} alone changes the default endpoint, but none is configured: \
                     set roles.default in the config file, or give --base-url URL \
                     (or --provider anthropic) with --model NAME"
                )));
            };
            if current.kind == "scripted" {
                return Err(ConfigError::Flags(format!(
                    "{what} alone cannot change the default endpoint because it is scripted; \
                     give --base-url URL (or --provider anthropic) with --model NAME"
                )));
            }
            let mut spec = current.clone();
            if let Some(model) = model {
                spec.model = model.clone();
            }
            if let Some(var) = api_key_env {
                spec.api_key_env = Some(var.clone());
            }
            if let Some(cap) = max_output_tokens {
                spec.max_output_tokens = Some(*cap);
            }
            spec
        } else {
            return Ok(());
        };
        spec.validate()
            .map_err(|message| ConfigError::InvalidEndpoint {
                name: FLAGS_ENDPOINT.into(),
                message,
            })?;
        self.endpoints.insert(FLAGS_ENDPOINT.into(), spec);
        self.roles.insert("default".into(), FLAGS_ENDPOINT.into());
        Ok(())
    }
}

/// `path` made absolute against the current directory (no file system access), as UTF-8.
fn absolute(path: &Path, endpoint: &str) -> Result<String, ConfigError> {
    let invalid = |message: String| ConfigError::InvalidEndpoint {
        name: endpoint.into(),
        message,
    };
    let abs = std::path::absolute(path).map_err(|e| {
        invalid(format!(
            "cannot resolve script path {}: {e}",
            path.display()
        ))
    })?;
    abs.into_os_string()
        .into_string()
        .map_err(|p| invalid(format!("script path {} is not valid UTF-8", p.display())))
}

/// The dotted location of the first key named `key` anywhere in `table`.
fn find_key(table: &toml::Table, key: &str, prefix: &str) -> Option<String> {
    for (k, v) in table {
        let here = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        if k == key {
            return Some(here);
        }
        if let Some(found) = find_in_value(v, key, &here) {
            return Some(found);
        }
    }
    None
}

fn find_in_value(value: &toml::Value, key: &str, here: &str) -> Option<String> {
    match value {
        toml::Value::Table(t) => find_key(t, key, here),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| find_in_value(item, key, &format!("{here}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod flag_tests;
#[cfg(test)]
mod tests;
