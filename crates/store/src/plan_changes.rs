//! What changed last on a job (PLAN-O7): the newest ticket stage change, check run, turn and
//! step of what the person asked for, each read by the job's own indexes.

use crate::{Result, Tx, args};
use troupe_core::PlanId;

/// A ticket's newest stage change on the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewestStageChange {
    pub at: i64,
    pub number: i64,
    pub title: String,
    pub to: String,
}

impl Tx<'_> {
    pub fn newest_stage_change_of_plan(&self, plan: PlanId) -> Result<Option<NewestStageChange>> {
        self.query_opt(
            "SELECT c.at, t.number, t.title, c.to_stage FROM tickets t
             JOIN ticket_stage_changes c ON c.ticket_id = t.id
             WHERE t.plan_id = ?1 ORDER BY c.at DESC, c.id DESC LIMIT 1",
            args![plan.0],
            |r| {
                Ok(NewestStageChange {
                    at: r.get(0)?,
                    number: r.get(1)?,
                    title: r.get(2)?,
                    to: r.get(3)?,
                })
            },
        )
    }

    /// The job's newest check run: when it ended, the check and how it came out.
    pub fn newest_check_run_of_plan(&self, plan: PlanId) -> Result<Option<(i64, i64, String)>> {
        self.query_opt(
            "SELECT k.ended_at, c.id, k.outcome FROM checks c
             JOIN check_runs k ON k.check_id = c.id
             WHERE c.plan_id = ?1 ORDER BY k.ended_at DESC, k.id DESC LIMIT 1",
            args![plan.0],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
    }

    /// The job's newest turn: when it started and whose it was.
    pub fn newest_turn_on_plan(&self, plan: PlanId) -> Result<Option<(i64, String)>> {
        self.query_opt(
            "SELECT s.created_at, b.name FROM work_items w
             JOIN segments s ON s.work_item_id = w.id
             JOIN bots b ON b.id = w.bot_id
             WHERE w.plan_id = ?1 ORDER BY s.created_at DESC, s.run_id DESC LIMIT 1",
            args![plan.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// When a step of what the person asked for on this job last happened.
    pub fn newest_requirement_step_of_plan(&self, plan: PlanId) -> Result<Option<i64>> {
        self.query_opt(
            "SELECT MAX(s.at) FROM requirements r
             JOIN requirement_steps s ON s.requirement_id = r.id
             WHERE r.plan_id = ?1",
            args![plan.0],
            |r| r.get::<Option<i64>>(0),
        )
        .map(Option::flatten)
    }
}
