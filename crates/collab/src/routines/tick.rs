//! A routine's due times on the scheduler tick. Each due time the routine adds a ticket to its
//! standing job (PLAN-D11), owned by its Bot, and wakes the Bot on it with a hidden task at
//! the priority of its own timers (WI-6: 4). A due time under a hold is owed: recorded once
//! as a wake turned away, run once for the latest due time after the lift (HOLD-W4, W6). A
//! due time while the last run is still going waits for it the same way (one live segment a
//! Bot and job: WI-2), with nothing recorded. Periods the daemon slept through run once.

use super::RoutineView;
use crate::tickets::after_stage_change;
use crate::tickets::folders::{folder_for, make_folder};
use crate::{Collab, CollabError};
use serde::Serialize;
use serde_json::json;
use troupe_core::hold::TurnFacts;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::routine::{self, DueFacts, DueStep};
use troupe_core::schedule::Trigger;
use troupe_core::work_item::{PRIORITY_CHECK_BACK, WorkState};
use troupe_core::{HoldId, ThreadId, TicketId};
use troupe_store::{Layout, LayoutItem, Routine, RoutineEdit, RoutineStatus, StoreError, Tx};

/// Routines one tick looks at; the rest wait for the next.
const TICK_BATCH: u32 = 100;

/// What one tick did with the routines.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoutineReport {
    /// Runs opened: routine and ticket.
    pub ran: Vec<RoutineRan>,
    /// Routines whose due time a hold, or their last run still going, kept back.
    pub owed: Vec<i64>,
    /// Routines paused because their Bot was archived or left their conversation.
    pub paused: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoutineRan {
    pub routine_id: i64,
    pub ticket_id: i64,
    pub due_at: i64,
}

impl RoutineReport {
    pub fn is_empty(&self) -> bool {
        self.ran.is_empty() && self.owed.is_empty() && self.paused.is_empty()
    }
}

/// The holds over the routine's next run: its Bot, the conversation it speaks in, its
/// standing job. A run yet to open has no thread, so a hold on one turn covers none.
fn holds_over(tx: &Tx<'_>, r: &Routine) -> Result<Vec<HoldId>, StoreError> {
    tx.covering_holds(&TurnFacts {
        bot_id: r.bot_id,
        session_id: r.session_id,
        thread_id: ThreadId(0),
        plan_id: Some(r.plan_id),
        plan_home: tx.plan(r.plan_id)?.home_session_id,
        ticket_id: None,
    })
}

