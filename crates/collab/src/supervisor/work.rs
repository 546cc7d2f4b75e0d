//! The work-item passes: invalid waits (SV-4), idle work with mail (SV-5), running work with
//! no live segment (SV-6), and the pick-up of work that needs attention (SV-7…SV-11, SV-15,
//! SV-19, restart causes). Facts are read here; the rules are `troupe_core::supervisor`'s.

use super::apply;
use serde_json::{Value, json};
use troupe_core::delegation::DelegationState;
use troupe_core::pause::PauseReason;
use troupe_core::run::{EndReason, RunStatus};
use troupe_core::supervisor::{
    LastSegment, PICKUP_WINDOW_MS, PickupCause, PickupFacts, PickupVerdict, WaitFacts, WorkAction,
    WorkFacts, budget_spent_line, clipped, how_it_ended, pickup_line, pickup_verdict, work_action,
};
use troupe_core::ticket::TicketStatus;
use troupe_core::work_item::{WaitingOn, WorkState};
use troupe_core::{BotId, TicketId, WorkItemId};
use troupe_store::{RunRecord, StoreError, SupervisorWake, Tx, WorkItemRecord};

/// A refused pick-up is tried again at the next tick (SV-9).
const RETRY_REFUSED_MS: i64 = 15_000;
/// SV-15: work kept waiting because its Bot's last segment failed on its account is looked at
/// again this often: no record of the Bot's other work arms it when one of its segments ends
/// otherwise, and then it must be picked up.
const RECHECK_UNUSABLE_MS: i64 = 60_000;

pub(super) fn look_at(tx: &mut Tx<'_>, id: WorkItemId, now: i64) -> Result<Value, StoreError> {
    let item = tx.work_item(id)?;
    let last = match tx.last_segment_run(id)? {
        Some(run) => Some(tx.run(run)?),
        None => None,
    };
    let held = !crate::holds::holds_over(tx, item.thread_id)?.is_empty();
    let facts = WorkFacts {
        state: item.state,
        live_segment: tx.live_segment_of(id)?.is_some(),
        mail: tx.has_waking_item(item.thread_id)?,
        wait: wait_facts(tx, &item)?,
        held,
        last_segment: last.as_ref().map(last_segment),
        paused_by_failure: tx
            .thread(item.thread_id)?
            .paused
            .is_some_and(|p| matches!(p.reason, PauseReason::Failed | PauseReason::Interrupted)),
    };
    let action = work_action(&facts);
    // Looked at: nothing is due again until a trigger arms it or a verdict below says when.
    tx.set_work_supervise_at(id, None)?;
    let mut out = json!({"work_item_id": id, "action": action});
    match action {
        WorkAction::Nothing => {}
        WorkAction::WaitInvalid { what } => {
            apply::note(
                tx,
                &item,
                format!("Your wait no longer stands: {what}. Decide what this work needs now."),
                format!("supervisor:wait_invalid:{}:{now}", id.0),
            )?;
            tx.set_work_state(id, WorkState::NeedsAttention, None)?;
            apply::log(tx, &item, "supervisor_wait_invalid", json!({"what": what}))?;
        }
        WorkAction::Requeue => {
            tx.set_work_state(id, WorkState::Queued, item.waiting_on.as_ref())?;
            tx.wake_after_commit(item.thread_id);
            apply::log(tx, &item, "supervisor_requeued", json!({}))?;
        }
        WorkAction::NeedsAttention => {
            tx.set_work_state(id, WorkState::NeedsAttention, None)?;
        }
        WorkAction::Idle => {
            tx.set_work_state(id, WorkState::Idle, None)?;
        }
        WorkAction::PickUp => {
            let verdict = pick_up(tx, &item, last.as_ref(), held, now)?;
            out["pickup"] = serde_json::to_value(&verdict).unwrap_or(Value::Null);
        }
    }
    Ok(out)
}

fn last_segment(run: &RunRecord) -> LastSegment {
    match run.status {
        RunStatus::Interrupted => LastSegment::Interrupted,
        RunStatus::Failed => LastSegment::Failed,
        RunStatus::Stopped => LastSegment::Stopped,
        _ => LastSegment::Ended,
    }
}

