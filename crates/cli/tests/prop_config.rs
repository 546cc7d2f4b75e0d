//! Property tests for the config file parser (`Config::parse`): any file either parses or
//! is refused with a message naming the file and the line or key at fault.

use std::path::Path;

use proptest::prelude::*;
use troupe_cli::config::Config;

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128);
    ProptestConfig::with_cases(n)
}

const PATH: &str = "/etc/troupe/config.toml";

/// A valid file; each table's header line index is listed for inserting keys into it.
const BASE: &[&str] = &[
    "[endpoints.local]",
    "kind = \"openai\"",
    "base_url = \"http://127.0.0.1:11434/v1\"",
    "model = \"qwen2.5-coder:7b\"",
    "",
    "[roles]",
    "default = \"local\"",
    "",
    "[limits]",
    "request_timeout_secs = 120",
    "max_attempts = 2",
    "",
    "[reading]",
    "timeout_ms = 5000",
    "",
    "[serve]",
    "allowed_hosts = [\"box.local\"]",
];
/// Header lines of tables whose keys are fixed (an unknown key there is refused).
const STRICT_TABLES: &[usize] = &[0, 8, 12, 15];
/// Lines holding a typed value: (line, key).
const TYPED: &[(usize, &str)] = &[
    (1, "kind"),
    (3, "model"),
    (9, "request_timeout_secs"),
    (10, "max_attempts"),
    (13, "timeout_ms"),
    (16, "allowed_hosts"),
];

fn parse(text: &str) -> Result<Config, String> {
    Config::parse(text, Path::new(PATH)).map_err(|e| e.to_string())
}

/// The 1-based line a toml message points at (`line N`), if any.
fn names_line(msg: &str, line: usize) -> bool {
    msg.contains(&format!("line {line}")) || msg.contains(&format!("\n{line} |"))
}

proptest! {
    #![proptest_config(cases())]

    /// Property: the base file parses, and an unknown key added to any fixed table is
    /// refused with a message naming the file and the key.
    #[test]
    fn unknown_key_is_named(
        table in prop::sample::select(STRICT_TABLES.to_vec()),
        key in "[a-z][a-z_]{0,10}",
    ) {
        prop_assert!(parse(&BASE.join("\n")).is_ok());
        let known = ["kind", "base_url", "model", "api_key_env", "script", "request_timeout_secs",
            "max_attempts", "max_hops", "timeout_ms", "allowed_hosts"];
        prop_assume!(!known.contains(&key.as_str()));
        let mut lines: Vec<String> = BASE.iter().map(|s| s.to_string()).collect();
        lines.insert(table + 1, format!("{key} = 1"));
        let msg = parse(&lines.join("\n")).expect_err("unknown key refused");
        prop_assert!(msg.contains(PATH) && msg.contains(&key), "{msg}");
    }

    /// Property: giving a typed key a value of the wrong type is refused with a message
    /// naming the file and the line (1-based) where the key is written.
    #[test]
    fn wrong_type_names_the_line(
        pick in prop::sample::select(TYPED.to_vec()),
        value in prop::sample::select(vec!["true", "[1, 2]", "{ a = 1 }", "1979-05-27", "-1", "\"text\"", "3.5"]),
    ) {
        let (at, key) = pick;
        let mut lines: Vec<String> = BASE.iter().map(|s| s.to_string()).collect();
        lines[at] = format!("{key} = {value}");
        match parse(&lines.join("\n")) {
            // A string is a fine value for the string keys.
            Ok(_) => prop_assert!(value == "\"text\"" && matches!(key, "kind" | "model"), "{key} = {value} accepted"),
            Err(msg) => prop_assert!(
                msg.contains(PATH) && (names_line(&msg, at + 1) || msg.contains(key)),
                "{key} = {value}: {msg}"
            ),
        }
    }

    /// Property: a line of TOML syntax garbage anywhere is refused as a parse error naming
    /// the file and that line.
    #[test]
    fn garbage_line_names_the_line(
        at in 0..=BASE.len(),
        junk in prop::sample::select(vec!["= 1", "key = ", "[unclosed", "a = \"open", "x y z", "[[]]", "k = 1 2"]),
    ) {
        let mut lines: Vec<String> = BASE.iter().map(|s| s.to_string()).collect();
        lines.insert(at, junk.to_string());
        let msg = parse(&lines.join("\n")).expect_err("garbage refused");
        prop_assert!(msg.contains(PATH) && names_line(&msg, at + 1), "line {}: {msg}", at + 1);
    }

    /// Property: any text at all either parses or is refused with a message naming the file.
    #[test]
    fn any_text_parses_or_names_the_file(text in "[\\[\\]a-z_=\" .\\n0-9{}]{0,80}") {
        if let Err(msg) = parse(&text) {
            prop_assert!(msg.contains(PATH), "{msg}");
        }
    }
}
