//! Reads the hand-over and review rules need beyond the submission records (digest 003-B §4.8
//! OG-a, §5.3): which segments ran on a job in a window, when the job was last approved, and
//! a segment's tool calls with when they were made (a picture read counts only after the
//! hand-over).

use crate::{Result, StoreError, Tx, args};
use troupe_core::submission::SubmissionState;
use troupe_core::{BotId, PlanId, RunId, TicketId};

/// One tool call of a segment, as the hand-over rules read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedCall {
    pub name: String,
    pub arguments: String,
    /// ok, error, refused or repeated.
    pub status: String,
    pub at: i64,
}

impl Tx<'_> {
    /// The maker and state of each of `plan`'s hand-overs (of `ticket` when given) made at or
    /// after `since`: what a request's owing needs (DEL-16/17), without the files, parts and
    /// runs a whole record carries.
    pub fn submission_states(
        &self,
        plan: PlanId,
        ticket: Option<TicketId>,
        since: i64,
    ) -> Result<Vec<(Option<BotId>, SubmissionState)>> {
        self.query_all(
            "SELECT producer_bot_id, state FROM submissions
             WHERE plan_id = ?1 AND (?2 = 0 OR ticket_id = ?2) AND created_at >= ?3",
            args![plan.0, ticket.map_or(0, |t| t.0), since],
            |r| {
                let state: String = r.get(1)?;
                let state = SubmissionState::parse(&state)
                    .map_err(|e| StoreError::Corrupt(format!("submission state {state:?}: {e}")))?;
                Ok((r.get::<Option<i64>>(0)?.map(BotId), state))
            },
        )
    }

    /// The segments (runs of the job's work items' threads) that started in `(after, until]`,
    /// oldest first: OG-a's "the only segment since the job opened or was last approved".
    pub fn job_segments_between(&self, plan: PlanId, after: i64, until: i64) -> Result<Vec<RunId>> {
        self.query_all(
            "SELECT r.id FROM runs r JOIN work_items w ON w.thread_id = r.thread_id
             WHERE w.plan_id = ?1 AND w.mode = 'work' AND r.started_at > ?2
               AND r.started_at <= ?3
             ORDER BY r.started_at, r.id",
            args![plan.0, after, until],
            |r| Ok(RunId(r.get(0)?)),
        )
    }

    /// When a hand-over of the job was last approved, if ever.
    pub fn last_approval_at(&self, plan: PlanId) -> Result<Option<i64>> {
        Ok(self
            .query_opt(
                "SELECT MAX(decided_at) FROM submissions WHERE plan_id = ?1 AND state = 'approved'",
                args![plan.0],
                |r| r.get::<Option<i64>>(0),
            )?
            .flatten())
    }

    /// A run's tool calls with their times, in order.
    pub fn timed_tool_calls(&self, run: RunId) -> Result<Vec<TimedCall>> {
        self.query_all(
            "SELECT name, arguments, status, created_at FROM tool_calls WHERE run_id = ?1
             ORDER BY id",
            args![run.0],
            |r| {
                Ok(TimedCall {
                    name: r.get(0)?,
                    arguments: r.get(1)?,
                    status: r.get(2)?,
                    at: r.get(3)?,
                })
            },
        )
    }
}
