//! The Lattice controller, sole owner of a Run's state, status, current Step and Step status
//! (LAT-2). One reconciliation is one store transaction: it re-reads the Run and the records
//! it depends on (loops, the Blueprint note, the model calls), applies the machine's events,
//! carries out at most a few effects (a loop created or started, a prompt or the completion
//! mail queued under its effect's key) and writes the Run with them — so a crash leaves either
//! everything or nothing, and a retried effect finds its own earlier result (LAT-3, LAT-6, LAT-8).

use super::persist::{self, Moves};
use super::texts;
use crate::blueprint_loop::texts::AUDIT_AGENT;
use crate::blueprint_loop::{commit, machine as bl};
use crate::slot::WorkflowSlot;
use troupe_core::blueprint_loop::{BlueprintLoop, LoopSource, LoopStatus, RunMode};
use troupe_core::continuation_guard::GuardLimits;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::lattice::effect::continue_key;
use troupe_core::lattice::{
    Effect, Event, LatticeRun, LoopAttempt, LoopOutcome, NoteFacts, RunStatus, StatusReason,
    WorkState, budget_spent,
};
use troupe_core::message::Origin;
use troupe_core::{MessageId, ThreadId};
use troupe_store::{NewBlueprintLoop, Note, NoteId, NoteKind, StoreError, Tx};

/// Why a reconciliation runs (startup also re-delivers a running loop's missing first prompt).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    Enable,
    Resume,
    Action,
    LoopChanged,
    NoteChange,
    Startup,
    /// The continuation gate after a finished turn.
    Gate(MessageId),
}

/// What one reconciliation did.
#[derive(Debug, Default)]
pub struct Pass {
    pub run: Option<LatticeRun>,
    /// Deliveries queued in the session (a prompt, a loop's first prompt, the completion mail).
    pub deliveries: Vec<Delivery>,
    /// Threads whose live work stops once committed.
    pub abort: Vec<ThreadId>,
    /// The gate may propose the plain continuation (nothing else is pending).
    pub continuation: Option<Delivery>,
}

impl Pass {
    pub fn drive(&self) -> bool {
        !self.deliveries.is_empty()
    }
}

/// The live note as the machine measures it, with the note itself.
pub fn note_facts(tx: &Tx<'_>, id: i64) -> Result<Option<(NoteFacts, Note)>, StoreError> {
    Ok(tx.find_note(NoteId(id))?.map(|n| {
        (
            NoteFacts {
                id: n.id.0,
                version: n.version,
                digest: n.content_digest(),
                is_blueprint: n.kind == NoteKind::Blueprint,
            },
            n,
        )
    }))
}

fn prompt_delivery(run: &LatticeRun) -> Option<Delivery> {
    let Some(Effect::DeliverPrompt {
        prompt_type,
        delivery_key,
        validation_errors,
        ..
    }) = &run.effect
    else {
        return None;
    };
    Some(Delivery {
        mode: InboxMode::Steer,
        priority: Priority::OWN_TIMER,
        origin: Origin::System(format!("lattice_{}", prompt_type.as_str())),
        text: texts::prompt(run, *prompt_type, validation_errors),
        visible: false,
        delivery_key: Some(delivery_key.clone()),
        order_key: None,
        defers_calls: false,
    })
}

fn completion_delivery(run: &LatticeRun, key: &str) -> Delivery {
    Delivery {
        mode: InboxMode::Task,
        priority: Priority::USER,
        origin: Origin::System("lattice_completed".into()),
        text: texts::completion(run),
        visible: true,
        delivery_key: Some(key.to_string()),
        order_key: None,
        defers_calls: false,
    }
}

/// The person's goal given at enable, as their task.
pub fn goal_delivery(run: &LatticeRun, goal: &str) -> Delivery {
    Delivery {
        mode: InboxMode::Task,
        priority: Priority::USER,
        origin: Origin::User,
        text: goal.to_string(),
        visible: true,
        delivery_key: Some(format!("lattice:{}:goal", run.id.0)),
        order_key: None,
        defers_calls: false,
    }
}

fn owned(l: &BlueprintLoop, run: &LatticeRun, a: &LoopAttempt) -> bool {
    l.source == LoopSource::Lattice
        && l.thread_id == run.thread_id
        && l.source_digest.as_deref() == Some(a.source_digest.as_str())
}

