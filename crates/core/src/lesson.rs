//! Timeout lessons (digest 003-B §10.1): which kind of call a shell command is — (program,
//! place) for tree-walking searches, never its pattern or quoted text — and how a lesson's
//! state answers the next call of that kind and the next timeout.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The kind of call a lesson is about: a recursive search over one folder.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SearchKind {
    /// `grep -r`, `rg`, `find`, `fd`, `ag` or `ack`.
    pub program: String,
    /// The folder searched, absolute where the command's folder is known; a folder one level
    /// down is another kind.
    pub place: String,
}

/// A lesson's state: `warn` refuses the first call of its kind in a turn, `block` refuses
/// every one, `off` (retired) lets them all run.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LessonState {
    Warn,
    Block,
    Off,
}

impl LessonState {
    pub fn as_str(self) -> &'static str {
        match self {
            LessonState::Warn => "warn",
            LessonState::Block => "block",
            LessonState::Off => "off",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "warn" => Ok(LessonState::Warn),
            "block" => Ok(LessonState::Block),
            "off" => Ok(LessonState::Off),
            other => Err(format!("state '{other}' is not one of warn, block, off")),
        }
    }
}

impl fmt::Display for LessonState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a lesson does to a call of its kind.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CallAnswer {
    Run,
    /// Not run this once: the Bot is told what happened; the same call again this turn runs.
    Warn,
    Refuse,
}

/// A call of a lesson's kind, given whether this turn was warned already.
pub fn answer_call(state: LessonState, warned_this_turn: bool) -> CallAnswer {
    match state {
        LessonState::Off => CallAnswer::Run,
        LessonState::Block => CallAnswer::Refuse,
        LessonState::Warn if warned_this_turn => CallAnswer::Run,
        LessonState::Warn => CallAnswer::Warn,
    }
}

/// The state after a call of the kind was killed by the timeout: a first timeout teaches
/// `warn`, one after a warning `block`. A lesson the user retired stays retired.
pub fn after_timeout(state: Option<LessonState>) -> LessonState {
    match state {
        None => LessonState::Warn,
        Some(LessonState::Warn | LessonState::Block) => LessonState::Block,
        Some(LessonState::Off) => LessonState::Off,
    }
}

/// The marker a warning carries, by which a later call in the same turn knows it was given.
pub fn warning_marker(lesson: i64) -> String {
    format!("[lesson {lesson}]")
}

/// What the Bot reads instead of the call's output.
pub fn refusal_text(
    lesson: i64,
    answer: CallAnswer,
    kind: &SearchKind,
    timeouts: i64,
    last: &str,
) -> String {
    let what = format!(
        "`{}` over {} was killed by the timeout {} (last: `{}`)",
        kind.program,
        kind.place,
        if timeouts == 1 {
            "once".to_string()
        } else {
            format!("{timeouts} times")
        },
        last
    );
    let narrow = "Narrow it: search a smaller folder, name the file types or a glob, limit the \
                  depth, or leave out large and generated folders";
    match answer {
        CallAnswer::Refuse => format!(
            "Not run {}: {what}, also after a warning, so this kind of call no longer runs. \
             {narrow}. The user can set the lesson back to warn on the Lessons page.",
            warning_marker(lesson)
        ),
        _ => format!(
            "Not run {}: {what}. {narrow}. To run this call as it is anyway, make it again in \
             this turn.",
            warning_marker(lesson)
        ),
    }
}

