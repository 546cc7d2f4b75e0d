//! The workflow slot of a session: reading it and changing it through [`controls::decide`],
//! with the decision re-made inside the write transaction so a turn that starts concurrently
//! (its lease is taken in a write transaction too) cannot slip between check and write.

use crate::controls::{self, SlotFacts, SlotRefusal, SlotRequest};
use crate::lightloop::machine::{self, LoopEffect, TerminalStatus};
use crate::slot::{BOSS, LATTICE, LIGHTLOOP, PLAN, WorkflowSlot};
use crate::{WorkflowError, Workflows};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use troupe_core::pause::Paused;
use troupe_core::{SessionId, ThreadId};
use troupe_engine::StopMode;
use troupe_store::{NewWorkflowTerminal, Tx, WorkflowTerminal};

/// `POST /v1/sessions/:id/workflow`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetWorkflowRequest {
    /// `plan`, `lightloop`, `lattice`, `boss` or `none`.
    pub kind: String,
    /// The Light Loop's task (required, non-empty, for `lightloop`); a Boss root's standing
    /// instructions (optional, for `boss`).
    #[serde(default)]
    pub instructions: Option<String>,
    /// Light Loop only: rejections allowed before it ends as `iteration_exhausted`.
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// Light Loop only: model calls of this session the loop may make before it pauses
    /// (0: unlimited; default from the config, 200 unless set).
    #[serde(default)]
    pub max_model_calls: Option<u32>,
    /// Lattice only: `auto` or `collaborative` (the default).
    #[serde(default)]
    pub mode: Option<String>,
    /// Lattice only: the goal, given to the session as the person's task.
    #[serde(default)]
    pub goal: Option<String>,
}

/// A session's workflow as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct WorkflowView {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// The active kind (`plan`, `lightloop`, or a kind this build does not know), or null.
    pub kind: Option<String>,
    /// For a Light Loop: `executing`, `stop_pending` or `reviewing`; under Lattice: the Run's state.
    pub phase: Option<String>,
    /// The slot exactly as stored.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub slot: Option<Value>,
    pub running: bool,
    pub paused: Option<Paused>,
    /// For a Light Loop: the iteration under way (rejections so far + 1).
    pub iteration: Option<u32>,
    /// For a Light Loop under review: the reviewer child and its latest turn.
    pub reviewer: Option<ReviewerView>,
    /// How the last Light Loop on this session ended.
    pub last_terminal: Option<WorkflowTerminal>,
    /// The session's BlueprintLoop binding: the loop it executes or audits, with the phase.
    pub blueprint: Option<troupe_store::LoopBinding>,
    /// The active BlueprintLoop this session executes, if any.
    pub blueprint_loop: Option<troupe_core::blueprint_loop::BlueprintLoop>,
    /// The continuation guard of the loop continuing this session: budget, calls spent,
    /// no-progress streak, spacing and why it paused, if it did.
    pub guard: Option<crate::guard::GuardView>,
    /// Why the session's Bot will not go on by itself (an unknown last effect), if so.
    pub blocked_by: Option<troupe_collab::BlockedBy>,
    /// The session's current Lattice Run (any status), if it has one.
    pub lattice: Option<crate::lattice::LatticeView>,
    /// Whether this request changed the slot (always false for a read).
    pub changed: bool,
}

/// The reviewer child of a Light Loop under review.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct ReviewerView {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub thread_id: ThreadId,
    /// The reviewer's latest turn, if it has started.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub turn_id: Option<troupe_core::RunId>,
    pub running: bool,
    /// Recovery turns given after it ended without a verdict.
    pub recovery_attempts: u32,
    /// The reviewer's child task (`GET /v1/tasks/{id}`).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub task_id: Option<troupe_store::TaskId>,
}

pub(crate) fn phase_name(slot: &WorkflowSlot) -> Option<String> {
    slot.light_loop().map(|ll| {
        match machine::phase(ll) {
            machine::Phase::Executing => "executing",
            machine::Phase::StopPending => "stop_pending",
            machine::Phase::Reviewing(_) => "reviewing",
        }
        .to_string()
    })
}