/// SV-4: whether the thing a waiting work item waits on still stands.
fn wait_facts(tx: &Tx<'_>, item: &WorkItemRecord) -> Result<WaitFacts, StoreError> {
    Ok(match &item.waiting_on {
        None => WaitFacts::None,
        Some(WaitingOn::User) => WaitFacts::User,
        Some(WaitingOn::Delegation { delegation_id }) => {
            let d = match tx.delegation(*delegation_id) {
                Ok(d) => d,
                Err(StoreError::NotFound { .. }) => {
                    return Ok(WaitFacts::Gone {
                        what: format!("request {delegation_id} no longer exists"),
                    });
                }
                Err(e) => return Err(e),
            };
            match d.state {
                DelegationState::Cancelled => WaitFacts::Gone {
                    what: format!("request {delegation_id} was cancelled"),
                },
                DelegationState::Replied => WaitFacts::DelegationReplied,
                DelegationState::Open => {
                    let other = tx.work_item(d.recipient_work_item)?;
                    if other.state == WorkState::Closed {
                        WaitFacts::Gone {
                            what: format!(
                                "the work request {delegation_id} went to is closed, unanswered"
                            ),
                        }
                    } else {
                        WaitFacts::DelegationOpen
                    }
                }
            }
        }
    })
}

fn pick_up(
    tx: &mut Tx<'_>,
    item: &WorkItemRecord,
    last: Option<&RunRecord>,
    held: bool,
    now: i64,
) -> Result<PickupVerdict, StoreError> {
    let facts = pickup_facts(tx, item, last, held, now)?;
    let verdict = pickup_verdict(&facts);
    let Some(place) = apply::user_place(tx, item)? else {
        return Ok(verdict);
    };
    match &verdict {
        PickupVerdict::Wait { .. } if facts.bot_unusable => {
            tx.set_work_supervise_at(item.id, Some(now + RECHECK_UNUSABLE_MS))?;
        }
        PickupVerdict::Wait { .. } => {}
        PickupVerdict::UnknownEffect { call, tell } => {
            if *tell {
                apply::tell_user(
                    tx,
                    place,
                    item,
                    "unknown_effect",
                    format!(
                        "A turn was cut off while {call} was running, and whether it finished \
                         is unknown, so nothing continues it by itself. Check its result, then \
                         {}.",
                        ways_on(tx, item)?
                    ),
                )?;
                apply::log(tx, item, "supervisor_unknown_effect", json!({"call": call}))?;
            }
        }
        PickupVerdict::BudgetSpent { tell } => {
            if *tell {
                apply::tell_user(
                    tx,
                    place,
                    item,
                    "retry_budget",
                    budget_spent_line(
                        last.and_then(|r| how_it_ended(r.end_reason.as_ref(), &r.failure_notes))
                            .as_deref(),
                        &ways_on(tx, item)?,
                    ),
                )?;
                apply::log(tx, item, "supervisor_retry_budget", json!({}))?;
            }
        }
        PickupVerdict::Refused { why } => {
            tx.record_supervisor_wake(&SupervisorWake {
                bot: item.bot_id,
                work_item: item.id,
                session: place,
                plan: item.plan_id,
                ticket: item.ticket_id.map(TicketId),
                note: why,
                wait_spec: json!({"reason": "pickup_refused", "why": why}),
                fired: false,
            })?;
            apply::log(tx, item, "supervisor_pickup_refused", json!({"why": why}))?;
            tx.set_work_supervise_at(item.id, Some(now + RETRY_REFUSED_MS))?;
        }
        PickupVerdict::PickUp {
            attempt,
            spends_budget,
            cause,
        } => {
            let last_step = match last {
                Some(r) => last_step(tx, r)?,
                None => None,
            };
            let text = pickup_line(*cause, last_step.as_deref(), *attempt);
            let spec = json!({
                "reason": cause,
                "attempt": attempt,
                "spends_budget": spends_budget,
                "restart": facts.restart,
            });
            let row = tx.record_supervisor_wake(&SupervisorWake {
                bot: item.bot_id,
                work_item: item.id,
                session: place,
                plan: item.plan_id,
                ticket: item.ticket_id.map(TicketId),
                note: &text,
                wait_spec: spec,
                fired: true,
            })?;
            apply::wake(tx, item, place, text, format!("supervisor:{row}"))?;
            apply::log(
                tx,
                item,
                "supervisor_picked_up",
                json!({"attempt": attempt, "cause": cause, "spends_budget": spends_budget}),
            )?;
        }
    }
    Ok(verdict)
}

