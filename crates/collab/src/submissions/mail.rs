//! Mail the hand-over rules send to Bots' work on a job, as delegation sends it: a waking task
//! when the work item is idle, a steer when its segment is live. The producer hears a failing
//! gate or a reject with its note; the reviewer hears a hand-over to review (Q16); the Bot that
//! asked for a deliverable hears it was approved (DEL-13).

use crate::members::system_line;
use serde_json::json;
use troupe_core::conversation::{Author, SessionKind};
use troupe_core::delegation::{DelegationState, Expects};
use troupe_core::message::Origin;
use troupe_core::work_item::{PRIORITY_DELEGATION_REPLY, WaitingOn, WorkState};
use troupe_core::{BotId, PlanId, SessionId};
use troupe_store::{StoreError, SubmissionRecord, Tx, WorkItemRecord};

/// A priority-2 line for the work item's thread (`source` names who sends it: `review`,
/// `check`, `delegation_reply`), keyed once per `key`.
pub(crate) fn mail(
    tx: &mut Tx<'_>,
    item: &WorkItemRecord,
    speaks_in: SessionId,
    source: &str,
    key: &str,
    text: String,
) -> Result<(), StoreError> {
    let origin = if source == "delegation_reply" {
        Origin::Delegation(key.to_string())
    } else {
        Origin::System(source.to_string())
    };
    crate::delegation::mail_work(
        tx,
        item,
        speaks_in,
        PRIORITY_DELEGATION_REPLY,
        origin,
        key,
        text,
    )
}

/// Where a Bot's work on the job speaks: where it spoke last, else the job's home.
fn speaks_in(tx: &Tx<'_>, item: &WorkItemRecord, plan: PlanId) -> Result<SessionId, StoreError> {
    if let Some(s) = item.speaks_in {
        return Ok(s);
    }
    tx.plan(plan)?
        .home_session_id
        .ok_or_else(|| StoreError::Invalid(format!("job {plan} has no conversation to speak in")))
}

/// The producer's work item on the job (the one it handed over from, else its job item).
pub(crate) fn producer_item(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
) -> Result<Option<WorkItemRecord>, StoreError> {
    if let Some(w) = s.work_item_id {
        return Ok(Some(tx.work_item(w)?));
    }
    match s.producer_bot_id {
        Some(bot) => crate::desk::ensure_job_item(tx, s.plan_id, bot).map(Some),
        None => Ok(None),
    }
}

/// Wake the producer with `text` (a failing gate, a reject's note): the ticket is its again.
pub(crate) fn to_producer(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    source: &str,
    text: String,
) -> Result<(), StoreError> {
    to_producer_in(tx, s, source, text, None)
}

/// As [`to_producer`], with the rework speaking in `place` when given (B §5.8: the user
/// answered in their direct with the maker, so the rework runs there).
pub(crate) fn to_producer_in(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    source: &str,
    text: String,
    place: Option<SessionId>,
) -> Result<(), StoreError> {
    let Some(item) = producer_item(tx, s)? else {
        return Ok(());
    };
    let at = match place {
        Some(p) => p,
        None => speaks_in(tx, &item, s.plan_id)?,
    };
    mail(
        tx,
        &item,
        at,
        source,
        &format!("{source}:{}:{}", s.id.0, tx.now()),
        text,
    )
}

/// Queue the hand-over to its reviewer's work item on the job (§5.1 dispatch, priority 2).
pub(crate) fn to_reviewer(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    reviewer: BotId,
    text: String,
) -> Result<(), StoreError> {
    let item = crate::desk::ensure_job_item(tx, s.plan_id, reviewer)?;
    let at = speaks_in(tx, &item, s.plan_id)?;
    mail(tx, &item, at, "review", &format!("review:{}", s.id.0), text)
}

/// DEL-13–15: the open deliverable requests this approved hand-over answers — made to its
/// producer's work on the job, on its ticket (or naming none), once what they name is through
/// (DEL-14). Each is answered once with who
/// handed in what, the submission id and its files, and its sender is woken out of its wait.
pub(crate) fn answer_deliverables(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
) -> Result<usize, StoreError> {
    let Some(bot) = s.producer_bot_id else {
        return Ok(0);
    };
    let mut answered = 0;
    for item in tx.work_items_of_bot(bot)? {
        if item.plan_id != Some(s.plan_id) {
            continue;
        }
        for d in tx.open_delegations_to(item.id)? {
            if d.expects != Expects::Deliverable
                || !crate::delegation_scope::approval_answers(tx, &d, s)?
            {
                continue;
            }
            let me = tx.bot(bot)?.name;
            let files: Vec<String> = s.files.iter().map(|f| f.path.clone()).collect();
            let result = json!({
                "submission_id": s.id, "by": me, "files": files,
                "content": s.content, "ticket_id": s.ticket_id,
            });
            if !tx.settle_delegation(d.id, DelegationState::Replied, &result)? {
                continue;
            }
            answered += 1;
            let sender = tx.work_item(d.sender_work_item)?;
            if sender.waiting_on
                == Some(WaitingOn::Delegation {
                    delegation_id: d.id,
                })
            {
                let state = if tx.live_segment_of(sender.id)?.is_some() {
                    WorkState::Running
                } else {
                    sender.state
                };
                tx.set_work_state(sender.id, state, None)?;
            }
            let sender = tx.work_item(sender.id)?;
            let what = if files.is_empty() {
                "words".to_string()
            } else {
                files.join(", ")
            };
            let text = format!(
                "{me} handed over what you asked for in {} and it was approved: submission {} \
                 ({what}).",
                d.id, s.id
            );
            let at = sender.speaks_in.unwrap_or(d.pair_session_id);
            mail(
                tx,
                &sender,
                at,
                "delegation_reply",
                &format!("delegation_reply:{}", d.id.0),
                text.clone(),
            )?;
            system_line(tx, d.pair_session_id, format!("Answer to {}: {text}", d.id))?;
        }
    }
    Ok(answered)
}

/// Whether the person is owed words first (§4.3 exceptions, END-14): the segment was opened
/// by a person's line in their direct and none of its words reached them.
pub(crate) fn person_unanswered(tx: &Tx<'_>, run: troupe_core::RunId) -> Result<bool, StoreError> {
    let Some(seg) = tx.segment(run)? else {
        return Ok(false);
    };
    let Some(trigger) = seg.trigger_line_id else {
        return Ok(false);
    };
    let line = tx.line(trigger)?;
    if line.author != Author::User || tx.session(seg.session_id)?.kind != SessionKind::Direct {
        return Ok(false);
    }
    Ok(!tx
        .lines_of_turn(run)?
        .iter()
        .any(|l| l.session_id == seg.session_id && l.author == Author::Bot))
}
