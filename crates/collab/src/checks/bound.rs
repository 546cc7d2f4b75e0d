//! The checks bound to a submission (CK1) and their results for it (CK2): what the hand-over's
//! approval reads (`troupe_core::submission::approval_decision`). Bound are the job's checks
//! on the submission's ticket; checks reading one of its files or anything in the ticket's
//! folder; commands run in the ticket's folder; checks from the user's words whose final cut
//! is one of its files (the words are read again first, so a new master gets bound). Only
//! runs started after the submission count: a check with none is `pending`.

use super::{Checks, lexical, plan_workspace};
use crate::CollabError;
use crate::submissions::hooks::BoundChecks;
use async_trait::async_trait;
use serde::Serialize;
use std::path::{Path, PathBuf};
use troupe_core::submission::{BoundCheck, CheckResult, CheckSource};
use troupe_core::{CheckId, SubmissionId};
use troupe_store::{
    CheckKind, CheckRecord, PlanRecord, RunOutcome, Store, StoreError, SubmissionRecord,
    TicketRecord, Tx,
};

/// One bound check's result for a submission.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoundResult {
    pub check_id: CheckId,
    /// Whether it holds the hand-over back when it fails (CK3): an offer never does, nor a
    /// run judged on pictures.
    pub gate: bool,
    /// Judged by a model looking at pictures: shown, for reference only.
    pub for_reference: bool,
    pub source: CheckSource,
    pub confirmed: bool,
    pub result: CheckResult,
    /// What a check from words measured (seconds, short side, ratio or fps).
    pub measured: Option<f64>,
    /// The counting run's one line, if there is one.
    pub detail: Option<String>,
}

impl BoundResult {
    /// As the approval decision takes it.
    pub fn to_bound_check(&self) -> BoundCheck {
        BoundCheck {
            check_id: self.check_id,
            source: self.source,
            confirmed: self.confirmed,
            result: self.result,
        }
    }
}

/// How a run counts for a hand-over: `blocked` (reached outside the workspace, not run) and
/// `error` gave no evidence either way (AC-9), so they judge nothing.
pub fn result_of(outcome: RunOutcome) -> CheckResult {
    match outcome {
        RunOutcome::Passed => CheckResult::Pass,
        RunOutcome::Failed => CheckResult::Fail,
        RunOutcome::Blocked | RunOutcome::Error => CheckResult::NotJudged,
    }
}

/// A path as the job records it, made absolute: relative paths of a hand-over are the job
/// folder's, a check's are the workspace's.
fn absolute(base: &Path, p: &str) -> PathBuf {
    let p = Path::new(p.trim());
    lexical(&if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    })
}

fn ticket_dir(plan: &PlanRecord, t: &TicketRecord) -> PathBuf {
    absolute(Path::new(&plan.folder), &t.folder)
}

/// CK1 for one check.
pub fn is_bound(
    c: &CheckRecord,
    sub: &SubmissionRecord,
    plan: &PlanRecord,
    ticket: &TicketRecord,
) -> bool {
    let places = Places::new(plan, std::slice::from_ref(c));
    places.bound(0, c, sub, &ticket_dir(plan, ticket))
}

/// The paths CK1 compares, made absolute once: each check's path and working folder, for a
/// job's whole list of hand-overs (a list of 1,000 × 10 files does not normalise the same
/// paths again for every check). A hand-over's file path that is already plain (relative, no
/// `.` or `..`) is compared as text with the check's path relative to the job folder.
pub struct Places {
    job: PathBuf,
    /// By check, in the order given: its path and its command's folder, absolute, and its
    /// path relative to the job folder when it is inside it.
    checks: Vec<(Option<PathBuf>, Option<PathBuf>, Option<String>)>,
}

