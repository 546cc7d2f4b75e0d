//! The session checkout: freezing the person's head, the worktree on `session/<sessionId>`,
//! and removing both once the session is done.

use std::path::{Path, PathBuf};

use super::{Git, SourceError};
use crate::session::WORKTREES_DIR;

/// Session worktrees live here, under the source checkout (ignored with the sessions).
pub const CHECKOUTS_DIR: &str = ".worktrees/checkouts";

/// A session's worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionWorktree {
    pub path: PathBuf,
    /// `session/<sessionId>`.
    pub branch: String,
    pub frozen_head: String,
}

/// Whether the checkout at `dir` has uncommitted or untracked changes (outside
/// `.worktrees/`).
pub fn is_dirty(dir: &Path) -> Result<bool, SourceError> {
    Ok(!Git::new(dir).changed_paths()?.is_empty())
}

/// The person's checked-out branch and its head, which the session freezes. A detached head
/// is `TARGET_MISSING`; uncommitted changes are `DIRTY_CHECKOUT`.
pub fn freeze_source(source: &Path) -> Result<(String, String), SourceError> {
    let git = Git::new(source);
    let target = git
        .run(&["symbolic-ref", "--quiet", "--short", "HEAD"])
        .map_err(|_| {
            SourceError::stop(
                "TARGET_MISSING",
                "the checkout is on a detached head; no branch to publish to",
            )
        })?;
    if is_dirty(source)? {
        return Err(SourceError::stop(
            "DIRTY_CHECKOUT",
            format!("the checkout of `{target}` has uncommitted changes"),
        ));
    }
    let head = git.rev("HEAD")?;
    Ok((target, head))
}

/// Creates the worktree `<source>/.worktrees/checkouts/<sessionId>` on a new branch
/// `session/<sessionId>` at `frozen_head`. The person's checkout is not touched.
pub fn create_worktree(
    source: &Path,
    session_id: &str,
    frozen_head: &str,
) -> Result<SessionWorktree, SourceError> {
    let path = source.join(CHECKOUTS_DIR).join(session_id);
    create_worktree_at(source, session_id, frozen_head, &path)
}

/// Like [`create_worktree`], with the worktree at `path` (the runner puts it inside the session
/// folder, as `checkout/`, so one agent workspace holds both the branch folders and the
/// checkout). `path` must lie under `<source>/.worktrees/`, which ignores itself.
pub fn create_worktree_at(
    source: &Path,
    session_id: &str,
    frozen_head: &str,
    path: &Path,
) -> Result<SessionWorktree, SourceError> {
    let git = Git::new(source);
    let ignore = source.join(WORKTREES_DIR).join(".gitignore");
    if !ignore.exists() {
        std::fs::create_dir_all(source.join(WORKTREES_DIR))?;
        crate::fsutil::write_atomic(&ignore, b"*\n")?;
    }
    let branch = format!("session/{session_id}");
    if git.rev(&format!("refs/heads/{branch}")).is_ok() {
        return Err(SourceError::stop(
            "SOURCE_DRIFT",
            format!("branch `{branch}` already exists"),
        ));
    }
    let path_text = path.to_string_lossy().into_owned();
    git.run(&[
        "worktree",
        "add",
        "--quiet",
        "-b",
        &branch,
        &path_text,
        frozen_head,
    ])?;
    Ok(SessionWorktree {
        path: path.to_path_buf(),
        branch,
        frozen_head: frozen_head.to_string(),
    })
}

/// Removes a session's worktree and branch once published: `git worktree remove` (refuses a
/// dirty worktree) and `git branch -d` (refuses an unmerged branch). Never forced.
pub fn remove_worktree(source: &Path, wt: &SessionWorktree) -> Result<(), SourceError> {
    let git = Git::new(source);
    let path_text = wt.path.to_string_lossy().into_owned();
    git.run(&["worktree", "remove", &path_text])?;
    git.run(&["branch", "-d", "--quiet", &wt.branch])?;
    Ok(())
}
