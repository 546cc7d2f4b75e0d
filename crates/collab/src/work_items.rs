//! Work items (C §1): every run of a Bot's thread is a segment of one work item — its desk in
//! a conversation, or its work on a job (a thread per Bot × job, in the job's folder). The
//! segment row is written in the run's start, and the work item settles in the run's ending
//! write, whichever way the run ends (its loop, a stop, recovery, shutdown: WI-12). Job
//! segments start only under the Bot's work slots, head of its queue first (WI-3…6).

use crate::error::CollabError;
use serde::Serialize;
use troupe_core::run::{EndReason, RunStatus};
use troupe_core::work_item::{
    Admit, QueueEntry, SegmentOutcome, Settle, WaitingOn, WorkMode, WorkState, admit,
    parallel_limit, settle,
};
use troupe_core::{BotId, PlanId, RunId, SessionId, SessionMessageId, WorkItemId};
use troupe_engine::extension::{Admission, AdmissionCheck, AdmissionContext, RunObserver};
use troupe_store::{NewSegment, NewWorkItem, RunRecord, StoreError, Tx, WorkItemRecord};

/// Writes segments and settles work items inside the kernel's run start and end writes.
pub struct WorkItems;

/// Whether the person's line was read (by a model or the word lists) as only asking where
/// work stands.
fn asks_where_work_stands(tx: &Tx<'_>, line: SessionMessageId) -> Result<bool, StoreError> {
    Ok(tx
        .line_readings(line)?
        .iter()
        .filter(|r| r.kind == "user")
        .any(|r| r.reading.get("status_question") == Some(&serde_json::Value::Bool(true))))
}

impl RunObserver for WorkItems {
    fn on_run_started(&self, tx: &mut Tx<'_>, run: &RunRecord) -> Result<(), StoreError> {
        let Some(item) = item_for(tx, run)? else {
            return Ok(());
        };
        let (session, candidates) = match item.mode {
            WorkMode::Desk => {
                let session = item.session_id.ok_or_else(|| corrupt(&item))?;
                (session, desk_candidates(tx, session)?)
            }
            WorkMode::Work => {
                let plan = item.plan_id.ok_or_else(|| corrupt(&item))?;
                let home = tx.plan(plan)?.home_session_id;
                let session = item.speaks_in.or(home).ok_or_else(|| corrupt(&item))?;
                (session, Vec::new())
            }
        };
        // The newest line handed to this work: delivered to its thread, or by a desk.
        if item.trigger_line_id.is_some() {
            tx.clear_work_trigger_line(item.id)?;
        }
        let trigger = item
            .trigger_line_id
            .max(tx.newest_line_delivered_to(run.thread_id)?);
        // Admitted under a hold only for a read-only answer (HOLD-R1): the segment says so,
        // the one kind the hold trigger lets live.
        let readonly = !crate::holds::holds_over(tx, run.thread_id)?.is_empty();
        tx.open_segment(&NewSegment {
            run_id: run.id,
            bot_id: item.bot_id,
            session_id: session,
            trigger_line_id: trigger,
            work_item_id: item.id,
            mode: item.mode,
            candidates,
            readonly,
        })?;
        // A desk acts on what the reader made of its line (C §2: new, done in place, …).
        if item.mode == WorkMode::Desk {
            let verdict = match trigger {
                // SQ-2, LR-6: a status question is done in place, however filing read it:
                // what the Bot looks up for it opens no job.
                Some(t) if asks_where_work_stands(tx, t)? => "done_in_place",
                Some(t) => tx
                    .filing_reading(t)?
                    .and_then(|r| r.filing)
                    .map_or("unread", |f| f.verdict()),
                None => "unread",
            };
            tx.set_segment_verdict(run.id, verdict)?;
        }
        // A delegation wait outlives the segments that run meanwhile (only its answer or a
        // cancel ends it: DEL-25); a wait on the person ends with their line starting this.
        let keep = item
            .waiting_on
            .clone()
            .filter(|w| matches!(w, WaitingOn::Delegation { .. }));
        tx.set_work_state(item.id, WorkState::Running, keep.as_ref())?;
        Ok(())
    }

