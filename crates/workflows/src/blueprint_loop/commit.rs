//! Applying one machine step inside a store transaction: the loop through the store's single
//! transition point, then the deliveries and notices the step's effects name, so a transition
//! and what it tells the executor, the auditor and the person commit together. What has to
//! happen after the commit (drives, stops) is returned.

use crate::blueprint_loop::machine::{Effect, MAX_REVIEW_RECOVERIES, Step};
use crate::blueprint_loop::texts;
use crate::lightloop::commit::notice;
use troupe_core::ThreadId;
use troupe_core::blueprint_loop::BlueprintLoop;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_store::{StoreError, Tx};

/// The policy id, also the origin detail of the loop's deliveries.
pub const POLICY_ID: &str = "blueprint_loop";

#[derive(Debug, Default)]
pub struct AfterCommit {
    /// The loop after the step.
    pub saved: Option<BlueprintLoop>,
    /// Drive the executor (a first prompt or a rejection was queued).
    pub drive_execution: bool,
    /// A recovery turn was queued for this auditor (the delivery, for a policy to return).
    pub recovery: Option<(ThreadId, Delivery)>,
    /// Threads whose live work is to stop.
    pub abort: Vec<ThreadId>,
}

fn delivery(
    mode: InboxMode,
    priority: Priority,
    origin: Origin,
    text: String,
    key: String,
) -> Delivery {
    Delivery {
        mode,
        priority,
        origin,
        text,
        visible: true,
        delivery_key: Some(key),
        order_key: None,
        defers_calls: false,
    }
}

pub fn commit(
    tx: &mut Tx<'_>,
    before: &BlueprintLoop,
    step: &Step,
) -> Result<AfterCommit, StoreError> {
    let saved = tx.save_blueprint_loop(&step.next)?;
    let l = &saved;
    let exec = l.thread_id;
    let mut after = AfterCommit::default();
    let req = before.stop_request.as_ref().map_or_else(
        || "none".to_string(),
        |s| s.requester_message_id.0.to_string(),
    );
    for effect in &step.effects {
        match effect {
            Effect::FirstPrompt => {
                tx.deliver(exec, &first_prompt(l))?;
                notice(tx, exec, texts::started(l))?;
                after.drive_execution = true;
            }
            // The audit task is the prompt of the auditor's child task, delivered when the
            // task is prepared (in this same transaction).
            Effect::AuditTask { .. } => {}
            Effect::RecoveryTurn { auditor, attempt } => {
                let d = delivery(
                    InboxMode::Steer,
                    Priority::SUPERVISOR,
                    Origin::System(POLICY_ID.into()),
                    texts::recovery_turn(l, *attempt, MAX_REVIEW_RECOVERIES),
                    format!("blueprint-loop-review-recovery:{}:{req}:{attempt}", l.id),
                );
                tx.deliver(*auditor, &d)?;
                after.recovery = Some((*auditor, d));
            }
            Effect::MailApproved { summary } => {
                let text = texts::approved(l, summary);
                notice(tx, exec, text.clone())?;
                tx.deliver(
                    exec,
                    &delivery(
                        InboxMode::Context,
                        Priority::DELEGATION_RESULT,
                        Origin::System("blueprint_loop_completed".into()),
                        format!("[BlueprintLoop] {text}"),
                        format!("blueprint-loop-completed:{}", l.id),
                    ),
                )?;
            }
            Effect::MailRejected(r) => {
                tx.deliver(
                    exec,
                    &delivery(
                        InboxMode::Steer,
                        Priority::DELEGATION_RESULT,
                        Origin::Continuation("blueprint_loop_rejected".into()),
                        texts::rejection(l.id, r, l.audit.attempts),
                        format!("blueprint-loop-rejected:{}:{req}", l.id),
                    ),
                )?;
                after.drive_execution = true;
            }
            Effect::Notice(text) => notice(tx, exec, text.clone())?,
            Effect::AbortWork { execution, auditor } => {
                after.abort.push(*execution);
                after.abort.extend(*auditor);
            }
        }
    }
    after.saved = Some(saved);
    Ok(after)
}

/// The executor's first prompt, keyed so a repeat (recovery) delivers it once.
pub fn first_prompt(l: &BlueprintLoop) -> Delivery {
    delivery(
        InboxMode::Task,
        Priority::USER,
        Origin::System("blueprint_loop_start".into()),
        texts::first_prompt(l),
        format!("blueprint-loop-start:{}", l.id),
    )
}

/// The loop a thread takes part in, with its role (`execution` or `audit`).
pub fn bound_loop(
    tx: &Tx<'_>,
    thread: ThreadId,
) -> Result<Option<(String, BlueprintLoop)>, StoreError> {
    let Some(b) = tx.loop_binding(thread)? else {
        return Ok(None);
    };
    let Some(l) = tx.find_blueprint_loop(b.loop_id)? else {
        return Ok(None);
    };
    let current = match b.role.as_str() {
        "execution" => l.thread_id == thread && l.status.is_active(),
        "audit" => l.audit_thread_id == Some(thread),
        _ => false,
    };
    Ok(current.then_some((b.role, l)))
}
