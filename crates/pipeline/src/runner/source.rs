//! The runner's source glue: the session checkout at creation, the one commit of a source
//! writer's declared write set (with `changes.md`), the publish (with the gates re-run on a
//! merge result), and the clean-up once the session is done.

use std::path::{Path, PathBuf};

use troupe_core::Clock;

use super::agent::CHECKOUT_DIR;
use super::{RunnerError, blocked_markdown};
use crate::defs::{Definitions, Operator};
use crate::gate::{Refusal, Refusals, check_response};
use crate::git::{
    Git, PublishOutcome, SessionWorktree, SourceError, SourceStop, changes_markdown,
    commit_write_set, create_worktree_at, is_dirty, publish, remove_worktree,
};
use crate::session::{BranchKey, BranchStatus, Response, ResponseStatus, Session, SourceRecord};

/// Creates the session checkout inside the session folder and records it in the manifest.
pub(crate) fn open_checkout(
    source: &Path,
    session: &mut Session,
    target: String,
    head: String,
    clock: &dyn Clock,
) -> Result<(), RunnerError> {
    let path = session.root().join(CHECKOUT_DIR);
    let wt = create_worktree_at(source, session.id(), &head, &path)?;
    let mut state = session.state().clone();
    state.source = Some(SourceRecord {
        target,
        frozen_head: head.clone(),
        session_branch: wt.branch,
        worktree: Some(wt.path.to_string_lossy().into_owned()),
        head,
        commits: Vec::new(),
        identity: None,
    });
    session.save(state, clock)?;
    Ok(())
}

fn worktree(session: &Session) -> Option<PathBuf> {
    session
        .state()
        .source
        .as_ref()
        .and_then(|s| s.worktree.as_ref())
        .map(PathBuf::from)
}

/// After a source writer answered `done`: commit its declared write set once, write
/// `changes.md`, record the commit in `response.json.commits` and the manifest. A rule's refusal
/// turns the response into `blocked` with the stop code. For any other operator, a change in
/// the checkout is `WRITE_OUTSIDE_ROOTS`.
pub(crate) fn glue(
    session: &mut Session,
    op: &Operator,
    key: BranchKey,
    mut response: Response,
    clock: &dyn Clock,
) -> Result<Response, RunnerError> {
    let Some(wt) = worktree(session) else {
        return Ok(response);
    };
    if !wt.exists() {
        return Ok(response);
    }
    if !op.def.writes_source {
        if op.def.publishes || !is_dirty(&wt)? {
            return Ok(response);
        }
        let changed = Git::new(&wt).changed_paths()?.join(", ");
        return blocked(
            session,
            op,
            key,
            SourceStop {
                code: "WRITE_OUTSIDE_ROOTS",
                detail: format!("`{}` writes no source but changed {changed}", op.id()),
            },
        );
    }
    if response.status != ResponseStatus::Done {
        return Ok(response);
    }
    let src = session
        .state()
        .source
        .clone()
        .expect("a worktree has a source");
    if response
        .commits
        .first()
        .is_some_and(|c| src.commits.contains(c))
    {
        return Ok(response); // glued before a restart
    }
    let message = format!("{}: {key} of session {}", op.id(), session.id());
    match commit_write_set(&wt, op, &response.writes, &src.head, &message) {
        Ok(None) => Ok(response),
        Ok(Some(c)) => {
            let markdown =
                std::fs::read_to_string(session.response_dir(key, None).join("response.md"))
                    .unwrap_or_default();
            session.write_branch_file(
                key,
                None,
                "response/changes.md",
                changes_markdown(&c).as_bytes(),
            )?;
            response.commits = vec![c.commit.clone()];
            session.write_response(&response, &markdown)?;
            let mut state = session.state().clone();
            let s = state.source.as_mut().expect("checked above");
            s.head = c.commit.clone();
            s.commits.push(c.commit);
            s.identity = Some(c.identity);
            session.save(state, clock)?;
            Ok(response)
        }
        Err(SourceError::Stop(stop)) => blocked(session, op, key, stop),
        Err(e) => Err(e.into()),
    }
}

fn blocked(
    session: &Session,
    op: &Operator,
    key: BranchKey,
    stop: SourceStop,
) -> Result<Response, RunnerError> {
    let r = Response::blocked(op.id(), key, stop.code, &stop.detail);
    session.write_response(&r, &blocked_markdown(&r))?;
    Ok(r)
}