/// The tree-walking search a shell command runs first, with the folder it walks, reading
/// pipes, `&&`/`;` lists, environment prefixes, wrappers (`sudo`, `env`, `time`, `nice`,
/// `timeout`, …) and quoting the way a shell does. `cwd` is the command's folder; a `cd` in
/// the command moves it for what follows. None when the command runs no such search.
pub fn search_kind(command: &str, cwd: &str) -> Option<SearchKind> {
    let mut cwd = normalize(cwd, "/");
    for words in segments(command) {
        let words = unwrap(&words);
        let Some(first) = words.first() else { continue };
        let name = first.rsplit('/').next().unwrap_or(first).to_string();
        let args = &words[1..];
        if name == "cd" {
            if let Some(d) = args.first() {
                cwd = normalize(d, &cwd);
            }
            continue;
        }
        let found = match name.as_str() {
            "grep" | "egrep" | "fgrep" => grep(args, false),
            "rgrep" => grep(args, true),
            "rg" => pattern_then_paths(args, "rg", RG_VALUE, &["--files", "--type-list"]),
            "ag" => pattern_then_paths(args, "ag", AG_VALUE, &["--list-file-types"]),
            "ack" | "ack-grep" => pattern_then_paths(args, "ack", ACK_VALUE, &["-f"]),
            "fd" | "fdfind" => fd(args),
            "find" => Some(("find".to_string(), find_path(args))),
            _ => None,
        };
        if let Some((program, place)) = found {
            let place = match place {
                Some(p) => normalize(&p, &cwd),
                None => cwd.clone(),
            };
            return Some(SearchKind { program, place });
        }
    }
    None
}

/// Words of each simple command, split where a shell would run another: `|`, `||`, `&&`, `;`,
/// `&`, newlines and parentheses. Quotes and backslashes are read; `$(…)` is not expanded.
fn segments(command: &str) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, out: &mut Vec<Vec<String>>| {
        if *in_word {
            out.last_mut()
                .expect("a segment")
                .push(std::mem::take(word));
            *in_word = false;
        }
    };
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
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            word.push(chars.next().expect("peeked"));
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next()
                    && n != '\n'
                {
                    word.push(n);
                }
            }
            '|' | '&' | ';' | '\n' | '(' | ')' => {
                end_word(&mut word, &mut in_word, &mut out);
                if !out.last().expect("a segment").is_empty() {
                    out.push(Vec::new());
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut out),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut out);
    out.retain(|s| !s.is_empty());
    out
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// The words after environment prefixes and wrapper commands that run the rest as given.
fn unwrap(words: &[String]) -> Vec<String> {
    let mut i = 0;
    loop {
        while i < words.len() && is_assignment(&words[i]) {
            i += 1;
        }
        let Some(w) = words.get(i) else {
            return Vec::new();
        };
        let name = w.rsplit('/').next().unwrap_or(w);
        // Options of each wrapper that take a value, and whether a bare first word follows.
        let (value_opts, leading_arg): (&[&str], bool) = match name {
            "sudo" => (
                &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
                false,
            ),
            "env" => (&["-u", "-C", "-S"], false),
            "nice" => (&["-n"], false),
            "timeout" => (&["-s", "-k", "--signal", "--kill-after"], true),
            "stdbuf" => (&["-i", "-o", "-e"], false),
            "time" | "nohup" | "command" | "exec" | "builtin" | "ionice" | "chrt" => (&[], false),
            _ => return words[i..].to_vec(),
        };
        i += 1;
        while let Some(w) = words.get(i) {
            if w == "--" {
                i += 1;
                break;
            }
            if !w.starts_with('-') || w == "-" {
                break;
            }
            i += if value_opts.contains(&w.as_str()) {
                2
            } else {
                1
            };
        }
        if leading_arg {
            i += 1;
        }
    }
}

