//! The `blueprint_loop` continuation policy (priority 100), asked by the kernel's drive behind
//! the shared gate. It acts for two kinds of thread:
//!
//! - the execution session of a loop: `running` without a claim → the continuation steer;
//!   `running` with an unaudited claim → bind a supervisor auditor durably, queue its audit
//!   task, then start it (a failure fails the loop with `reviewer_launch_failed`); `auditing` →
//!   nothing (the auditor decides);
//! - the recorded audit session, when its turn ended without a verdict → a recovery turn
//!   (bounded), or the loop's failure with `review_terminal_tool_missing`.
//!
//! The revision key is the seed's: terminal reply | status | claim's requester or
//! `no-stop-request` | auditor or `no-audit-task` | recovery attempts.

use crate::blueprint_loop::auditor::{self, run_audit};
use crate::blueprint_loop::commit::{self, POLICY_ID, bound_loop};
use crate::blueprint_loop::machine::{self, Event};
use crate::blueprint_loop::texts;
use crate::lightloop::host::LoopHost;
use std::sync::Arc;
use troupe_core::MessageId;
use troupe_core::blueprint_loop::{BlueprintLoop, LoopStatus};
use troupe_core::drive::continuation_key;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_engine::extension::{ContinuationPolicy, Gate, Proposal};
use troupe_store::StoreError;

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

fn role(gate: &Gate<'_>) -> Result<Option<(String, BlueprintLoop)>, String> {
    gate.store
        .read(|tx| bound_loop(tx, gate.thread.id))
        .map_err(|e| e.to_string())
}

impl BlueprintLoopPolicy {
    fn execution(&self, gate: &Gate<'_>, l: &BlueprintLoop) -> Result<Proposal, String> {
        match (l.status, &l.stop_request, l.audit_thread_id) {
            (LoopStatus::Running, None, _) => Ok(Proposal::Inbox(Delivery {
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
            })),
            (LoopStatus::Running, Some(stop), None) => {
                // The executor's lease is released (the gate passed): bind first, then start.
                match auditor::bind(gate.store, l.id, stop.requester_message_id) {
                    Ok(Some(a)) => {
                        self.host
                            .spawn(run_audit_hosted(self.host.clone(), l.id, a));
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

    fn audit(&self, gate: &Gate<'_>, l: &BlueprintLoop) -> Result<Proposal, String> {
        let auditor = gate.thread.id;
        let after = gate
            .store
            .write(|tx| {
                let l = tx.blueprint_loop(l.id)?;
                let step = machine::step(&l, Event::AuditorEndedWithoutVerdict { auditor })
                    .map_err(|e| StoreError::Invalid(e.to_string()))?;
                if step.ack != machine::Ack::Recorded {
                    return Ok(None);
                }
                Ok(Some(commit::commit(tx, &l, &step)?))
            })
            .map_err(|e| e.to_string())?;
        Ok(match after {
            None => Proposal::None,
            // Already persisted with its key; the kernel's persist is a no-op and it starts it.
            Some(a) => match a.recovery {
                Some((_, d)) => Proposal::Inbox(d),
                None => Proposal::Handled,
            },
        })
    }
}

async fn run_audit_hosted(
    host: Arc<LoopHost>,
    id: troupe_core::blueprint_loop::BlueprintLoopId,
    auditor: troupe_core::ThreadId,
) {
    if let Some(engine) = host.engine().cloned() {
        run_audit(engine, id, auditor).await;
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
        Ok(role(gate)?.map(|(_, l)| revision(gate.terminal_message_id, &l)))
    }

    fn propose(&self, gate: &Gate<'_>) -> Result<Proposal, String> {
        match role(gate)? {
            None => Ok(Proposal::None),
            Some((r, l)) if r == "execution" => self.execution(gate, &l),
            Some((_, l)) => self.audit(gate, &l),
        }
    }
}
