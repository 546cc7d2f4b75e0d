//! What the supervisor reads and writes (issue 16 items 2–3): the work items and jobs whose
//! stored `supervise_at` is due (indexed, so a tick with nothing due reads nothing), the
//! pick-ups it made (fired `check_backs` rows of kind `supervisor`, SV-2), a ticket's
//! call-backs in its progress cycle, and the daemon run a cut segment belonged to.

use crate::args;
use crate::{Result, Tx};
use serde_json::Value;
use troupe_core::supervisor::RestartCause;
use troupe_core::{BotId, PlanId, RunId, SessionId, SubmissionId, TicketId, WorkItemId};

/// A ticket's call-backs in its current progress cycle (SV-14).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TicketCallbacks {
    pub callbacks: u32,
    pub last_callback_at: Option<i64>,
    pub noticed: bool,
}

/// A pick-up or call-back to record as a fired supervisor check-back.
pub struct SupervisorWake<'a> {
    pub bot: BotId,
    pub work_item: WorkItemId,
    pub session: SessionId,
    pub plan: Option<PlanId>,
    pub ticket: Option<TicketId>,
    pub note: &'a str,
    /// `{reason, attempt, cycle|restart}`.
    pub wait_spec: Value,
    /// `fired` for a wake that was made, `voided` for a refused pick-up (SV-9).
    pub fired: bool,
}

