//! The Lattice Run as a pure machine: `(run, event, now) -> transition`. It is the only code that
//! changes a Run's state, status, current Step or a Step's status (LAT-2); the controller
//! persists what it returns — the next Run with at most one effect — before it crosses any
//! boundary (LAT-3), and carries out the loop cancellations it names after the commit.
//! `submit` is the tools' side: it records one pending action or says why not.

use super::action::{ActionKind, PendingAction};
use super::effect::{Effect, PromptType, completion_key, prompt_key};
use super::run::{LatticeRun, Mode, RunStatus, StatusReason, WorkState};
use super::step::{AttemptStatus, BlueprintBinding, StepStatus};
use crate::blueprint_loop::BlueprintLoopId;
use serde_json::{Value, json};

/// The live note a Blueprint action or check is measured against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteFacts {
    pub id: i64,
    pub version: i64,
    pub digest: String,
    /// A Blueprint (not a plain note).
    pub is_blueprint: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopOutcome {
    Completed { summary: String },
    Failed { error: String },
    Cancelled { error: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Take the pending action, checked against the live note it names (if any).
    ConsumeAction {
        note: Option<NoteFacts>,
    },
    /// The create effect's loop exists (created now, or found by its fingerprint).
    LoopCreated {
        loop_id: BlueprintLoopId,
    },
    /// The start effect's loop is running.
    LoopStarted {
        loop_id: BlueprintLoopId,
    },
    /// The current attempt's loop ended.
    LoopEnded {
        loop_id: BlueprintLoopId,
        outcome: LoopOutcome,
    },
    /// The current Step's Blueprint changed before its execution started.
    BlueprintChanged {
        note: NoteFacts,
    },
    Pause(StatusReason),
    Resume,
    Cancel(StatusReason),
    /// The prompt effect's steer is in the session's inbox (once per delivery).
    PromptDelivered {
        effect: u64,
    },
    /// Ask the model to act in the current state (at enable with a goal, or a resume of an
    /// active Run), unless an effect is under way.
    Prompt(PromptType),
    /// A prompt was read by a finished turn, or the completion mail was queued.
    EffectDone {
        effect: u64,
    },
    /// The model calls counted so far.
    CountCalls {
        count: u32,
    },
    /// Enable on an active Run: its mode and cap change, nothing else.
    SetMode {
        mode: Mode,
        max_model_calls: Option<u32>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub run: LatticeRun,
    /// Audit events (`lattice_<kind>`), never read back by recovery (LAT-16).
    pub events: Vec<(&'static str, Value)>,
    /// Loops to cancel once the Run is committed (their attempts are already converged).
    pub cancel_loops: Vec<BlueprintLoopId>,
    pub changed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MachineError {
    #[error("the Run is {0}")]
    Terminal(&'static str),
    #[error("the Run is not paused")]
    NotPaused,
}

fn unchanged(run: &LatticeRun) -> Transition {
    Transition {
        run: run.clone(),
        events: vec![],
        cancel_loops: vec![],
        changed: false,
    }
}

struct Builder {
    run: LatticeRun,
    events: Vec<(&'static str, Value)>,
    cancel_loops: Vec<BlueprintLoopId>,
    now: i64,
}

impl Builder {
    fn new(run: &LatticeRun, now: i64) -> Self {
        Builder {
            run: run.clone(),
            events: vec![],
            cancel_loops: vec![],
            now,
        }
    }

    fn event(&mut self, kind: &'static str, data: Value) {
        self.events.push((kind, data));
    }

    fn done(mut self) -> Transition {
        self.run.updated_at = self.now;
        Transition {
            run: self.run,
            events: self.events,
            cancel_loops: self.cancel_loops,
            changed: true,
        }
    }

    fn effect_id(&mut self) -> u64 {
        let id = self.run.next_effect_id;
        self.run.next_effect_id += 1;
        id
    }

    fn prompt(&mut self, kind: PromptType, errors: Vec<String>) {
        let id = self.effect_id();
        self.run.effect = Some(Effect::DeliverPrompt {
            id,
            prompt_type: kind,
            state: self.run.state,
            delivery_key: prompt_key(self.run.id, id),
            validation_errors: errors,
            attempt_count: 0,
        });
    }

    fn enter(&mut self, state: WorkState) {
        let from = self.run.state;
        self.run.state = state;
        self.run.state_revision += 1;
        self.run.state_entered_at = self.now;
        self.event(
            "state_changed",
            json!({"from": from.as_str(), "to": state.as_str(), "state_revision": self.run.state_revision}),
        );
        if state.prompts_on_entry() {
            self.prompt(PromptType::StateEntry, vec![]);
        }
    }

    fn pause(&mut self, reason: StatusReason) {
        if self.run.status != RunStatus::Active {
            return;
        }
        self.run.status = RunStatus::Paused;
        self.run.status_reason = Some(reason);
        self.run.paused_at = Some(self.now);
        self.event("run_paused", json!({"reason": reason.as_str()}));
    }

    /// Cancel every live attempt of every Step (the loops are cancelled after commit).
    fn cancel_live_attempts(&mut self, error: &str) {
        let now = self.now;
        let mut cancelled = vec![];
        for s in &mut self.run.pathway {
            for a in &mut s.loop_history {
                if a.status.is_live() {
                    a.status = AttemptStatus::Cancelled;
                    a.error = Some(error.to_string());
                    a.completed_at = Some(now);
                    cancelled.push(a.loop_id);
                }
            }
        }
        for id in cancelled {
            self.event("loop_cancelled", json!({"loop_id": id.0, "error": error}));
            self.cancel_loops.push(id);
        }
    }
}

/// Apply one event. Events that do not fit the Run's status or effect change nothing
/// (`changed: false`): reconciliation re-reads records and may ask twice.
pub fn step(run: &LatticeRun, event: Event, now: i64) -> Result<Transition, MachineError> {
    let mut b = Builder::new(run, now);
    match event {
        Event::ConsumeAction { note } => {
            if run.status != RunStatus::Active {
                return Ok(unchanged(run));
            }
            let Some(action) = run.pending_action.clone() else {
                return Ok(unchanged(run));
            };
            if run
                .effect
                .as_ref()
                .is_some_and(|e| !matches!(e, Effect::DeliverPrompt { .. }))
            {
                // A handoff or completion is still under way: the action waits.
                return Ok(unchanged(run));
            }
            b.run.pending_action = None;
            // The last prompt did its work: the action it asked for is here.
            b.run.effect = None;
            match consume(&mut b, &action, note.as_ref()) {
                Ok(()) => {
                    b.event(
                        "action_consumed",
                        json!({"action": action.kind.name(), "id": action.id}),
                    );
                }
                Err(problem) => {
                    b.event(
                        "action_consumed",
                        json!({"action": action.kind.name(), "id": action.id, "dropped": problem}),
                    );
                    b.prompt(PromptType::Repair, vec![problem]);
                }
            }
            Ok(b.done())
        }
        Event::LoopCreated { loop_id } => {
            let Some(Effect::CreateBlueprintLoop {
                step_id,
                blueprint_version,
                source_digest,
                ..
            }) = run.effect.clone()
            else {
                return Ok(unchanged(run));
            };
            if run.status != RunStatus::Active {
                return Ok(unchanged(run));
            }
            let id = b.effect_id();
            let step = b
                .run
                .step_mut(&step_id)
                .expect("a create effect names a Step");
            step.status = StepStatus::Executing;
            step.started_at.get_or_insert(now);
            step.updated_at = now;
            step.loop_history.push(super::step::LoopAttempt {
                loop_id,
                status: AttemptStatus::Created,
                source_digest: source_digest.clone(),
                summary: None,
                error: None,
                created_at: now,
                started_at: None,
                completed_at: None,
            });
            b.run.effect = Some(Effect::StartBlueprintLoop {
                id,
                step_id: step_id.clone(),
                loop_id,
                blueprint_version,
                source_digest,
            });
            b.event(
                "step_started",
                json!({"step_id": step_id, "loop_id": loop_id.0}),
            );
            Ok(b.done())
        }
        Event::LoopStarted { loop_id } => {
            let Some(Effect::StartBlueprintLoop {
                step_id,
                loop_id: expected,
                ..
            }) = run.effect.clone()
            else {
                return Ok(unchanged(run));
            };
            if expected != loop_id || run.status != RunStatus::Active {
                return Ok(unchanged(run));
            }
            let step = b
                .run
                .step_mut(&step_id)
                .expect("a start effect names a Step");
            if let Some(a) = step.attempt_mut(loop_id) {
                a.status = AttemptStatus::Running;
                a.started_at = Some(now);
            }
            b.run.effect = None;
            Ok(b.done())
        }
        Event::LoopEnded { loop_id, outcome } => {
            // Only the exact attempt of the current Step of an active Run advances it (LAT-5,
            // LAT-12); the controller pauses the Run for any other loop before asking.
            if run.status != RunStatus::Active || run.state != WorkState::Executing {
                return Ok(unchanged(run));
            }
            let Some(step_id) = run.current_step_id.clone() else {
                return Ok(unchanged(run));
            };
            let live = run
                .step(&step_id)
                .and_then(|s| s.live_attempt())
                .is_some_and(|a| a.loop_id == loop_id);
            if !live {
                return Ok(unchanged(run));
            }
            if matches!(run.effect, Some(Effect::StartBlueprintLoop { .. })) {
                b.run.effect = None;
            }
            let (astatus, sstatus, summary, error) = match outcome {
                LoopOutcome::Completed { summary } => (
                    AttemptStatus::Completed,
                    StepStatus::Completed,
                    Some(summary),
                    None,
                ),
                LoopOutcome::Failed { error } => {
                    (AttemptStatus::Failed, StepStatus::Failed, None, Some(error))
                }
                LoopOutcome::Cancelled { error } => (
                    AttemptStatus::Cancelled,
                    StepStatus::Cancelled,
                    None,
                    Some(error),
                ),
            };
            let step = b.run.step_mut(&step_id).expect("checked above");
            if let Some(attempt) = step.attempt_mut(loop_id) {
                attempt.status = astatus;
                attempt.completed_at = Some(now);
                attempt.summary.clone_from(&summary);
                attempt.error.clone_from(&error);
            }
            step.status = sstatus;
            step.updated_at = now;
            if sstatus == StepStatus::Completed {
                step.result_summary = summary;
                step.completed_at = Some(now);
                b.run.current_step_id = None;
                b.event(
                    "step_completed",
                    json!({"step_id": step_id, "loop_id": loop_id.0}),
                );
                if b.run.pending_steps().next().is_some() {
                    b.enter(WorkState::ReviewingPathway);
                } else {
                    // The last Step: completed and its mail, in one write (LAT-9).
                    b.run.status = RunStatus::Completed;
                    b.run.completed_at = Some(now);
                    let id = b.effect_id();
                    b.run.effect = Some(Effect::DeliverCompletion {
                        id,
                        delivery_key: completion_key(run.id),
                    });
                    b.event("run_completed", json!({"steps": b.run.completed_steps()}));
                }
            } else {
                step.failure_reason.clone_from(&error);
                let (reason, kind) = if sstatus == StepStatus::Failed {
                    (StatusReason::BlueprintLoopFailed, "step_failed")
                } else {
                    (StatusReason::BlueprintLoopCancelled, "step_cancelled")
                };
                b.event(
                    kind,
                    json!({"step_id": step_id, "loop_id": loop_id.0, "error": error}),
                );
                // LAT-10: paused at that very Step until a person resumes.
                b.pause(reason);
            }
            Ok(b.done())
        }
        Event::BlueprintChanged { note } => {
            if run.status != RunStatus::Active {
                return Ok(unchanged(run));
            }
            let before_handoff = run.state == WorkState::Executing
                && run.effect.as_ref().is_some_and(Effect::is_handoff);
            if !(matches!(
                run.state,
                WorkState::AwaitingExecution | WorkState::ReviewingBlueprint
            ) || before_handoff)
            {
                return Ok(unchanged(run));
            }
            let Some(step_id) = run.current_step_id.clone() else {
                return Ok(unchanged(run));
            };
            b.cancel_live_attempts("the Blueprint changed before execution started");
            let step = b.run.step_mut(&step_id).expect("the current Step exists");
            step.retire_binding();
            step.blueprint = Some(BlueprintBinding {
                note_id: note.id,
                bound_version: note.version,
                content_digest: note.digest.clone(),
                reviewed_version: None,
                reviewed_digest: None,
                bound_at: now,
                reviewed_at: None,
            });
            if step.status == StepStatus::Executing {
                step.status = StepStatus::Current;
            }
            step.updated_at = now;
            b.run.effect = None;
            b.event(
                "step_blueprint_bound",
                json!({"step_id": step_id, "note_id": note.id, "version": note.version, "cause": "blueprint_changed"}),
            );
            b.enter(WorkState::ReviewingBlueprint);
            Ok(b.done())
        }
        Event::Pause(reason) => {
            if run.status != RunStatus::Active {
                return Ok(unchanged(run));
            }
            if reason == StatusReason::ModelCallBudgetExhausted {
                b.event(
                    "budget_exhausted",
                    json!({"count": run.model_call_count, "max": run.max_model_calls}),
                );
            }
            if reason == StatusReason::UserExit {
                b.cancel_live_attempts("the person left Lattice");
                converge_current_step(&mut b, StepStatus::Cancelled, "the person left Lattice");
                if b.run
                    .effect
                    .as_ref()
                    .is_some_and(|e| matches!(e, Effect::DeliverPrompt { .. }))
                {
                    b.run.effect = None;
                }
            }
            b.pause(reason);
            Ok(b.done())
        }
        Event::Resume => {
            if run.status.is_terminal() {
                return Err(MachineError::Terminal(run.status.as_str()));
            }
            if run.status != RunStatus::Paused {
                return Err(MachineError::NotPaused);
            }
            let reason = run.status_reason;
            if reason == Some(StatusReason::ModelCallBudgetExhausted) {
                // Exactly one more call per decision (LAT-13).
                b.run.max_model_calls = run.model_call_count + 1;
            }
            let handoff = run.effect.as_ref().is_some_and(Effect::is_handoff);
            b.run.status = RunStatus::Active;
            b.run.status_reason = None;
            b.run.paused_at = None;
            b.run.effect = None;
            let keep = run.pending_action.as_ref().is_some_and(|a| {
                a.expected_state_revision == run.state_revision
                    && a.expected_pathway_revision == run.pathway_revision
                    && a.kind.required_state() == run.state
            });
            if !keep {
                b.run.pending_action = None;
            }
            b.event(
                "run_resumed",
                json!({"from_reason": reason.map(StatusReason::as_str)}),
            );
            let step_status = run.current_step().map(|s| s.status);
            let reopen = run.state == WorkState::Executing
                && (matches!(
                    step_status,
                    Some(StepStatus::Failed | StepStatus::Cancelled | StepStatus::Current)
                ) || handoff
                    || reason.is_some_and(StatusReason::is_ownership));
            if reopen {
                b.cancel_live_attempts("the Run was resumed at this Step");
                if let Some(id) = run.current_step_id.clone() {
                    let step = b.run.step_mut(&id).expect("the current Step exists");
                    // The same Step, its failure evidence kept, needs a Blueprint again.
                    step.status = StepStatus::Current;
                    step.retire_binding();
                    step.updated_at = now;
                }
                b.run.pending_action = None;
                b.enter(WorkState::Blueprinting);
                // `enter` queued the state's prompt: resumed at this Step.
                if let Some(Effect::DeliverPrompt { prompt_type, .. }) = b.run.effect.as_mut() {
                    *prompt_type = PromptType::Resume;
                }
            } else if b.run.pending_action.is_none() && run.state.prompts_on_entry() {
                b.prompt(PromptType::Resume, vec![]);
            }
            Ok(b.done())
        }
        Event::Cancel(reason) => match run.status {
            RunStatus::Cancelled => Ok(unchanged(run)),
            RunStatus::Completed | RunStatus::Failed => {
                Err(MachineError::Terminal(run.status.as_str()))
            }
            RunStatus::Active | RunStatus::Paused => {
                b.cancel_live_attempts("the Run was cancelled");
                converge_current_step(&mut b, StepStatus::Cancelled, "the Run was cancelled");
                b.run.status = RunStatus::Cancelled;
                b.run.status_reason = Some(reason);
                b.run.pending_action = None;
                b.run.effect = None;
                b.run.completed_at = Some(now);
                b.event("run_cancelled", json!({"reason": reason.as_str()}));
                Ok(b.done())
            }
        },
        Event::PromptDelivered { effect } => match b.run.effect.as_mut() {
            Some(Effect::DeliverPrompt {
                id, attempt_count, ..
            }) if *id == effect => {
                *attempt_count += 1;
                Ok(b.done())
            }
            _ => Ok(unchanged(run)),
        },
        Event::Prompt(kind) => {
            if run.status != RunStatus::Active
                || !run.state.prompts_on_entry()
                || run.pending_action.is_some()
                || run
                    .effect
                    .as_ref()
                    .is_some_and(|e| !matches!(e, Effect::DeliverPrompt { .. }))
            {
                return Ok(unchanged(run));
            }
            b.prompt(kind, vec![]);
            Ok(b.done())
        }
        Event::EffectDone { effect } => {
            if run.effect.as_ref().is_some_and(|e| e.id() == effect) {
                b.run.effect = None;
                Ok(b.done())
            } else {
                Ok(unchanged(run))
            }
        }
        Event::CountCalls { count } => {
            if count <= run.model_call_count || run.status.is_terminal() {
                return Ok(unchanged(run));
            }
            b.run.model_call_count = count;
            Ok(b.done())
        }
        Event::SetMode {
            mode,
            max_model_calls,
        } => {
            if run.status != RunStatus::Active {
                return Ok(unchanged(run));
            }
            b.run.mode = mode;
            if let Some(max) = max_model_calls {
                b.run.max_model_calls = max;
            }
            if b.run == *run {
                return Ok(unchanged(run));
            }
            b.event(
                "run_updated",
                json!({"mode": mode.as_str(), "max_model_calls": b.run.max_model_calls}),
            );
            Ok(b.done())
        }
    }
}

fn converge_current_step(b: &mut Builder, status: StepStatus, why: &str) {
    let now = b.now;
    if let Some(id) = b.run.current_step_id.clone()
        && let Some(step) = b.run.step_mut(&id)
        && step.status == StepStatus::Executing
    {
        step.status = status;
        step.failure_reason = Some(why.to_string());
        step.updated_at = now;
    }
}

/// §6.2 for one action. `Err` is what the repair prompt tells the model.
fn consume(b: &mut Builder, a: &PendingAction, note: Option<&NoteFacts>) -> Result<(), String> {
    let run = b.run.clone();
    if a.expected_state_revision != run.state_revision
        || a.expected_pathway_revision != run.pathway_revision
    {
        return Err(format!(
            "{} was based on state revision {} and Pathway revision {}, but the Run is now at {} and {}: read the Pathway again and submit for the current state",
            a.kind.name(),
            a.expected_state_revision,
            a.expected_pathway_revision,
            run.state_revision,
            run.pathway_revision
        ));
    }
    if a.kind.required_state() != run.state {
        return Err(format!(
            "{} is not valid in {}; the valid action is {}",
            a.kind.name(),
            run.state.as_str(),
            run.valid_action()
        ));
    }
    let now = b.now;
    let live = |version: i64, digest: &str| -> Result<&NoteFacts, String> {
        match note {
            None => Err("the Blueprint note is missing".to_string()),
            Some(n) if !n.is_blueprint => Err(format!("note_{} is not a Blueprint", n.id)),
            Some(n) if n.version != version || n.digest != digest => Err(format!(
                "the Blueprint note_{} changed (now version {}) since it was submitted at version {version}: submit again for the current version",
                n.id, n.version
            )),
            Some(n) => Ok(n),
        }
    };
    match &a.kind {
        ActionKind::SubmitRequirements { requirements } => {
            b.run.requirements = Some(requirements.clone());
            b.enter(WorkState::Planning);
        }
        ActionKind::SubmitPathway { .. } => {
            if run.pending_steps().next().is_none() {
                return Err(
                    "the Pathway has no pending Step: write it with pathway_write first".into(),
                );
            }
            b.enter(WorkState::ReviewingPathway);
        }
        ActionKind::SubmitPathwayReview { .. } => {
            let Some(first) = run.pending_steps().next().map(|s| s.id.clone()) else {
                return Err(
                    "the Pathway has no pending Step left: write the next Steps with pathway_write"
                        .into(),
                );
            };
            let step = b.run.step_mut(&first).expect("found above");
            step.status = StepStatus::Current;
            step.updated_at = now;
            b.run.current_step_id = Some(first);
            b.enter(WorkState::Blueprinting);
        }
        ActionKind::SubmitBlueprint {
            blueprint_id,
            blueprint_version,
            content_digest,
        } => {
            let n = live(*blueprint_version, content_digest)?;
            if n.id != *blueprint_id {
                return Err(format!("note_{blueprint_id} is not the note checked"));
            }
            let id = run.current_step_id.clone().ok_or("no current Step")?;
            let step = b.run.step_mut(&id).ok_or("no current Step")?;
            step.retire_binding();
            step.blueprint = Some(BlueprintBinding {
                note_id: n.id,
                bound_version: n.version,
                content_digest: n.digest.clone(),
                reviewed_version: None,
                reviewed_digest: None,
                bound_at: now,
                reviewed_at: None,
            });
            step.updated_at = now;
            b.event(
                "step_blueprint_bound",
                json!({"step_id": id, "note_id": n.id, "version": n.version}),
            );
            b.enter(WorkState::ReviewingBlueprint);
        }
        ActionKind::SubmitBlueprintReview {
            blueprint_version,
            content_digest,
            ..
        } => {
            live(*blueprint_version, content_digest)?;
            let id = run.current_step_id.clone().ok_or("no current Step")?;
            let step = b.run.step_mut(&id).ok_or("no current Step")?;
            let binding = step
                .blueprint
                .as_mut()
                .ok_or("the current Step has no Blueprint: submit one first")?;
            binding.reviewed_version = Some(*blueprint_version);
            binding.reviewed_digest = Some(content_digest.clone());
            binding.reviewed_at = Some(now);
            match run.mode {
                Mode::Auto => handoff(b, &id)?,
                Mode::Collaborative => b.enter(WorkState::AwaitingExecution),
            }
        }
        ActionKind::ApproveExecution {
            blueprint_version,
            content_digest,
            ..
        } => {
            live(*blueprint_version, content_digest)?;
            let id = run.current_step_id.clone().ok_or("no current Step")?;
            let reviewed = run
                .step(&id)
                .and_then(|s| s.blueprint.as_ref())
                .is_some_and(|bd| bd.reviewed_as(*blueprint_version, content_digest));
            if !reviewed {
                return Err("the approval is not for the reviewed Blueprint version: it changed after review".into());
            }
            handoff(b, &id)?;
        }
    }
    Ok(())
}

/// Executing, with the create effect for exactly the reviewed Blueprint.
fn handoff(b: &mut Builder, step_id: &str) -> Result<(), String> {
    let binding = b
        .run
        .step(step_id)
        .and_then(|s| s.blueprint.clone())
        .ok_or("the current Step has no Blueprint")?;
    let (Some(version), Some(digest)) = (binding.reviewed_version, binding.reviewed_digest) else {
        return Err("the Blueprint has not been reviewed".into());
    };
    b.enter(WorkState::Executing);
    let id = b.effect_id();
    b.run.effect = Some(Effect::CreateBlueprintLoop {
        id,
        step_id: step_id.to_string(),
        note_id: binding.note_id,
        blueprint_version: version,
        source_digest: digest,
        at: b.now,
    });
    Ok(())
}
