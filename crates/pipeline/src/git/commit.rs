//! Committing a source-writing operator's declared write set, once, on the session branch,
//! and describing it in `changes.md`.

use std::path::Path;

use super::{Git, Identity, SourceError};
use crate::defs::{Operator, is_plain_relative, within_root};
use crate::hash::sha256_bytes;

/// One path the commit changed, with the sha256 of its content before and after (none when
/// the file did not exist on that side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedPath {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The commit of a write set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteCommit {
    pub commit: String,
    pub parent: String,
    pub paths: Vec<ChangedPath>,
    /// Its author: the person's git identity, or Troupe's when git has none.
    pub identity: Identity,
}

/// Commits the write set `writes` (paths relative to the checkout) that `op` declared, in the
/// session worktree. Refusals block the branch:
/// - the worktree is not at `expected_head` (the head the session last recorded):
///   `SOURCE_DRIFT`;
/// - a declared or changed path lies outside the operator's write roots: `WRITE_OUTSIDE_ROOTS`;
/// - a change the response did not declare: `UNDECLARED_WRITE`.
///
/// Returns `None` when nothing changed. Commit hooks run; nothing is forced. The commit is by
/// the person's git identity, or Troupe's when git has none (see [`Git::committing`]).
pub fn commit_write_set(
    worktree: &Path,
    op: &Operator,
    writes: &[String],
    expected_head: &str,
    message: &str,
) -> Result<Option<WriteCommit>, SourceError> {
    let git = Git::new(worktree);
    let head = git.rev("HEAD")?;
    if head != expected_head {
        return Err(SourceError::stop(
            "SOURCE_DRIFT",
            format!("the session worktree is at {head}, not the recorded {expected_head}"),
        ));
    }
    let outside: Vec<&String> = writes
        .iter()
        .filter(|p| !is_plain_relative(p) || !op.may_write(p))
        .collect();
    if !outside.is_empty() {
        return Err(SourceError::stop(
            "WRITE_OUTSIDE_ROOTS",
            format!(
                "`{}` declared {} outside its write roots ({})",
                op.id(),
                join(&outside),
                op.def.write_roots.join(", ")
            ),
        ));
    }
    let changed = git.changed_paths()?;
    let stray_outside: Vec<&String> = changed.iter().filter(|p| !op.may_write(p)).collect();
    if !stray_outside.is_empty() {
        return Err(SourceError::stop(
            "WRITE_OUTSIDE_ROOTS",
            format!(
                "`{}` changed {} outside its write roots",
                op.id(),
                join(&stray_outside)
            ),
        ));
    }
    let undeclared: Vec<&String> = changed
        .iter()
        .filter(|p| !writes.iter().any(|w| within_root(w, p)))
        .collect();
    if !undeclared.is_empty() {
        return Err(SourceError::stop(
            "UNDECLARED_WRITE",
            format!("{} changed but not declared in `writes`", join(&undeclared)),
        ));
    }
    if changed.is_empty() {
        return Ok(None);
    }

    let mut paths = Vec::new();
    for path in &changed {
        let shown = git.output(&["show", &format!("{head}:{path}")])?;
        let before = shown.status.success().then(|| sha256_bytes(&shown.stdout));
        let after = std::fs::read(worktree.join(path))
            .ok()
            .map(|b| sha256_bytes(&b));
        paths.push(ChangedPath {
            path: path.clone(),
            before,
            after,
        });
    }
    let mut add = vec!["add", "--all", "--"];
    add.extend(changed.iter().map(String::as_str));
    git.run(&add)?;
    let (committer, origin) = git.committing()?;
    committer.run(&["commit", "--quiet", "-m", message])?;
    let commit = git.rev("HEAD")?;
    let identity = git.author_of(&commit, origin)?;
    Ok(Some(WriteCommit {
        commit,
        parent: head,
        paths,
        identity,
    }))
}

fn join(paths: &[&String]) -> String {
    paths
        .iter()
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `changes.md`: every path with its before and after sha256, and the commit.
pub fn changes_markdown(c: &WriteCommit) -> String {
    let mut out = format!(
        "# Changes\n\nCommit `{}` (parent `{}`).\n\n",
        c.commit, c.parent
    );
    out.push_str("| path | before | after |\n|---|---|---|\n");
    for p in &c.paths {
        let side = |h: &Option<String>| h.clone().unwrap_or_else(|| "(absent)".into());
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            p.path,
            side(&p.before),
            side(&p.after)
        ));
    }
    out
}
