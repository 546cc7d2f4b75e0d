//! The closing check's record (C §14, CC-4): a segment is sent back once, so the send-back is
//! kept per segment; and the evidence it reads that no other module asks for (check-backs a
//! segment booked). Which rules apply is `troupe_core::closing_check`'s.

use crate::{Result, Tx, args};
use troupe_core::{RunId, SessionId, WorkItemId};

impl Tx<'_> {
    /// Whether the segment's closing check already sent a note back.
    pub fn closing_check_sent(&self, run: RunId) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT 1 FROM closing_checks WHERE run_id = ?1",
                args![run.0],
                |r| r.get::<i64>(0),
            )?
            .is_some())
    }

    /// Record the segment's send-back: `via` is `reply` or `send_message`, `rules` the codes.
    /// False when one was recorded already (two messages checked at once: the first one wins).
    pub fn record_closing_check(
        &mut self,
        run: RunId,
        session: SessionId,
        via: &str,
        rules: &[&str],
    ) -> Result<bool> {
        let n = self.exec(
            "INSERT INTO closing_checks (run_id, session_id, via, rules, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (run_id) DO NOTHING",
            args![
                run.0,
                session.0,
                via,
                serde_json::json!(rules).to_string(),
                self.now
            ],
        )?;
        Ok(n == 1)
    }

    /// Whether the segment booked a check-back for its work item (whatever became of it).
    pub fn check_back_booked_in(&self, item: WorkItemId, run: RunId) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT 1 FROM check_backs WHERE work_item_id = ?1 AND booked_by_run_id = ?2
                 LIMIT 1",
                args![item.0, run.0],
                |r| r.get::<i64>(0),
            )?
            .is_some())
    }
}
