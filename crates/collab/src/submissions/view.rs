//! A hand-over as the API shows it (§4.1): its files, the checks bound to it with their
//! results, and its reviews with their verdicts. A job's list is read set-wise (a fixed
//! handful of queries however many hand-overs it has).

use crate::checks::bound::{Places, result_of};
use crate::{Collab, CollabError};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use troupe_core::submission::{
    ApprovedBy, CheckResult, CheckSource, SubmissionOrigin, SubmissionState,
};
use troupe_core::{
    BotId, CheckId, PartId, PlanId, RunId, SessionMessageId, SubmissionId, TicketId, WorkItemId,
};
use troupe_store::{CheckRecord, ReviewRecord, StoreError, SubmissionRecord, SubmittedFile, Tx};

/// One check bound to a hand-over, with its result for it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SubmissionCheck {
    pub check_id: CheckId,
    /// file_exists | file_contains | file_matches_regex | command | words | standard | seams
    pub kind: String,
    pub source: CheckSource,
    /// Holds the hand-over back when it fails (an offer never does, nor a run judged on
    /// pictures).
    pub gate: bool,
    /// Judged by a model looking at pictures: shown for reference only.
    pub for_reference: bool,
    pub confirmed_by_user: bool,
    pub result: CheckResult,
    /// What it measured (a words check's number).
    pub measured: Option<f64>,
    pub detail: String,
    pub output_tail: String,
    /// The run the result comes from; none while pending.
    pub run_id: Option<i64>,
}

/// A hand-over with its files, checks and reviews.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SubmissionView {
    pub id: SubmissionId,
    pub ticket_id: TicketId,
    /// The job (`/v1/tasks/:id`).
    pub task_id: PlanId,
    pub ticket_number: i64,
    pub origin: SubmissionOrigin,
    pub producer_bot_id: Option<BotId>,
    pub run_id: Option<RunId>,
    pub work_item_id: Option<WorkItemId>,
    /// By path, relative to the job's folder (a shared asset keeps its full path).
    pub files: Vec<SubmittedFile>,
    /// The words of a words hand-over.
    pub content: Option<String>,
    /// None: the whole ticket.
    pub parts: Vec<PartId>,
    pub note: String,
    pub claims: Vec<String>,
    pub state: SubmissionState,
    pub approved_by: Option<ApprovedBy>,
    pub approved_by_bot_id: Option<BotId>,
    pub approved_message_id: Option<SessionMessageId>,
    pub superseded_by: Option<SubmissionId>,
    pub checks: Vec<SubmissionCheck>,
    pub reviews: Vec<ReviewRecord>,
    pub created_at: i64,
    pub decided_at: Option<i64>,
}

/// CK1–CK2: the checks bound to the hand-over (or run for it), each with the newest run made
/// for it or started after it; with none it is pending.
fn checks_of(
    s: &SubmissionRecord,
    all: &[CheckRecord],
    places: &Places,
    folder: Option<&PathBuf>,
) -> Vec<SubmissionCheck> {
    all.iter()
        .enumerate()
        .filter(|(i, c)| {
            folder.is_some_and(|f| places.bound(*i, c, s, f))
                || s.check_runs.iter().any(|r| r.check_id == c.id)
        })
        .map(|(_, c)| c)
        .map(|c| {
            let run = s
                .check_runs
                .iter()
                .find(|r| r.check_id == c.id)
                .or_else(|| c.runs.iter().find(|r| r.started_at >= s.created_at));
            let for_reference = run.is_some_and(|r| r.for_reference);
            SubmissionCheck {
                check_id: c.id,
                kind: c.kind.to_string(),
                source: c.source,
                gate: c.gate && !for_reference,
                for_reference,
                confirmed_by_user: c.confirmed,
                result: run.map_or(CheckResult::Pending, |r| result_of(r.outcome)),
                measured: run.and_then(|r| r.measured),
                detail: run.map(|r| r.detail.clone()).unwrap_or_default(),
                output_tail: run.map(|r| r.output_tail.clone()).unwrap_or_default(),
                run_id: run.map(|r| r.id),
            }
        })
        .collect()
}

fn views(
    tx: &Tx<'_>,
    plan: PlanId,
    subs: Vec<SubmissionRecord>,
) -> Result<Vec<SubmissionView>, StoreError> {
    let p = tx.plan(plan)?;
    let checks = tx.checks_of_plan(plan, true)?;
    let places = Places::new(&p, &checks);
    let tickets: HashMap<TicketId, (i64, PathBuf)> = tx
        .tickets_of_plan(plan)?
        .into_iter()
        .map(|t| (t.id, (t.number, places.ticket_dir(&t))))
        .collect();
    Ok(subs
        .into_iter()
        .map(|s| {
            let ticket = tickets.get(&s.ticket_id);
            SubmissionView {
                checks: checks_of(&s, &checks, &places, ticket.map(|(_, f)| f)),
                ticket_number: ticket.map_or(0, |(n, _)| *n),
                id: s.id,
                ticket_id: s.ticket_id,
                task_id: s.plan_id,
                origin: s.origin,
                producer_bot_id: s.producer_bot_id,
                run_id: s.run_id,
                work_item_id: s.work_item_id,
                files: s.files,
                content: s.content,
                parts: s.parts,
                note: s.note,
                claims: s.claims,
                state: s.state,
                approved_by: s.approved_by,
                approved_by_bot_id: s.approved_by_bot_id,
                approved_message_id: s.approved_message_id,
                superseded_by: s.superseded_by,
                reviews: s.reviews,
                created_at: s.created_at,
                decided_at: s.decided_at,
            }
        })
        .collect())
}

impl Collab {
    /// A job's hand-overs, newest first; with `ticket`, that ticket's only (it must be one of
    /// the job's).
    pub fn plan_submissions(
        &self,
        plan: PlanId,
        ticket: Option<TicketId>,
    ) -> Result<Vec<SubmissionView>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.plan(plan)?;
            if let Some(t) = ticket {
                let found = tx.find_ticket(t)?;
                if found.is_none_or(|f| f.plan_id != plan) {
                    return Err(StoreError::Invalid(format!(
                        "ticket_id: {t} is not a ticket of job {plan}"
                    )));
                }
            }
            let subs = tx.submissions_of_plan(plan, ticket)?;
            views(tx, plan, subs)
        })?)
    }

    /// One hand-over.
    pub fn submission(&self, id: SubmissionId) -> Result<SubmissionView, CollabError> {
        Ok(self.store().read(|tx| {
            let s = tx.submission(id)?;
            let plan = s.plan_id;
            Ok(views(tx, plan, vec![s])?.remove(0))
        })?)
    }
}
