//! Stalled tickets (SV-12…SV-14): for a job whose quiet deadline came, each open ticket's
//! ball holder is called back at most twice per progress cycle, then only a notice. The job's
//! next deadline is stored again: the earliest ticket not yet quiet long enough, or the next
//! call-back's threshold.

use super::apply;
use crate::desk::ensure_job_item;
use crate::tickets::ball::{JobBall, wake_place};
use serde_json::{Value, json};
use troupe_core::PlanId;
use troupe_core::ball::{Ball, Holder};
use troupe_core::plan::PlanStatus;
use troupe_core::supervisor::{
    StalledFacts, StalledVerdict, TicketQuiet, callback_line, stalled_verdict, threshold_ms,
};
use troupe_core::ticket::TicketStatus;
use troupe_core::ticket::dependency::{released, waits_for};
use troupe_core::work_item::WorkState;
use troupe_core::{BotId, SessionId};
use troupe_store::{StoreError, SupervisorWake, TicketRecord, Tx, WorkItemRecord, WorkRef};

pub(super) fn look_at(
    tx: &mut Tx<'_>,
    plan_id: PlanId,
    now: i64,
) -> Result<Vec<Value>, StoreError> {
    let plan = tx.plan(plan_id)?;
    tx.set_plan_supervise_at(plan_id, None)?;
    tx.clear_plan_released(plan_id)?;
    // SV-12: a routine's standing job is never called back; its next due time runs anyway.
    let job_supervised =
        plan.status == PlanStatus::Active && !plan.is_dormant() && !tx.is_routine_plan(plan_id)?;
    if !job_supervised {
        return Ok(Vec::new());
    }
    let items = tx.work_items_of_plan(plan_id)?;
    let cut_work_on_job = items.iter().any(|w| w.state == WorkState::NeedsAttention);
    let quiet = TicketQuiet {
        last_activity_at: tx.plan_activity_at(plan_id)?.unwrap_or(plan.updated_at),
        bot_spoke_last_at: match tx.plan_last_line(plan_id)? {
            Some((author, at, Some(user_at))) if author == "bot" && at > user_at => Some(at),
            _ => None,
        },
    };
    let tickets = tx.tickets_of_plan(plan_id)?;
    let graph = crate::tickets::graph::nodes(&tickets);
    let sample = tx.plan_deliverables(plan_id)?.sample_ticket_id;
    let mut next: Option<i64> = None;
    let mut out = Vec::new();
    // The balls first, from the job's records read once (C §13), then the writes.
    let open: Vec<(&TicketRecord, Option<BotId>)> = {
        let mut job = JobBall::read(tx, plan_id)?;
        let mut out = Vec::new();
        for t in tickets.iter().filter(|t| is_open(t.status)) {
            out.push((t, holder_of(job.ball(t)?)));
        }
        out
    };
    for (t, holder) in open {
        let item = match holder {
            Some(bot) => tx.job_item(bot, plan_id)?,
            None => None,
        };
        let cycle = tx.ticket_callbacks(t.id)?;
        let facts = StalledFacts {
            job_supervised,
            ticket_open: true,
            // T17, LJ5–LJ6: a dependency or the sample counts once handed over, not approved.
            dependencies_done: waits_for(&graph, sample, t.id).is_empty(),
            released: released(&graph, sample, t.id),
            holder_bot: holder.map(|b| b.0),
            // SV-15: a Bot whose last segment failed on its account is not called back either.
            holder_busy: match &item {
                Some(w) => busy(tx, w)?,
                None => false,
            } || match holder {
                Some(b) => super::work::bot_unusable(tx, b)?,
                None => false,
            },
            cut_work_on_job,
            quiet,
            callbacks_in_cycle: cycle.callbacks,
            noticed: cycle.noticed,
        };
        let verdict = stalled_verdict(&facts, now);
        match &verdict {
            StalledVerdict::Nothing => {}
            StalledVerdict::NotYet { at } => next = Some(next.map_or(*at, |n| n.min(*at))),
            StalledVerdict::CallBack { quiet_ms, n, .. } => {
                let target = match (item, holder) {
                    (Some(w), _) => w.speaks_in.or(plan.home_session_id).map(|p| (w, p)),
                    // BH-3: a holder with no work on the job gets its job work, woken where
                    // it last worked on the job (else where the user last spoke about it).
                    (None, Some(bot)) => match wake_place(tx, plan_id, bot)? {
                        Some(place) => Some((ensure_job_item(tx, plan_id, bot)?, place)),
                        None => None,
                    },
                    (None, None) => None,
                };
                let Some((w, place)) = target else {
                    continue;
                };
                call_back(tx, t, &w, *quiet_ms, *n, place)?;
                let (threshold, _) = threshold_ms(&quiet);
                let at = now + threshold;
                next = Some(next.map_or(at, |x| x.min(at)));
            }
            StalledVerdict::Notice => {
                tx.mark_ticket_noticed(t.id)?;
                tx.log_work(
                    WorkRef {
                        plan: plan_id,
                        ticket: Some(t.id),
                        work_item: item.as_ref().map(|w| w.id),
                    },
                    "supervisor_notice",
                    json!({"code": "stalled"}),
                )?;
            }
        }
        out.push(json!({"task_id": plan_id, "ticket_id": t.id, "verdict": verdict}));
    }
    // After the work log's own trigger moved it: the supervisor's deadline wins.
    tx.set_plan_supervise_at(plan_id, next)?;
    Ok(out)
}

