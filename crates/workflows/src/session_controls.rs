//! The session's own controls over the pause latch: Continue (lift the latch, force a drive)
//! and Abandon (stop live work, end the interrupted turn honestly, cancel the bound workflow
//! through its domain path, and only then lift the latch).

use crate::lightloop::machine::{self, LoopEvent};
use crate::service::apply_in_tx;
use crate::slot::WorkflowSlot;
use crate::{WorkflowError, Workflows};
use serde::Serialize;
use troupe_collab::CollabError;
use troupe_core::drive::RootState;
use troupe_core::message::{Finish, Origin, Part, Role};
use troupe_core::pause::PauseReason;
use troupe_core::run::RunStatus;
use troupe_core::{BotId, MessageId, RunId, SessionId, ThreadId};
use troupe_engine::{DriveOutcome, StopMode};
use troupe_store::{NewMessage, StoreError, TaskStatus, Tx};

/// What Continue did.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct ContinueReport {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// A latch was in place and is now lifted.
    pub latch_cleared: bool,
    /// What the forced drive did (`started`, or `not_handled` with why: `running`, `no_work`, …).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub drive: DriveOutcome,
    /// The session was paused because its last turn failed and nothing else waited: that turn
    /// is picked up again, as `POST /v1/turns/{id}/continue` would (its id).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub continued_turn: Option<RunId>,
}

/// What Abandon changed; a repeat reports nothing changed.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct AbandonReport {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// The live turn that was stopped.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub stopped_run_id: Option<RunId>,
    /// The reply that now ends the interrupted task with an error saying it was abandoned.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub terminalized_message_id: Option<MessageId>,
    /// The workflow cancelled through its own cancel path (`lightloop`, `blueprint_loop` or `lattice`).
    pub workflow_cancelled: Option<String>,
    /// Child tasks of the session's Bot that were still queued or running, now cancelled.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub cancelled_tasks: Vec<troupe_store::TaskId>,
    pub latch_cleared: bool,
    pub changed: bool,
}

/// What Abandon finds before it acts.
#[derive(Clone, Debug, PartialEq)]
pub struct AbandonFacts {
    pub running: bool,
    /// The latest task has no terminal reply (a breakpoint).
    pub open_task: bool,
    pub slot: Option<WorkflowSlot>,
    /// An active BlueprintLoop executes in this session.
    pub blueprint_loop: Option<troupe_core::blueprint_loop::BlueprintLoopId>,
    /// The session's Bot has child tasks queued or running.
    pub child_tasks: bool,
    pub latched: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbandonStep {
    StopLiveWork,
    TerminalizeTurn,
    CancelLightLoop,
    CancelBlueprintLoop(troupe_core::blueprint_loop::BlueprintLoopId),
    /// The exact Run the Lattice slot names (LAT-15).
    CancelLatticeRun(troupe_core::LatticeRunId),
    /// Delegated work stops with the abandoned work.
    CancelChildTasks,
    ClearLatch,
}

/// Abandon's steps, in the only order that is safe: the latch goes last, so the drive a
/// stopped turn requests on release cannot restart the work being abandoned. Plan has no
/// domain state to cancel; a kind this build does not know is left as stored.
pub fn abandon_plan(f: &AbandonFacts) -> Vec<AbandonStep> {
    let mut steps = Vec::new();
    if f.running {
        steps.push(AbandonStep::StopLiveWork);
    }
    if f.running || f.open_task {
        steps.push(AbandonStep::TerminalizeTurn);
    }
    if matches!(f.slot, Some(WorkflowSlot::LightLoop(_))) {
        steps.push(AbandonStep::CancelLightLoop);
    }
    if let Some(WorkflowSlot::Lattice(l)) = &f.slot {
        // The Run's own loop is cancelled with it.
        steps.push(AbandonStep::CancelLatticeRun(l.run_id));
    } else if let Some(id) = f.blueprint_loop {
        steps.push(AbandonStep::CancelBlueprintLoop(id));
    }
    if f.child_tasks {
        steps.push(AbandonStep::CancelChildTasks);
    }
    // Stopping writes the `aborted` latch, which must be lifted as well.
    if f.latched || f.running {
        steps.push(AbandonStep::ClearLatch);
    }
    steps
}

const ABANDONED: &str = "abandoned: the person abandoned this task before it finished";

/// End the latest open task with an error reply. Returns the message that now ends it.
fn terminalize(tx: &mut Tx<'_>, thread: ThreadId) -> Result<Option<MessageId>, StoreError> {
    let RootState::Open(root) = tx.root_state(thread)? else {
        return Ok(None);
    };
    let tail = tx.latest_in_root(root)?;
    if let Some(t) = &tail
        && t.role == Role::Assistant
        && t.finish == Some(Finish::Interrupted)
    {
        // The breakpoint itself becomes the honest end: its text stays, it now reads as failed.
        tx.set_finish(t.id, Finish::Error, Some(ABANDONED))?;
        return Ok(Some(t.id));
    }
    let m = tx.insert_message(&NewMessage {
        thread_id: thread,
        role: Role::Assistant,
        origin: Origin::System("abandon".into()),
        is_root: false,
        root_id: Some(root),
        run_id: None,
        parts: vec![Part::text("(abandoned before a reply was finished)").hidden()],
        finish: Some(Finish::Error),
        error: Some(ABANDONED.into()),
        delivery_key: None,
        metadata: None,
    })?;
    Ok(Some(m.id))
}

impl Workflows {
    /// Lift the latch and force a drive. A running session is never driven: the outcome says so.
    pub async fn continue_session(
        &self,
        session: SessionId,
    ) -> Result<ContinueReport, WorkflowError> {
        self.continue_member(session, None).await
    }

