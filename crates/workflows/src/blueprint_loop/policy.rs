//! The `blueprint_loop` continuation policy (priority 100), asked by the kernel's drive behind
//! the shared gate. It acts for the execution session of a loop: `running` without a claim →
//! the continuation steer; `running` with an unaudited claim → prepare the audit task and bind
//! its child durably, then start it (a failure fails the loop with `reviewer_launch_failed`);
//! `auditing` → nothing (the auditor decides). The auditor itself is a child task: what its
//! ending without a verdict means is decided when its task ends
//! ([`crate::reviewer_task::settle_ended`]), not here.
//!
//! The revision key is the seed's: terminal reply | status | claim's requester or
//! `no-stop-request` | auditor or `no-audit-task` | recovery attempts.

use crate::blueprint_loop::auditor;
use crate::blueprint_loop::commit::{POLICY_ID, bound_loop};
use crate::blueprint_loop::machine::Event;
use crate::blueprint_loop::texts;
use crate::guard;
use crate::lightloop::host::LoopHost;
use std::sync::Arc;
use troupe_core::MessageId;
use troupe_core::blueprint_loop::{BlueprintLoop, LoopStatus};
use troupe_core::continuation_guard::GuardVerdict;
use troupe_core::drive::continuation_key;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_engine::extension::{ContinuationPolicy, Gate, Proposal};

pub const PRIORITY: i32 = 100;

pub struct BlueprintLoopPolicy {
    pub host: Arc<LoopHost>,
}

pub fn revision(terminal: MessageId, l: &BlueprintLoop) -> String {
    let stop = l.stop_request.as_ref();
    format!(
        "{}|{}|{}|{}|{}",
        terminal.0,
        l.status.as_str(),
        stop.map_or("no-stop-request".into(), |s| s
            .requester_message_id
            .0
            .to_string()),
        l.audit_thread_id
            .map_or("no-audit-task".into(), |a| a.0.to_string()),
        stop.map_or(0, |s| s.review_recovery_attempts),
    )
}

/// The loop whose execution session the gate's thread is (an auditor is a child task: its
/// ending is settled with its task, not by this policy).
fn execution_loop(gate: &Gate<'_>) -> Result<Option<BlueprintLoop>, String> {
    gate.store
        .read(|tx| bound_loop(tx, gate.thread.id))
        .map(|b| b.and_then(|(role, l)| (role == "execution").then_some(l)))
        .map_err(|e| e.to_string())
}

impl BlueprintLoopPolicy {
    fn execution(&self, gate: &Gate<'_>, l: &BlueprintLoop) -> Result<Proposal, String> {
        match (l.status, &l.stop_request, l.audit_thread_id) {
            (LoopStatus::Running, None, _) => {
                let verdict = guard::admit_continuation(
                    gate.store,
                    gate.thread.id,
                    &l.id.guard_ref(),
                    self.host.guard_defaults(),
                )
                .map_err(|e| e.to_string())?;
                if verdict != GuardVerdict::Continue {
                    return Ok(Proposal::None);
                }
                Ok(Proposal::Inbox(Delivery {
                    mode: InboxMode::Steer,
                    priority: Priority::OWN_TIMER,
                    origin: Origin::Continuation(POLICY_ID.into()),
                    text: texts::continuation(l),
                    visible: true,
                    delivery_key: Some(continuation_key(
                        POLICY_ID,
                        &revision(gate.terminal_message_id, l),
                    )),
                    order_key: None,
                    defers_calls: false,
                }))
            }
            (LoopStatus::Running, Some(stop), None) => {
                // The executor's lease is released (the gate passed): bind first, then start.
                match auditor::bind(gate.store, l.id, stop.requester_message_id) {
                    Ok(Some(_)) => {
                        self.host.start_tasks();
                        Ok(Proposal::Handled)
                    }
                    Ok(None) => Ok(Proposal::None),
                    Err(e) => {
                        auditor::apply(
                            gate.store,
                            l.id,
                            Event::AuditorLaunchFailed {
                                error: e.to_string(),
                            },
                        )
                        .map_err(|e| e.to_string())?;
                        Ok(Proposal::Handled)
                    }
                }
            }
            _ => Ok(Proposal::None),
        }
    }
}

impl ContinuationPolicy for BlueprintLoopPolicy {
    fn id(&self) -> &str {
        POLICY_ID
    }

    fn priority(&self) -> i32 {
        PRIORITY
    }

    fn revision_key(&self, gate: &Gate<'_>) -> Result<Option<String>, String> {
        Ok(execution_loop(gate)?.map(|l| revision(gate.terminal_message_id, &l)))
    }

    fn propose(&self, gate: &Gate<'_>) -> Result<Proposal, String> {
        match execution_loop(gate)? {
            None => Ok(Proposal::None),
            Some(l) => self.execution(gate, &l),
        }
    }
}