impl Tx<'_> {
    /// Work items due for a look, oldest deadline first.
    pub fn due_supervised_work(&self, now: i64, limit: u32) -> Result<Vec<WorkItemId>> {
        self.query_all(
            "SELECT id FROM work_items WHERE supervise_at IS NOT NULL AND supervise_at <= ?1
             ORDER BY supervise_at, id LIMIT ?2",
            args![now, i64::from(limit)],
            |r| Ok(WorkItemId(r.get(0)?)),
        )
    }

    /// When the supervisor looks at this work item next; `None`: when something arms it.
    pub fn set_work_supervise_at(&mut self, item: WorkItemId, at: Option<i64>) -> Result<()> {
        self.exec(
            "UPDATE work_items SET supervise_at = ?2 WHERE id = ?1",
            args![item.0, at],
        )?;
        Ok(())
    }

    /// Jobs due for a look at their tickets: those with a ticket released (T18) first, then
    /// the oldest deadline first.
    pub fn due_supervised_plans(&self, now: i64, limit: u32) -> Result<Vec<PlanId>> {
        let mut out = self.query_all(
            "SELECT id FROM plans WHERE released_at IS NOT NULL ORDER BY released_at, id LIMIT ?1",
            args![i64::from(limit)],
            |r| Ok(PlanId(r.get(0)?)),
        )?;
        let due = self.query_all(
            "SELECT id FROM plans WHERE supervise_at IS NOT NULL AND supervise_at <= ?1
             ORDER BY supervise_at, id LIMIT ?2",
            args![now, i64::from(limit)],
            |r| Ok(PlanId(r.get(0)?)),
        )?;
        for p in due {
            if out.len() == limit as usize {
                break;
            }
            if !out.contains(&p) {
                out.push(p);
            }
        }
        Ok(out)
    }

    /// T18: a ticket of the job waits for nothing now; look at the job at the next tick.
    pub fn mark_plan_released(&mut self, plan: PlanId) -> Result<()> {
        self.exec(
            "UPDATE plans SET released_at = ?2 WHERE id = ?1 AND released_at IS NULL",
            args![plan.0, self.now],
        )?;
        Ok(())
    }

    /// The tick looked at the job: its release mark is spent.
    pub fn clear_plan_released(&mut self, plan: PlanId) -> Result<()> {
        self.exec(
            "UPDATE plans SET released_at = NULL WHERE id = ?1 AND released_at IS NOT NULL",
            args![plan.0],
        )?;
        Ok(())
    }

    pub fn set_plan_supervise_at(&mut self, plan: PlanId, at: Option<i64>) -> Result<()> {
        self.exec(
            "UPDATE plans SET supervise_at = ?2 WHERE id = ?1",
            args![plan.0, at],
        )?;
        Ok(())
    }

    /// The job's last activity as its triggers recorded it (lines filed, work, work log).
    pub fn plan_activity_at(&self, plan: PlanId) -> Result<Option<i64>> {
        Ok(self
            .query_opt(
                "SELECT activity_at FROM plans WHERE id = ?1",
                args![plan.0],
                |r| r.get(0),
            )?
            .flatten())
    }

    /// Record the person's word on a work item (a Continue, a line to it): the pick-up budget
    /// and its `retry_budget` line count from here.
    pub fn set_user_word(&mut self, item: WorkItemId) -> Result<()> {
        self.exec(
            "UPDATE work_items SET user_word_at = ?2 WHERE id = ?1",
            args![item.0, self.now],
        )?;
        Ok(())
    }

    pub fn user_word_at(&self, item: WorkItemId) -> Result<Option<i64>> {
        Ok(self
            .query_opt(
                "SELECT user_word_at FROM work_items WHERE id = ?1",
                args![item.0],
                |r| r.get(0),
            )?
            .flatten())
    }

    /// Record a supervisor wake as a check-back row (SV-2): fired, or voided when refused.
    pub fn record_supervisor_wake(&mut self, w: &SupervisorWake<'_>) -> Result<i64> {
        let state = if w.fired { "fired" } else { "voided" };
        let key = format!("supervisor:{}:{}", w.work_item.0, self.now);
        self.insert(
            "INSERT INTO check_backs (bot_id, work_item_id, session_id, plan_id, dedupe_key,
                 due_at, note, state, created_at, fired_at, updated_at, kind, ticket_id, wait_spec)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?6, ?6, ?6, 'supervisor', ?9, ?10)",
            args![
                w.bot.0,
                w.work_item.0,
                w.session.0,
                w.plan.map(|p| p.0),
                key,
                self.now,
                w.note,
                state,
                w.ticket.map(|t| t.0),
                w.wait_spec.to_string()
            ],
        )
    }

    /// Budget-spending pick-ups of a work item fired at or after `since` (SV-7).
    pub fn supervisor_pickups_since(&self, item: WorkItemId, since: i64) -> Result<u32> {
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM check_backs
             WHERE work_item_id = ?1 AND kind = 'supervisor' AND state = 'fired'
               AND fired_at >= ?2 AND wait_spec LIKE '%\"spends_budget\":true%'",
            args![item.0, since],
            |r| r.get(0),
        )?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    pub fn ticket_callbacks(&self, ticket: TicketId) -> Result<TicketCallbacks> {
        Ok(self
            .query_opt(
                "SELECT callbacks, last_callback_at, noticed_at FROM ticket_callbacks
                 WHERE ticket_id = ?1",
                args![ticket.0],
                |r| {
                    Ok(TicketCallbacks {
                        callbacks: u32::try_from(r.get::<i64>(0)?).unwrap_or(u32::MAX),
                        last_callback_at: r.get(1)?,
                        noticed: r.get::<Option<i64>>(2)?.is_some(),
                    })
                },
            )?
            .unwrap_or_default())
    }

    /// Count a call-back in the ticket's cycle.
    pub fn bump_ticket_callbacks(&mut self, ticket: TicketId) -> Result<()> {
        self.exec(
            "INSERT INTO ticket_callbacks (ticket_id, callbacks, last_callback_at)
             VALUES (?1, 1, ?2)
             ON CONFLICT (ticket_id) DO UPDATE SET callbacks = ticket_callbacks.callbacks + 1,
                 last_callback_at = excluded.last_callback_at",
            args![ticket.0, self.now],
        )?;
        Ok(())
    }

    /// The cycle's notice was given (SV-14).
    pub fn mark_ticket_noticed(&mut self, ticket: TicketId) -> Result<()> {
        self.exec(
            "INSERT INTO ticket_callbacks (ticket_id, callbacks, noticed_at) VALUES (?1, 0, ?2)
             ON CONFLICT (ticket_id) DO UPDATE SET noticed_at = excluded.noticed_at",
            args![ticket.0, self.now],
        )?;
        Ok(())
    }

    /// How the daemon process that ran `run` ended, if it has ended: its clean stop, or a
    /// crash (a later process started while it had none). `None` while it is still running.
    pub fn restart_cause_of(&self, run: RunId) -> Result<Option<RestartCause>> {
        let row: Option<(Option<i64>, i64)> = self.query_opt(
            "SELECT d.clean_stop_at,
                    (SELECT COUNT(*) FROM daemon_runs l WHERE l.started_at >= d.started_at
                         AND l.id > d.id)
             FROM runs r JOIN daemon_runs d ON d.node_id = r.owner_boot
             WHERE r.id = ?1 ORDER BY d.id DESC LIMIT 1",
            args![run.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(match row {
            Some((Some(_), _)) => Some(RestartCause::CleanStop),
            Some((None, later)) if later > 0 => Some(RestartCause::Crash),
            _ => None,
        })
    }

    /// The newest segment (its run) of a work item.
    pub fn last_segment_run(&self, item: WorkItemId) -> Result<Option<RunId>> {
        self.query_opt(
            "SELECT run_id FROM segments WHERE work_item_id = ?1 ORDER BY run_id DESC LIMIT 1",
            args![item.0],
            |r| Ok(RunId(r.get(0)?)),
        )
    }

    /// The newest ended segment (its run) of a Bot, on any work (SV-15).
    pub fn last_ended_segment_of_bot(&self, bot: BotId) -> Result<Option<RunId>> {
        self.query_opt(
            "SELECT s.run_id FROM segments s JOIN runs r ON r.id = s.run_id
             WHERE s.bot_id = ?1 AND r.status <> 'running' ORDER BY s.run_id DESC LIMIT 1",
            args![bot.0],
            |r| Ok(RunId(r.get(0)?)),
        )
    }

    /// The job's newest line filed to it in a conversation: its author and time, and the
    /// person's newest line in that conversation (SV-13's 10-minute rule).
    pub fn plan_last_line(&self, plan: PlanId) -> Result<Option<(String, i64, Option<i64>)>> {
        self.query_opt(
            "SELECT m.author, m.created_at,
                    (SELECT MAX(u.created_at) FROM session_messages u
                     WHERE u.session_id = m.session_id AND u.author = 'user')
             FROM message_filings f JOIN session_messages m ON m.id = f.message_id
             WHERE f.plan_id = ?1 ORDER BY m.id DESC LIMIT 1",
            args![plan.0],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
    }

    /// SV-20: hand-overs still being checked or handed over with no reviewer, made at or
    /// before `before`, oldest first.
    pub fn submissions_waiting(&self, before: i64, limit: u32) -> Result<Vec<SubmissionId>> {
        self.query_all(
            "SELECT id FROM submissions
             WHERE state IN ('checking', 'submitted') AND created_at <= ?1
             ORDER BY created_at, id LIMIT ?2",
            args![before, i64::from(limit)],
            |r| Ok(SubmissionId(r.get(0)?)),
        )
    }
}
