//! Publishing a session branch into the person's target branch.

use std::path::Path;

use super::{Git, Identity, SourceError, is_dirty};

/// What a publish did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublishOutcome {
    /// The target already contains the session branch.
    UpToDate { commit: String },
    /// The target moved forward to the session branch's tip.
    FastForward { from: String, to: String },
    /// The target had moved without conflict: a merge commit now tops the session branch and
    /// the target is untouched. The caller re-runs the gates on `merge_commit`
    /// (`rerun_gates`), then publishes again, which fast-forwards.
    MergedOnSession {
        merge_commit: String,
        rerun_gates: bool,
        /// The merge commit's author: the person's git identity, or Troupe's.
        identity: Identity,
    },
}

/// Publishes `session_branch` into `target` in the repository at `source`:
/// - the target contains the session branch: nothing to do;
/// - the target has not moved: fast-forward (`merge --ff-only` when the person has the
///   target checked out and the checkout is clean, `DIRTY_CHECKOUT` when it is not; a
///   non-forced local fetch otherwise);
/// - the target moved and the merge is clean: a merge commit on the session branch (advanced
///   in `worktree` when given), returned with `rerun_gates`;
/// - the merge conflicts: `NON_FAST_FORWARD`, with the target, the person's HEAD and files
///   exactly as they were.
///
/// A missing target is `TARGET_MISSING`; a missing session branch `SESSION_MISSING`.
pub fn publish(
    source: &Path,
    session_branch: &str,
    target: &str,
    worktree: Option<&Path>,
    message: &str,
) -> Result<PublishOutcome, SourceError> {
    let git = Git::new(source);
    let target_ref = format!("refs/heads/{target}");
    let session_ref = format!("refs/heads/{session_branch}");
    let target_tip = git.rev(&target_ref).map_err(|_| {
        SourceError::stop(
            "TARGET_MISSING",
            format!("branch `{target}` does not exist"),
        )
    })?;
    let session_tip = git.rev(&session_ref).map_err(|_| {
        SourceError::stop(
            "SESSION_MISSING",
            format!("branch `{session_branch}` does not exist"),
        )
    })?;

    if git.succeeds(&["merge-base", "--is-ancestor", &session_tip, &target_tip])? {
        return Ok(PublishOutcome::UpToDate { commit: target_tip });
    }
    if git.succeeds(&["merge-base", "--is-ancestor", &target_tip, &session_tip])? {
        fast_forward(&git, source, target, &target_ref, &session_ref)?;
        return Ok(PublishOutcome::FastForward {
            from: target_tip,
            to: session_tip,
        });
    }

    // The target moved: merge without touching any checkout, to learn whether it conflicts.
    let merged = git.output(&[
        "merge-tree",
        "--write-tree",
        "--no-messages",
        &target_tip,
        &session_tip,
    ])?;
    match merged.status.code() {
        Some(0) => {}
        Some(1) => {
            return Err(SourceError::stop(
                "NON_FAST_FORWARD",
                format!(
                    "`{target}` moved and merging `{session_branch}` into it conflicts; a person resolves it"
                ),
            ));
        }
        _ => {
            return Err(super::GitError::Failed {
                args: "merge-tree --write-tree".into(),
                code: merged.status.code().unwrap_or(-1),
                stderr: String::from_utf8_lossy(&merged.stderr).trim().to_string(),
            }
            .into());
        }
    }
    let tree = String::from_utf8_lossy(&merged.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    let (committer, origin) = git.committing()?;
    let merge_commit = committer.run(&[
        "commit-tree",
        &tree,
        "-p",
        &target_tip,
        "-p",
        &session_tip,
        "-m",
        message,
    ])?;
    match worktree {
        Some(wt) => {
            let wgit = Git::new(wt);
            if wgit.rev("HEAD")? != session_tip || is_dirty(wt)? {
                return Err(SourceError::stop(
                    "SOURCE_DRIFT",
                    "the session worktree is not clean at the session branch's tip",
                ));
            }
            wgit.run(&["merge", "--ff-only", "--quiet", &merge_commit])?;
        }
        None => {
            // A compare-and-swap move of the session branch to a descendant of its tip.
            git.run(&["update-ref", &session_ref, &merge_commit, &session_tip])?;
        }
    }
    let identity = git.author_of(&merge_commit, origin)?;
    Ok(PublishOutcome::MergedOnSession {
        merge_commit,
        rerun_gates: true,
        identity,
    })
}

fn fast_forward(
    git: &Git,
    source: &Path,
    target: &str,
    target_ref: &str,
    session_ref: &str,
) -> Result<(), SourceError> {
    let head = git
        .run(&["symbolic-ref", "--quiet", "HEAD"])
        .unwrap_or_default();
    if head == target_ref {
        if is_dirty(source)? {
            return Err(SourceError::stop(
                "DIRTY_CHECKOUT",
                format!("the checkout of `{target}` has uncommitted changes"),
            ));
        }
        git.run(&["merge", "--ff-only", "--quiet", session_ref])?;
    } else {
        // Without `+`, fetch refuses anything but a fast-forward.
        git.run(&[
            "fetch",
            "--quiet",
            ".",
            &format!("{session_ref}:{target_ref}"),
        ])?;
    }
    Ok(())
}