fn outcome(l: &BlueprintLoop) -> Option<LoopOutcome> {
    let error = || l.error.clone().unwrap_or_else(|| l.status.as_str().into());
    match l.status {
        LoopStatus::Completed => Some(LoopOutcome::Completed {
            summary: l.summary.clone().unwrap_or_default(),
        }),
        LoopStatus::Failed => Some(LoopOutcome::Failed { error: error() }),
        LoopStatus::Cancelled => Some(LoopOutcome::Cancelled { error: error() }),
        _ => None,
    }
}

/// One reconciliation of the thread's current Run, in the caller's transaction.
pub fn reconcile(
    tx: &mut Tx<'_>,
    thread: ThreadId,
    reason: Reason,
    limits: GuardLimits,
) -> Result<Pass, StoreError> {
    let mut pass = Pass::default();
    let Some(run) = tx.current_lattice_run(thread)? else {
        return Ok(pass);
    };
    let now = tx.now();
    let mut m = Moves::new(run);
    if m.run.status == RunStatus::Active {
        active(tx, &mut m, &mut pass, reason, limits, now)?;
    } else if m.run.status == RunStatus::Paused && reason == Reason::Startup {
        // A paused Run never advances; its running loop still gets its first prompt once.
        first_prompt_again(tx, &m.run)?;
    }
    if let Some(Effect::DeliverCompletion { id, delivery_key }) = m.run.effect.clone() {
        // The mail first, then the acknowledgement, in one write (LAT-8).
        let d = completion_delivery(&m.run, &delivery_key);
        tx.deliver(thread, &d)?;
        m.must(Event::EffectDone { effect: id }, now);
        pass.deliveries.push(d);
    }
    let changed = m.changed();
    let written = persist::write(tx, &m)?;
    if !changed {
        persist::project_slot(tx, &m.run)?;
    }
    pass.abort = written.abort;
    if let Reason::Gate(terminal) = reason
        && m.run.status == RunStatus::Active
        && m.run.effect.is_none()
        && m.run.pending_action.is_none()
        && m.run.state.prompts_on_entry()
    {
        pass.continuation = Some(Delivery {
            mode: InboxMode::Steer,
            priority: Priority::OWN_TIMER,
            origin: Origin::Continuation("lattice".into()),
            text: texts::continuation(&m.run),
            visible: false,
            delivery_key: Some(continue_key(m.run.id, terminal)),
            order_key: None,
            defers_calls: false,
        });
    }
    pass.run = Some(m.run);
    Ok(pass)
}

fn is_active(m: &Moves) -> bool {
    m.run.status == RunStatus::Active
}

fn active(
    tx: &mut Tx<'_>,
    m: &mut Moves,
    pass: &mut Pass,
    reason: Reason,
    limits: GuardLimits,
    now: i64,
) -> Result<(), StoreError> {
    let thread = m.run.thread_id;
    let count = tx.model_calls_since(thread, m.run.created_at)?;
    m.must(Event::CountCalls { count }, now);
    // The slot must project this Run; a slot someone else holds is a conflict.
    let t = tx.thread(thread)?;
    match WorkflowSlot::of(t.workflow.as_ref()) {
        Some(WorkflowSlot::Lattice(s)) if s.run_id == m.run.id => {}
        None => tx.set_workflow(
            thread,
            Some(&WorkflowSlot::Lattice(persist::slot_for(&m.run)).to_value()),
        )?,
        Some(_) => {
            m.must(Event::Pause(StatusReason::WorkflowProjectionConflict), now);
        }
    }
    if let Reason::Gate(_) = reason
        && let Some(Effect::DeliverPrompt {
            id,
            delivery_key,
            attempt_count,
            ..
        }) = m.run.effect.clone()
        && attempt_count > 0
        && tx.delivery_receipt(thread, &delivery_key)?.is_some()
    {
        // The prompt was read by the turn that just ended.
        m.must(Event::EffectDone { effect: id }, now);
    }
    if is_active(m) {
        blueprint_revision(tx, m, now)?;
    }
    if is_active(m) {
        loops(tx, m, now)?;
    }
    if is_active(m) && budget_spent(&m.run) && m.run.state.prompts_on_entry() {
        m.must(Event::Pause(StatusReason::ModelCallBudgetExhausted), now);
    }
    if is_active(m) && m.run.pending_action.is_some() {
        let note = match m.run.pending_action.as_ref().map(|a| &a.kind) {
            Some(troupe_core::lattice::ActionKind::SubmitBlueprint { blueprint_id, .. }) => {
                note_facts(tx, *blueprint_id)?.map(|(f, _)| f)
            }
            Some(_) => match bound_note(&m.run) {
                Some(id) => note_facts(tx, id)?.map(|(f, _)| f),
                None => None,
            },
            None => None,
        };
        m.must(Event::ConsumeAction { note }, now);
    }
    for _ in 0..4 {
        if !is_active(m) || !effect(tx, m, pass, limits, now)? {
            break;
        }
    }
    if reason == Reason::Startup {
        first_prompt_again(tx, &m.run)?;
    }
    if is_active(m)
        && let Some(d) = prompt_delivery(&m.run)
        && let Some(Effect::DeliverPrompt { id, .. }) = &m.run.effect
    {
        let id = *id;
        let delivered = tx.deliver(thread, &d)?;
        if delivered.created {
            m.must(Event::PromptDelivered { effect: id }, now);
        }
        pass.deliveries.push(d);
    }
    Ok(())
}

