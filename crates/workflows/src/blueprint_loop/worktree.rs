//! `worktree` run mode: the execution works in a git worktree of the session's workspace, on a
//! branch of its own, so the loop's changes stay apart from the session's checkout until a
//! person merges them. Any git failure is reported as `worktree_failed` with git's own words.

use crate::WorkflowError;
use std::path::{Path, PathBuf};
use tokio::process::Command;

async fn git(dir: &Path, args: &[&str]) -> Result<String, WorkflowError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .await
        .map_err(|e| failed(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(failed(format!("git {}: {}", args.join(" "), stderr.trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn failed(message: String) -> WorkflowError {
    WorkflowError::conflict("worktree_failed", format!("worktree_failed: {message}"))
}

/// Create a worktree of `workspace` (which must be a git work tree with a commit) on a new
/// branch `troupe/blueprint-<note>-<stamp>`, beside the workspace. Returns its path.
pub async fn create(workspace: &Path, note_id: i64, stamp: i64) -> Result<PathBuf, WorkflowError> {
    create_named(workspace, &format!("blueprint-{note_id}-{stamp}")).await
}

/// Create a worktree of `workspace` on a new branch `troupe/<name>`, beside the workspace in
/// `<workspace>.<name>`. Returns its path.
pub async fn create_named(workspace: &Path, name: &str) -> Result<PathBuf, WorkflowError> {
    let inside = git(workspace, &["rev-parse", "--is-inside-work-tree"])
        .await
        .map_err(|_| {
            failed(format!(
                "the session's workspace {} is not a git repository",
                workspace.display()
            ))
        })?;
    if inside != "true" {
        return Err(failed(format!(
            "the session's workspace {} is not a git work tree",
            workspace.display()
        )));
    }
    git(workspace, &["rev-parse", "--verify", "HEAD"])
        .await
        .map_err(|_| failed("the workspace's repository has no commit to branch from".into()))?;
    let dir_name = format!(
        "{}.{name}",
        workspace
            .file_name()
            .map_or("workspace".into(), |n| n.to_string_lossy().to_string())
    );
    let path = workspace
        .parent()
        .map_or_else(|| PathBuf::from(&dir_name), |p| p.join(&dir_name));
    let branch = format!("troupe/{name}");
    let path_str = path.display().to_string();
    git(
        workspace,
        &["worktree", "add", "-b", &branch, &path_str, "HEAD"],
    )
    .await?;
    Ok(path)
}

/// Remove a worktree made by [`create_named`] (a worker that could not be made leaves none).
pub async fn remove(workspace: &Path, path: &Path) {
    let p = path.display().to_string();
    if let Err(e) = git(workspace, &["worktree", "remove", "--force", &p]).await {
        tracing::warn!(worktree = %p, error = %e, "removing a worktree failed");
    }
}
