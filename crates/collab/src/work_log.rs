//! A job's work log as people read it (issue 16 item 1): what the app did on the job — the
//! supervisor's pick-ups and call-backs, closing checks sent back, … — oldest first, paged by
//! row id. The rows are written by each concept with `Tx::log_work`, which also streams them.

use crate::{Collab, CollabError};
use troupe_core::PlanId;
use troupe_store::WorkLogEntry;

impl Collab {
    /// The job's work-log rows after row `after`, at most `limit` (1–1000). An unknown job is
    /// not found, so an empty list always means a job with nothing (more) logged.
    pub fn work_log(
        &self,
        plan: PlanId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<WorkLogEntry>, CollabError> {
        if !(1..=1000).contains(&limit) {
            return Err(CollabError::invalid("limit must be between 1 and 1000"));
        }
        if after < 0 {
            return Err(CollabError::invalid(
                "after must be a work-log row id (0 or more)",
            ));
        }
        Ok(self.store().read(|tx| {
            tx.plan(plan)?;
            tx.work_log_of_plan(plan, after, limit)
        })?)
    }
}
