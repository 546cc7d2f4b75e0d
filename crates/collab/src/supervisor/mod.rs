//! The supervisor (issue 16 item 2, C §12): the scheduler tick's first pass. It reads only
//! what is due — work items and jobs whose stored `supervise_at` has come (triggers arm them
//! on activity) — judges each with `troupe_core::supervisor`'s pure rules, and applies the
//! verdicts in the same write: states, Bot-only lines delivered with keys, fired supervisor
//! check-back rows, the app's lines to the user, and the work log. The engine drives what it
//! woke after the commit; nothing here starts a loop or waits on a model.

mod apply;
mod stalled;
mod submissions;
mod work;

use crate::{Collab, CollabError};
use serde::Serialize;
use serde_json::Value;

/// Due work items and jobs one tick looks at; the rest stay due for the next.
const BATCH: u32 = 200;

/// What one supervisor pass did, for the tick's report and the logs.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, Serialize)]
pub struct SupervisorReport {
    /// Work items it looked at, each with what it decided.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub work: Vec<Value>,
    /// Open tickets of due jobs it looked at, each with its verdict.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub tickets: Vec<Value>,
}

impl SupervisorReport {
    pub fn is_empty(&self) -> bool {
        self.work.is_empty() && self.tickets.is_empty()
    }
}

impl Collab {
    /// One supervisor pass over what is due by the store's clock, in one write.
    pub fn supervise(&self) -> Result<SupervisorReport, CollabError> {
        Ok(self.store().write(|tx| {
            let now = tx.now();
            let mut report = SupervisorReport::default();
            for item in tx.due_supervised_work(now, BATCH)? {
                report.work.push(work::look_at(tx, item, now)?);
            }
            for plan in tx.due_supervised_plans(now, BATCH)? {
                report.tickets.extend(stalled::look_at(tx, plan, now)?);
            }
            Ok(report)
        })?)
    }
}
