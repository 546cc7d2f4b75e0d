//! Reviews (digest 003-B §5): every `review` call recorded with its verdicts and what became
//! of it (`recorded`, `refused`, `awaiting_user`), whether the reviewer ran on the producer's
//! model, and the images a segment read from the job (`artifact.viewed`, once per path and
//! segment). A producer never reviews its own hand-over (trigger `reviews_not_by_producer`).
//! Which approve takes effect is `troupe_core::review`'s.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use std::fmt;
use troupe_core::review::{ReviewOutcome, ReviewVerdict};
use troupe_core::{BotId, ReviewId, RunId, SubmissionId, ThreadId};

/// What became of a review call (§5.3).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewResult {
    /// Taken as given: an approve that took effect, or a reject.
    Recorded,
    /// `review.refused`: nothing changed; the reasons went back to the reviewer.
    Refused,
    /// `review.awaiting_user`: the hand-over waits on the user's word, the verdict kept.
    AwaitingUser,
}

impl ReviewResult {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewResult::Recorded => "recorded",
            ReviewResult::Refused => "refused",
            ReviewResult::AwaitingUser => "awaiting_user",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "recorded" => Ok(ReviewResult::Recorded),
            "refused" => Ok(ReviewResult::Refused),
            "awaiting_user" => Ok(ReviewResult::AwaitingUser),
            other => Err(format!(
                "review result '{other}' is not one of recorded, refused, awaiting_user"
            )),
        }
    }

    /// The event a review with this result appends.
    fn event_kind(self) -> &'static str {
        match self {
            ReviewResult::Recorded => "review_recorded",
            ReviewResult::Refused => "review_refused",
            ReviewResult::AwaitingUser => "review_awaiting_user",
        }
    }
}

impl fmt::Display for ReviewResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A verdict on one requirement.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerdictRecord {
    pub requirement_id: String,
    pub verdict: ReviewVerdict,
    pub evidence: Option<String>,
}

/// A `reviews` row with its verdicts.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReviewRecord {
    pub id: ReviewId,
    pub submission_id: SubmissionId,
    pub reviewer_bot_id: BotId,
    pub run_id: Option<RunId>,
    pub outcome: ReviewOutcome,
    pub note: String,
    pub result: ReviewResult,
    /// Why it was refused or waits, as told to the reviewer.
    pub reasons: Vec<String>,
    /// The reviewer ran on the producer's model (or either is unknown).
    pub same_model: bool,
    pub reviewer_model: Option<String>,
    pub producer_model: Option<String>,
    pub created_at: i64,
    pub verdicts: Vec<VerdictRecord>,
}

/// A review call to record.
#[derive(Clone, Debug)]
pub struct NewReview {
    pub submission_id: SubmissionId,
    pub reviewer_bot_id: BotId,
    pub run_id: Option<RunId>,
    pub outcome: ReviewOutcome,
    pub note: String,
    pub result: ReviewResult,
    pub reasons: Vec<String>,
    pub same_model: bool,
    pub reviewer_model: Option<String>,
    pub producer_model: Option<String>,
    pub verdicts: Vec<VerdictRecord>,
}

const COLUMNS: &str = "r.id, r.submission_id, r.reviewer_bot_id, r.run_id, r.outcome, r.note, \
    r.result, r.reasons, r.same_model, r.reviewer_model, r.producer_model, r.created_at";

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

fn from_row(r: &crate::Row) -> Result<ReviewRecord> {
    let reasons: String = r.get(7)?;
    Ok(ReviewRecord {
        id: ReviewId(r.get(0)?),
        submission_id: SubmissionId(r.get(1)?),
        reviewer_bot_id: BotId(r.get(2)?),
        run_id: r.get::<Option<i64>>(3)?.map(RunId),
        outcome: ReviewOutcome::parse(&r.get::<String>(4)?).map_err(|e| corrupt("review", e))?,
        note: r.get(5)?,
        result: ReviewResult::parse(&r.get::<String>(6)?).map_err(|e| corrupt("review", e))?,
        reasons: serde_json::from_str(&reasons).map_err(|e| corrupt("review reasons", e))?,
        same_model: r.get(8)?,
        reviewer_model: r.get(9)?,
        producer_model: r.get(10)?,
        created_at: r.get(11)?,
        verdicts: Vec::new(),
    })
}