fn parse_request(req: SetWorkflowRequest) -> Result<SlotRequest, WorkflowError> {
    if req.kind.trim() == BOSS {
        if req.max_iterations.is_some()
            || req.max_model_calls.is_some()
            || req.mode.is_some()
            || req.goal.is_some()
        {
            return Err(WorkflowError::invalid(
                "boss takes only instructions (max_iterations, max_model_calls, mode and goal belong to other workflows)",
            ));
        }
        return Ok(SlotRequest::EnableBoss {
            instructions: req.instructions,
        });
    }
    if req.kind.trim() != LATTICE && (req.mode.is_some() || req.goal.is_some()) {
        return Err(WorkflowError::invalid(format!(
            "mode and goal apply to lattice only, not to {}",
            req.kind.trim()
        )));
    }
    let reject_ll_fields = |kind: &str| -> Result<(), WorkflowError> {
        if req.instructions.is_some()
            || req.max_iterations.is_some()
            || req.max_model_calls.is_some()
        {
            return Err(WorkflowError::invalid(format!(
                "instructions, max_iterations and max_model_calls apply to lightloop only, not to {kind}"
            )));
        }
        Ok(())
    };
    match req.kind.trim() {
        PLAN => {
            reject_ll_fields(PLAN)?;
            Ok(SlotRequest::EnablePlan)
        }
        "none" => {
            reject_ll_fields("none")?;
            Ok(SlotRequest::Disable)
        }
        LIGHTLOOP => Ok(SlotRequest::EnableLightLoop {
            instructions: req.instructions.clone().unwrap_or_default(),
            max_iterations: req.max_iterations,
        }),
        other => Err(WorkflowError::invalid(format!(
            "kind: unknown workflow '{other}' (expected plan, lightloop, lattice, boss or none)"
        ))),
    }
}

impl From<SlotRefusal> for WorkflowError {
    fn from(r: SlotRefusal) -> Self {
        match r.code() {
            None => WorkflowError::Invalid(r.to_string()),
            Some(code) => WorkflowError::conflict(code, r.to_string()),
        }
    }
}

/// Apply a loop's effects that belong in the transaction (the terminal record). Returns the
/// reviewer to stop afterwards, if any.
pub(crate) fn apply_in_tx(
    tx: &mut Tx<'_>,
    thread: ThreadId,
    instructions: &str,
    effects: &[LoopEffect],
) -> Result<Option<ThreadId>, troupe_store::StoreError> {
    let mut abort = None;
    for e in effects {
        match e {
            LoopEffect::RecordTerminal { status, error } => {
                record_terminal(tx, thread, instructions, *status, error.clone())?;
            }
            LoopEffect::AbortWork { reviewer } => abort = *reviewer,
            _ => {}
        }
    }
    Ok(abort)
}

pub(crate) fn record_terminal(
    tx: &mut Tx<'_>,
    thread: ThreadId,
    instructions: &str,
    status: TerminalStatus,
    error: Option<String>,
) -> Result<WorkflowTerminal, troupe_store::StoreError> {
    crate::guard::end_light_loop_guard(tx, thread)?;
    tx.record_workflow_terminal(&NewWorkflowTerminal {
        thread_id: thread,
        kind: LIGHTLOOP.into(),
        status: status.as_str().into(),
        instructions: instructions.into(),
        error,
    })
}

impl Workflows {
    pub fn workflow(&self, session: SessionId) -> Result<WorkflowView, WorkflowError> {
        let thread = self.collab.direct_thread(session)?;
        self.view(session, thread, false)
    }

    pub(crate) fn view(
        &self,
        session: SessionId,
        thread: ThreadId,
        changed: bool,
    ) -> Result<WorkflowView, WorkflowError> {
        let (t, last, blueprint, blueprint_loop, guard) = self.store().read(|tx| {
            Ok((
                tx.thread(thread)?,
                tx.latest_workflow_terminal(thread)?,
                tx.loop_binding(thread)?,
                tx.active_loop_of_thread(thread)?,
                crate::guard::view(tx, thread)?,
            ))
        })?;
        let slot = WorkflowSlot::of(t.workflow.as_ref());
        let ll = slot.as_ref().and_then(WorkflowSlot::light_loop);
        let reviewer = match ll.and_then(|l| l.stop_request.as_ref()) {
            Some(stop) => match stop.reviewer_thread_id {
                Some(r) => Some(ReviewerView {
                    thread_id: r,
                    turn_id: self
                        .store()
                        .read(|tx| tx.runs_for_thread(r, 1))?
                        .first()
                        .map(|run| run.id),
                    running: self.engine().is_running(r),
                    recovery_attempts: stop.review_recovery_attempts,
                    task_id: self.store().read(|tx| tx.task_of_child(r))?.map(|t| t.id),
                }),
                None => None,
            },
            None => None,
        };
        let running = self.engine().is_running(thread) || t.lease.holder.is_some();
        let lattice = self.lattice_current(session)?;
        let lattice_state = lattice.as_ref().map(|v| v.run.state.as_str().to_string());
        Ok(WorkflowView {
            lattice,
            guard,
            blocked_by: self.collab.blocked_by(thread, running)?,
            iteration: ll.map(|l| l.review.attempts + 1),
            reviewer,
            session_id: session,
            kind: slot.as_ref().map(WorkflowSlot::kind),
            phase: slot.as_ref().and_then(phase_name).or_else(|| {
                // Under Lattice the phase is the current Run's state.
                slot.as_ref()
                    .and_then(WorkflowSlot::lattice)
                    .and(lattice_state)
            }),
            slot: t.workflow.clone(),
            running,
            paused: t.paused,
            last_terminal: last,
            blueprint,
            blueprint_loop,
            changed,
        })
    }

