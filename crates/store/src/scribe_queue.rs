//! The scribe's durable queue (digest 003-C §7, SC-1/SC-2) and the switchable engine steps it
//! obeys (ADR 0085): a line is queued once however often it is refiled, taken in order, and
//! settled `done` or `dropped` with what came of it. Which engine a conversation runs is its
//! `engine` column.

use crate::{Result, StoreError, Tx, args};
use troupe_core::{PlanId, SessionId, SessionMessageId};

/// The engines a conversation can run.
pub const ENGINES: &[&str] = &["video", "general", "coding"];
/// The steps an engine can switch.
pub const ENGINE_STEPS: &[&str] = &["scribe", "retrospective", "reflection"];

/// One queued line.
#[derive(Clone, Debug, PartialEq)]
pub struct ScribeItem {
    pub id: i64,
    pub plan_id: PlanId,
    pub message_id: SessionMessageId,
    /// line | answer | edit
    pub kind: String,
    pub revision: i64,
    pub state: String,
    pub outcome: Option<String>,
    pub queued_at: i64,
}

/// One engine step's switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineStep {
    pub engine: String,
    pub step: String,
    pub enabled: bool,
    pub updated_at: i64,
}

fn item(r: &crate::Row) -> Result<ScribeItem> {
    Ok(ScribeItem {
        id: r.get(0)?,
        plan_id: PlanId(r.get(1)?),
        message_id: SessionMessageId(r.get(2)?),
        kind: r.get(3)?,
        revision: r.get(4)?,
        state: r.get(5)?,
        outcome: r.get(6)?,
        queued_at: r.get(7)?,
    })
}

const ITEM: &str = "id, plan_id, message_id, kind, revision, state, outcome, queued_at";

impl Tx<'_> {
    /// Queue a line for the scribe; false when it was queued before (SC-2: refiling does
    /// not run it again).
    pub fn enqueue_scribe(
        &mut self,
        plan: PlanId,
        line: SessionMessageId,
        kind: &str,
        revision: i64,
    ) -> Result<bool> {
        let n = self.exec(
            "INSERT INTO scribe_queue (plan_id, message_id, kind, revision, queued_at)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
            args![plan.0, line.0, kind, revision, self.now],
        )?;
        Ok(n == 1)
    }

    /// The oldest line still waiting: lines are read one at a time, in order.
    pub fn next_scribe_item(&self) -> Result<Option<ScribeItem>> {
        self.query_opt(
            &format!("SELECT {ITEM} FROM scribe_queue WHERE state = 'queued' ORDER BY id LIMIT 1"),
            args![],
            item,
        )
    }

    /// Settle a queued line (`done` or `dropped`) with what came of it; false when it was
    /// settled already.
    pub fn settle_scribe_item(&mut self, id: i64, state: &str, outcome: &str) -> Result<bool> {
        if !matches!(state, "done" | "dropped") {
            return Err(StoreError::Invalid(format!(
                "a scribe item settles done or dropped, not {state}"
            )));
        }
        let n = self.exec(
            "UPDATE scribe_queue SET state = ?2, outcome = ?3, done_at = ?4
             WHERE id = ?1 AND state = 'queued'",
            args![id, state, outcome, self.now],
        )?;
        Ok(n == 1)
    }

    /// SC-2: lines still unread when the app stopped are dropped at the next start. How many.
    pub fn drop_waiting_scribe_items(&mut self, outcome: &str) -> Result<usize> {
        self.exec(
            "UPDATE scribe_queue SET state = 'dropped', outcome = ?1, done_at = ?2
             WHERE state = 'queued'",
            args![outcome, self.now],
        )
    }

    /// A job's queue, oldest first.
    pub fn scribe_items_of_plan(&self, plan: PlanId) -> Result<Vec<ScribeItem>> {
        self.query_all(
            &format!("SELECT {ITEM} FROM scribe_queue WHERE plan_id = ?1 ORDER BY id"),
            args![plan.0],
            item,
        )
    }

    /// Every engine step's switch.
    pub fn engine_steps(&self) -> Result<Vec<EngineStep>> {
        self.query_all(
            "SELECT engine, step, enabled, updated_at FROM engine_steps ORDER BY engine, step",
            args![],
            |r| {
                Ok(EngineStep {
                    engine: r.get(0)?,
                    step: r.get(1)?,
                    enabled: r.get::<i64>(2)? == 1,
                    updated_at: r.get(3)?,
                })
            },
        )
    }

    /// Switch one engine's step.
    pub fn set_engine_step(&mut self, engine: &str, step: &str, enabled: bool) -> Result<()> {
        if !ENGINES.contains(&engine) || !ENGINE_STEPS.contains(&step) {
            return Err(StoreError::Invalid(format!(
                "no engine step {engine}/{step}"
            )));
        }
        self.exec(
            "UPDATE engine_steps SET enabled = ?3, updated_at = ?4 WHERE engine = ?1 AND step = ?2",
            args![engine, step, i64::from(enabled), self.now],
        )?;
        Ok(())
    }

    /// The engine a conversation runs.
    pub fn session_engine(&self, session: SessionId) -> Result<String> {
        self.query_opt(
            "SELECT engine FROM sessions WHERE id = ?1",
            args![session.0],
            |r| r.get(0),
        )?
        .ok_or_else(|| StoreError::not_found("session", session))
    }

    /// Set the engine a conversation runs.
    pub fn set_session_engine(&mut self, session: SessionId, engine: &str) -> Result<()> {
        if !ENGINES.contains(&engine) {
            return Err(StoreError::Invalid(format!(
                "engine: '{engine}' is not one of video, general, coding"
            )));
        }
        let n = self.exec(
            "UPDATE sessions SET engine = ?2 WHERE id = ?1",
            args![session.0, engine],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("session", session));
        }
        Ok(())
    }

    /// Whether a step is on for the engine a conversation runs.
    pub fn engine_step_on(&self, session: SessionId, step: &str) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT e.enabled FROM sessions s
                 JOIN engine_steps e ON e.engine = s.engine AND e.step = ?2
                 WHERE s.id = ?1",
                args![session.0, step],
                |r| r.get::<i64>(0),
            )?
            .is_some_and(|v| v == 1))
    }
}
