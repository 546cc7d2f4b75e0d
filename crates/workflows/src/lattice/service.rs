//! The person's requests on Lattice Runs (enable, disable, resume, approve, cancel), each under
//! the session's Lattice lock, each persisted before any live work is stopped, then reconciled
//! through the controller.

use super::controller::{self, Reason};
use super::persist::{self, Moves};
use super::tools::submit_approval;
use crate::slot::WorkflowSlot;
use crate::{WorkflowError, Workflows};
use serde::Serialize;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use troupe_core::lattice::{
    ActionSource, Event, LatticeRun, Mode, PathwayView, PromptType, RunStatus, StatusReason,
    SubmitRefusal, Submitted, WorkState, pathway,
};
use troupe_core::{LatticeRunId, SessionId, ThreadId};
use troupe_store::{StoreError, Tx};

/// A Run as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct LatticeView {
    #[serde(flatten)]
    pub run: LatticeRun,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// The Pathway split: history, the current Step, the editable future.
    pub split: PathwayView,
    /// It is the session's current Run.
    pub current: bool,
    /// The one action valid in its state.
    pub valid_action: String,
    pub pristine: bool,
}

/// What enabling Lattice asks for.
#[derive(Clone, Debug)]
pub struct EnableLattice {
    pub mode: Mode,
    pub max_model_calls: Option<u32>,
    pub goal: Option<String>,
}

/// One lock per session: the person's requests on its Runs do not interleave.
fn lock(thread: ThreadId) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<ThreadId, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(thread)
        .or_default()
        .clone()
}

fn conflict(code: &'static str, msg: impl Into<String>) -> WorkflowError {
    WorkflowError::conflict(code, msg)
}

/// Drop the Run's prompts and mail still queued in the session (nothing read them yet).
fn withdraw_queued(tx: &mut Tx<'_>, run: &LatticeRun) -> Result<usize, StoreError> {
    let prefix = format!("lattice:{}:", run.id.0);
    let ids: Vec<_> = tx
        .inbox(run.thread_id)?
        .into_iter()
        .filter(|i| {
            i.delivery_key
                .as_deref()
                .is_some_and(|k| k.starts_with(&prefix))
        })
        .map(|i| i.id)
        .collect();
    if ids.is_empty() {
        return Ok(0);
    }
    tx.drop_inbox_items(run.thread_id, &ids)
}

impl Workflows {
    fn lattice_view(&self, run: LatticeRun) -> Result<LatticeView, WorkflowError> {
        let (session, current) = self.store().read(|tx| {
            Ok((
                tx.thread_session(run.thread_id)?.map(|(s, _)| s),
                tx.peek_current_lattice_run(run.thread_id)?
                    .is_some_and(|c| c.id == run.id),
            ))
        })?;
        let session = session.ok_or_else(|| {
            WorkflowError::invalid(format!("thread {} belongs to no session", run.thread_id))
        })?;
        Ok(LatticeView {
            split: pathway::split(&run),
            valid_action: run.valid_action().to_string(),
            pristine: run.is_pristine(),
            session_id: session,
            current,
            run,
        })
    }

    pub fn lattice_current(
        &self,
        session: SessionId,
    ) -> Result<Option<LatticeView>, WorkflowError> {
        let thread = self.collab.direct_thread(session)?;
        match self
            .store()
            .read(|tx| tx.peek_current_lattice_run(thread))?
        {
            Some(run) => Ok(Some(self.lattice_view(run)?)),
            None => Ok(None),
        }
    }

    pub fn lattice_runs(
        &self,
        session: Option<SessionId>,
        limit: u32,
    ) -> Result<Vec<LatticeView>, WorkflowError> {
        let limit = limit.clamp(1, 200);
        let runs = match session {
            Some(s) => {
                let thread = self.collab.direct_thread(s)?;
                self.store()
                    .read(|tx| tx.lattice_runs_of_thread(thread, limit))?
            }
            None => self.store().read(|tx| tx.lattice_runs(limit))?,
        };
        runs.into_iter().map(|r| self.lattice_view(r)).collect()
    }

