//! The `boss_worker` continuation policy (priority 40): a worker that ended a turn with its
//! latest assignment unreported, nothing runnable queued and its root still a Boss root gets
//! one "continue, or report" steer per finished turn; the root never does (BOSS-4, BOSS-5).

use super::members::{latest_assignment, member, node_of_thread, reported, root_live};
use super::texts;
use crate::slot::WorkflowSlot;
use troupe_core::boss::{BossRole, needs_nudge};
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_engine::extension::{ContinuationPolicy, Gate, Proposal};

pub const POLICY_ID: &str = "boss_worker";
pub const PRIORITY: i32 = 40;

pub struct BossWorkerPolicy {
    pub host: std::sync::Arc<crate::lightloop::host::LoopHost>,
}

impl ContinuationPolicy for BossWorkerPolicy {
    fn id(&self) -> &str {
        POLICY_ID
    }

    fn priority(&self) -> i32 {
        PRIORITY
    }

    fn propose(&self, gate: &Gate<'_>) -> Result<Proposal, String> {
        let Some(slot) =
            WorkflowSlot::of(gate.thread.workflow.as_ref()).and_then(|s| s.boss().cloned())
        else {
            return Ok(Proposal::None);
        };
        if slot.role != BossRole::Worker {
            return Ok(Proposal::None);
        }
        let thread = gate.thread.id;
        let nudge = gate
            .store
            .read(|tx| {
                let Some(n) = node_of_thread(tx, thread)? else {
                    return Ok(None);
                };
                let m = member(tx, &n)?;
                let live = match m.root_id() {
                    Some(r) => root_live(tx, r)?,
                    None => false,
                };
                let runnable = tx.inbox(thread)?.iter().any(|i| i.mode == InboxMode::Task);
                let latest = latest_assignment(tx, thread)?;
                let done = match &latest {
                    Some((root, ..)) => reported(tx, thread, *root)?,
                    None => false,
                };
                Ok(
                    needs_nudge(slot.role, live, runnable, latest.is_some(), done)
                        .then(|| latest.map(|(_, _, task, _)| task))
                        .flatten(),
                )
            })
            .map_err(|e| e.to_string())?;
        let Some(task) = nudge else {
            return Ok(Proposal::None);
        };
        // A nudge is a continuation like any other: the guard's no-progress streak and budget
        // stop a worker that only ever answers in prose.
        let verdict = crate::guard::admit_continuation(
            gate.store,
            thread,
            POLICY_ID,
            self.host.guard_defaults(),
        )
        .map_err(|e| e.to_string())?;
        if verdict != troupe_core::continuation_guard::GuardVerdict::Continue {
            return Ok(Proposal::None);
        }
        Ok(Proposal::Inbox(Delivery {
            mode: InboxMode::Steer,
            priority: Priority::OWN_TIMER,
            origin: Origin::Continuation("boss_continuation".into()),
            text: texts::continuation(&task),
            visible: false,
            delivery_key: None,
            order_key: None,
            defers_calls: false,
        }))
    }
}