/// The Bot is at work on the standing job now (its last run, or more).
fn run_going(tx: &Tx<'_>, r: &Routine) -> Result<bool, StoreError> {
    for w in tx.work_items_of_plan(r.plan_id)? {
        if w.bot_id == r.bot_id && tx.live_segment_of(w.id)?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Why the routine can no longer run: its Bot archived, or no longer in its conversation.
fn gone(tx: &Tx<'_>, r: &Routine) -> Result<Option<&'static str>, StoreError> {
    if tx.bot(r.bot_id)?.archived {
        return Ok(Some("bot_archived"));
    }
    if !tx.session(r.session_id)?.bot_ids.contains(&r.bot_id) {
        return Ok(Some("bot_left"));
    }
    Ok(None)
}

/// One routine on a tick at `now`, in one write.
fn look_at(
    tx: &mut Tx<'_>,
    id: i64,
    now: i64,
    report: &mut RoutineReport,
) -> Result<(), StoreError> {
    // Held against another node's tick, then judged on what it holds now.
    let r = tx.claim_routine(id)?;
    if r.status != RoutineStatus::Active {
        return Ok(());
    }
    if let Some(why) = gone(tx, &r)? {
        let r = tx.edit_routine(
            r.id,
            &RoutineEdit {
                status: Some(RoutineStatus::Paused),
                owed_due_at: Some(None),
                ..RoutineEdit::default()
            },
        )?;
        tx.routine_event(&r, why)?;
        report.paused.push(r.id);
        return Ok(());
    }
    let schedule = Trigger::parse(&r.schedule).ok();
    // Periods slept through run once, for the newest of them.
    let scheduled = match (r.next_due_at, &schedule) {
        (Some(d), Some(s)) if d <= now => Some(routine::latest_due(s, d, now)),
        (d, _) => d,
    };
    let holds = holds_over(tx, &r)?;
    let busy = holds.is_empty() && run_going(tx, &r)?;
    let step = routine::due_step(
        &DueFacts {
            active: true,
            next_due_at: scheduled,
            owed_due_at: r.owed_due_at,
            held: !holds.is_empty() || busy,
        },
        now,
    );
    // A scheduled time that came due moves on past now, whatever is done with it.
    let next = match scheduled {
        Some(d) if d <= now => Some(schedule.as_ref().and_then(|s| s.next_after(d, now))),
        _ => None,
    };
    match step {
        DueStep::Nothing => {}
        DueStep::Owe { due, first } => {
            tx.edit_routine(
                r.id,
                &RoutineEdit {
                    next_due_at: next,
                    owed_due_at: Some(Some(due)),
                    ..RoutineEdit::default()
                },
            )?;
            if first && !holds.is_empty() {
                crate::holds::log::entry(
                    tx,
                    "wake_suppressed",
                    &holds,
                    json!({"cause": "routine", "routine_id": r.id, "bot_id": r.bot_id.0, "due_at": due}),
                )?;
            }
            report.owed.push(r.id);
        }
        DueStep::Run { due } => {
            tx.edit_routine(
                r.id,
                &RoutineEdit {
                    next_due_at: next,
                    owed_due_at: Some(None),
                    last_run_at: Some(now),
                    ..RoutineEdit::default()
                },
            )?;
            if let Some(ticket) = open_run(tx, &r, due)? {
                report.ran.push(RoutineRan {
                    routine_id: r.id,
                    ticket_id: ticket.0,
                    due_at: due,
                });
            }
        }
    }
    Ok(())
}

/// Open the run for `due`: its ticket in the standing job, the Bot's work on it, the task
/// that wakes it. Nothing when that due time has run already (a repeated tick).
pub(crate) fn open_run(
    tx: &mut Tx<'_>,
    r: &Routine,
    due: i64,
) -> Result<Option<TicketId>, StoreError> {
    if !tx.record_routine_run(r.id, due)? {
        return Ok(None);
    }
    let plan = tx.plan(r.plan_id)?;
    let schedule = Trigger::parse(&r.schedule).ok();
    let label = routine::due_label(schedule.as_ref(), due);
    let laid = tx.lay_out(
        plan.id,
        &Layout {
            items: vec![LayoutItem {
                title: routine::run_title(&r.name, &label),
                description: r.instruction.clone(),
                owner_bot_id: Some(r.bot_id),
                ..LayoutItem::default()
            }],
            drops: Vec::new(),
        },
        |n, t| folder_for(&plan.folder, n, t),
    )?;
    let ticket = laid.tickets[0].clone();
    make_folder(&ticket, &plan)?;
    after_stage_change(tx, ticket.id)?;
    tx.set_routine_run_ticket(r.id, due, ticket.id)?;
    let item = crate::tickets::work::ensure_ticket_item(tx, plan.id, r.bot_id, ticket.id)?;
    let session = tx.session(r.session_id)?;
    let place = match session.kind {
        troupe_core::conversation::SessionKind::Group => format!("the group \"{}\"", session.title),
        _ => "your direct with the person".to_string(),
    };
    let key = routine::run_key(r.id, due);
    tx.deliver(
        item.thread_id,
        &Delivery {
            origin: Origin::Timer(key.clone()),
            // Not a line of the conversation: what the run says there is its own (CB-1 alike).
            visible: false,
            ..Delivery::user_task(routine::run_task(
                &r.name,
                &label,
                ticket.number,
                &r.instruction,
                &place,
            ))
            .with_mode(InboxMode::Task)
            .with_priority(Priority::OWN_TIMER)
            .with_key(key)
        },
    )?;
    tx.set_work_mail(item.id, r.session_id, PRIORITY_CHECK_BACK)?;
    tx.set_work_state(item.id, WorkState::Queued, None)?;
    tx.wake_after_commit(item.thread_id);
    tx.event(
        "routine_ran",
        None,
        None,
        json!({"routine_id": r.id, "ticket_id": ticket.id.0, "due_at": due, "bot_id": r.bot_id.0}),
    )?;
    Ok(Some(ticket.id))
}

impl Collab {
    /// Every active routine due by the store's clock, or owing a run, each in its own write.
    pub fn run_due_routines(&self) -> Result<RoutineReport, CollabError> {
        let now = self.store().now();
        let due = self.store().read(|tx| tx.due_routines(now, TICK_BATCH))?;
        let mut report = RoutineReport::default();
        for id in due {
            let res = self
                .store()
                .write(|tx| look_at(tx, id, tx.now(), &mut report));
            if let Err(e) = res {
                tracing::warn!(routine = id, error = %e, "a routine's due time failed; tried again next tick");
            }
        }
        Ok(report)
    }

    /// The person's Run now: a run for this moment, the schedule left as it is. Under a hold
    /// it is refused (`409 held`); while the last run is still going, `409 run_going`.
    pub fn run_routine_now(&self, id: i64) -> Result<RoutineView, CollabError> {
        self.store().write(|tx| {
            let r = tx.claim_routine(id)?;
            if let Some(why) = gone(tx, &r)? {
                return Ok(Err(CollabError::conflict(
                    "archived",
                    match why {
                        "bot_archived" => "its Bot is archived",
                        _ => "its Bot is no longer in its conversation",
                    },
                )));
            }
            let holds = holds_over(tx, &r)?;
            if !holds.is_empty() {
                return Ok(Err(CollabError::conflict(
                    "held",
                    format!(
                        "a stop holds this routine's Bot ({}); lift it first",
                        crate::holds::log::ids(&holds)
                    ),
                )));
            }
            if run_going(tx, &r)? {
                return Ok(Err(CollabError::conflict(
                    "run_going",
                    "its last run is still going",
                )));
            }
            let now = tx.now();
            tx.edit_routine(
                r.id,
                &RoutineEdit {
                    last_run_at: Some(now),
                    owed_due_at: Some(None),
                    ..RoutineEdit::default()
                },
            )?;
            open_run(tx, &r, now)?;
            Ok(Ok(super::view(tx, tx.routine(id)?)?))
        })?
    }
}
