//! The scribe's durable queue (digest 003-C §7, SC-1/SC-2): a line is queued once however often
//! it is refiled, taken in order, and settled `done` or `dropped` with what came of it. Whether
//! the scribe runs at all is an engine step (`engines.rs`).

use crate::{Result, StoreError, Tx, args};
use troupe_core::{PlanId, SessionMessageId};

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
}