    /// Continue one Bot's work in a conversation: a direct's Bot (`bot` may be left out), or a
    /// member of a group or Bot↔Bot direct, whose threads pause each on its own.
    pub async fn continue_member(
        &self,
        session: SessionId,
        bot: Option<BotId>,
    ) -> Result<ContinueReport, WorkflowError> {
        let thread = self.collab.control_thread(session, bot)?;
        // Continue is the person's word to the Bot: it lifts the stops a line would, and work
        // another stop still covers stays held (409 held).
        self.collab.go_on_by_person(thread).await?;
        let before = self.store().read(|tx| tx.thread(thread))?;
        // Continue is the person's decision to go on: a loop its guard paused gets one more.
        self.store()
            .write(|tx| crate::guard::resume_guard(tx, thread))?;
        let mut drive = self.engine().continue_thread(thread).await?;
        let no_work = DriveOutcome::NotHandled {
            refusal: troupe_core::drive::DriveRefusal::NoWork,
        };
        // A forced drive skips policy discovery; a workflow whose only driver is its
        // continuation policy (a Light Loop's claim awaiting its reviewer) would then not
        // resume. With the latch lifted, an ordinary drive asks the policies.
        if drive == no_work {
            drive = self
                .engine()
                .request_drive(thread, "continue", false)
                .await?;
        }
        // A failed turn closed its task and the gate keeps policies off an errored reply
        // (K-7), so the drive finds nothing: the person's Continue means "try that again".
        let mut continued_turn = None;
        if drive == no_work
            && before.paused.as_ref().map(|p| p.reason) == Some(PauseReason::Failed)
            && let Some(last) = self.store().read(|tx| tx.runs_for_thread(thread, 1))?.pop()
            && last.status == RunStatus::Failed
        {
            match self.collab.continue_turn(last.id).await {
                Ok(_) => continued_turn = Some(last.id),
                // Not a Bot's turn in a conversation (an older run): nothing to pick up.
                Err(CollabError::Invalid(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(ContinueReport {
            session_id: session,
            latch_cleared: before.paused.is_some(),
            drive,
            continued_turn,
        })
    }

    /// Abandon the session's interrupted or live work. Idempotent; reports what it changed.
    pub async fn abandon(&self, session: SessionId) -> Result<AbandonReport, WorkflowError> {
        self.abandon_member(session, None).await
    }

    /// Abandon one Bot's interrupted or live work in a conversation (as `continue_member`).
    pub async fn abandon_member(
        &self,
        session: SessionId,
        bot: Option<BotId>,
    ) -> Result<AbandonReport, WorkflowError> {
        let thread = self.collab.control_thread(session, bot)?;
        let facts = self.store().read(|tx| {
            let t = tx.thread(thread)?;
            Ok(AbandonFacts {
                running: t.lease.holder.is_some(),
                open_task: matches!(tx.root_state(thread)?, RootState::Open(_)),
                slot: WorkflowSlot::of(t.workflow.as_ref()),
                blueprint_loop: tx.active_loop_of_thread(thread)?.map(|l| l.id),
                child_tasks: !tx
                    .tasks_of_parent(thread, &[TaskStatus::Queued, TaskStatus::Running], u32::MAX)?
                    .is_empty(),
                latched: t.paused.is_some(),
            })
        })?;
        let facts = AbandonFacts {
            running: facts.running || self.engine().is_running(thread),
            ..facts
        };
        let mut report = AbandonReport {
            session_id: session,
            stopped_run_id: None,
            terminalized_message_id: None,
            workflow_cancelled: None,
            cancelled_tasks: Vec::new(),
            latch_cleared: false,
            changed: false,
        };
        for step in abandon_plan(&facts) {
            match step {
                AbandonStep::StopLiveWork => {
                    match self.engine().stop(thread, StopMode::User).await {
                        Ok(run) => report.stopped_run_id = Some(run.id),
                        Err(troupe_engine::EngineError::NotRunning(_)) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                AbandonStep::TerminalizeTurn => {
                    report.terminalized_message_id =
                        self.store().write(|tx| terminalize(tx, thread))?;
                }
                AbandonStep::CancelLightLoop => {
                    report.workflow_cancelled = self.cancel_light_loop(thread).await?;
                }
                AbandonStep::CancelBlueprintLoop(id) => {
                    let (_, changed) = self.cancel_blueprint_loop(id).await?;
                    if changed {
                        report.workflow_cancelled = Some("blueprint_loop".into());
                    }
                }
                AbandonStep::CancelLatticeRun(run) => {
                    if self
                        .cancel_lattice(run, troupe_core::lattice::StatusReason::Abandoned)
                        .await?
                    {
                        report.workflow_cancelled = Some("lattice".into());
                    }
                }
                AbandonStep::CancelChildTasks => {
                    report.cancelled_tasks = self.cancel_child_tasks(thread).await?;
                }
                AbandonStep::ClearLatch => {
                    report.latch_cleared = self.store().write(|tx| tx.clear_pause(thread))?;
                }
            }
        }
        report.changed = report.stopped_run_id.is_some()
            || !report.cancelled_tasks.is_empty()
            || report.terminalized_message_id.is_some()
            || report.workflow_cancelled.is_some()
            || report.latch_cleared;
        Ok(report)
    }

    /// The Light Loop's domain cancel: cancel its reviewer's task, then the single terminal path
    /// (`cancelled`). Idempotent: returns `None` when no Light Loop was active.
    pub async fn cancel_light_loop(
        &self,
        thread: ThreadId,
    ) -> Result<Option<String>, WorkflowError> {
        let slot = self.store().read(|tx| tx.thread(thread))?.workflow;
        if let Some(reviewer) = WorkflowSlot::of(slot.as_ref())
            .as_ref()
            .and_then(WorkflowSlot::light_loop)
            .and_then(|ll| ll.stop_request.as_ref())
            .and_then(|s| s.reviewer_thread_id)
        {
            self.stop_work(reviewer).await;
        }
        if self.engine().is_running(thread) {
            self.stop_quietly(thread).await;
        }
        let cancelled = self.store().write(|tx| {
            let t = tx.thread(thread)?;
            let Some(WorkflowSlot::LightLoop(ll)) = WorkflowSlot::of(t.workflow.as_ref()) else {
                return Ok(None);
            };
            let step = machine::step(Some(&ll), LoopEvent::Cancel)
                .map_err(|e| StoreError::Invalid(e.to_string()))?;
            apply_in_tx(tx, thread, &ll.instructions, &step.effects)?;
            tx.set_workflow(thread, None)?;
            Ok(Some(crate::slot::LIGHTLOOP.to_string()))
        })?;
        Ok(cancelled)
    }
}