/// The current Step's bound Blueprint note.
fn bound_note(run: &LatticeRun) -> Option<i64> {
    run.current_step()
        .and_then(|s| s.blueprint.as_ref())
        .map(|b| b.note_id)
}

/// In awaiting_execution the reviewed Blueprint must still be what it was (LAT-7's collaborative
/// side): gone → paused; changed → back to review.
fn blueprint_revision(tx: &Tx<'_>, m: &mut Moves, now: i64) -> Result<(), StoreError> {
    if m.run.state != WorkState::AwaitingExecution {
        return Ok(());
    }
    let Some(binding) = m.run.current_step().and_then(|s| s.blueprint.clone()) else {
        return Ok(());
    };
    match note_facts(tx, binding.note_id)? {
        None => {
            m.must(Event::Pause(StatusReason::BlueprintUnavailable), now);
        }
        Some((n, _)) if !n.is_blueprint => {
            m.must(Event::Pause(StatusReason::BlueprintUnavailable), now);
        }
        Some((n, _)) if !binding.reviewed_as(n.version, &n.digest) => {
            m.must(Event::BlueprintChanged { note: n }, now);
        }
        Some(_) => {}
    }
    Ok(())
}

/// Only the exact owned loop of the current attempt moves the Run; anything else pauses it.
fn loops(tx: &Tx<'_>, m: &mut Moves, now: i64) -> Result<(), StoreError> {
    let thread = m.run.thread_id;
    let creating = matches!(m.run.effect, Some(Effect::CreateBlueprintLoop { .. }));
    if let Some(l) = tx.active_loop_of_thread(thread)? {
        let known = m
            .run
            .pathway
            .iter()
            .any(|s| s.loop_history.iter().any(|a| a.loop_id == l.id));
        if !known && !creating {
            m.must(
                Event::Pause(StatusReason::BlueprintLoopOwnershipConflict),
                now,
            );
            return Ok(());
        }
    }
    let Some(attempt) = m.run.current_step().and_then(|s| s.live_attempt()).cloned() else {
        return Ok(());
    };
    // Another Run of this session claiming the same live loop.
    let claimants = tx
        .lattice_runs_of_thread(thread, 50)?
        .into_iter()
        .filter(|r| r.id != m.run.id)
        .any(|r| {
            r.pathway.iter().any(|s| {
                s.loop_history
                    .iter()
                    .any(|a| a.loop_id == attempt.loop_id && a.status.is_live())
            })
        });
    if claimants {
        m.must(Event::Pause(StatusReason::MultipleBlueprintLoopOwners), now);
        return Ok(());
    }
    match tx.find_blueprint_loop(attempt.loop_id)? {
        Some(l) if owned(&l, &m.run, &attempt) => {
            if let Some(outcome) = outcome(&l) {
                if matches!(m.run.effect, Some(Effect::StartBlueprintLoop { .. })) {
                    m.must(Event::LoopStarted { loop_id: l.id }, now);
                }
                m.must(
                    Event::LoopEnded {
                        loop_id: l.id,
                        outcome,
                    },
                    now,
                );
            }
        }
        _ => {
            m.must(
                Event::Pause(StatusReason::BlueprintLoopOwnershipConflict),
                now,
            );
        }
    }
    Ok(())
}

