//! Check-backs end to end (CB-1…9, DEL-24/26): the `check_back` tool a Bot books one with, the
//! due-time scan that fires or clears them, and the line its situation shows. The rules are
//! `troupe_core::check_back`'s; this module binds them to work items and the inbox.
//!
//! A check-back wakes only the Bot that booked it, on the work item's own thread, with a hidden
//! task: nothing is written in the conversation (CB-1). Delegation waits live on the work item,
//! not in `check_backs`, so the scan can neither fire nor replace one (DEL-24).

use crate::{Collab, CollabError};
use async_trait::async_trait;
use serde::Serialize;
use serde_json::json;
use std::sync::Arc;
use troupe_core::ball::{BallWhy, Holder};
use troupe_core::check_back::{
    CheckBackState, DueAction, check_booking, dedupe_key, due_action, fire_key, fired_line,
    parse_check_back_args,
};
use troupe_core::external_job::{note_names_polled_job, polled_job_refusal};
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::time::iso_utc;
use troupe_core::work_item::{PRIORITY_CHECK_BACK, WaitingOn, WorkState};
use troupe_core::{CheckBackId, ThreadId, TicketId, WorkItemId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;
use troupe_store::{
    BookingScope, CheckBackFilter, CheckBackRecord, NewCheckBack, StoreError, Tx, WorkItemRecord,
    WorkRef,
};

/// Due check-backs one scan handles; the rest wait for the next tick.
const SCAN_BATCH: u32 = 100;

/// What one scan did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FireReport {
    /// Fired: a hidden task is on its work item's thread.
    pub fired: Vec<CheckBackId>,
    /// Came due for a Bot archived or gone from the conversation: woke nobody.
    pub cleared: Vec<CheckBackId>,
    /// Came due under a hold: set aside until it lifts.
    pub set_aside: Vec<CheckBackId>,
    /// Came due while its ticket waits on the user: voided, woke nobody (EJ8).
    pub voided: Vec<CheckBackId>,
}

impl Collab {
    /// Fire or clear every pending check-back that is due by the store's clock, in one write.
    /// One that fell due while the daemon was down is simply due now and fires once: it is
    /// marked fired in the write that delivers it, and its delivery key makes a repeat
    /// deliver nothing (CB-4).
    pub fn fire_due_check_backs(&self) -> Result<FireReport, CollabError> {
        Ok(self.store().write(|tx| {
            let now = tx.now();
            let mut report = FireReport::default();
            for due in tx.due_check_backs(now, SCAN_BATCH)? {
                // Held against another node's scan, then judged on what it holds now.
                let c = tx.claim_check_back(due.id)?;
                let gone = tx.bot(c.bot_id)?.archived
                    || !tx.session(c.session_id)?.bot_ids.contains(&c.bot_id);
                match due_action(c.state, c.due_at, now, gone) {
                    DueAction::NotYet => {}
                    DueAction::Clear => {
                        tx.set_check_back_state(c.id, CheckBackState::Cleared)?;
                        report.cleared.push(c.id);
                    }
                    DueAction::Fire => {
                        // Under a hold it is set aside, not fired: it returns on the lift and,
                        // overdue by then, fires once (HOLD-C1/C2, S-CB-5).
                        if crate::holds::set_aside_if_held(tx, &c)? {
                            report.set_aside.push(c.id);
                            continue;
                        }
                        // EJ8: what the user says next wakes the Bot anyway.
                        let item = tx.work_item(c.work_item_id)?;
                        if waits_on_user(tx, &item)? {
                            void_waiting_on_user(tx, &c)?;
                            report.voided.push(c.id);
                            continue;
                        }
                        fire(tx, &c)?;
                        report.fired.push(c.id);
                    }
                }
            }
            Ok(report)
        })?)
    }

    /// Bookings matching `filter`, newest first.
    pub fn check_backs(
        &self,
        filter: &CheckBackFilter,
        limit: u32,
    ) -> Result<Vec<CheckBackRecord>, CollabError> {
        Ok(self.store().read(|tx| tx.check_backs(filter, limit))?)
    }
}

/// CB-1/3/9: the private line on the work item's thread (heard by a live segment there, else
/// it starts one), the item's next segment speaking where it was booked, at priority 4.
fn fire(tx: &mut Tx<'_>, c: &CheckBackRecord) -> Result<(), StoreError> {
    let item = tx.work_item(c.work_item_id)?;
    let thread = item.thread_id;
    let running = tx.thread(thread)?.lease.holder.is_some();
    let d = Delivery {
        origin: Origin::Timer(fire_key(c.id)),
        visible: false,
        ..Delivery::user_task(fired_line(&c.note))
            .with_mode(if running {
                InboxMode::Steer
            } else {
                InboxMode::Task
            })
            .with_priority(Priority::OWN_TIMER)
            .with_key(fire_key(c.id))
    };
    tx.deliver(thread, &d)?;
    tx.set_work_mail(item.id, c.session_id, PRIORITY_CHECK_BACK)?;
    tx.set_check_back_state(c.id, CheckBackState::Fired)?;
    tx.wake_after_commit(thread);
    Ok(())
}