impl Tx<'_> {
    /// Record a review call with its verdicts, and append `review_recorded`,
    /// `review_refused` or `review_awaiting_user` (with the reasons) to the job's home
    /// conversation. The producer's own review is refused (`own_submission`); what the
    /// review does to the hand-over and the ticket is the caller's.
    pub fn record_review(&mut self, r: &NewReview) -> Result<ReviewRecord> {
        let sub = self.submission(r.submission_id)?;
        if sub.producer_bot_id == Some(r.reviewer_bot_id) {
            return Err(StoreError::Invalid(format!(
                "own_submission: Bot {} made submission {}, so it cannot review it",
                r.reviewer_bot_id, r.submission_id
            )));
        }
        for (i, v) in r.verdicts.iter().enumerate() {
            if v.requirement_id.trim().is_empty() {
                return Err(StoreError::Invalid(format!(
                    "verdicts[{i}].requirement_id: must not be empty"
                )));
            }
            if r.verdicts[..i]
                .iter()
                .any(|w| w.requirement_id == v.requirement_id)
            {
                return Err(StoreError::Invalid(format!(
                    "verdicts[{i}]: requirement {} has a verdict already",
                    v.requirement_id
                )));
            }
        }
        let reasons = serde_json::to_string(&r.reasons).map_err(|e| corrupt("reasons", e))?;
        let id = ReviewId(self.insert(
            "INSERT INTO reviews (submission_id, reviewer_bot_id, run_id, outcome, note, result,
                 reasons, same_model, reviewer_model, producer_model, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            args![
                r.submission_id.0,
                r.reviewer_bot_id.0,
                r.run_id.map(|x| x.0),
                r.outcome.as_str(),
                r.note,
                r.result.as_str(),
                reasons,
                r.same_model,
                r.reviewer_model,
                r.producer_model,
                self.now
            ],
        )?);
        for v in &r.verdicts {
            self.exec(
                "INSERT INTO review_verdicts (review_id, requirement_id, verdict, evidence)
                 VALUES (?1, ?2, ?3, ?4)",
                args![id.0, v.requirement_id, v.verdict.as_str(), v.evidence],
            )?;
        }
        let rec = self.review(id)?;
        let payload = json!({
            "task_id": sub.plan_id, "ticket_id": sub.ticket_id, "submission_id": sub.id,
            "review_id": id, "reviewer_bot_id": r.reviewer_bot_id,
            "outcome": r.outcome.as_str(), "same_model": r.same_model, "reasons": r.reasons,
        });
        match self.plan(sub.plan_id)?.home_session_id {
            Some(home) => self.session_event(r.result.event_kind(), home, None, payload)?,
            None => self.event(r.result.event_kind(), None, None, payload)?,
        }
        Ok(rec)
    }

    pub fn review(&self, id: ReviewId) -> Result<ReviewRecord> {
        let mut found = self.reviews_where("r.id = ?1", id.0)?;
        found
            .pop()
            .ok_or_else(|| StoreError::not_found("review", id))
    }

    /// A hand-over's reviews, oldest first, with their verdicts.
    pub fn reviews_of_submission(&self, sub: SubmissionId) -> Result<Vec<ReviewRecord>> {
        self.reviews_where("r.submission_id = ?1", sub.0)
    }

    /// The reviews of the submissions `s` meeting `cond` (one argument), oldest first: two
    /// queries however many.
    pub(crate) fn reviews_of_submissions(&self, cond: &str, arg: i64) -> Result<Vec<ReviewRecord>> {
        self.reviews_where(
            &format!("r.submission_id IN (SELECT s.id FROM submissions s WHERE {cond})"),
            arg,
        )
    }

    fn reviews_where(&self, cond: &str, arg: i64) -> Result<Vec<ReviewRecord>> {
        let mut reviews = self.query_all(
            &format!("SELECT {COLUMNS} FROM reviews r WHERE {cond} ORDER BY r.id"),
            args![arg],
            from_row,
        )?;
        if reviews.is_empty() {
            return Ok(reviews);
        }
        let verdicts = self.query_all(
            &format!(
                "SELECT v.review_id, v.requirement_id, v.verdict, v.evidence
                 FROM review_verdicts v JOIN reviews r ON r.id = v.review_id WHERE {cond}
                 ORDER BY v.review_id, v.requirement_id"
            ),
            args![arg],
            |row| {
                Ok((
                    row.get::<i64>(0)?,
                    VerdictRecord {
                        requirement_id: row.get(1)?,
                        verdict: ReviewVerdict::parse(&row.get::<String>(2)?)
                            .map_err(|e| corrupt("verdict", e))?,
                        evidence: row.get(3)?,
                    },
                ))
            },
        )?;
        let at: std::collections::HashMap<i64, usize> = reviews
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.0, i))
            .collect();
        for (review, v) in verdicts {
            reviews[at[&review]].verdicts.push(v);
        }
        Ok(reviews)
    }

    /// A segment read `path` (an image of the job): recorded once per path and segment, with
    /// `artifact_viewed` appended to its thread the first time. Answers whether it was new.
    pub fn record_artifact_view(&mut self, run: RunId, path: &str) -> Result<bool> {
        if path.trim().is_empty() {
            return Err(StoreError::Invalid("path: must not be empty".into()));
        }
        let thread: i64 = self
            .query_opt(
                "SELECT thread_id FROM runs WHERE id = ?1",
                args![run.0],
                |r| r.get(0),
            )?
            .ok_or_else(|| StoreError::not_found("run", run))?;
        let n = self.exec(
            "INSERT INTO artifact_views (run_id, path, at) VALUES (?1, ?2, ?3)
             ON CONFLICT DO NOTHING",
            args![run.0, path, self.now],
        )?;
        if n > 0 {
            self.event(
                "artifact_viewed",
                Some(ThreadId(thread)),
                Some(run),
                json!({"run_id": run, "path": path}),
            )?;
        }
        Ok(n > 0)
    }

    /// The paths a segment read, with when, in that order.
    pub fn artifact_views(&self, run: RunId) -> Result<Vec<(String, i64)>> {
        self.query_all(
            "SELECT path, at FROM artifact_views WHERE run_id = ?1 ORDER BY at, path",
            args![run.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// The models a run's recorded model calls used, as recorded, by name: for the
    /// same-model rule (none recorded is unknown).
    pub fn models_of_run(&self, run: RunId) -> Result<Vec<String>> {
        self.query_all(
            "SELECT DISTINCT model FROM model_calls WHERE run_id = ?1 ORDER BY model",
            args![run.0],
            |r| r.get(0),
        )
    }
}
