//! The read-only shell guard of the `boss-synergy` toolset (issue 18 item 17): a runtime boss
//! may look (`ls cat grep find wc`, `git log|status|diff|show`) but never change anything, so
//! every other command line is refused as `read_only_shell`. Pure: a command line in, a
//! verdict out.
//!
//! The rule is an allow-list over one simple command. Anything the shell would interpret
//! beyond splitting words on blanks is refused outright rather than parsed: chaining (`;`,
//! `&&`, `||`, `&`, newlines), pipes, redirections, substitutions (`$(…)`, backticks, `$VAR`),
//! globbing-free quoting tricks and escapes. Arguments that turn a read command into a writer
//! or runner (`find -exec/-delete/-fprint…`, `git diff --output`, `git -c`, `--ext-diff`) are
//! refused too.

/// The refusal code a refused line answers with.
pub const READ_ONLY_SHELL: &str = "read_only_shell";

/// Why a line was refused (the message the model reads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal(pub String);

/// Characters the shell gives a meaning beyond word splitting: none may appear anywhere.
const SHELL_META: &[char] = &[
    ';', '&', '|', '<', '>', '`', '$', '(', ')', '{', '}', '\\', '\n', '\r', '"', '\'', '*', '?',
    '[', ']', '#', '!', '\0',
];

const PLAIN: &[&str] = &["ls", "cat", "grep", "find", "wc"];
const GIT_READS: &[&str] = &["log", "status", "diff", "show"];

/// `find` predicates that run, delete or write.
const FIND_WRITERS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Git options that write files, run programs or change configuration.
const GIT_WRITERS: &[&str] = &["--output", "-o", "--ext-diff", "--textconv", "--exec-path"];

/// The words of `line` when it is a read-only command this guard allows.
pub fn check(line: &str) -> Result<Vec<String>, Refusal> {
    let refuse = |why: &str| Err(Refusal(format!("{READ_ONLY_SHELL}: {why}")));
    if let Some(c) = line.chars().find(|c| SHELL_META.contains(c)) {
        return refuse(&format!(
            "'{}' is not allowed; run one plain read command (ls, cat, grep, find, wc, git \
             log|status|diff|show) with no pipes, chaining, redirection, quoting or expansion",
            c.escape_default()
        ));
    }
    if line.chars().any(|c| c.is_control() && c != '\t') {
        return refuse("control characters are not allowed");
    }
    let words: Vec<String> = line.split_whitespace().map(String::from).collect();
    // A leading `~` expands to a home directory; inside a word (`HEAD~1`) it is literal.
    if words.iter().any(|w| w.starts_with('~')) {
        return refuse("'~' expansion is not allowed; name the path");
    }
    let Some(program) = words.first() else {
        return refuse("the command line is empty");
    };
    // Assignments (`X=1 ls`) and paths to other binaries (`/bin/rm`, `./ls`) are not the
    // allowed programs.
    match program.as_str() {
        p if PLAIN.contains(&p) => {
            if p == "find"
                && let Some(w) = words.iter().find(|w| FIND_WRITERS.contains(&w.as_str()))
            {
                return refuse(&format!("find {w} writes or runs programs"));
            }
            Ok(words)
        }
        "git" => {
            let Some(sub) = words.get(1) else {
                return refuse("git needs one of log, status, diff, show");
            };
            if !GIT_READS.contains(&sub.as_str()) {
                return refuse(&format!(
                    "git {sub} is not read-only here (allowed: log, status, diff, show)"
                ));
            }
            if let Some(w) = words[2..].iter().find(|w| {
                GIT_WRITERS.contains(&w.as_str())
                    || GIT_WRITERS
                        .iter()
                        .any(|o| o.starts_with("--") && w.starts_with(&format!("{o}=")))
            }) {
                return refuse(&format!("git {sub} {w} writes files or runs programs"));
            }
            Ok(words)
        }
        other => refuse(&format!(
            "{other} is not a read command (allowed: ls, cat, grep, find, wc, git \
             log|status|diff|show)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_read_commands_pass() {
        for ok in [
            "ls -la src",
            "cat README.md",
            "grep -rn boss_project crates",
            "find . -name Cargo.toml -type f",
            "wc -l src/main.rs",
            "git log --oneline -5",
            "git status",
            "git diff HEAD~1 --stat",
            "git show HEAD:README.md",
            "  ls\t-1  ",
        ] {
            assert!(check(ok).is_ok(), "{ok} should pass: {:?}", check(ok));
        }
        assert_eq!(check("wc -l a").unwrap(), vec!["wc", "-l", "a"]);
    }

    #[test]
    fn adversarial_lines_are_refused() {
        for bad in [
            "rm -rf /",
            "ls; rm -rf /",
            "ls && touch x",
            "ls || touch x",
            "ls & touch x",
            "cat a | tee b",
            "cat a > b",
            "cat a >> b",
            "cat < a",
            "ls\nrm x",
            "ls\rrm x",
            "cat $(rm x)",
            "cat `rm x`",
            "cat $HOME/.ssh/id_rsa",
            "ls 'a;b'",
            "ls \"a\"",
            "l\\s",
            "find . -exec rm {} +",
            "find . -delete",
            "find . -fprint out",
            "find . -execdir sh",
            "git commit -m x",
            "git push",
            "git checkout -- .",
            "git reset --hard",
            "git -c core.pager=sh log",
            "git diff --output=/tmp/x",
            "git diff --output /tmp/x",
            "git log -o x",
            "git diff --ext-diff",
            "git",
            "X=1 ls",
            "/bin/rm x",
            "./ls",
            "sh -c ls",
            "bash",
            "echo hi",
            "sed -i s/a/b/ f",
            "",
            "   ",
            "ls *",
            "ls ~",
            "cat ~/.ssh/id_rsa",
            "ls # comment",
            "ls\u{0}x",
            "ls {a,b}",
        ] {
            let r = check(bad);
            assert!(
                matches!(&r, Err(Refusal(m)) if m.starts_with(READ_ONLY_SHELL)),
                "{bad:?} should be refused: {r:?}"
            );
        }
    }
}