/// CB-6: the situation's line about the work item's own pending check-back.
pub(crate) fn pending_note(
    tx: &Tx<'_>,
    work_item: WorkItemId,
) -> Result<Option<String>, StoreError> {
    Ok(tx.pending_check_back(work_item)?.map(|c| {
        format!(
            "You have a check-back booked for {}: {}",
            iso_utc(c.due_at),
            c.note
        )
    }))
}

/// The user holds the ball: the job is blocked, or waits on their word (CB, L6+).
fn blocked_on_user(state: WorkState, waiting_on: Option<&WaitingOn>) -> bool {
    state == WorkState::Blocked || waiting_on == Some(&WaitingOn::User)
}

/// EJ8: the work waits on the user — its own state, or its ticket's ball: an answer, a blocked
/// item, the user's word on a hand-over, a ceiling card. A stop is not this (CB-8): a held
/// ticket's check-back is set aside, not refused or voided.
fn waits_on_user(tx: &Tx<'_>, item: &WorkItemRecord) -> Result<bool, StoreError> {
    if blocked_on_user(item.state, item.waiting_on.as_ref()) {
        return Ok(true);
    }
    let Some(ticket) = item.ticket_id else {
        return Ok(false);
    };
    let Some(ticket) = tx.find_ticket(TicketId(ticket))? else {
        return Ok(false);
    };
    Ok(
        crate::tickets::ball::ball_of(tx, &ticket)?.is_some_and(|b| {
            b.holder == Holder::User
                && matches!(
                    b.why,
                    BallWhy::Question | BallWhy::Blocked | BallWhy::AwaitingWord | BallWhy::Ceiling
                )
        }),
    )
}

/// Void a due check-back whose ticket waits on the user, logged `check_back_voided`.
fn void_waiting_on_user(tx: &mut Tx<'_>, c: &CheckBackRecord) -> Result<(), StoreError> {
    tx.set_check_back_state(c.id, CheckBackState::Voided)?;
    if let Some(plan) = c.plan_id {
        let item = tx.work_item(c.work_item_id)?;
        tx.log_work(
            WorkRef {
                plan,
                ticket: item.ticket_id.map(TicketId),
                work_item: Some(item.id),
            },
            "check_back_voided",
            json!({"check_back_id": c.id, "reason": "ball_is_yours", "bot_id": c.bot_id}),
        )?;
    }
    Ok(())
}

/// EJ8: a note naming a job the app polls is refused: the app wakes the Bot when it settles.
fn names_polled_job(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
    thread: ThreadId,
    note: &str,
) -> Result<Option<String>, StoreError> {
    let polled: Vec<(String, String)> = tx
        .polled_jobs_for(item.plan_id, thread)?
        .into_iter()
        .map(|j| (j.id.to_string(), j.remote_id))
        .collect();
    Ok(note_names_polled_job(note, &polled).map(|id| polled_job_refusal(id).text))
}

struct CheckBack;

/// Why a booking was not made: an ordinary failed call the model can act on.
fn refused(code: &str, text: &str) -> StoreError {
    StoreError::Invalid(format!("{code}: {text}"))
}

#[async_trait]
impl ToolHandler for CheckBack {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args = match parse_check_back_args(arguments) {
            Ok(a) => a,
            Err(m) => return ToolReply::error(format!("invalid: {m}")),
        };
        let thread = ctx.thread.id;
        let run = ctx.run_id;
        let out = ctx.store.write(|tx| {
            let Some(item) = tx.work_item_of_thread(thread)? else {
                return Err(refused(
                    "no_work_item",
                    "this turn is not working on a job, so there is nothing to come back to",
                ));
            };
            // Where the segment speaks now; a job thread that has not spoken yet speaks where
            // its work came from.
            let session = match tx.thread_session(thread)? {
                Some((s, _)) => Some(s),
                None => item.speaks_in.or(item.session_id),
            };
            let Some(session) = session else {
                return Err(refused(
                    "no_conversation",
                    "this work speaks in no conversation yet, so a check-back could wake it nowhere",
                ));
            };
            let scope = match item.plan_id {
                Some(p) => BookingScope::Plan(p),
                None => BookingScope::WorkItem(item.id),
            };
            let booked_last_hour = tx.bookings_in_last_hour(scope, tx.now())?;
            let ball = waits_on_user(tx, &item)?;
            if let Err(r) = check_booking(&args, booked_last_hour, ball) {
                return Err(refused(r.code, &r.text));
            }
            if let Some(text) = names_polled_job(tx, &item, thread, &args.note)? {
                return Err(StoreError::Invalid(text));
            }
            let replaced = tx.pending_check_back(item.id)?.is_some();
            let booked = tx.book_check_back(&NewCheckBack {
                bot_id: item.bot_id,
                work_item_id: item.id,
                session_id: session,
                plan_id: item.plan_id,
                dedupe_key: dedupe_key(item.id),
                due_at: tx.now() + args.after_minutes * 60_000,
                note: args.note.clone(),
                booked_by_run_id: Some(run),
            })?;
            Ok((booked, replaced))
        });
        match out {
            Ok((booked, replaced)) => {
                let due = iso_utc(booked.due_at);
                // A desk's work (a direct, a workflow's thread) has no job to name.
                let place = if booked.plan_id.is_some() {
                    "on this job"
                } else {
                    "here"
                };
                let mut note = format!(
                    "Booked for {due} (in {} minutes): you will be woken {place} with \
                     \"{}\". Your turn goes on; end it when there is nothing more to do now.",
                    args.after_minutes,
                    fired_line(&booked.note)
                );
                if replaced {
                    note.push_str(&format!(" It replaces your pending check-back {place}."));
                }
                ToolReply::ok(
                    json!({"check_back_id": booked.id, "due_at": due, "replaced": replaced,
                           "note": note})
                    .to_string(),
                )
            }
            Err(StoreError::Invalid(m)) => ToolReply::error(m),
            Err(e) => ToolReply::error(format!("internal: {e}; nothing was booked")),
        }
    }
}

