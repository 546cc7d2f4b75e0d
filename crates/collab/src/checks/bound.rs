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
    /// Whether it holds the hand-over back when it fails (CK3): an offer never does.
    pub gate: bool,
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
    places.bound(0, c, sub, &places.files(sub), &ticket_dir(plan, ticket))
}

/// The paths CK1 compares, made absolute once: each check's path and working folder, for a
/// job's whole list of hand-overs (a list of 1,000 × 10 files does not normalise the same
/// paths again for every check).
pub struct Places {
    job: PathBuf,
    /// By check, in the order given: its path and its command's folder, absolute.
    checks: Vec<(Option<PathBuf>, Option<PathBuf>)>,
}

impl Places {
    pub fn new(plan: &PlanRecord, checks: &[CheckRecord]) -> Places {
        let ws = plan_workspace(&plan.folder);
        Places {
            job: PathBuf::from(&plan.folder),
            checks: checks
                .iter()
                .map(|c| {
                    (
                        c.path.as_deref().map(|p| absolute(&ws, p)),
                        c.cwd.as_deref().map(|d| absolute(&ws, d)),
                    )
                })
                .collect(),
        }
    }

    /// The hand-over's files, absolute.
    pub fn files(&self, sub: &SubmissionRecord) -> Vec<PathBuf> {
        sub.files
            .iter()
            .map(|f| absolute(&self.job, &f.path))
            .collect()
    }

    /// CK1 for the `i`th check given to [`Places::new`], `c`, on a hand-over with `files`
    /// (from [`Places::files`]) of the ticket in `folder`.
    pub fn bound(
        &self,
        i: usize,
        c: &CheckRecord,
        sub: &SubmissionRecord,
        files: &[PathBuf],
        folder: &Path,
    ) -> bool {
        if c.removed_at.is_some() || c.plan_id != sub.plan_id {
            return false;
        }
        if let Some(t) = c.ticket_id {
            return t == sub.ticket_id;
        }
        let (path, cwd) = &self.checks[i];
        match c.kind {
            CheckKind::Words => path.as_ref().is_some_and(|p| files.contains(p)),
            CheckKind::Command => cwd.as_ref().is_some_and(|d| d.starts_with(folder)),
            _ => path
                .as_ref()
                .is_some_and(|p| files.contains(p) || p.starts_with(folder)),
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
            BoundResult {
                check_id: c.id,
                gate: c.gate,
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

/// The hand-over's hook: the submissions' pass runs the bound checks through this.
#[async_trait]
impl BoundChecks for Checks {
    async fn run(&self, _store: &Store, sub: SubmissionId) -> Result<Vec<BoundCheck>, String> {
        self.run_bound(sub)
            .await
            .map(|r| r.iter().map(BoundResult::to_bound_check).collect())
            .map_err(|e| e.to_string())
    }
}