    pub fn lattice_run(&self, id: LatticeRunId) -> Result<LatticeView, WorkflowError> {
        let run = self.store().read(|tx| tx.lattice_run(id))?;
        self.lattice_view(run)
    }

    /// Enable Lattice (idle only): an active current Run takes the new mode and cap; a pristine
    /// Run the person left is replaced; any other paused Run needs an explicit resume; otherwise
    /// a new Run starts in clarifying (a given goal goes in as the person's task).
    pub(crate) async fn enable_lattice(
        &self,
        thread: ThreadId,
        req: EnableLattice,
    ) -> Result<bool, WorkflowError> {
        let guard = lock(thread);
        let _held = guard.lock().await;
        let engine = self.engine().clone();
        let goal = req
            .goal
            .as_deref()
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_string);
        let changed = self.store().write(|tx| {
            let t = tx.thread(thread)?;
            if t.lease.holder.is_some() || engine.is_running(thread) {
                return Ok(Err(conflict(
                    "session_running",
                    "the session is running; workflows change only while it is idle (stop it or wait)",
                )));
            }
            match WorkflowSlot::of(t.workflow.as_ref()) {
                None | Some(WorkflowSlot::Lattice(_)) => {}
                Some(WorkflowSlot::Boss(b)) if b.role == troupe_core::boss::BossRole::Worker => {
                    return Ok(Err(crate::controls::SlotRefusal::BossWorker.into()));
                }
                Some(other) => {
                    return Ok(Err(conflict(
                        "workflow_active",
                        format!("workflow '{}' is active; disable it before enabling Lattice", other.kind()),
                    )));
                }
            }
            let now = tx.now();
            let current = tx.current_lattice_run(thread)?;
            if let Some(run) = &current
                && run.status == RunStatus::Active
            {
                let mut m = Moves::new(run.clone());
                m.must(
                    Event::SetMode {
                        mode: req.mode,
                        max_model_calls: req.max_model_calls,
                    },
                    now,
                );
                persist::write(tx, &m)?;
                tx.set_workflow(thread, Some(&WorkflowSlot::Lattice(persist::slot_for(&m.run)).to_value()))?;
                return Ok(Ok(m.changed()));
            }
            if let Some(l) = tx.active_loop_of_thread(thread)? {
                return Ok(Err(conflict(
                    "blueprint_loop_active",
                    format!("BlueprintLoop {} runs on this session", l.id),
                )));
            }
            if let Some(run) = &current
                && run.status == RunStatus::Paused
            {
                if run.status_reason == Some(StatusReason::UserExit) && run.is_pristine() {
                    let mut m = Moves::new(run.clone());
                    m.must(Event::Cancel(StatusReason::Superseded), now);
                    persist::write(tx, &m)?;
                } else {
                    return Ok(Err(conflict(
                        "lattice_resume_required",
                        format!(
                            "Lattice run {} is paused ({}); resume it (POST /v1/lattice/runs/{}/resume) or cancel it first",
                            run.id,
                            run.status_reason.map_or("paused", StatusReason::as_str),
                            run.id.0
                        ),
                    )));
                }
            }
            let run = tx.create_lattice_run(thread, req.mode, req.max_model_calls.unwrap_or(0), goal.clone())?;
            tx.set_workflow(thread, Some(&WorkflowSlot::Lattice(persist::slot_for(&run)).to_value()))?;
            if let Some(g) = &goal {
                tx.deliver(thread, &controller::goal_delivery(&run, g))?;
                let mut m = Moves::new(run);
                m.must(Event::Prompt(PromptType::StateEntry), now);
                persist::write(tx, &m)?;
            }
            Ok(Ok(true))
        })??;
        drop(_held);
        if goal.is_some() {
            // The goal task is queued: the session starts on it.
            self.engine()
                .request_drive(thread, "lattice_enable", false)
                .await?;
        }
        self.reconcile_lattice(thread, Reason::Enable).await?;
        Ok(changed)
    }

    /// Leave Lattice: a pristine Run is cancelled; any other is paused `user_exit` — persisted
    /// first, then the session's work stopped, the Run's queued prompts withdrawn and its loops
    /// cancelled (in the same write as the pause).
    pub(crate) async fn disable_lattice(&self, thread: ThreadId) -> Result<bool, WorkflowError> {
        let guard = lock(thread);
        let _held = guard.lock().await;
        let written = self.store().write(|tx| {
            let now = tx.now();
            let Some(run) = tx.current_lattice_run(thread)? else {
                tx.set_workflow(thread, None)?;
                return Ok(None);
            };
            let mut m = Moves::new(run.clone());
            if run.is_pristine() {
                m.must(Event::Cancel(StatusReason::Superseded), now);
            } else {
                m.must(Event::Pause(StatusReason::UserExit), now);
            }
            let w = persist::write(tx, &m)?;
            withdraw_queued(tx, &m.run)?;
            tx.set_workflow(thread, None)?;
            Ok(Some(w))
        })?;
        if let Some(w) = written {
            self.stop_quietly(thread).await;
            for t in w.abort {
                self.stop_quietly(t).await;
            }
            return Ok(true);
        }
        Ok(false)
    }

    pub async fn resume_lattice_run(&self, id: LatticeRunId) -> Result<LatticeView, WorkflowError> {
        let run = self.store().read(|tx| tx.lattice_run(id))?;
        let thread = run.thread_id;
        let guard = lock(thread);
        let held = guard.lock().await;
        let engine = self.engine().clone();
        let abort = self.store().write(|tx| {
            let now = tx.now();
            let run = tx.lattice_run(id)?;
            if run.status.is_terminal() {
                return Ok(Err(conflict(
                    "run_finished",
                    format!("Lattice run {id} is {}", run.status.as_str()),
                )));
            }
            if tx.current_lattice_run(thread)?.is_none_or(|c| c.id != id) {
                return Ok(Err(conflict(
                    "run_not_current",
                    format!("Lattice run {id} is not the session's current Run"),
                )));
            }
            let t = tx.thread(thread)?;
            match WorkflowSlot::of(t.workflow.as_ref()) {
                None => {}
                Some(WorkflowSlot::Lattice(s)) if s.run_id == id => {}
                Some(other) => {
                    return Ok(Err(conflict(
                        "workflow_active",
                        format!(
                            "workflow '{}' holds the session now; disable it first",
                            other.kind()
                        ),
                    )));
                }
            }
            let mut m = Moves::new(run.clone());
            // The calls made while it was paused (a person's lines) count before the +1.
            let count = tx.model_calls_since(thread, run.created_at)?;
            m.must(Event::CountCalls { count }, now);
            if run.status == RunStatus::Active {
                let live_loop = run.state == WorkState::Executing
                    && run.current_step().and_then(|s| s.live_attempt()).is_some();
                if live_loop || engine.is_running(thread) {
                    return Ok(Err(conflict(
                        "loop_running",
                        "the current Step's BlueprintLoop is running; it decides the Step",
                    )));
                }
                m.must(Event::Prompt(PromptType::Resume), now);
            } else if let Err(e) = m.apply(Event::Resume, now) {
                return Ok(Err(conflict("run_finished", e.to_string())));
            }
            let w = persist::write(tx, &m)?;
            tx.set_workflow(
                thread,
                Some(&WorkflowSlot::Lattice(persist::slot_for(&m.run)).to_value()),
            )?;
            Ok(Ok(w.abort))
        })??;
        drop(held);
        for t in abort {
            self.stop_quietly(t).await;
        }
        self.reconcile_lattice(thread, Reason::Resume).await?;
        self.lattice_run(id)
    }

    /// The person approves exactly the reviewed Blueprint, with no extra instruction.
    pub async fn approve_lattice_run(
        &self,
        id: LatticeRunId,
    ) -> Result<LatticeView, WorkflowError> {
        let run = self.store().read(|tx| tx.lattice_run(id))?;
        let thread = run.thread_id;
        // A note edit since the review sends the Run back to review first.
        self.reconcile_lattice(thread, Reason::NoteChange).await?;
        self.store().write(|tx| {
            let run = tx.lattice_run(id)?;
            if run.status != RunStatus::Active || run.state != WorkState::AwaitingExecution {
                return Ok(Err(conflict(
                    "not_awaiting_execution",
                    format!(
                        "Lattice run {id} is {} in {}; nothing awaits approval",
                        run.status.as_str(),
                        run.state.as_str()
                    ),
                )));
            }
            match submit_approval(tx, &run, ActionSource::Panel, None)? {
                Ok(Submitted::Queued(next)) => {
                    tx.save_lattice_run(
                        &next,
                        &[(
                            "action_submitted",
                            json!({"action": "approve_execution", "source": "panel"}),
                        )],
                    )?;
                    Ok(Ok(()))
                }
                Ok(Submitted::AlreadyQueued) => Ok(Ok(())),
                Err(SubmitRefusal::Conflict { pending }) => Ok(Err(conflict(
                    "not_awaiting_execution",
                    format!("{pending} is already pending"),
                ))),
                Err(e) => Ok(Err(conflict("blueprint_review_stale", e.to_string()))),
            }
        })??;
        self.reconcile_lattice(thread, Reason::Action).await?;
        let after = self.lattice_run(id)?;
        if matches!(
            after.run.state,
            WorkState::AwaitingExecution | WorkState::ReviewingBlueprint
        ) {
            return Err(conflict(
                "blueprint_review_stale",
                "the Blueprint changed after its review; it goes back to review",
            ));
        }
        Ok(after)
    }

    /// Cancel the exact Run (terminal; idempotent for a cancelled one).
    pub async fn cancel_lattice_run(&self, id: LatticeRunId) -> Result<LatticeView, WorkflowError> {
        self.cancel_lattice(id, StatusReason::UserCancelled).await?;
        self.lattice_run(id)
    }

    /// Cancel, clearing only a slot that names this Run (LAT-15). Returns whether it changed.
    pub(crate) async fn cancel_lattice(
        &self,
        id: LatticeRunId,
        reason: StatusReason,
    ) -> Result<bool, WorkflowError> {
        let run = self.store().read(|tx| tx.lattice_run(id))?;
        let thread = run.thread_id;
        let guard = lock(thread);
        let held = guard.lock().await;
        let written = self.store().write(|tx| {
            let now = tx.now();
            let run = tx.lattice_run(id)?;
            match run.status {
                RunStatus::Cancelled => return Ok(Ok(None)),
                RunStatus::Completed | RunStatus::Failed => {
                    return Ok(Err(conflict(
                        "run_finished",
                        format!("Lattice run {id} is {}", run.status.as_str()),
                    )));
                }
                _ => {}
            }
            if tx.current_lattice_run(thread)?.is_none_or(|c| c.id != id) {
                return Ok(Err(conflict(
                    "run_not_current",
                    format!("Lattice run {id} is not the session's current Run"),
                )));
            }
            let mut m = Moves::new(run);
            m.must(Event::Cancel(reason), now);
            let w = persist::write(tx, &m)?;
            withdraw_queued(tx, &m.run)?;
            Ok(Ok(Some(w)))
        })??;
        drop(held);
        let Some(w) = written else {
            return Ok(false);
        };
        if self.engine().is_running(thread) {
            self.stop_quietly(thread).await;
        }
        for t in w.abort {
            self.stop_quietly(t).await;
        }
        Ok(true)
    }
}