/// Short and long options that take the next word as their value.
type ValueOpts = (&'static str, &'static [&'static str]);

const GREP_VALUE: ValueOpts = (
    "efmABCdD",
    &[
        "--regexp",
        "--file",
        "--max-count",
        "--after-context",
        "--before-context",
        "--context",
        "--include",
        "--exclude",
        "--exclude-dir",
        "--exclude-from",
        "--label",
        "--binary-files",
        "--devices",
        "--directories",
        "--group-separator",
    ],
);
const RG_VALUE: ValueOpts = (
    "efgtTmABCjMdEr",
    &[
        "--regexp",
        "--file",
        "--glob",
        "--iglob",
        "--type",
        "--type-not",
        "--max-count",
        "--after-context",
        "--before-context",
        "--context",
        "--threads",
        "--max-columns",
        "--max-depth",
        "--encoding",
        "--replace",
        "--type-add",
        "--type-clear",
        "--sort",
        "--sortr",
        "--max-filesize",
        "--ignore-file",
        "--pre",
        "--pre-glob",
        "--colors",
        "--context-separator",
        "--field-match-separator",
        "--path-separator",
        "--engine",
        "--dfa-size-limit",
        "--regex-size-limit",
        "--color",
    ],
);
const AG_VALUE: ValueOpts = (
    "ABCGmpgW",
    &[
        "--after",
        "--before",
        "--context",
        "--file-search-regex",
        "--ignore",
        "--ignore-dir",
        "--max-count",
        "--depth",
        "--pager",
        "--path-to-ignore",
        "--workers",
        "--width",
    ],
);
const ACK_VALUE: ValueOpts = (
    "ABCmg",
    &[
        "--type",
        "--ignore-dir",
        "--noignore-dir",
        "--ignore-file",
        "--match",
        "--output",
        "--max-count",
        "--after-context",
        "--before-context",
        "--context",
        "--type-set",
        "--type-add",
        "--type-del",
        "--pager",
    ],
);
const FD_VALUE: ValueOpts = (
    "etEdcjSoC",
    &[
        "--extension",
        "--type",
        "--exclude",
        "--max-depth",
        "--min-depth",
        "--exact-depth",
        "--color",
        "--threads",
        "--size",
        "--changed-within",
        "--changed-before",
        "--owner",
        "--base-directory",
        "--max-results",
        "--ignore-file",
        "--path-separator",
        "--format",
        "--and",
    ],
);

/// An option word: the short flags it sets (up to one that takes a value), and whether the
/// next word is that value.
struct Opt {
    flags: String,
    long: Option<String>,
    takes_next: bool,
}

fn read_opt(w: &str, value: ValueOpts) -> Opt {
    if let Some(long) = w.strip_prefix("--") {
        let name = format!("--{}", long.split('=').next().unwrap_or(long));
        let takes_next = !long.contains('=') && value.1.contains(&name.as_str());
        return Opt {
            flags: String::new(),
            long: Some(name),
            takes_next,
        };
    }
    let mut flags = String::new();
    let mut takes_next = false;
    let body = &w[1..];
    for (i, c) in body.char_indices() {
        flags.push(c);
        if value.0.contains(c) {
            // The value is the rest of the word, or the next word when nothing is left.
            takes_next = i + c.len_utf8() == body.len();
            break;
        }
    }
    Opt {
        flags,
        long: None,
        takes_next,
    }
}

/// Options and positional words of a command, by its table of value options.
struct Parsed {
    opts: Vec<Opt>,
    positional: Vec<String>,
}

fn parse_args(args: &[String], value: ValueOpts) -> Parsed {
    let mut opts = Vec::new();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if w == "--" {
            positional.extend(args[i + 1..].iter().cloned());
            break;
        }
        if w.starts_with('-') && w.len() > 1 {
            let o = read_opt(w, value);
            i += if o.takes_next { 2 } else { 1 };
            opts.push(o);
        } else {
            positional.push(w.clone());
            i += 1;
        }
    }
    Parsed { opts, positional }
}

impl Parsed {
    fn has(&self, short: char, long: &str) -> bool {
        self.opts
            .iter()
            .any(|o| o.flags.contains(short) || o.long.as_deref() == Some(long))
    }
}

type Found = Option<(String, Option<String>)>;

fn grep(args: &[String], recursive: bool) -> Found {
    let p = parse_args(args, GREP_VALUE);
    let recursive = recursive
        || p.opts.iter().any(|o| {
            o.flags.contains(['r', 'R'])
                || matches!(
                    o.long.as_deref(),
                    Some("--recursive" | "--dereference-recursive")
                )
        });
    if !recursive {
        return None;
    }
    let pattern_given = p.has('e', "--regexp") || p.has('f', "--file");
    let skip = usize::from(!pattern_given);
    Some(("grep -r".into(), p.positional.get(skip).cloned()))
}

/// rg, ag, ack: a pattern, then the paths; some flags list files and take no pattern.
fn pattern_then_paths(
    args: &[String],
    program: &str,
    value: ValueOpts,
    no_pattern: &[&str],
) -> Found {
    let p = parse_args(args, value);
    let listing = p.opts.iter().any(|o| {
        o.long.as_deref().is_some_and(|l| no_pattern.contains(&l))
            || no_pattern.iter().any(|n| n.len() == 2 && o.flags == n[1..])
    });
    let pattern_given = !listing && (p.has('e', "--regexp") || p.has('f', "--file"));
    let skip = usize::from(!listing && !pattern_given);
    Some((program.into(), p.positional.get(skip).cloned()))
}

fn fd(args: &[String]) -> Found {
    // `-x`/`-X` run a command on each result: what follows is that command's.
    let end = args
        .iter()
        .position(|w| matches!(w.as_str(), "-x" | "-X" | "--exec" | "--exec-batch"))
        .unwrap_or(args.len());
    let p = parse_args(&args[..end], FD_VALUE);
    let mut searched = None;
    for (i, w) in args[..end].iter().enumerate() {
        if w == "--search-path" {
            searched = args.get(i + 1).cloned();
        } else if let Some(v) = w.strip_prefix("--search-path=") {
            searched = Some(v.to_string());
        }
    }
    Some((
        "fd".into(),
        searched.or_else(|| p.positional.get(1).cloned()),
    ))
}

/// find's paths come before its expression; none means the current folder.
fn find_path(args: &[String]) -> Option<String> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        match w.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            w if w.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    args.get(i)
        .filter(|w| !w.starts_with('-') && !matches!(w.as_str(), "(" | "!" | ","))
        .cloned()
}