    /// Enable, switch or disable the session's workflow (only while idle).
    pub async fn set_workflow(
        &self,
        session: SessionId,
        req: SetWorkflowRequest,
    ) -> Result<WorkflowView, WorkflowError> {
        let thread = self.collab.direct_thread(session)?;
        if req.kind.trim() == LATTICE {
            if req.instructions.is_some() || req.max_iterations.is_some() {
                return Err(WorkflowError::invalid(
                    "instructions and max_iterations apply to lightloop only, not to lattice",
                ));
            }
            let mode = match req.mode.as_deref() {
                None => troupe_core::lattice::Mode::Collaborative,
                Some(m) => troupe_core::lattice::Mode::parse(m).map_err(WorkflowError::Invalid)?,
            };
            let changed = self
                .enable_lattice(
                    thread,
                    crate::lattice::EnableLattice {
                        mode,
                        max_model_calls: req.max_model_calls,
                        goal: req.goal,
                    },
                )
                .await?;
            return self.view(session, thread, changed);
        }
        let budget = req.max_model_calls;
        let request = parse_request(req)?;
        let lattice_slot = matches!(
            WorkflowSlot::of(self.store().read(|tx| tx.thread(thread))?.workflow.as_ref()),
            Some(WorkflowSlot::Lattice(_))
        );
        if lattice_slot && request == SlotRequest::Disable {
            if self.engine().is_running(thread) {
                return Err(WorkflowError::conflict(
                    "session_running",
                    "the session is running; workflows change only while it is idle (stop it or wait)",
                ));
            }
            let changed = self.disable_lattice(thread).await?;
            return self.view(session, thread, changed);
        }
        let engine = self.engine().clone();
        let limits = crate::guard::limits_for(engine.config().loops, budget);
        let outcome = self.store().write(|tx| {
            let t = tx.thread(thread)?;
            let facts = SlotFacts {
                slot: WorkflowSlot::of(t.workflow.as_ref()),
                running: t.lease.holder.is_some() || engine.is_running(thread),
                blueprint_loop_active: tx.active_loop_of_thread(thread)?.is_some(),
            };
            let transition = match controls::decide(&facts, request) {
                Ok(tr) => tr,
                Err(refusal) => return Ok(Err(refusal)),
            };
            let instructions = facts
                .slot
                .as_ref()
                .and_then(WorkflowSlot::light_loop)
                .map(|ll| ll.instructions.clone())
                .unwrap_or_default();
            let abort = apply_in_tx(tx, thread, &instructions, &transition.effects)?;
            if transition.changed {
                let value = transition.next.as_ref().map(WorkflowSlot::to_value);
                tx.set_workflow(thread, value.as_ref())?;
            }
            let was_loop = matches!(facts.slot, Some(WorkflowSlot::LightLoop(_)));
            let is_loop = matches!(transition.next, Some(WorkflowSlot::LightLoop(_)));
            match (was_loop, is_loop) {
                (false, true) => {
                    tx.start_loop_guard(thread, crate::guard::LIGHTLOOP_REF, limits)?;
                }
                (true, true) if budget.is_some() => {
                    crate::guard::set_budget(tx, thread, limits.max_model_calls)?;
                }
                (true, false) => crate::guard::end_light_loop_guard(tx, thread)?,
                _ => {}
            }
            Ok(Ok((transition.changed, abort)))
        })?;
        let (changed, abort) = outcome?;
        if let Some(reviewer) = abort {
            self.stop_work(reviewer).await;
        }
        self.view(session, thread, changed)
    }

    /// Stop a thread's live turn as a domain cancellation (no latch); nothing running is fine.
    pub(crate) async fn stop_quietly(&self, thread: ThreadId) {
        match self.engine().stop(thread, StopMode::Internal).await {
            Ok(_) | Err(troupe_engine::EngineError::NotRunning(_)) => {}
            Err(e) => tracing::warn!(thread = %thread, error = %e, "stopping workflow work failed"),
        }
    }
}
