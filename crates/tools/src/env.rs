//! The environment a `shell` command sees. The process environment of the
//! runtime holds secrets (API keys, agent sockets), so the shell starts from
//! an empty environment plus a short whitelist of harmless variables.

use std::fmt;

/// Variables copied from the runtime's environment into shell commands.
/// Everything else (SSH_AUTH_SOCK, *_API_KEY, *_TOKEN, TROUPE_*, ...) is
/// dropped.
pub const SHELL_ENV_WHITELIST: &[&str] = &[
    "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME", "SHELL",
    "TMPDIR",
];

/// The complete environment for shell commands (the child's environment is
/// cleared first, so only these variables exist).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ShellEnv {
    pub vars: Vec<(String, String)>,
}

impl ShellEnv {
    /// Whitelisted variables from this process's environment. Variables that
    /// are not valid UTF-8 are skipped.
    pub fn from_process_env() -> ShellEnv {
        ShellEnv::from_pairs(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// Pure filter: keep only whitelisted names, in input order, first
    /// occurrence wins.
    pub fn from_pairs<I, K, V>(pairs: I) -> ShellEnv
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut env = ShellEnv::default();
        for (k, v) in pairs {
            let k = k.into();
            if SHELL_ENV_WHITELIST.contains(&k.as_str()) && env.get(&k).is_none() {
                env.vars.push((k, v.into()));
            }
        }
        env
    }

    /// Add (or replace) an explicit variable. No filtering: the caller
    /// decided this variable belongs in the shell.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> ShellEnv {
        let key = key.into();
        let value = value.into();
        match self.vars.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.vars.push((key, value)),
        }
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

// Values may have been added with `with` and could be sensitive, so Debug
// only shows names.
impl fmt::Debug for ShellEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShellEnv")
            .field(
                "vars",
                &self
                    .vars
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_keeps_only_whitelist() {
        let env = ShellEnv::from_pairs([
            ("PATH", "/usr/bin:/bin"),
            ("SSH_AUTH_SOCK", "/tmp/agent.sock"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("GITHUB_TOKEN", "ghp_x"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("TROUPE_DB", "/var/troupe.db"),
            ("HOME", "/home/a"),
            ("path", "lowercase is a different variable"),
            ("PATH", "/second/wins/not"),
        ]);
        assert_eq!(
            env.vars,
            vec![
                ("PATH".to_string(), "/usr/bin:/bin".to_string()),
                ("HOME".to_string(), "/home/a".to_string()),
            ]
        );
    }

    #[test]
    fn with_adds_or_replaces() {
        let env = ShellEnv::from_pairs([("HOME", "/h")])
            .with("FOO", "1")
            .with("HOME", "/other");
        assert_eq!(env.get("FOO"), Some("1"));
        assert_eq!(env.get("HOME"), Some("/other"));
        assert_eq!(env.vars.len(), 2);
    }

    #[test]
    fn debug_hides_values() {
        let env = ShellEnv::default().with("SECRET_THING", "hunter2");
        let shown = format!("{env:?}");
        assert!(shown.contains("SECRET_THING"));
        assert!(!shown.contains("hunter2"));
    }
}