    fn on_run_ended(&self, tx: &mut Tx<'_>, run: &RunRecord) -> Result<(), StoreError> {
        let Some(seg) = tx.segment_work(run.id)? else {
            return Ok(());
        };
        let item = tx.work_item(seg.work_item_id)?;
        let unread_mail = tx.has_waking_item(run.thread_id)?;
        let delegation_wait = matches!(item.waiting_on, Some(WaitingOn::Delegation { .. }));
        let state = settle(&Settle {
            mode: item.mode,
            outcome: outcome_of(run),
            unread_mail,
            delegation_wait,
        });
        // An archived Bot's work is closed for good (DEL-36), however its last run ended.
        let state = if tx.bot(item.bot_id)?.archived {
            WorkState::Closed
        } else {
            state
        };
        let waiting = match state {
            WorkState::Waiting => item.waiting_on.clone(),
            WorkState::Blocked => Some(WaitingOn::User),
            _ => None,
        };
        // WQ-8: this segment went on without the answer an earlier one asked for; that card
        // takes none now (what is still open when the work closes closes with it, in the store).
        tx.close_work_questions(item.id, Some(run.id), "superseded")?;
        tx.set_work_state(item.id, state, waiting.as_ref())?;
        Ok(())
    }
}

fn corrupt(item: &WorkItemRecord) -> StoreError {
    StoreError::Corrupt(format!(
        "work item {} lacks its conversation or job",
        item.id
    ))
}

/// The thread's work item; a conversation's thread gets its desk item on its first run.
fn item_for(tx: &mut Tx<'_>, run: &RunRecord) -> Result<Option<WorkItemRecord>, StoreError> {
    if let Some(item) = tx.work_item_of_thread(run.thread_id)? {
        return Ok(Some(item));
    }
    let Some((session, bot)) = tx.thread_session(run.thread_id)? else {
        return Ok(None);
    };
    if let Some(desk) = tx.desk_item(bot, session)? {
        return Ok(Some(desk));
    }
    tx.create_work_item(&NewWorkItem {
        bot_id: bot,
        mode: WorkMode::Desk,
        plan_id: None,
        session_id: Some(session),
        thread_id: run.thread_id,
        speaks_in: Some(session),
    })
    .map(Some)
}

/// The jobs a desk may choose among, frozen at admission (DS-3): the conversation's jobs that
/// are not dormant (C §3's candidate set, as far as this conversation's records reach).
fn desk_candidates(tx: &Tx<'_>, session: SessionId) -> Result<Vec<PlanId>, StoreError> {
    Ok(tx
        .plans_of_session(session, false)?
        .into_iter()
        .map(|p| p.id)
        .collect())
}

/// How settlement reads a run's end.
pub(crate) fn outcome_of(run: &RunRecord) -> SegmentOutcome {
    match (&run.status, &run.end_reason) {
        (RunStatus::Stopped, _) => SegmentOutcome::Stopped,
        (RunStatus::Interrupted, _) => SegmentOutcome::CutOff,
        (RunStatus::Failed, _) => SegmentOutcome::Failed,
        (_, Some(r)) => SegmentOutcome::Ended {
            code: r.code().to_string(),
        },
        (_, None) => SegmentOutcome::Ended {
            code: EndReason::Completed.code().to_string(),
        },
    }
}