/// What the person can do about work the supervisor no longer takes up, as the page offers
/// it: a line to the Bot always; Continue only where a pause shows it (a direct's banner, a
/// group member's row); the board only for work on a ticket.
fn ways_on(tx: &Tx<'_>, item: &WorkItemRecord) -> Result<String, StoreError> {
    let bot = tx.bot(item.bot_id)?.name;
    let mut ways = vec![format!("write to @{bot}")];
    if tx.thread(item.thread_id)?.paused.is_some() {
        ways.push("press Continue".to_string());
    }
    if item.ticket_id.is_some() {
        ways.push("change the ticket on the board".to_string());
    }
    let last = ways.pop().unwrap_or_default();
    Ok(if ways.is_empty() {
        last
    } else {
        format!("{}, or {last}", ways.join(", "))
    })
}

fn pickup_facts(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
    last: Option<&RunRecord>,
    held: bool,
    now: i64,
) -> Result<PickupFacts, StoreError> {
    let cause = match last.map(|r| r.status) {
        Some(RunStatus::Interrupted) => PickupCause::Interrupted,
        Some(RunStatus::Failed) => PickupCause::Failed,
        _ => PickupCause::Attention,
    };
    let restart = match last {
        Some(r) if r.status == RunStatus::Interrupted => tx.restart_cause_of(r.id)?,
        _ => None,
    };
    let ticket_closed = match item.ticket_id {
        Some(t) => matches!(
            tx.ticket(TicketId(t))?.status,
            TicketStatus::Done | TicketStatus::Parked
        ),
        None => false,
    };
    // The unknown effect of the cut segment, judged by its ledger row (SV-19).
    let unknown = tx.blocking_unknown_effect(item.thread_id)?;
    let cut_at = last.and_then(|r| r.ended_at).unwrap_or(0);
    let unknown_effect_told =
        unknown.is_some() && apply::logged_since(tx, item, "supervisor_unknown_effect", cut_at)?;
    let since = (now - PICKUP_WINDOW_MS).max(tx.user_word_at(item.id)?.unwrap_or(0));
    // A desk's record is an event, a job's a work-log row: both count (a desk was told again
    // at every new failure).
    let budget_told = apply::logged_since(tx, item, "supervisor_retry_budget", since)?;
    let cannot_continue = match item.speaks_in.or(item.session_id) {
        Some(s) if tx.session(s)?.archived => Some("its conversation is archived".to_string()),
        _ => None,
    };
    Ok(PickupFacts {
        cause,
        restart,
        held,
        ticket_closed,
        ball_elsewhere: ball_elsewhere(tx, item)?,
        bot_unusable: bot_unusable(tx, item.bot_id)?,
        unknown_effect: unknown.map(|u| format!("{} `{}`", u.tool, u.summary)),
        unknown_effect_told,
        cannot_continue,
        pickups_in_window: tx.supervisor_pickups_since(item.id, since)?,
        budget_told,
    })
}

/// SV-10: this work asked another Bot for something and that request is still open: the
/// recipient holds the ball (S-SV-12), so the asker is not picked up meanwhile.
fn ball_elsewhere(tx: &Tx<'_>, item: &WorkItemRecord) -> Result<bool, StoreError> {
    Ok(match &item.waiting_on {
        Some(WaitingOn::Delegation { delegation_id }) => {
            matches!(tx.delegation(*delegation_id), Ok(d) if d.state == DelegationState::Open)
        }
        _ => false,
    })
}

/// SV-15: the Bot's last ended segment failed on its sign-in, a missing model or spent quota:
/// it is neither picked up nor called back until one of its segments ends otherwise.
pub(super) fn bot_unusable(tx: &Tx<'_>, bot: BotId) -> Result<bool, StoreError> {
    let Some(run) = tx.last_ended_segment_of_bot(bot)? else {
        return Ok(false);
    };
    Ok(match tx.run(run)?.end_reason {
        Some(EndReason::ModelError(detail)) => troupe_core::supervisor::account_failure(&detail),
        _ => false,
    })
}

/// The cut segment's last step, for the pick-up line: its newest tool call (with its answer
/// when that was not `ok`: a Bot told only its call sends the same refused call again), or how
/// it failed.
fn last_step(tx: &Tx<'_>, run: &RunRecord) -> Result<Option<String>, StoreError> {
    if let Some(call) = tx.tool_calls(run.id)?.pop() {
        let args: String = call.arguments.chars().take(120).collect();
        let answer = if call.status == "ok" {
            String::new()
        } else {
            let first = call.result.lines().next().unwrap_or_default();
            format!(" (its answer: \"{}\")", clipped(first, 200))
        };
        return Ok(Some(format!("{} {args}{answer}", call.name)));
    }
    Ok(run
        .end_reason
        .as_ref()
        .and_then(|r| r.detail())
        .or_else(|| run.failure_notes.last().cloned()))
}
