//! Review misses (digest 003-B §6): a review whose approve a complaint then overturned,
//! recorded once per (hand-over, reviewer) (RM1) with the user's words, for the reviewer's
//! calibration record (§5.6, RM4). A record, never a score (RM5).

use crate::quality::{NewQualityEvent, QualityType, cause};
use crate::{Result, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::review::ReviewOutcome;
use troupe_core::{BotId, PlanId, SessionId, SessionMessageId, SubmissionId, TicketId};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReviewMissRecord {
    pub id: i64,
    pub submission_id: SubmissionId,
    pub reviewer_bot_id: BotId,
    pub review_id: i64,
    pub task_id: PlanId,
    pub ticket_id: TicketId,
    /// Where the user said it.
    pub session_id: Option<SessionId>,
    /// The complaint's line; none once its conversation was cleared.
    pub line_id: Option<SessionMessageId>,
    /// The user's words.
    pub words: String,
    pub at: i64,
}

const COLUMNS: &str = "id, submission_id, reviewer_bot_id, review_id, plan_id, ticket_id, \
    session_id, line_id, words, at";

fn from_row(r: &crate::Row) -> Result<ReviewMissRecord> {
    Ok(ReviewMissRecord {
        id: r.get(0)?,
        submission_id: SubmissionId(r.get(1)?),
        reviewer_bot_id: BotId(r.get(2)?),
        review_id: r.get(3)?,
        task_id: PlanId(r.get(4)?),
        ticket_id: TicketId(r.get(5)?),
        session_id: r.get::<Option<i64>>(6)?.map(SessionId),
        line_id: r.get::<Option<i64>>(7)?.map(SessionMessageId),
        words: r.get(8)?,
        at: r.get(9)?,
    })
}

impl Tx<'_> {
    /// A complaint sent `sub` back: each review that approved it gets its miss (once per
    /// reviewer), appended as `review_miss` with a `review_miss` quality event on the
    /// reviewer and the model it reviewed on. Answers the misses new now.
    pub fn record_review_misses(
        &mut self,
        sub: SubmissionId,
        line: Option<SessionMessageId>,
        session: Option<SessionId>,
        words: &str,
    ) -> Result<Vec<ReviewMissRecord>> {
        let s = self.submission(sub)?;
        let mut out = Vec::new();
        for review in self.reviews_of_submission(sub)? {
            // Only an approve that counted: a refused one approved nothing.
            if review.outcome != ReviewOutcome::Approve
                || review.result == crate::ReviewResult::Refused
            {
                continue;
            }
            let id: Option<i64> = self.query_opt(
                "INSERT INTO review_misses (submission_id, reviewer_bot_id, review_id, plan_id,
                     ticket_id, session_id, line_id, words, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT DO NOTHING RETURNING id",
                args![
                    sub.0,
                    review.reviewer_bot_id.0,
                    review.id.0,
                    s.plan_id.0,
                    s.ticket_id.0,
                    session.map(|x| x.0),
                    line.map(|x| x.0),
                    words,
                    self.now
                ],
                |r| r.get(0),
            )?;
            let Some(id) = id else { continue };
            let miss = self.review_miss(id)?;
            let payload = json!({
                "task_id": s.plan_id, "ticket_id": s.ticket_id, "submission_id": sub,
                "review_id": review.id, "reviewer_bot_id": review.reviewer_bot_id,
                "message_id": line, "words": words,
            });
            match self.plan(s.plan_id)?.home_session_id {
                Some(home) => self.session_event("review_miss", home, None, payload)?,
                None => self.event("review_miss", None, None, payload)?,
            }
            self.quality_event(
                NewQualityEvent::new(QualityType::ReviewMiss, cause::REVIEW_MISS)
                    .run(review.run_id)
                    .bot(Some(review.reviewer_bot_id))
                    .model(review.reviewer_model.clone())
                    .plan(s.plan_id)
                    .ticket(s.ticket_id)
                    .source("submission", sub.0)
                    .detail(json!({"review_id": review.id, "words": words})),
            )?;
            out.push(miss);
        }
        Ok(out)
    }

    pub fn review_miss(&self, id: i64) -> Result<ReviewMissRecord> {
        self.query_one(
            &format!("SELECT {COLUMNS} FROM review_misses WHERE id = ?1"),
            args![id],
            from_row,
        )
    }

    /// The reviewer's calibration record in a conversation (§5.6): misses said there or on a
    /// job whose home it is, newest first, at most `limit`.
    pub fn review_misses_of(
        &self,
        reviewer: BotId,
        session: SessionId,
        limit: u32,
    ) -> Result<Vec<ReviewMissRecord>> {
        self.query_all(
            &format!(
                "SELECT {COLUMNS} FROM review_misses
                 WHERE reviewer_bot_id = ?1
                   AND (session_id = ?2
                        OR plan_id IN (SELECT id FROM plans WHERE home_session_id = ?2))
                 ORDER BY at DESC, id DESC LIMIT ?3"
            ),
            args![reviewer.0, session.0, i64::from(limit)],
            from_row,
        )
    }
}
