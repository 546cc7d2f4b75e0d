//! The `light_loop` continuation policy (priority 25), asked by the kernel's drive behind the
//! shared gate — so only once a thread's lease is released and its latest task has a terminal
//! reply without error. It acts for the executor (its slot holds an active Light Loop): no
//! claim → propose the continuation; an unbound claim → prepare the reviewer task and bind its
//! child durably, then start it; a bound review → nothing (the reviewer decides). The reviewer
//! itself is a child task: what its ending without a verdict means is decided when its task
//! ends ([`crate::reviewer_task::settle_ended`]), not here.
//!
//! The revision key is the seed's: terminal reply | status | claim's requester or
//! `no-stop-request` | reviewer or `no-review-task` | recovery attempts — so one terminal reply
//! can drive successive revisions (bind, recovery 1, recovery 2) without being deduplicated away.

use crate::guard;
use crate::lightloop::commit::{POLICY_ID, light_loop};
use crate::lightloop::host::LoopHost;
use crate::lightloop::machine::{self, Phase};
use crate::lightloop::reviewer;
use crate::lightloop::texts;
use crate::slot::LightLoopSlot;
use std::sync::Arc;
use troupe_core::MessageId;
use troupe_core::continuation_guard::GuardVerdict;
use troupe_core::drive::continuation_key;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_engine::extension::{ContinuationPolicy, Gate, Proposal};

pub const PRIORITY: i32 = 25;

pub struct LightLoopPolicy {
    pub host: Arc<LoopHost>,
}

/// The seed's revision key over a loop's slot.
pub fn revision(terminal: MessageId, ll: &LightLoopSlot) -> String {
    let stop = ll.stop_request.as_ref();
    format!(
        "{}|running|{}|{}|{}",
        terminal.0,
        stop.map_or("no-stop-request".into(), |s| s
            .requester_message_id
            .0
            .to_string()),
        stop.and_then(|s| s.reviewer_thread_id)
            .map_or("no-review-task".into(), |r| r.0.to_string()),
        stop.map_or(0, |s| s.review_recovery_attempts),
    )
}

fn executor_loop(gate: &Gate<'_>) -> Result<Option<LightLoopSlot>, String> {
    gate.store
        .read(|tx| light_loop(tx, gate.thread.id))
        .map_err(|e| e.to_string())
}

/// The continuation the executor gets when it ends a turn with no claim.
pub fn continuation(gate: &Gate<'_>, ll: &LightLoopSlot) -> Delivery {
    Delivery {
        mode: InboxMode::Steer,
        priority: Priority::OWN_TIMER,
        origin: Origin::Continuation(POLICY_ID.into()),
        text: texts::continuation(ll),
        visible: true,
        delivery_key: Some(continuation_key(
            POLICY_ID,
            &revision(gate.terminal_message_id, ll),
        )),
        order_key: None,
        defers_calls: false,
    }
}

impl LightLoopPolicy {
    fn propose_executor(&self, gate: &Gate<'_>, ll: &LightLoopSlot) -> Result<Proposal, String> {
        match machine::phase(ll) {
            Phase::Executing => {
                let verdict = guard::admit_continuation(
                    gate.store,
                    gate.thread.id,
                    guard::LIGHTLOOP_REF,
                    self.host.guard_defaults(),
                )
                .map_err(|e| e.to_string())?;
                Ok(match verdict {
                    GuardVerdict::Continue => Proposal::Inbox(continuation(gate, ll)),
                    GuardVerdict::Wait { .. } | GuardVerdict::Pause { .. } => Proposal::None,
                })
            }
            Phase::Reviewing(_) => Ok(Proposal::None),
            Phase::StopPending => {
                let requester = ll
                    .stop_request
                    .as_ref()
                    .map(|s| s.requester_message_id)
                    .ok_or("no claim")?;
                // The executor's lease is released (the gate passed): bind first, then start.
                match reviewer::bind(gate.store, gate.thread.id, requester)
                    .map_err(|e| e.to_string())?
                {
                    Some(_) => {
                        self.host.start_tasks();
                        Ok(Proposal::Handled)
                    }
                    None => Ok(Proposal::None),
                }
            }
        }
    }
}

impl ContinuationPolicy for LightLoopPolicy {
    fn id(&self) -> &str {
        POLICY_ID
    }

    fn priority(&self) -> i32 {
        PRIORITY
    }

    fn revision_key(&self, gate: &Gate<'_>) -> Result<Option<String>, String> {
        Ok(executor_loop(gate)?.map(|ll| revision(gate.terminal_message_id, &ll)))
    }

    fn propose(&self, gate: &Gate<'_>) -> Result<Proposal, String> {
        match executor_loop(gate)? {
            None => Ok(Proposal::None),
            Some(ll) => self.propose_executor(gate, &ll),
        }
    }
}
