//! Applying one machine step inside a store transaction: the terminal record first, then the
//! slot, then the mail and notices the step's effects name — all in the caller's transaction,
//! so a transition and what it tells the executor, the reviewer and the person commit together.
//! What has to happen after the commit (drives, stops) is returned.

use crate::lightloop::machine::{LoopEffect, MAX_REVIEW_RECOVERIES, Mail, Step};
use crate::lightloop::texts;
use crate::service::record_terminal;
use crate::slot::{LightLoopSlot, WorkflowSlot};
use troupe_core::conversation::{Author, LineKind};
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::{MessageId, ThreadId};
use troupe_store::{NewLine, StoreError, Tx};

/// The policy id, also the origin detail of the loop's deliveries to the executor.
pub const POLICY_ID: &str = "light_loop";

/// What the caller does once the transaction has committed.
#[derive(Debug, Default)]
pub struct AfterCommit {
    /// A rejection was mailed: drive the executor.
    pub drive_executor: bool,
    /// A recovery turn was queued for this reviewer (the delivery, for a policy to return).
    pub recovery: Option<(ThreadId, Delivery)>,
    /// Work to stop (cancel).
    pub abort_reviewer: Option<ThreadId>,
    /// The loop ended.
    pub ended: bool,
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

/// A line in the executor's conversation, written by the system (if the thread has one).
pub fn notice(tx: &mut Tx<'_>, executor: ThreadId, body: String) -> Result<(), StoreError> {
    if let Some((session, _)) = tx.thread_session(executor)? {
        tx.insert_line(&NewLine {
            kind: LineKind::System,
            ..NewLine::plain(session, Author::System, body)
        })?;
    }
    Ok(())
}

/// Context for the executor's next model call; it never wakes the thread.
fn context(
    tx: &mut Tx<'_>,
    executor: ThreadId,
    source: &str,
    text: String,
    key: String,
) -> Result<(), StoreError> {
    tx.deliver(
        executor,
        &delivery(
            InboxMode::Context,
            Priority::DELEGATION_RESULT,
            Origin::System(source.into()),
            text,
            key,
        ),
    )?;
    Ok(())
}

pub fn commit(
    tx: &mut Tx<'_>,
    executor: ThreadId,
    before: &LightLoopSlot,
    step: &Step,
) -> Result<AfterCommit, StoreError> {
    let mut after = AfterCommit {
        ended: step.next.is_none(),
        ..AfterCommit::default()
    };
    let requester: Option<MessageId> = before.stop_request.as_ref().map(|s| s.requester_message_id);
    let req = requester.map_or_else(|| "none".to_string(), |r| r.0.to_string());
    for effect in &step.effects {
        match effect {
            LoopEffect::RecordTerminal { status, error } => {
                record_terminal(tx, executor, &before.instructions, *status, error.clone())?;
            }
            LoopEffect::MailExecutor(Mail::Approved { summary }) => {
                let text = texts::approved_notice(summary);
                notice(tx, executor, text.clone())?;
                context(
                    tx,
                    executor,
                    "light_loop_approved",
                    format!("[Light Loop] {text}"),
                    format!("lightloop-approved:{req}"),
                )?;
            }
            LoopEffect::MailExecutor(Mail::Rejected(r)) => {
                let attempts = step.next.as_ref().map_or(0, |n| n.review.attempts);
                let text = texts::rejection(
                    &r.reason,
                    &r.remaining,
                    &r.instructions,
                    &r.completed,
                    attempts,
                );
                tx.deliver(
                    executor,
                    &delivery(
                        InboxMode::Steer,
                        Priority::DELEGATION_RESULT,
                        Origin::Continuation(POLICY_ID.into()),
                        text,
                        format!("lightloop-rejected:{req}"),
                    ),
                )?;
                notice(tx, executor, texts::rejected_notice(&r.reason, attempts))?;
                after.drive_executor = true;
            }
            LoopEffect::MailExecutor(Mail::Exhausted(r)) => {
                let text = texts::exhausted_notice(&r.reason);
                notice(tx, executor, text.clone())?;
                context(
                    tx,
                    executor,
                    "light_loop_exhausted",
                    format!(
                        "[Light Loop] {text}\n\n{}",
                        texts::rejection(
                            &r.reason,
                            &r.remaining,
                            &r.instructions,
                            &r.completed,
                            before.review.attempts + 1
                        )
                    ),
                    format!("lightloop-exhausted:{req}"),
                )?;
            }
            LoopEffect::RecoveryTurn { reviewer } => {
                let attempt = step
                    .next
                    .as_ref()
                    .and_then(|n| n.stop_request.as_ref())
                    .map_or(0, |s| s.review_recovery_attempts);
                let d = delivery(
                    InboxMode::Steer,
                    Priority::SUPERVISOR,
                    Origin::System(POLICY_ID.into()),
                    texts::recovery_turn(executor, attempt, MAX_REVIEW_RECOVERIES),
                    format!("lightloop-review-recovery:{req}:{attempt}"),
                );
                tx.deliver(*reviewer, &d)?;
                after.recovery = Some((*reviewer, d));
            }
            LoopEffect::AbortWork { reviewer } => after.abort_reviewer = *reviewer,
            LoopEffect::ReviewFailedNotice { requester, error } => {
                let text = texts::failed_notice(error);
                notice(tx, executor, text.clone())?;
                context(
                    tx,
                    executor,
                    "light_loop_failed",
                    format!("[Light Loop] {text}"),
                    format!("lightloop-review-exhausted:{}", requester.0),
                )?;
            }
        }
    }
    let value = step
        .next
        .clone()
        .map(|n| WorkflowSlot::LightLoop(Box::new(n)).to_value());
    tx.set_workflow(executor, value.as_ref())?;
    Ok(after)
}

/// The executor's Light Loop, read inside a transaction.
pub fn light_loop(tx: &Tx<'_>, executor: ThreadId) -> Result<Option<LightLoopSlot>, StoreError> {
    let t = tx.thread(executor)?;
    Ok(match WorkflowSlot::of(t.workflow.as_ref()) {
        Some(WorkflowSlot::LightLoop(ll)) => Some(*ll),
        _ => None,
    })
}
