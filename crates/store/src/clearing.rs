//! Clearing a conversation's history and deleting a group, as rows (HOLD-X1/X2, PLAN-D2,
//! D10, D12, TURN-17). Lines are blanked in place, never deleted: holds, filings and turns
//! point at them by id. A deleted group stays a row for the same reason, archived and marked
//! deleted, so it is gone from every listing and read. The conversation layer decides what
//! each plan becomes; here are the facts it asks for and the writes it makes.

use crate::{Result, Tx, args};
use serde_json::json;
use troupe_core::{CheckBackId, CheckId, PlanId, SessionId};

impl Tx<'_> {
    /// Whether the conversation was deleted.
    pub fn session_deleted(&self, session: SessionId) -> Result<bool> {
        let at: Option<Option<i64>> = self.query_opt(
            "SELECT deleted_at FROM sessions WHERE id = ?1",
            args![session.0],
            |r| r.get(0),
        )?;
        Ok(matches!(at, Some(Some(_))))
    }

    /// When the conversation's history was last cleared, if ever.
    pub fn session_cleared_at(&self, session: SessionId) -> Result<Option<i64>> {
        let at: Option<Option<i64>> = self.query_opt(
            "SELECT cleared_at FROM sessions WHERE id = ?1",
            args![session.0],
            |r| r.get(0),
        )?;
        Ok(at.flatten())
    }

    /// Blank the words of every line of the conversation, in place: ids, authors, times,
    /// filings and the holds that name a line stay (HOLD-2). How many lines changed.
    pub fn blank_session_lines(&mut self, session: SessionId) -> Result<usize> {
        self.exec(
            "UPDATE session_messages SET body = '' WHERE session_id = ?1 AND body <> ''",
            args![session.0],
        )
    }

    /// Take the conversation's transcript out of its Bots' own threads there (UQ-1: clearing
    /// deletes the transcript): every part of every message those threads hold now leaves
    /// the model's context, so no later model call reads it. The rows stay, as the lines' do:
    /// runs, tool calls and the effect ledger point at them. A job's thread is the job's, not
    /// the conversation's, and is left as it is. How many messages left the context.
    pub fn hide_session_transcripts(&mut self, session: SessionId) -> Result<usize> {
        let in_threads = "SELECT m.id FROM messages m
             JOIN session_threads t ON t.thread_id = m.thread_id
             WHERE t.session_id = ?1";
        let messages: i64 = self.query_one(
            &format!(
                "SELECT COUNT(DISTINCT message_id) FROM message_parts
                 WHERE in_context = 1 AND message_id IN ({in_threads})"
            ),
            args![session.0],
            |r| r.get(0),
        )?;
        self.exec(
            &format!(
                "UPDATE message_parts SET in_context = 0
                 WHERE in_context = 1 AND message_id IN ({in_threads})"
            ),
            args![session.0],
        )?;
        Ok(messages as usize)
    }

    /// The checks from words (offers and checks in force, not removed) that stand on a
    /// person's line said in this conversation: what erasing its quotes touches (UQ-2, CW-20).
    pub fn words_checks_quoting(&self, session: SessionId) -> Result<Vec<CheckId>> {
        Ok(self
            .query_all(
                "SELECT c.id FROM checks c JOIN session_messages m ON m.id = c.quote_id
                 WHERE m.session_id = ?1 AND m.author = 'user' AND c.kind = 'words'
                     AND c.removed_at IS NULL
                 ORDER BY c.id",
                args![session.0],
                |r| r.get::<i64>(0),
            )?
            .into_iter()
            .map(CheckId)
            .collect())
    }

    /// The command records of the conversation's turns go with its history (TURN-17).
    pub fn delete_session_commands(&mut self, session: SessionId) -> Result<usize> {
        self.exec(
            "DELETE FROM command_records
             WHERE run_id IN (SELECT run_id FROM segments WHERE session_id = ?1)",
            args![session.0],
        )
    }

    /// Note the clear on the conversation and tell its clients.
    pub fn mark_session_cleared(&mut self, session: SessionId) -> Result<()> {
        self.exec(
            "UPDATE sessions SET cleared_at = ?2, updated_at = ?2 WHERE id = ?1",
            args![session.0, self.now],
        )?;
        self.session_event(
            "session_cleared",
            session,
            None,
            json!({"session_id": session}),
        )
    }

    /// Mark the group deleted (and archived, so nothing lists it or posts to it).
    pub fn mark_session_deleted(&mut self, session: SessionId) -> Result<()> {
        self.exec(
            "UPDATE sessions SET deleted_at = ?2, archived_at = COALESCE(archived_at, ?2),
                 updated_at = ?2
             WHERE id = ?1",
            args![session.0, self.now],
        )?;
        self.session_event(
            "session_deleted",
            session,
            None,
            json!({"session_id": session}),
        )
    }

    /// The plans whose home the conversation is, oldest first.
    pub fn plans_homed_in(&self, session: SessionId) -> Result<Vec<PlanId>> {
        Ok(self
            .query_all(
                "SELECT id FROM plans WHERE home_session_id = ?1 ORDER BY id",
                args![session.0],
                |r| r.get::<i64>(0),
            )?
            .into_iter()
            .map(PlanId)
            .collect())
    }

    /// Whether anything beyond this conversation still belongs to the plan: a turn that ran
    /// for it in another conversation, a line there filed under it (a person's unerased
    /// words among them), a Bot's work on it speaking there, or any delegation on it (one
    /// stays recorded when it is cancelled: DEL-33), or the requirements ledger (RL-20: a
    /// clear leaves the ledger alone).
    pub fn plan_belongs_elsewhere(&self, plan: PlanId, session: SessionId) -> Result<bool> {
        let found: Option<i64> = self.query_opt(
            "SELECT 1 WHERE EXISTS (
                 SELECT 1 FROM segments s JOIN work_items w ON w.id = s.work_item_id
                 WHERE w.plan_id = ?1 AND s.session_id <> ?2)
             OR EXISTS (
                 SELECT 1 FROM message_filings f JOIN session_messages m ON m.id = f.message_id
                 WHERE f.plan_id = ?1 AND m.session_id <> ?2)
             OR EXISTS (
                 SELECT 1 FROM work_items w
                 WHERE w.plan_id = ?1 AND w.speaks_in IS NOT NULL AND w.speaks_in <> ?2)
             OR EXISTS (SELECT 1 FROM delegations d WHERE d.plan_id = ?1)
             OR EXISTS (SELECT 1 FROM submissions h WHERE h.plan_id = ?1)
             OR EXISTS (SELECT 1 FROM requirement_sayings q WHERE q.plan_id = ?1)
             OR EXISTS (SELECT 1 FROM requirement_exclusions q WHERE q.plan_id = ?1)
             OR EXISTS (SELECT 1 FROM requirement_steps q WHERE q.plan_id = ?1)
             OR EXISTS (SELECT 1 FROM scribe_queue q WHERE q.plan_id = ?1)",
            args![plan.0, session.0],
            |r| r.get(0),
        )?;
        Ok(found.is_some())
    }

    /// Whether a hold row names the plan, in its scope or a target, lifted or not (HOLD-X1).
    pub fn hold_rows_name_plan(&self, plan: PlanId) -> Result<bool> {
        let found: Option<i64> = self.query_opt(
            "SELECT 1 WHERE EXISTS (SELECT 1 FROM holds WHERE plan_id = ?1)
                 OR EXISTS (SELECT 1 FROM hold_targets WHERE plan_id = ?1)",
            args![plan.0],
            |r| r.get(0),
        )?;
        Ok(found.is_some())
    }

    /// The check-backs booked for the plan's work (to tell whether a hold set one aside).
    pub fn check_backs_of_plan(&self, plan: PlanId) -> Result<Vec<CheckBackId>> {
        Ok(self
            .query_all(
                "SELECT c.id FROM check_backs c JOIN work_items w ON w.id = c.work_item_id
                 WHERE w.plan_id = ?1 OR c.plan_id = ?1 ORDER BY c.id",
                args![plan.0],
                |r| r.get::<i64>(0),
            )?
            .into_iter()
            .map(CheckBackId)
            .collect())
    }

    /// Check-backs booked in the conversation that could still fire: pending or set aside.
    pub fn live_check_backs_in(&self, session: SessionId) -> Result<Vec<CheckBackId>> {
        Ok(self
            .query_all(
                "SELECT id FROM check_backs
                 WHERE session_id = ?1 AND state IN ('pending', 'set_aside') ORDER BY id",
                args![session.0],
                |r| r.get::<i64>(0),
            )?
            .into_iter()
            .map(CheckBackId)
            .collect())
    }

    /// The plan leaves its home: it is session-less from now on (PLAN-D10).
    pub fn unhome_plan(&mut self, plan: PlanId) -> Result<()> {
        self.exec(
            "UPDATE plans SET home_session_id = NULL, updated_at = ?2 WHERE id = ?1",
            args![plan.0, self.now],
        )?;
        Ok(())
    }

    /// Delete a plan nothing refers to any more (PLAN-D10/D12), with what is only its own:
    /// its tickets and checks, its revisions and filings, its Bots' work items (their threads archived, their
    /// check-backs and questions gone); the turns that ran for it stay as runs
    /// of their conversation, unbound. The caller has checked that no hold names it.
    pub fn delete_plan(&mut self, plan: PlanId) -> Result<()> {
        let p = args![plan.0];
        let items = "SELECT id FROM work_items WHERE plan_id = ?1";
        self.exec(
            &format!("UPDATE segments SET work_item_id = NULL WHERE work_item_id IN ({items})"),
            p,
        )?;
        self.exec(
            &format!("DELETE FROM check_backs WHERE plan_id = ?1 OR work_item_id IN ({items})"),
            p,
        )?;
        self.exec(
            &format!("DELETE FROM work_questions WHERE work_item_id IN ({items})"),
            p,
        )?;
        self.exec(
            "UPDATE threads SET archived_at = COALESCE(archived_at, ?2), updated_at = ?2
             WHERE id IN (SELECT thread_id FROM work_items WHERE plan_id = ?1 AND mode = 'work')",
            args![plan.0, self.now],
        )?;
        // Its tickets and checks go with it; a plan with a hand-over is never deleted (work was
        // handed over: `plan_belongs_elsewhere`), so nothing here touches submissions.
        let tickets = "SELECT id FROM tickets WHERE plan_id = ?1";
        self.exec(
            "DELETE FROM check_runs WHERE check_id IN (SELECT id FROM checks WHERE plan_id = ?1)",
            p,
        )?;
        self.exec("DELETE FROM checks WHERE plan_id = ?1", p)?;
        for table in ["ticket_stage_changes", "ticket_parts"] {
            self.exec(
                &format!("DELETE FROM {table} WHERE ticket_id IN ({tickets})"),
                p,
            )?;
        }
        self.exec(
            &format!(
                "DELETE FROM ticket_dependencies
                 WHERE ticket_id IN ({tickets}) OR depends_on_id IN ({tickets})"
            ),
            p,
        )?;
        self.exec("DELETE FROM tickets WHERE plan_id = ?1", p)?;
        self.exec("DELETE FROM work_items WHERE plan_id = ?1", p)?;
        self.exec("DELETE FROM message_filings WHERE plan_id = ?1", p)?;
        self.exec("DELETE FROM plan_revisions WHERE plan_id = ?1", p)?;
        self.exec("DELETE FROM plans WHERE id = ?1", p)?;
        self.event("plan_deleted", None, None, json!({"plan_id": plan}))
    }
}
