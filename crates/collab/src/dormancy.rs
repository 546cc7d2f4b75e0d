//! PLAN-D5 on the clock: a delivered job goes dormant 72 h after its delivery and the person's
//! last activity on it, whether or not another job opens in its conversation (opening one
//! sets the quiet ones aside too: `plans::set_aside_quiet_plans`). Dormancy changes no stage
//! and lifts no hold; the person's word wakes the job again (PLAN-D9).

use crate::{Collab, CollabError};
use troupe_core::PlanId;
use troupe_core::dormancy::{DELIVERED_DORMANT_AFTER_MS, PlanActivity, delivered_goes_dormant};

impl Collab {
    /// Set the delivered jobs 72 h quiet dormant; answers those it set.
    pub fn sweep_delivered_dormancy(&self) -> Result<Vec<PlanId>, CollabError> {
        // Most ticks find none: a read decides, and only a find writes.
        let due = self
            .store()
            .read(|tx| tx.delivered_plans_quiet_since(tx.now() - DELIVERED_DORMANT_AFTER_MS))?;
        if due.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.store().write(|tx| {
            let now = tx.now();
            let mut set = Vec::new();
            for id in due {
                let p = tx.plan(id)?;
                let activity = PlanActivity {
                    last_user_activity_at: p.last_user_activity_at,
                    last_segment_at: None,
                    non_idle_work_items: 0,
                    delivered_at: p.delivered_at,
                    created_at: p.created_at,
                };
                if delivered_goes_dormant(&activity, now) && tx.set_plan_dormant(id, "delivered")? {
                    set.push(id);
                }
            }
            Ok(set)
        })?)
    }
}