/// `path` made absolute against `base` and cleaned lexically (`.`, `..`, doubled and trailing
/// slashes); a path from the home folder (`~`) is kept as written, cleaned.
fn normalize(path: &str, base: &str) -> String {
    let joined = if path.starts_with('/') || path.starts_with('~') {
        path.to_string()
    } else {
        format!("{base}/{path}")
    };
    let (root, rest) = match joined.strip_prefix('/') {
        Some(r) => ("/", r),
        None => ("", joined.as_str()),
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in rest.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                if parts
                    .last()
                    .is_some_and(|l| *l != ".." && !l.starts_with('~'))
                {
                    parts.pop();
                } else if root.is_empty() {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let out = format!("{root}{}", parts.join("/"));
    if out.is_empty() { ".".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(cmd: &str) -> Option<(String, String)> {
        search_kind(cmd, "/work/ws").map(|k| (k.program, k.place))
    }

    fn is(cmd: &str, program: &str, place: &str) {
        assert_eq!(
            kind(cmd),
            Some((program.to_string(), place.to_string())),
            "{cmd}"
        );
    }

    #[test]
    fn grep_is_a_search_only_when_recursive() {
        is("grep -r foo /data", "grep -r", "/data");
        is("grep -rn 'foo bar' /data/", "grep -r", "/data");
        is("grep -R --include=*.rs foo src", "grep -r", "/work/ws/src");
        is("grep --recursive -e foo -e bar /data", "grep -r", "/data");
        is("grep -A3 -r foo", "grep -r", "/work/ws");
        is("rgrep foo /data", "grep -r", "/data");
        assert_eq!(kind("grep foo file.txt"), None);
        assert_eq!(kind("grep -n foo /data/x.log"), None);
    }

    #[test]
    fn pattern_and_quoted_text_are_not_part_of_the_key() {
        assert_eq!(kind("grep -r foo /data"), kind("grep -r \"bar baz\" /data"));
        assert_eq!(kind("rg 'a|b' /data"), kind("rg -i other /data"));
        is("grep -r \"x\" \"/data/my dir\"", "grep -r", "/data/my dir");
        is("rg foo '/data/with space/'", "rg", "/data/with space");
    }

    #[test]
    fn a_folder_one_level_down_is_another_kind() {
        assert_ne!(kind("grep -r bar /data"), kind("grep -r bar /data/sub"));
    }

    #[test]
    fn pipes_lists_and_cd_are_followed() {
        is("cat list | grep -r foo /data | head -5", "grep -r", "/data");
        is("cd /srv && rg foo", "rg", "/srv");
        is("cd sub; find . -name '*.log'", "find", "/work/ws/sub");
        is("echo a; ls && fd pattern /opt/x", "fd", "/opt/x");
        assert_eq!(kind("cargo build && ls -la"), None);
    }

    #[test]
    fn environment_prefixes_and_wrappers_are_skipped() {
        is("LC_ALL=C grep -r foo /data", "grep -r", "/data");
        is("env -u X FOO=1 rg foo /data", "rg", "/data");
        is("sudo -u svc find /var -name x", "find", "/var");
        is("timeout 30 rg foo /data", "rg", "/data");
        is("time nice -n 5 ag foo /data", "ag", "/data");
        is("/usr/bin/grep -r foo /data", "grep -r", "/data");
    }

    #[test]
    fn each_program_finds_its_place() {
        is("find", "find", "/work/ws");
        is("find -L /data -type f", "find", "/data");
        is("find \\( -name a \\)", "find", "/work/ws");
        is("fd", "fd", "/work/ws");
        is("fd -e rs main", "fd", "/work/ws");
        is("fd -t f main ../other", "fd", "/work/other");
        is("fd --search-path /data x -x rm {}", "fd", "/data");
        is("fdfind x /data", "fd", "/data");
        is("rg --files /data", "rg", "/data");
        is("rg -g '*.rs' -t rust foo lib", "rg", "/work/ws/lib");
        is("rg -e foo /data", "rg", "/data");
        is("ag -G js foo /data", "ag", "/data");
        is("ack --type=perl foo /data", "ack", "/data");
        is("ack -f /data", "ack", "/data");
    }

    #[test]
    fn places_are_cleaned() {
        is("rg x ./a/../b//c/", "rg", "/work/ws/b/c");
        is("rg x ~/notes", "rg", "~/notes");
        is("rg x /", "rg", "/");
        is("rg x ..", "rg", "/work");
    }

    #[test]
    fn builds_and_renders_are_not_searches() {
        assert_eq!(kind("ffmpeg -i in.mp4 out.mp4"), None);
        assert_eq!(kind("make -j8"), None);
        assert_eq!(kind("echo 'grep -r foo /data'"), None);
    }

    #[test]
    fn warn_refuses_the_first_call_of_a_turn_then_runs_it() {
        assert_eq!(answer_call(LessonState::Warn, false), CallAnswer::Warn);
        assert_eq!(answer_call(LessonState::Warn, true), CallAnswer::Run);
        assert_eq!(answer_call(LessonState::Block, true), CallAnswer::Refuse);
        assert_eq!(answer_call(LessonState::Off, false), CallAnswer::Run);
    }

    #[test]
    fn a_timeout_teaches_warn_then_block_and_a_retired_lesson_stays_off() {
        assert_eq!(after_timeout(None), LessonState::Warn);
        assert_eq!(after_timeout(Some(LessonState::Warn)), LessonState::Block);
        assert_eq!(after_timeout(Some(LessonState::Block)), LessonState::Block);
        assert_eq!(after_timeout(Some(LessonState::Off)), LessonState::Off);
    }

    #[test]
    fn the_texts_carry_the_marker_and_say_how_to_narrow() {
        let k = SearchKind {
            program: "grep -r".into(),
            place: "/data".into(),
        };
        let w = refusal_text(7, CallAnswer::Warn, &k, 1, "grep -r foo /data");
        assert!(w.contains("[lesson 7]") && w.contains("again in this turn"));
        assert!(w.contains("/data") && w.contains("Narrow"));
        let b = refusal_text(7, CallAnswer::Refuse, &k, 2, "grep -r foo /data");
        assert!(b.contains("no longer runs") && b.contains("2 times"));
        assert_eq!(LessonState::parse("block").unwrap().as_str(), "block");
        assert!(LessonState::parse("retired").is_err());
    }
}
