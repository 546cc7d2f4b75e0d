//! Acceptance checks (digest 003-C §15), the pure half: what may be saved (AC-1: nothing that
//! reaches outside the workspace, a regex that compiles, a timeout of at most 600 s), how a
//! command's output is compared (AC-3), and how a check follows its Done when line through
//! rewording (AC-8). Running checks is the caller's.

use std::fmt;

/// A check's timeout when none is given, and the longest allowed, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u32 = 120;
pub const MAX_TIMEOUT_SECS: u32 = 600;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    FileExists,
    FileContains,
    FileMatchesRegex,
    Command,
    Words,
    /// AC-13…AC-17: whether parts made apart fit together at their seams.
    Seams,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::FileExists => "file_exists",
            Kind::FileContains => "file_contains",
            Kind::FileMatchesRegex => "file_matches_regex",
            Kind::Command => "command",
            Kind::Words => "words",
            Kind::Seams => "seams",
        }
    }

    pub fn parse(s: &str) -> Result<Kind, Invalid> {
        Ok(match s {
            "file_exists" => Kind::FileExists,
            "file_contains" => Kind::FileContains,
            "file_matches_regex" => Kind::FileMatchesRegex,
            "command" => Kind::Command,
            "words" => Kind::Words,
            "seams" => Kind::Seams,
            other => {
                return Err(Invalid::new(
                    "kind",
                    format!(
                        "'{other}' is not one of file_exists, file_contains, \
                         file_matches_regex, command, words, seams"
                    ),
                ));
            }
        })
    }
}

/// What the user asks to save, as given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Draft<'a> {
    pub path: Option<&'a str>,
    pub pattern: Option<&'a str>,
    pub negate: bool,
    pub command: Option<&'a str>,
    pub cwd: Option<&'a str>,
    pub expected_exit: i64,
    pub expected_output: Option<&'a str>,
    pub timeout_secs: Option<i64>,
}

/// Why a check cannot be saved: the field and what is wrong with it. `outside` marks AC-1's
/// refusal (`outside_workspace`), which a run reports as `blocked`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    pub field: &'static str,
    pub message: String,
    pub outside: bool,
}

impl Invalid {
    fn new(field: &'static str, message: impl Into<String>) -> Invalid {
        Invalid {
            field,
            message: message.into(),
            outside: false,
        }
    }

    fn outside(field: &'static str, message: impl Into<String>) -> Invalid {
        Invalid {
            field,
            message: message.into(),
            outside: true,
        }
    }

