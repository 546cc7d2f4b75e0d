//! Source writes and publish, through the `git` command line (never a reimplementation).
//!
//! A source-writing operator works in a git worktree on branch `session/<sessionId>` made from
//! the head the session froze. The runner commits the declared write set once
//! ([`commit_write_set`]) and records `changes.md`; publish ([`publish`]) fast-forwards the
//! target, or makes a merge commit on the session branch when the target moved without a
//! conflict (the caller re-runs the gates on it, then publishes again). Nothing here rebases,
//! resets, forces, stashes or passes `--no-verify`; a refusal is a [`SourceStop`] carrying the
//! stop code the branch blocks with. Commits carry the person's git identity, or Troupe's when
//! git has none ([`Identity`]).

mod command;
mod commit;
mod identity;
mod publish;
mod worktree;

pub use command::{Git, GitError};
pub use commit::{ChangedPath, WriteCommit, changes_markdown, commit_write_set};
pub use identity::{Identity, IdentityOrigin, TROUPE_EMAIL, TROUPE_NAME};
pub use publish::{PublishOutcome, publish};
pub use worktree::{
    CHECKOUTS_DIR, SessionWorktree, create_worktree, create_worktree_at, freeze_source, is_dirty,
    remove_worktree,
};

/// A refusal the branch blocks with: a shared stop code and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceStop {
    pub code: &'static str,
    pub detail: String,
}

/// Why a source step did not happen.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A rule refused it; the branch blocks with `code`.
    #[error("{}: {}", .0.code, .0.detail)]
    Stop(SourceStop),
    /// git itself failed unexpectedly.
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl SourceError {
    pub(crate) fn stop(code: &'static str, detail: impl Into<String>) -> Self {
        Self::Stop(SourceStop {
            code,
            detail: detail.into(),
        })
    }

    /// The stop code, when a rule refused.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Self::Stop(s) => Some(s.code),
            _ => None,
        }
    }
}
