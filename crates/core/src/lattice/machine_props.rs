//! Property test for the Lattice Run machine (`machine.rs`, LAT-2/LAT-3):
//! random sequences of submitted actions, loop events, effect completions, pauses, resumes
//! and cancels never reach a state the machine's rules forbid.

use super::test_support::{kind_for, note};
use crate::blueprint_loop::BlueprintLoopId;
use crate::lattice::pathway::{FutureStep, write_future};
use crate::lattice::{
    ActionSource, Event, LatticeRun, LoopOutcome, MachineError, Mode, PromptType, RunStatus,
    StatusReason, StepStatus, SubmitFacts, Submitted, WorkState, step, submit,
};
use crate::{LatticeRunId, ThreadId};
use proptest::prelude::*;

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128);
    ProptestConfig::with_cases(n)
}

const STATES: [WorkState; 7] = [
    WorkState::Clarifying,
    WorkState::Planning,
    WorkState::ReviewingPathway,
    WorkState::Blueprinting,
    WorkState::ReviewingBlueprint,
    WorkState::AwaitingExecution,
    WorkState::Executing,
];

#[derive(Clone, Debug)]
enum Op {
    /// Submit the action of `state` (the Run's own when `None`), then maybe consume it.
    Act {
        state: Option<usize>,
        version: i64,
        panel: bool,
        consume: bool,
    },
    /// Write a Pathway of `n` steps (only Planning/ReviewingPathway take it).
    Plan(usize),
    LoopCreated(i64),
    LoopStarted(i64),
    LoopEnded(i64, u8),
    BlueprintChanged(i64),
    Pause,
    Resume,
    Cancel,
    /// Complete (true) or deliver (false) the current effect, or a made-up one.
    Effect {
        current: bool,
        done: bool,
    },
    Prompt,
    CountCalls(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (prop::option::weighted(0.2, 0usize..7), 1i64..3, any::<bool>(), prop::bool::weighted(0.9))
            .prop_map(|(state, version, panel, consume)| Op::Act { state, version, panel, consume }),
        2 => (1usize..4).prop_map(Op::Plan),
        2 => (1i64..4).prop_map(Op::LoopCreated),
        2 => (1i64..4).prop_map(Op::LoopStarted),
        2 => ((1i64..4), 0u8..3).prop_map(|(l, o)| Op::LoopEnded(l, o)),
        1 => (1i64..3).prop_map(Op::BlueprintChanged),
        1 => Just(Op::Pause),
        1 => Just(Op::Resume),
        1 => Just(Op::Cancel),
        3 => (any::<bool>(), any::<bool>()).prop_map(|(current, done)| Op::Effect { current, done }),
        1 => Just(Op::Prompt),
        1 => (0u32..40).prop_map(Op::CountCalls),
    ]
}

fn effect_id(run: &LatticeRun) -> Option<u64> {
    let v = serde_json::to_value(run.effect.as_ref()?).ok()?;
    // Every effect variant carries its id.
    v.as_object()?
        .values()
        .find_map(|inner| inner.get("id"))
        .and_then(|i| i.as_u64())
        .or_else(|| v.get("id").and_then(|i| i.as_u64()))
}