    /// The API's error code.
    pub fn code(&self) -> &'static str {
        if self.outside {
            "outside_workspace"
        } else {
            "invalid_check"
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.outside {
            write!(f, "outside_workspace: {}: {}", self.field, self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for Invalid {}

fn present<'a>(v: Option<&'a str>, field: &'static str, what: &str) -> Result<&'a str, Invalid> {
    match v {
        Some(s) if !s.trim().is_empty() => Ok(s),
        _ => Err(Invalid::new(field, format!("{what} is missing"))),
    }
}

/// Validate a check of `kind` before it is saved; answers its timeout in seconds.
pub fn validate(kind: Kind, d: &Draft<'_>) -> Result<u32, Invalid> {
    let timeout = match d.timeout_secs {
        None => DEFAULT_TIMEOUT_SECS,
        Some(t) if (1..=i64::from(MAX_TIMEOUT_SECS)).contains(&t) => t as u32,
        Some(t) => {
            return Err(Invalid::new(
                "timeout_secs",
                format!("{t} is outside 1–{MAX_TIMEOUT_SECS} seconds"),
            ));
        }
    };
    let only = |field: &'static str, set: bool| {
        if set {
            Err(Invalid::new(
                field,
                format!("does not apply to a {} check", kind.as_str()),
            ))
        } else {
            Ok(())
        }
    };
    match kind {
        Kind::FileExists | Kind::FileContains | Kind::FileMatchesRegex => {
            let path = present(d.path, "path", "the file to check")?;
            path_inside(path, "path")?;
            only("command", d.command.is_some())?;
            only("cwd", d.cwd.is_some())?;
            only("expected_output", d.expected_output.is_some())?;
            if kind == Kind::FileExists {
                only("pattern", d.pattern.is_some())?;
                if d.negate {
                    return Err(Invalid::new(
                        "negate",
                        "only file_contains and file_matches_regex can be negated",
                    ));
                }
            } else {
                let pattern = match d.pattern {
                    Some(p) if !p.is_empty() => p,
                    _ => return Err(Invalid::new("pattern", "what to look for is missing")),
                };
                if kind == Kind::FileMatchesRegex
                    && let Err(e) = regex::Regex::new(pattern)
                {
                    return Err(Invalid::new(
                        "pattern",
                        format!("not a regular expression: {}", one_line(&e.to_string())),
                    ));
                }
            }
        }
        Kind::Command => {
            let cmd = present(d.command, "command", "the command")?;
            only("path", d.path.is_some())?;
            only("pattern", d.pattern.is_some())?;
            if d.negate {
                return Err(Invalid::new("negate", "a command check cannot be negated"));
            }
            if !(0..=255).contains(&d.expected_exit) {
                return Err(Invalid::new(
                    "expected_exit",
                    format!("{} is not an exit status (0–255)", d.expected_exit),
                ));
            }
            let depth = match d.cwd {
                Some(c) => path_inside(c, "cwd")?,
                None => 0,
            };
            command_inside(cmd, depth)?;
        }
        Kind::Seams => seams_draft(d)?,
        Kind::Words => {
            return Err(Invalid::new(
                "kind",
                "a check from your words is made from what you said, not saved by hand",
            ));
        }
    }
    Ok(timeout)
}

/// A seams check's parts come from a list command (with its folder) or from a path — a glob,
/// or one file to cut up — never both; nothing of a file or command check's own applies, and
/// code is refused (AC-17).
fn seams_draft(d: &Draft<'_>) -> Result<(), Invalid> {
    let not_here = |field: &'static str, set: bool| {
        if set {
            Err(Invalid::new(field, "does not apply to a seams check"))
        } else {
            Ok(())
        }
    };
    not_here("pattern", d.pattern.is_some())?;
    not_here("negate", d.negate)?;
    not_here("expected_output", d.expected_output.is_some())?;
    not_here("expected_exit", d.expected_exit != 0)?;
    let path = d.path.filter(|p| !p.trim().is_empty());
    let command = d.command.filter(|c| !c.trim().is_empty());
    match (path, command) {
        (Some(_), Some(_)) => Err(Invalid::new(
            "path",
            "give the parts by path (a glob, or one file to cut up) or by a command that \
             prints them, not both",
        )),
        (None, None) => Err(Invalid::new(
            "path",
            "the parts are missing: give path (a glob such as shots/C*.mp4, or one file to cut \
             at its headings or scenes) or command (prints the parts one per line)",
        )),
        (Some(p), None) => {
            not_here("cwd", d.cwd.is_some())?;
            path_inside(p, "path")?;
            crate::seams::refuse_code(p)
        }
        (None, Some(c)) => {
            let depth = match d.cwd {
                Some(dir) => path_inside(dir, "cwd")?,
                None => 0,
            };
            command_inside(c, depth)
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// AC-1 for a path: relative to the workspace root and staying in it. Answers how deep it
/// ends (a command's arguments may climb that far back).
pub fn path_inside(path: &str, field: &'static str) -> Result<usize, Invalid> {
    if let Some(why) = reaches_outside(path, 0) {
        return Err(Invalid::outside(field, format!("'{path}' {why}")));
    }
    Ok(depth_of(path))
}

fn depth_of(path: &str) -> usize {
    let mut depth = 0usize;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => depth = depth.saturating_sub(1),
            _ => depth += 1,
        }
    }
    depth
}

/// Why `word` (a path, or a command's argument run `depth` folders below the root) reaches
/// outside the workspace, if it does.
fn reaches_outside(word: &str, depth: usize) -> Option<&'static str> {
    if word.starts_with('~') {
        return Some("is in a home folder, outside the workspace");
    }
    if word.contains("$HOME") || word.contains("${HOME}") {
        return Some("names $HOME, outside the workspace");
    }
    // A value after `=` (`--file=/etc/x`, `FOO=../..`) is a path too.
    let tail = word.rsplit_once('=').map_or(word, |(_, v)| v);
    for w in [word, tail] {
        if w.starts_with('/') && w != "/dev/null" {
            return Some("is an absolute path, outside the workspace");
        }
        let mut d = depth as i64;
        for part in w.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    d -= 1;
                    if d < 0 {
                        return Some("climbs out of the workspace with '..'");
                    }
                }
                _ => d += 1,
            }
        }
    }
    None
}

/// AC-1 for a command: no argument (the program word may be absolute) reaches outside. The
/// command is split as the shell would split words, loosely: quotes group, `;`, `|`, `&`,
/// parentheses, backquotes and `$(` start a new command, redirections take a path.
pub fn command_inside(command: &str, cwd_depth: usize) -> Result<(), Invalid> {
    for (word, program) in shell_words(command) {
        if program {
            continue;
        }
        if let Some(why) = reaches_outside(&word, cwd_depth) {
            return Err(Invalid::outside(
                "command",
                format!("the argument '{word}' {why}"),
            ));
        }
    }
    Ok(())
}

