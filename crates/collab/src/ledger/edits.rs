//! A line the user edited (UQ-11, UQ-12): entries standing on its earlier words stay; those
//! whose words the edit took out (and the user said nowhere else) are shown first as "Words you
//! took out", in force until the user presses "No longer holds" / "Not a requirement" or "Keep
//! it". The new words go to the scribe again, as the line's next revision, when it is on.

use crate::{Collab, CollabError};
use troupe_core::requirement::{State, quote_in_line};
use troupe_core::{PlanId, SessionMessageId};

impl Collab {
    /// Note an edit of a person's line: how many entries were marked as taken out.
    pub fn ledger_line_edited(&self, line: SessionMessageId) -> Result<usize, CollabError> {
        Ok(self.store().write(|tx| {
            let l = tx.line(line)?;
            let mut marked = 0;
            for r in tx.requirements_on_line(line)? {
                let live = matches!(r.state, State::InForce | State::ToConfirm);
                if !live || r.quote.is_empty() || quote_in_line(&l.body, &r.quote) {
                    continue;
                }
                if tx.requirement_said_elsewhere(r.id, line)? {
                    continue;
                }
                if tx.mark_requirement_taken_out(r.id, r.plan_id)? {
                    marked += 1;
                }
            }
            if !l.body.trim().is_empty() && tx.engine_step_on(l.session_id, "scribe")? {
                let revision = tx.line_versions(line)?.len() as i64;
                let mut plans: Vec<PlanId> = tx
                    .filings_of_line(line)?
                    .iter()
                    .map(|f| f.plan_id)
                    .collect();
                plans.dedup();
                for plan in plans {
                    tx.enqueue_scribe(plan, line, "edit", revision)?;
                }
            }
            Ok(marked)
        })?)
    }
}