/// Carry out the create or start effect. Returns whether another round may help.
fn effect(
    tx: &mut Tx<'_>,
    m: &mut Moves,
    pass: &mut Pass,
    limits: GuardLimits,
    now: i64,
) -> Result<bool, StoreError> {
    let thread = m.run.thread_id;
    match m.run.effect.clone() {
        Some(Effect::CreateBlueprintLoop {
            step_id,
            note_id,
            blueprint_version,
            source_digest,
            at,
            ..
        }) => {
            // LAT-6: a loop this effect already created is found by its fingerprint.
            let found = tx.lattice_loops_by_fingerprint(thread, note_id, &source_digest, at)?;
            if found.len() > 1 {
                m.must(
                    Event::Pause(StatusReason::BlueprintLoopOwnershipConflict),
                    now,
                );
                return Ok(false);
            }
            if let Some(l) = found.first() {
                return Ok(m.must(Event::LoopCreated { loop_id: l.id }, now));
            }
            let Some((n, note)) = note_facts(tx, note_id)? else {
                m.must(Event::Pause(StatusReason::BlueprintUnavailable), now);
                return Ok(false);
            };
            if !n.is_blueprint {
                m.must(Event::Pause(StatusReason::BlueprintUnavailable), now);
                return Ok(false);
            }
            if n.version != blueprint_version || n.digest != source_digest {
                m.must(Event::BlueprintChanged { note: n }, now);
                return Ok(false);
            }
            if tx.active_loop_of_thread(thread)?.is_some()
                || tx.active_loop_of_note(note_id)?.is_some()
            {
                m.must(
                    Event::Pause(StatusReason::BlueprintLoopOwnershipConflict),
                    now,
                );
                return Ok(false);
            }
            let step =
                m.run.step(&step_id).cloned().ok_or_else(|| {
                    StoreError::Invalid(format!("Lattice step {step_id} is missing"))
                })?;
            let l = tx.create_blueprint_loop(&NewBlueprintLoop {
                note_id,
                note_version: n.version,
                title: note.title.clone(),
                thread_id: thread,
                origin_thread_id: thread,
                audit_agent: AUDIT_AGENT.into(),
                run_mode: RunMode::Current,
                user_prompt: Some(texts::step_instruction(&m.run, &step)),
                max_iterations: None,
                worktree: None,
                source: LoopSource::Lattice,
                source_digest: Some(source_digest),
            })?;
            tx.start_loop_guard(thread, &l.id.guard_ref(), limits)?;
            Ok(m.must(Event::LoopCreated { loop_id: l.id }, now))
        }
        Some(Effect::StartBlueprintLoop {
            loop_id,
            blueprint_version,
            source_digest,
            ..
        }) => {
            let attempt = m.run.current_step().and_then(|s| s.live_attempt()).cloned();
            let l = tx.find_blueprint_loop(loop_id)?;
            let (Some(l), Some(attempt)) = (l, attempt) else {
                m.must(
                    Event::Pause(StatusReason::BlueprintLoopOwnershipConflict),
                    now,
                );
                return Ok(false);
            };
            if !owned(&l, &m.run, &attempt) {
                m.must(
                    Event::Pause(StatusReason::BlueprintLoopOwnershipConflict),
                    now,
                );
                return Ok(false);
            }
            if l.status != LoopStatus::Armed {
                // Started before a crash, or already ended: the loop record says which.
                m.must(Event::LoopStarted { loop_id }, now);
                loops(tx, m, now)?;
                return Ok(false);
            }
            // LAT-7: the note is checked again right before the start.
            match note_facts(tx, l.note_id)? {
                Some((n, _))
                    if n.is_blueprint
                        && n.version == blueprint_version
                        && n.digest == source_digest => {}
                Some((n, _)) if n.is_blueprint => {
                    m.must(Event::BlueprintChanged { note: n }, now);
                    return Ok(false);
                }
                _ => {
                    m.must(Event::Pause(StatusReason::BlueprintUnavailable), now);
                    return Ok(false);
                }
            }
            let step =
                bl::step(&l, bl::Event::Start).map_err(|e| StoreError::Invalid(e.to_string()))?;
            let after = commit::commit(tx, &l, &step)?;
            if let Some(saved) = &after.saved {
                pass.deliveries.push(commit::first_prompt(saved));
            }
            m.must(Event::LoopStarted { loop_id }, now);
            Ok(false)
        }
        _ => Ok(false),
    }
}

/// At a cold start, a running Lattice loop that never got its first prompt gets it once (the
/// delivery key makes a repeat a no-op).
fn first_prompt_again(tx: &mut Tx<'_>, run: &LatticeRun) -> Result<(), StoreError> {
    let Some(attempt) = run.current_step().and_then(|s| s.live_attempt()) else {
        return Ok(());
    };
    if let Some(l) = tx.find_blueprint_loop(attempt.loop_id)?
        && l.status == LoopStatus::Running
        && l.source == LoopSource::Lattice
    {
        tx.deliver(l.thread_id, &commit::first_prompt(&l))?;
    }
    Ok(())
}