/// Where a work item stands among its Bot's work, as WI-5 shows it: `None` when it may start
/// (or is a desk, which takes no slot).
pub(crate) fn queue_position(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
) -> Result<Option<usize>, StoreError> {
    if item.mode == WorkMode::Desk {
        return Ok(None);
    }
    let live = tx.live_work_segments(item.bot_id)?;
    let limit = parallel_limit(tx.bot_parallel_limit(item.bot_id)?);
    let mut queue: Vec<QueueEntry> = tx
        .queued_work(item.bot_id)?
        .into_iter()
        .map(|(id, priority, at)| QueueEntry {
            work_item: id,
            priority,
            order: at,
        })
        .collect();
    if !queue.iter().any(|e| e.work_item == item.id) {
        queue.push(QueueEntry {
            work_item: item.id,
            priority: item.priority,
            order: tx.now(),
        });
    }
    Ok(match admit(live, limit, &queue, item.id) {
        Admit::Start => None,
        Admit::Queued { position } => Some(position),
    })
}

/// WI-3/4/6: a job segment starts only in a free work slot of its Bot, head of its queue
/// first; desks and threads that are not a Bot's work pass.
pub struct WorkSlots;

impl AdmissionCheck for WorkSlots {
    fn name(&self) -> &str {
        "work_slots"
    }
    fn check(&self, ctx: &AdmissionContext<'_>) -> Admission {
        if !crate::tools::in_conversation(ctx.thread) {
            return Admission::Admit;
        }
        let verdict = ctx.store.read(|tx| {
            let Some(item) = tx.work_item_of_thread(ctx.thread.id)? else {
                return Ok(None);
            };
            if item.mode == WorkMode::Desk || item.state == WorkState::Running {
                return Ok(None);
            }
            // WI-7, PLAN-D8: a dormant job's work does not start (a person's line filed under
            // it, or their edit, wakes it first).
            if let Some(plan) = item.plan_id
                && tx.plan(plan)?.is_dormant()
            {
                return Ok(Some(None));
            }
            queue_position(tx, &item).map(|p| p.map(Some))
        });
        match verdict {
            Ok(None) => Admission::Admit,
            Ok(Some(None)) => Admission::Refuse("its job is dormant".into()),
            Ok(Some(Some(position))) => Admission::Queue(format!("Queued, at position {position}")),
            // A failed read must not start work past its slots; the wake is retried.
            Err(e) => Admission::Queue(format!("work slots could not be read: {e}")),
        }
    }
}

/// One Bot's work item as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct WorkItemView {
    pub id: WorkItemId,
    pub bot_id: BotId,
    /// desk | work
    pub mode: String,
    pub plan_id: Option<PlanId>,
    pub plan_name: Option<String>,
    /// A desk's conversation.
    pub session_id: Option<SessionId>,
    /// running | queued | idle | waiting | blocked | needs_attention | closed
    pub state: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub waiting_on: Option<WaitingOn>,
    /// "Queued, at position N" (WI-5): set while it waits for a work slot.
    pub queue_position: Option<usize>,
    /// Its live segment.
    pub turn_id: Option<RunId>,
    pub updated_at: i64,
}

fn view(tx: &Tx<'_>, item: &WorkItemRecord) -> Result<WorkItemView, StoreError> {
    let plan_name = match item.plan_id {
        Some(p) => Some(tx.plan(p)?.name),
        None => None,
    };
    let queue_position = match item.state {
        WorkState::Queued => queue_position(tx, item)?,
        _ => None,
    };
    Ok(WorkItemView {
        id: item.id,
        bot_id: item.bot_id,
        mode: item.mode.as_str().into(),
        plan_id: item.plan_id,
        plan_name,
        session_id: item.session_id,
        state: item.state.as_str().into(),
        waiting_on: item.waiting_on.clone(),
        queue_position,
        turn_id: tx.live_segment_of(item.id)?,
        updated_at: item.updated_at,
    })
}

impl crate::Collab {
    /// A Bot's work items, desks and jobs, oldest first.
    pub fn work_items_of_bot(&self, bot: BotId) -> Result<Vec<WorkItemView>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.bot(bot)?;
            let items = tx.work_items_of_bot(bot)?;
            items.iter().map(|i| view(tx, i)).collect()
        })?)
    }

    pub fn work_item(&self, id: WorkItemId) -> Result<WorkItemView, CollabError> {
        Ok(self.store().read(|tx| view(tx, &tx.work_item(id)?))?)
    }
}