fn check(before: &LatticeRun, after: &LatticeRun) -> Result<(), TestCaseError> {
    if before.status.is_terminal() {
        prop_assert_eq!(after, before, "a terminal Run changed");
    }
    prop_assert!(after.state_revision >= before.state_revision);
    prop_assert!(after.pathway_revision >= before.pathway_revision);
    prop_assert!(after.next_effect_id >= before.next_effect_id);
    prop_assert!(after.next_step_no >= before.next_step_no);
    if let Some(id) = effect_id(after) {
        prop_assert!(
            id < after.next_effect_id,
            "effect {id} not below {}",
            after.next_effect_id
        );
    }
    let live_steps = after
        .pathway
        .iter()
        .filter(|s| matches!(s.status, StepStatus::Current | StepStatus::Executing))
        .count();
    prop_assert!(live_steps <= 1, "{live_steps} current steps");
    let live_loops = after
        .pathway
        .iter()
        .flat_map(|s| &s.loop_history)
        .filter(|a| a.status.is_live())
        .count();
    prop_assert!(live_loops <= 1, "{live_loops} live loops");
    if after.status.is_terminal() {
        prop_assert!(live_loops == 0, "a finished Run left a loop live");
    }
    if after.status == RunStatus::Paused {
        prop_assert!(after.paused_at.is_some());
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases())]

    /// Invariants under any sequence of events: a finished (completed, failed, cancelled)
    /// Run never changes again (each event is refused or leaves it as it is); revisions and effect/step
    /// numbers never go down; the one effect in flight has a number already handed out; at
    /// most one Step is current and at most one BlueprintLoop attempt is live, none once the
    /// Run is finished; a paused Run records when; an event that says nothing changed left
    /// the Run exactly as it was.
    #[test]
    fn lattice_run_invariants(mode in prop::sample::select(vec![Mode::Auto, Mode::Collaborative]), ops in prop::collection::vec(op(), 1..50)) {
        let mut run = LatticeRun::new(LatticeRunId(1), ThreadId(1), mode, 20, Some("g".into()), 0);
        for (i, op) in ops.into_iter().enumerate() {
            let now = i as i64 + 1;
            let before = run.clone();
            let event = match op {
                Op::Act { state, version, panel, consume } => {
                    let n = note(version);
                    let st = state.map(|s| STATES[s]).unwrap_or(run.state);
                    let facts = SubmitFacts { note: Some(n.clone()), person_spoke: true };
                    let source = if panel { ActionSource::Panel } else { ActionSource::Agent };
                    if let Ok(Submitted::Queued(q)) = submit(&run, kind_for(st, &n), source, &facts, now) {
                        check(&run, &q)?;
                        run = *q;
                    }
                    if !consume { continue; }
                    Event::ConsumeAction { note: Some(n) }
                }
                Op::Plan(k) => {
                    let future: Vec<FutureStep> = (0..k).map(|j| FutureStep {
                        id: None, title: format!("s{j}"), objective: format!("o{j}"),
                        acceptance_criteria: vec![], assumptions: vec![], addresses_failed_step_ids: vec![],
                    }).collect();
                    if let Ok(next) = write_future(&run, &future, now) {
                        check(&run, &next)?;
                        run = next;
                    }
                    continue;
                }
                Op::LoopCreated(l) => Event::LoopCreated { loop_id: BlueprintLoopId(l) },
                Op::LoopStarted(l) => Event::LoopStarted { loop_id: BlueprintLoopId(l) },
                Op::LoopEnded(l, o) => Event::LoopEnded {
                    loop_id: BlueprintLoopId(l),
                    outcome: match o {
                        0 => LoopOutcome::Completed { summary: "ok".into() },
                        1 => LoopOutcome::Failed { error: "bad".into() },
                        _ => LoopOutcome::Cancelled { error: "stop".into() },
                    },
                },
                Op::BlueprintChanged(v) => Event::BlueprintChanged { note: note(v) },
                Op::Pause => Event::Pause(StatusReason::UserExit),
                Op::Resume => Event::Resume,
                Op::Cancel => Event::Cancel(StatusReason::UserCancelled),
                Op::Effect { current, done } => {
                    let effect = if current { effect_id(&run).unwrap_or(999) } else { 999 };
                    if done { Event::EffectDone { effect } } else { Event::PromptDelivered { effect } }
                }
                Op::Prompt => Event::Prompt(PromptType::Resume),
                Op::CountCalls(count) => Event::CountCalls { count },
            };
            match step(&run, event.clone(), now) {
                Ok(t) => {
                    let finished = before.status.is_terminal();
                    prop_assert!(!(finished && t.changed), "{:?} moved a finished Run", event);
                    if !t.changed {
                        prop_assert_eq!(&t.run, &run, "unchanged transition moved the Run on {:?}", event);
                        prop_assert!(t.events.is_empty());
                    }
                    check(&run, &t.run)?;
                    run = t.run;
                }
                Err(MachineError::Terminal(_)) => prop_assert!(run.status.is_terminal()),
                Err(MachineError::NotPaused) => prop_assert!(run.status != RunStatus::Paused),
            }
            check(&before, &run)?;
        }
    }
}
