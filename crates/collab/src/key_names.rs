//! Which environment variables an endpoint may name with `api_key_env`. The daemon sends that
//! variable's value to the endpoint's URL, and both come from whoever calls the API, so the
//! name is held to patterns that look like provider credentials: a route cannot make the
//! daemon post `HOME`, `PATH` or its own `TROUPE_TOKEN` to a server of the caller's choosing.

use std::fmt;

/// The patterns used when the config file names none.
pub const DEFAULT_KEY_ENV_PATTERNS: [&str; 3] = ["*_API_KEY", "*_TOKEN", "*_KEY"];

/// Variables under this prefix are the daemon's own settings (its bearer token among them);
/// no pattern lets an endpoint name one.
const RESERVED_PREFIX: &str = "TROUPE_";

/// Glob patterns (`*` is any run of characters, everything else literal, case-sensitive) a
/// key variable's name must match one of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyEnvRule {
    patterns: Vec<String>,
}

impl Default for KeyEnvRule {
    fn default() -> Self {
        KeyEnvRule {
            patterns: DEFAULT_KEY_ENV_PATTERNS.map(String::from).to_vec(),
        }
    }
}

impl KeyEnvRule {
    /// A rule from configured patterns; each must be a variable name that may contain `*`.
    /// An empty list means no endpoint may name a key variable.
    pub fn new(patterns: Vec<String>) -> Result<KeyEnvRule, String> {
        for p in &patterns {
            let shape_ok = !p.is_empty()
                && p.chars()
                    .all(|c| c == '*' || c == '_' || c.is_ascii_alphanumeric())
                && !p.starts_with(|c: char| c.is_ascii_digit());
            if !shape_ok {
                return Err(format!(
                    "key variable pattern '{p}' must be letters, digits, '_' and '*' \
                     (e.g. *_API_KEY)"
                ));
            }
        }
        Ok(KeyEnvRule { patterns })
    }

    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether an endpoint may name `var`; the error names the rule.
    pub fn check(&self, var: &str) -> Result<(), String> {
        let is_name = !var.is_empty()
            && var.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
            && !var.starts_with(|c: char| c.is_ascii_digit());
        if !is_name {
            return Err(format!(
                "api_key_env '{var}' is not an environment variable name \
                 (letters, digits and '_')"
            ));
        }
        if var.starts_with(RESERVED_PREFIX) {
            return Err(format!(
                "api_key_env '{var}' is refused: {RESERVED_PREFIX}* variables are the daemon's \
                 own settings and are never sent to a model server"
            ));
        }
        if self.patterns.iter().any(|p| glob_match(p, var)) {
            return Ok(());
        }
        Err(format!("api_key_env '{var}' is refused: {self}"))
    }
}

impl fmt::Display for KeyEnvRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.patterns.is_empty() {
            return write!(
                f,
                "no key variable is allowed (keys.env_patterns in the config file is empty)"
            );
        }
        write!(
            f,
            "a key variable's name must match one of {} (keys.env_patterns in the config file)",
            self.patterns.join(", ")
        )
    }
}

/// `*` matches any run of characters, including none.
fn glob_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the whole name must be the pattern.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        for (p, n, yes) in [
            ("*_API_KEY", "OPENAI_API_KEY", true),
            ("*_API_KEY", "OPENAI_API_KEYS", false),
            ("*_KEY", "AWS_SECRET_ACCESS_KEY", true),
            ("*_TOKEN", "HF_TOKEN", true),
            ("*_TOKEN", "_TOKEN", true),
            ("*_TOKEN", "TOKEN", false),
            ("OPENAI_API_KEY", "OPENAI_API_KEY", true),
            ("OPENAI_API_KEY", "OPENAI_API_KEY2", false),
            ("MY_*_KEY", "MY_X_KEY", true),
            ("MY_*_KEY", "MY_KEY", false),
            ("A*B*C", "AxxBxxC", true),
            ("A*B*C", "AxxC", false),
            ("*", "HOME", true),
        ] {
            assert_eq!(glob_match(p, n), yes, "{p} vs {n}");
        }
    }

    #[test]
    fn the_default_rule_refuses_what_is_not_a_key() {
        let rule = KeyEnvRule::default();
        for ok in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GROQ_TOKEN",
            "MY_KEY",
        ] {
            rule.check(ok).unwrap();
        }
        for bad in [
            "HOME",
            "PATH",
            "TROUPE_TOKEN",
            "openai_api_key",
            "A B_KEY",
            "",
        ] {
            assert!(rule.check(bad).is_err(), "{bad}");
        }
        let e = rule.check("HOME").unwrap_err();
        assert!(e.contains("*_API_KEY, *_TOKEN, *_KEY"), "{e}");
    }

    #[test]
    fn configured_patterns_replace_the_defaults() {
        let rule = KeyEnvRule::new(vec!["OPENAI_API_KEY".into()]).unwrap();
        rule.check("OPENAI_API_KEY").unwrap();
        assert!(rule.check("ANTHROPIC_API_KEY").is_err());
        let none = KeyEnvRule::new(vec![]).unwrap();
        assert!(none.check("OPENAI_API_KEY").unwrap_err().contains("empty"));
        assert!(KeyEnvRule::new(vec!["A-B".into()]).is_err());
        assert!(KeyEnvRule::new(vec![String::new()]).is_err());
    }
}