/// What `POST /v1/turns/:id/continue` did (WI-13, DS-18).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct ContinueOutcome {
    pub work_item_id: WorkItemId,
    /// No work slot was free: it waits, at `position`, and starts when one frees up.
    pub queued: bool,
    pub position: Option<usize>,
}

impl crate::Collab {
    /// Continue a segment that was cut off (interrupted, failed, or stopped): its work item
    /// runs again, limited only by one live segment per Bot and job and by its work slots.
    pub async fn continue_turn(&self, run: RunId) -> Result<ContinueOutcome, CollabError> {
        let (item, position) = self.store().read(|tx| {
            let rec = tx.run(run)?;
            let Some(seg) = tx.segment_work(run)? else {
                return Ok(Err(CollabError::invalid(format!(
                    "turn {run} is not a Bot's work in a conversation"
                ))));
            };
            let item = tx.work_item(seg.work_item_id)?;
            if let Some(live) = tx.live_segment_of(item.id)? {
                return Ok(Err(CollabError::conflict(
                    "already_working",
                    format!("this work is already running (turn {live})"),
                )));
            }
            if matches!(rec.status, RunStatus::Completed | RunStatus::Running) {
                return Ok(Err(CollabError::conflict(
                    "not_cut_off",
                    format!(
                        "turn {run} ended {}; only a cut-off turn is continued",
                        rec.status.as_str()
                    ),
                )));
            }
            let position = queue_position(tx, &item)?;
            Ok(Ok((item, position)))
        })??;
        // Continue is the person's word on this work: it lifts what a line to the Bot about
        // it would; what still covers it keeps it held (HOLD-L2, W1).
        let (lifted, still) = self
            .store()
            .write(|tx| crate::holds::lines::lift_by_person_act(tx, item.thread_id))?;
        if !still.is_empty() {
            return Err(crate::holds::lines::held(&format!("turn {run}"), &still));
        }
        self.drive_lifted(&lifted).await;
        // The person's word: the supervisor's pick-up budget counts from here (SV-7).
        self.store().write(|tx| tx.set_user_word(item.id))?;
        if position.is_some() {
            self.store().write(|tx| {
                let waiting = item.waiting_on.clone();
                tx.set_work_state(item.id, WorkState::Queued, waiting.as_ref())
            })?;
        }
        // Refused for want of a slot, the wake is kept and retried when a slot frees up.
        let outcome = self.engine().continue_thread(item.thread_id).await?;
        if matches!(
            outcome,
            troupe_engine::DriveOutcome::NotHandled {
                refusal: troupe_core::drive::DriveRefusal::NoWork
            }
        ) {
            // A failed turn closed its task, so there is nothing to resume: the Continue
            // becomes a Bot-only task to pick the work up where it failed (as SV-7's pick-up).
            self.store().write(|tx| {
                let why = tx
                    .run(run)?
                    .end_reason
                    .map_or_else(|| "it ended early".to_string(), |r| r.to_string());
                let d = troupe_core::inbox::Delivery {
                    origin: troupe_core::message::Origin::System("continue".into()),
                    visible: false,
                    ..troupe_core::inbox::Delivery::user_task(format!(
                        "The person pressed Continue on this work. Your last turn did not \
                         finish ({why}). Pick the work up where it stopped."
                    ))
                    .with_key(format!("continue:{}", run.0))
                };
                tx.deliver(item.thread_id, &d)?;
                Ok(())
            })?;
            self.engine()
                .request_drive(item.thread_id, "continue", true)
                .await?;
        }
        Ok(ContinueOutcome {
            work_item_id: item.id,
            queued: position.is_some(),
            position,
        })
    }
}