/// What a publish did, for the publishing agent's task and receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub target: String,
    pub commit: String,
    /// `fast-forward`, `merge` or `up-to-date`.
    pub mode: &'static str,
}

/// Publishes the session branch: fast-forward; or, when the target moved without conflict, a
/// merge commit on the session branch, the gates re-run on it, then a fast-forward. A rule's
/// refusal (`NON_FAST_FORWARD`, `DIRTY_CHECKOUT`, …) comes back as its stop.
pub(crate) fn publish_session(
    source: &Path,
    defs: &Definitions,
    session: &mut Session,
    clock: &dyn Clock,
) -> Result<Result<Published, SourceStop>, RunnerError> {
    let Some(src) = session.state().source.clone() else {
        return Ok(Err(SourceStop {
            code: "SESSION_MISSING",
            detail: "the session has no checkout to publish".into(),
        }));
    };
    let wt = worktree(session);
    let message = format!("Merge {} into {}", src.session_branch, src.target);
    let mut mode = None;
    for _ in 0..3 {
        let out = publish(
            source,
            &src.session_branch,
            &src.target,
            wt.as_deref().filter(|p| p.exists()),
            &message,
        );
        match out {
            Ok(PublishOutcome::UpToDate { commit }) => {
                return Ok(Ok(Published {
                    target: src.target,
                    commit,
                    mode: mode.unwrap_or("up-to-date"),
                }));
            }
            Ok(PublishOutcome::FastForward { to, .. }) => {
                return Ok(Ok(Published {
                    target: src.target,
                    commit: to,
                    mode: mode.unwrap_or("fast-forward"),
                }));
            }
            Ok(PublishOutcome::MergedOnSession {
                merge_commit,
                identity,
                ..
            }) => {
                let mut state = session.state().clone();
                let s = state.source.as_mut().expect("checked above");
                s.head = merge_commit.clone();
                s.commits.push(merge_commit);
                s.identity = Some(identity);
                session.save(state, clock)?;
                if let Err(refusals) = rerun_gates(defs, session) {
                    return Ok(Err(SourceStop {
                        code: "INVALID_INPUT",
                        detail: format!("the gates refused the merge result: {refusals}"),
                    }));
                }
                mode = Some("merge");
            }
            Err(SourceError::Stop(stop)) => return Ok(Err(stop)),
            Err(e) => return Err(e.into()),
        }
    }
    Err(RunnerError::Other(
        "publish did not settle after a merge".into(),
    ))
}

/// The response gate, again, on every branch the session has routed `done`.
pub(crate) fn rerun_gates(defs: &Definitions, session: &Session) -> Result<(), Refusals> {
    let mut all = Vec::new();
    for (key, rec) in &session.state().branches {
        if rec.status != BranchStatus::Done {
            continue;
        }
        if let Err(r) = check_response(defs, session, *key, None) {
            all.extend(
                r.0.into_iter()
                    .map(|x| Refusal::new(format!("{key}: {}", x.field), x.reason)),
            );
        }
    }
    if all.is_empty() {
        Ok(())
    } else {
        Err(Refusals(all))
    }
}

/// The session is done: an optional audit copy, then the checkout, its branch and the folder
/// are removed. Returns notes on what was kept and why.
pub(crate) fn clean_up(
    source: &Path,
    session: &Session,
    keep_audit: Option<&Path>,
) -> Result<Vec<String>, RunnerError> {
    let mut notes = Vec::new();
    if let Some(dir) = keep_audit {
        let to = dir.join(session.id());
        copy_tree(session.root(), &to)?;
        notes.push(format!("audit copy in {}", to.display()));
    }
    if let Some(src) = &session.state().source
        && let Some(path) = &src.worktree
    {
        let wt = SessionWorktree {
            path: PathBuf::from(path),
            branch: src.session_branch.clone(),
            frozen_head: src.frozen_head.clone(),
        };
        if wt.path.exists()
            && let Err(e) = remove_worktree(source, &wt)
        {
            notes.push(format!(
                "the session folder is kept: its checkout was not removed ({e})"
            ));
            return Ok(notes);
        }
    }
    std::fs::remove_dir_all(session.root())?;
    Ok(notes)
}

/// Copies a session folder, leaving out its checkout.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if from.join(CHECKOUT_DIR) == entry.path() {
            continue;
        }
        let ty = entry.file_type()?;
        if ty.is_dir() {
            copy_tree(&entry.path(), &to.join(&name))?;
        } else if ty.is_file() {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}