/// A relative path with nothing to normalise: joined to the job folder it is already lexical.
fn plain(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.contains('\\')
        && p.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

impl Places {
    pub fn new(plan: &PlanRecord, checks: &[CheckRecord]) -> Places {
        let ws = plan_workspace(&plan.folder);
        let job = lexical(Path::new(&plan.folder));
        Places {
            checks: checks
                .iter()
                .map(|c| {
                    let path = c.path.as_deref().map(|p| absolute(&ws, p));
                    let rel = path.as_ref().and_then(|p| {
                        p.strip_prefix(&job)
                            .ok()
                            .and_then(|r| r.to_str())
                            .map(str::to_string)
                    });
                    (path, c.cwd.as_deref().map(|d| absolute(&ws, d)), rel)
                })
                .collect(),
            job,
        }
    }

    /// Whether one of the hand-over's files is the `i`th check's path.
    fn names(&self, i: usize, sub: &SubmissionRecord) -> bool {
        let (Some(path), _, rel) = &self.checks[i] else {
            return false;
        };
        sub.files.iter().any(|f| {
            let p = f.path.trim();
            if plain(p) {
                rel.as_deref() == Some(p)
            } else {
                absolute(&self.job, p) == *path
            }
        })
    }

    /// CK1 for the `i`th check given to [`Places::new`], `c`, on a hand-over of the ticket in
    /// `folder`.
    pub fn bound(&self, i: usize, c: &CheckRecord, sub: &SubmissionRecord, folder: &Path) -> bool {
        if c.removed_at.is_some() || c.plan_id != sub.plan_id {
            return false;
        }
        if let Some(t) = c.ticket_id {
            return t == sub.ticket_id;
        }
        let (path, cwd, _) = &self.checks[i];
        match c.kind {
            CheckKind::Words => self.names(i, sub),
            CheckKind::Command => cwd.as_ref().is_some_and(|d| d.starts_with(folder)),
            CheckKind::Seams if c.command.is_some() => {
                cwd.as_ref().is_some_and(|d| d.starts_with(folder))
            }
            _ => path.as_ref().is_some_and(|p| p.starts_with(folder)) || self.names(i, sub),
        }
    }

    /// The folder of a ticket, absolute.
    pub fn ticket_dir(&self, t: &TicketRecord) -> PathBuf {
        absolute(&self.job, &t.folder)
    }
}

/// The checks bound to a submission.
pub fn bound_checks(tx: &Tx<'_>, sub: &SubmissionRecord) -> Result<Vec<CheckRecord>, StoreError> {
    let plan = tx.plan(sub.plan_id)?;
    let ticket = tx.ticket(sub.ticket_id)?;
    Ok(tx
        .checks_of_plan(sub.plan_id, false)?
        .into_iter()
        .filter(|c| is_bound(c, sub, &plan, &ticket))
        .collect())
}

/// CK2: the bound checks' results from the runs recorded so far, running nothing. The newest
/// run started at or after the submission counts; with none the check is `pending`.
pub fn bound_results(tx: &Tx<'_>, sub: SubmissionId) -> Result<Vec<BoundResult>, StoreError> {
    let s = tx.submission(sub)?;
    Ok(bound_checks(tx, &s)?
        .into_iter()
        .map(|c| {
            let run = c
                .runs
                .iter()
                .find(|r| r.submission_id == Some(sub) || r.started_at >= s.created_at);
            let for_reference = run.is_some_and(|r| r.for_reference);
            BoundResult {
                check_id: c.id,
                gate: c.gate && !for_reference,
                for_reference,
                source: c.source,
                confirmed: c.confirmed,
                result: run.map_or(CheckResult::Pending, |r| result_of(r.outcome)),
                measured: run.and_then(|r| r.measured),
                detail: run.map(|r| r.detail.clone()),
            }
        })
        .collect())
}

impl Checks {
    /// CK1–CK2: read the user's words again (so a new master is bound), run the checks bound
    /// to the submission — for it, one after another, under the job's lock — and give their
    /// results for it.
    pub async fn run_bound(&self, sub: SubmissionId) -> Result<Vec<BoundResult>, CollabError> {
        let s = self.store().read(|tx| tx.submission(sub))?;
        self.sync_words(s.plan_id).await?;
        let ids: Vec<CheckId> = self
            .store()
            .read(|tx| bound_checks(tx, &s))?
            .iter()
            .map(|c| c.id)
            .collect();
        if !ids.is_empty() {
            self.run_plan(s.plan_id, Some(&ids), Some(sub)).await?;
        }
        Ok(self.store().read(|tx| bound_results(tx, sub))?)
    }
}

/// The hand-over's hook: the submissions' pass runs the bound checks through this. A run
/// judged on pictures is for reference: the approval neither waits on it nor reads it.
#[async_trait]
impl BoundChecks for Checks {
    async fn run(&self, _store: &Store, sub: SubmissionId) -> Result<Vec<BoundCheck>, String> {
        self.run_bound(sub)
            .await
            .map(|r| {
                r.iter()
                    .filter(|c| !c.for_reference)
                    .map(BoundResult::to_bound_check)
                    .collect()
            })
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn only_plain_relative_paths_are_compared_as_text() {
        assert!(plain("01-Cut/cut.mp4") && plain("cut.mp4"));
        for p in [
            "",
            "/abs/cut.mp4",
            "./cut.mp4",
            "01-Cut/../cut.mp4",
            "a//b",
            "a\\b",
        ] {
            assert!(!plain(p), "{p}");
        }
    }
}