fn is_open(s: TicketStatus) -> bool {
    matches!(
        s,
        TicketStatus::ToDo | TicketStatus::InProgress | TicketStatus::InReview
    )
}

/// The Bot the supervisor may call back for a ticket: its ball holder (C §13) when that is a
/// Bot or a reviewer nobody moves; none when the ball is the user's, the app's, a poller's or
/// nobody's.
fn holder_of(ball: Option<Ball>) -> Option<BotId> {
    ball.filter(|b| matches!(b.holder, Holder::Bot | Holder::Reviewer))
        .and_then(|b| b.bot_id)
}

/// SV-12: the holder has a live segment, a valid wait or a line queued on the job.
fn busy(tx: &Tx<'_>, w: &WorkItemRecord) -> Result<bool, StoreError> {
    if tx.live_segment_of(w.id)?.is_some() {
        return Ok(true);
    }
    if matches!(
        w.state,
        WorkState::Running | WorkState::Queued | WorkState::Waiting | WorkState::Blocked
    ) {
        return Ok(true);
    }
    Ok(tx
        .inbox(w.thread_id)?
        .iter()
        .any(|i| i.mode != troupe_core::inbox::InboxMode::Context))
}

fn call_back(
    tx: &mut Tx<'_>,
    t: &TicketRecord,
    w: &WorkItemRecord,
    quiet_ms: i64,
    n: u32,
    place: SessionId,
) -> Result<(), StoreError> {
    let role = if t.status == TicketStatus::InReview {
        "reviewer"
    } else {
        "owner"
    };
    let text = callback_line(&format!("{:02} {}", t.number, t.title), quiet_ms, role);
    let row = tx.record_supervisor_wake(&SupervisorWake {
        bot: w.bot_id,
        work_item: w.id,
        session: place,
        plan: Some(t.plan_id),
        ticket: Some(t.id),
        note: &text,
        wait_spec: json!({"reason": "stalled", "attempt": n, "cycle": n}),
        fired: true,
    })?;
    tx.bump_ticket_callbacks(t.id)?;
    apply::wake(tx, w, place, text, format!("supervisor:{row}"))?;
    tx.log_work(
        WorkRef {
            plan: t.plan_id,
            ticket: Some(t.id),
            work_item: Some(w.id),
        },
        "supervisor_called_back",
        json!({"ticket_id": t.id, "quiet_ms": quiet_ms, "n": n}),
    )?;
    Ok(())
}