/// The words of a command, each with whether it is a program word.
fn shell_words(command: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut expect_program = true;
    let mut chars = command.chars().peekable();
    fn push(
        out: &mut Vec<(String, bool)>,
        word: &mut String,
        in_word: &mut bool,
        expect_program: &mut bool,
    ) {
        if *in_word {
            // Assignments before the program are not the program.
            let assignment = word.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
            let program = *expect_program && !assignment;
            out.push((std::mem::take(word), program));
            if program {
                *expect_program = false;
            }
            *in_word = false;
        }
    }
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            c if c.is_whitespace() => push(&mut out, &mut word, &mut in_word, &mut expect_program),
            ';' | '|' | '&' | '(' | ')' | '`' | '{' | '}' | '\n' => {
                push(&mut out, &mut word, &mut in_word, &mut expect_program);
                expect_program = true;
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                push(&mut out, &mut word, &mut in_word, &mut expect_program);
                expect_program = true;
            }
            '<' | '>' => {
                // `2>` and `>&2`: the fd digits and the operator are no path; what follows is.
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                push(&mut out, &mut word, &mut in_word, &mut expect_program);
                while matches!(chars.peek(), Some('>' | '<' | '&')) {
                    chars.next();
                }
                // The redirection's target is an argument even where a program could stand.
                while matches!(chars.peek(), Some(c) if c.is_whitespace()) {
                    chars.next();
                }
                let mut target = String::new();
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || ";|&()<>`".contains(n) {
                        break;
                    }
                    target.push(n);
                    chars.next();
                }
                if !target.is_empty() && !target.chars().all(|d| d.is_ascii_digit() || d == '-') {
                    out.push((target.trim_matches(['\'', '"']).to_string(), false));
                }
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    push(&mut out, &mut word, &mut in_word, &mut expect_program);
    out
}

/// AC-3: the output matches what was expected, trailing blanks on each line and trailing
/// empty lines aside (and `\r\n` read as `\n`).
pub fn output_matches(expected: &str, actual: &str) -> bool {
    normalize_output(expected) == normalize_output(actual)
}

fn normalize_output(s: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = s
        .split('\n')
        .map(|l| l.trim_end_matches([' ', '\t', '\r']))
        .collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// A Done when text's lines as checks name them: trimmed, list markers dropped, empty lines
/// left out.
pub fn done_when_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(line_key)
        .filter(|l| !l.is_empty())
        .collect()
}

/// One Done when line as it is matched: trimmed, without its list marker ("- ", "* ", "1. ").
pub fn line_key(line: &str) -> String {
    let t = line.trim();
    let t = t
        .strip_prefix("- [ ] ")
        .or_else(|| t.strip_prefix("- [x] "))
        .or_else(|| t.strip_prefix("- "))
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("• "))
        .unwrap_or_else(|| {
            let digits = t.chars().take_while(char::is_ascii_digit).count();
            if digits > 0 {
                let rest = &t[digits..];
                rest.strip_prefix(". ")
                    .or_else(|| rest.strip_prefix(") "))
                    .unwrap_or(t)
            } else {
                t
            }
        });
    t.trim().to_string()
}

/// AC-8: where Done when line `line` went when the text changed from `old` to `new`: itself
/// when still there, the line that took its place when reworded, `None` when removed. A line
/// is reworded when it sits in a changed stretch (between lines both texts share) of as many
/// new lines as old, at the same place, or failing that the new line in that stretch most
/// like it (at least a third of its characters shared).
pub fn follow_line(line: &str, old: &str, new: &str) -> Option<String> {
    let key = line_key(line);
    let old = done_when_lines(old);
    let new = done_when_lines(new);
    if new.contains(&key) {
        return Some(key);
    }
    let at = old.iter().position(|l| *l == key)?;
    let pairs = common_lines(&old, &new);
    // The stretch around `at`: after the last shared pair before it, before the next one.
    let before = pairs.iter().rev().find(|(o, _)| *o < at).copied();
    let after = pairs.iter().find(|(o, _)| *o > at).copied();
    let (o0, n0) = before.map_or((0, 0), |(o, n)| (o + 1, n + 1));
    let (o1, n1) = after.unwrap_or((old.len(), new.len()));
    let removed = &old[o0..o1];
    let added = &new[n0..n1];
    if added.is_empty() {
        return None;
    }
    if removed.len() == added.len() {
        return Some(added[at - o0].clone());
    }
    added
        .iter()
        .map(|a| (likeness(&key, a), a))
        .filter(|(s, _)| *s >= 1.0 / 3.0)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, a)| a.clone())
}

/// The longest common subsequence of two line lists, as index pairs in order.
fn common_lines(a: &[String], b: &[String]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    let mut t = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i][j] = if a[i] == b[j] {
                t[i + 1][j + 1] + 1
            } else {
                t[i + 1][j].max(t[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n && j < m {
        if a[i] == b[j] {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if t[i + 1][j] >= t[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Shared characters (letters and digits, case folded) over all of either: works for words
/// and for Chinese alike.
fn likeness(a: &str, b: &str) -> f64 {
    use std::collections::BTreeSet;
    let set = |s: &str| -> BTreeSet<char> {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (x, y) = (set(a), set(b));
    let all = x.union(&y).count();
    if all == 0 {
        return 0.0;
    }
    x.intersection(&y).count() as f64 / all as f64
}

#[cfg(test)]
#[path = "acceptance_check_tests.rs"]
mod tests;