/// The `check_back` tool, for [`crate::tools::registrations`].
pub(crate) fn registration() -> ToolRegistration {
    ToolRegistration {
        owner: crate::tools::OWNER.into(),
        spec: ToolSpec {
            name: "check_back".into(),
            description: format!(
                "Book a one-time check-back on the job you are working on: after \
                 `after_minutes` ({} to {}, i.e. 5 minutes to 7 days) you are woken here, \
                 privately, with your note. A new booking replaces your pending one on this \
                 job; at most {} bookings per job in an hour. Not for waiting on the person: \
                 their answer wakes you by itself; nor for an external job the app polls: it \
                 wakes you when the job settles.",
                troupe_core::check_back::MIN_MINUTES,
                troupe_core::check_back::MAX_MINUTES,
                troupe_core::check_back::PER_HOUR_PER_JOB
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "after_minutes": {"type": "integer", "minimum": 5, "maximum": 10080,
                                      "description": "Whole minutes from now."},
                    "note": {"type": "string", "maxLength": 2000,
                             "description": "What you will check when you come back."}
                },
                "required": ["after_minutes", "note"],
                "additionalProperties": false
            }),
        },
        effectful: false,
        read_only: false,
        available: Arc::new(crate::tools::outside_workflow),
        handler: Arc::new(CheckBack),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use troupe_core::conversation::SessionKind;
    use troupe_core::thread::AgentBinding;
    use troupe_core::thread::Interaction;
    use troupe_core::work_item::WorkMode;
    use troupe_core::{DelegationId, ManualClock};
    use troupe_store::{NewBot, NewThread, NewWorkItem};

    #[test]
    fn the_situation_names_the_pending_check_back() {
        let store = troupe_store::testing::open(Arc::new(ManualClock::new(1_760_000_000_000)));
        let note =
            |store: &troupe_store::Store, item| store.read(|tx| pending_note(tx, item)).unwrap();
        let (item, session, bot) = store
            .write(|tx| {
                let bot = tx
                    .create_bot(&NewBot {
                        name: "Alpha".into(),
                        persona: String::new(),
                        endpoint: None,
                        scripted: false,
                    })?
                    .id;
                let session = tx.create_session(SessionKind::Direct, "t", &[bot])?.id;
                let thread = tx.create_thread(&NewThread {
                    workspace_root: None,
                    parent_id: None,
                    title: "t".into(),
                    agent: AgentBinding::new("Alpha", "be brief"),
                    workspace: "/tmp".into(),
                    interaction: Interaction::Interactive,
                })?;
                let item = tx.create_work_item(&NewWorkItem {
                    bot_id: bot,
                    mode: WorkMode::Desk,
                    plan_id: None,
                    session_id: Some(session),
                    thread_id: thread.id,
                    speaks_in: Some(session),
                })?;
                Ok((item.id, session, bot))
            })
            .unwrap();
        assert_eq!(note(&store, item), None);
        let booked = store
            .write(|tx| {
                tx.book_check_back(&NewCheckBack {
                    bot_id: bot,
                    work_item_id: item,
                    session_id: session,
                    plan_id: None,
                    dedupe_key: dedupe_key(item),
                    due_at: tx.now() + 30 * 60_000,
                    note: "verify render".into(),
                    booked_by_run_id: None,
                })
            })
            .unwrap();
        assert_eq!(
            note(&store, item).unwrap(),
            format!(
                "You have a check-back booked for {}: verify render",
                iso_utc(booked.due_at)
            )
        );
        store
            .write(|tx| tx.set_check_back_state(booked.id, CheckBackState::Fired))
            .unwrap();
        assert_eq!(note(&store, item), None, "only a pending one is shown");
    }

    #[test]
    fn the_ball_is_the_users_only_when_blocked_or_waiting_on_them() {
        assert!(blocked_on_user(WorkState::Blocked, None));
        assert!(blocked_on_user(WorkState::Waiting, Some(&WaitingOn::User)));
        let delegation = WaitingOn::Delegation {
            delegation_id: DelegationId(1),
        };
        assert!(!blocked_on_user(WorkState::Waiting, Some(&delegation)));
        assert!(!blocked_on_user(WorkState::Idle, None));
    }
}
