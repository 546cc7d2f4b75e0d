//! The machine against §6.2: every (state, action) pair, the loop events, pause, resume and
//! cancel.

use super::test_support::{kind_for, note};
use super::*;
use crate::blueprint_loop::BlueprintLoopId;
use crate::{LatticeRunId, ThreadId};

fn new_run(mode: Mode) -> LatticeRun {
    LatticeRun::new(LatticeRunId(1), ThreadId(1), mode, 0, None, 0)
}

/// Submit and consume the valid action of the Run's state.
fn advance(run: &LatticeRun, n: &NoteFacts) -> LatticeRun {
    let kind = kind_for(run.state, n);
    let facts = SubmitFacts {
        note: Some(n.clone()),
        person_spoke: true,
    };
    let Submitted::Queued(queued) = submit(run, kind, ActionSource::Agent, &facts, 1).unwrap()
    else {
        panic!("not queued")
    };
    let t = step(
        &queued,
        Event::ConsumeAction {
            note: Some(n.clone()),
        },
        2,
    )
    .unwrap();
    assert!(t.changed);
    t.run
}

fn planned(mode: Mode, steps: usize) -> LatticeRun {
    let n = note(1);
    let mut r = advance(&new_run(mode), &n);
    assert_eq!(r.state, WorkState::Planning);
    let future: Vec<FutureStep> = (0..steps)
        .map(|i| FutureStep {
            id: None,
            title: format!("s{i}"),
            objective: format!("o{i}"),
            acceptance_criteria: vec![],
            assumptions: vec![],
            addresses_failed_step_ids: vec![],
        })
        .collect();
    r = pathway::write_future(&r, &future, 1).unwrap();
    r
}

/// A Run moved to `state` through the valid actions.
fn at(mode: Mode, state: WorkState) -> LatticeRun {
    let n = note(1);
    let mut r = planned(mode, 2);
    while r.state != state {
        r = advance(&r, &n);
    }
    r
}

#[test]
fn every_state_accepts_only_its_own_action_and_moves_as_the_table_says() {
    let n = note(1);
    let expected = [
        (WorkState::Clarifying, WorkState::Planning),
        (WorkState::Planning, WorkState::ReviewingPathway),
        (WorkState::ReviewingPathway, WorkState::Blueprinting),
        (WorkState::Blueprinting, WorkState::ReviewingBlueprint),
        (WorkState::ReviewingBlueprint, WorkState::AwaitingExecution),
        (WorkState::AwaitingExecution, WorkState::Executing),
    ];
    for (from, to) in expected {
        let r = if from == WorkState::Clarifying {
            new_run(Mode::Collaborative)
        } else {
            at(Mode::Collaborative, from)
        };
        for other in WorkState::ALL {
            if other == WorkState::Executing {
                continue;
            }
            let kind = kind_for(other, &n);
            let got = submit(
                &r,
                kind.clone(),
                ActionSource::Agent,
                &SubmitFacts {
                    note: Some(n.clone()),
                    person_spoke: true,
                },
                1,
            );
            if other == from {
                let Ok(Submitted::Queued(q)) = got else {
                    panic!("{from:?}: its own action was refused: {got:?}")
                };
                let t = step(
                    &q,
                    Event::ConsumeAction {
                        note: Some(n.clone()),
                    },
                    2,
                )
                .unwrap();
                assert_eq!(t.run.state, to, "{from:?}");
                assert_eq!(t.run.state_revision, r.state_revision + 1);
                assert!(t.run.pending_action.is_none());
                assert_eq!(
                    matches!(t.run.effect, Some(Effect::DeliverPrompt { .. })),
                    to.prompts_on_entry(),
                    "{to:?}: a state-entry prompt exactly where the model acts next"
                );
            } else {
                assert!(
                    matches!(got, Err(SubmitRefusal::WrongState { valid, .. }) if valid == r.valid_action()),
                    "{from:?} accepted {}: {got:?}",
                    kind.name()
                );
            }
        }
    }
}

#[test]
fn auto_review_goes_straight_to_executing_with_a_create_effect() {
    let r = at(Mode::Auto, WorkState::ReviewingBlueprint);
    let r = advance(&r, &note(1));
    assert_eq!(r.state, WorkState::Executing);
    let Some(Effect::CreateBlueprintLoop {
        step_id,
        blueprint_version,
        source_digest,
        ..
    }) = &r.effect
    else {
        panic!("{:?}", r.effect)
    };
    assert_eq!(
        (step_id.as_str(), *blueprint_version, source_digest.as_str()),
        ("step-1", 1, "d1")
    );
}

#[test]
fn create_then_start_then_completion_moves_to_reviewing_pathway_or_completes() {
    let mut r = advance(&at(Mode::Auto, WorkState::ReviewingBlueprint), &note(1));
    let l = BlueprintLoopId(9);
    r = step(&r, Event::LoopCreated { loop_id: l }, 3).unwrap().run;
    assert_eq!(r.current_step().unwrap().status, StepStatus::Executing);
    assert!(matches!(r.effect, Some(Effect::StartBlueprintLoop { loop_id, .. }) if loop_id == l));
    r = step(&r, Event::LoopStarted { loop_id: l }, 4).unwrap().run;
    assert!(r.effect.is_none());
    assert_eq!(
        r.current_step().unwrap().loop_history[0].status,
        AttemptStatus::Running
    );
    // A foreign loop's end changes nothing.
    let foreign = step(
        &r,
        Event::LoopEnded {
            loop_id: BlueprintLoopId(8),
            outcome: LoopOutcome::Completed {
                summary: "x".into(),
            },
        },
        5,
    )
    .unwrap();
    assert!(!foreign.changed);
    r = step(
        &r,
        Event::LoopEnded {
            loop_id: l,
            outcome: LoopOutcome::Completed {
                summary: "done 1".into(),
            },
        },
        5,
    )
    .unwrap()
    .run;
    assert_eq!(r.state, WorkState::ReviewingPathway, "LAT-11");
    assert_eq!(r.pathway[0].status, StepStatus::Completed);
    assert_eq!(r.pathway[0].result_summary.as_deref(), Some("done 1"));
    assert!(r.current_step_id.is_none());
    // Step 2 through to the end.
    let n = note(1);
    while r.state != WorkState::Executing {
        r = advance(&r, &n);
    }
    let l2 = BlueprintLoopId(10);
    r = step(&r, Event::LoopCreated { loop_id: l2 }, 6).unwrap().run;
    r = step(&r, Event::LoopStarted { loop_id: l2 }, 7).unwrap().run;
    let t = step(
        &r,
        Event::LoopEnded {
            loop_id: l2,
            outcome: LoopOutcome::Completed {
                summary: "done 2".into(),
            },
        },
        8,
    )
    .unwrap();
    assert_eq!(t.run.status, RunStatus::Completed, "LAT-9");
    assert!(
        matches!(&t.run.effect, Some(Effect::DeliverCompletion { delivery_key, .. }) if delivery_key == "lattice:1:completion")
    );
}

#[test]
fn a_failed_loop_pauses_the_run_at_that_step_and_resume_reopens_it_with_evidence_kept() {
    let mut r = advance(&at(Mode::Auto, WorkState::ReviewingBlueprint), &note(1));
    let l = BlueprintLoopId(9);
    r = step(&r, Event::LoopCreated { loop_id: l }, 3).unwrap().run;
    r = step(&r, Event::LoopStarted { loop_id: l }, 4).unwrap().run;
    r = step(
        &r,
        Event::LoopEnded {
            loop_id: l,
            outcome: LoopOutcome::Failed {
                error: "iteration_exhausted".into(),
            },
        },
        5,
    )
    .unwrap()
    .run;
    assert_eq!(
        (r.status, r.status_reason),
        (RunStatus::Paused, Some(StatusReason::BlueprintLoopFailed))
    );
    assert_eq!(r.current_step().unwrap().status, StepStatus::Failed);
    // LAT-12: a paused Run never advances.
    let late = step(
        &r,
        Event::LoopEnded {
            loop_id: l,
            outcome: LoopOutcome::Completed {
                summary: "late".into(),
            },
        },
        6,
    )
    .unwrap();
    assert!(!late.changed);
    let t = step(&r, Event::Resume, 7).unwrap();
    assert_eq!(
        (t.run.status, t.run.state),
        (RunStatus::Active, WorkState::Blueprinting)
    );
    let s = t.run.current_step().unwrap();
    assert_eq!(s.status, StepStatus::Current);
    assert_eq!(s.failure_reason.as_deref(), Some("iteration_exhausted"));
    assert_eq!(
        s.loop_history[0].status,
        AttemptStatus::Failed,
        "the failure stays in loop_history"
    );
    assert!(s.blueprint.is_none() && s.blueprint_history.len() == 1);
    assert!(matches!(
        t.run.effect,
        Some(Effect::DeliverPrompt {
            prompt_type: PromptType::Resume,
            ..
        })
    ));
}

#[test]
fn a_budget_resume_grants_exactly_one_more_call() {
    let mut r = new_run(Mode::Auto);
    r.max_model_calls = 3;
    r = step(&r, Event::CountCalls { count: 3 }, 1).unwrap().run;
    assert!(budget_spent(&r));
    r = step(&r, Event::Pause(StatusReason::ModelCallBudgetExhausted), 2)
        .unwrap()
        .run;
    let t = step(&r, Event::Resume, 3).unwrap();
    assert_eq!(t.run.max_model_calls, 4);
    assert!(!budget_spent(&t.run));
    let r = step(&t.run, Event::CountCalls { count: 4 }, 4).unwrap().run;
    assert!(budget_spent(&r));
}

#[test]
fn a_changed_blueprint_before_handoff_goes_back_to_review_and_cancels_the_armed_loop() {
    let mut r = advance(&at(Mode::Auto, WorkState::ReviewingBlueprint), &note(1));
    r = step(
        &r,
        Event::LoopCreated {
            loop_id: BlueprintLoopId(9),
        },
        3,
    )
    .unwrap()
    .run;
    let t = step(&r, Event::BlueprintChanged { note: note(2) }, 4).unwrap();
    assert_eq!(t.run.state, WorkState::ReviewingBlueprint);
    assert_eq!(t.cancel_loops, vec![BlueprintLoopId(9)]);
    let s = t.run.current_step().unwrap();
    assert_eq!(s.status, StepStatus::Current);
    assert_eq!(s.blueprint.as_ref().unwrap().bound_version, 2);
    assert_eq!(
        s.blueprint_history.len(),
        1,
        "the old binding is kept in history"
    );
    assert!(matches!(
        t.run.effect,
        Some(Effect::DeliverPrompt {
            prompt_type: PromptType::StateEntry,
            ..
        })
    ));
    // Once running, a note change no longer moves the Run.
    let mut r2 = advance(&at(Mode::Auto, WorkState::ReviewingBlueprint), &note(1));
    r2 = step(
        &r2,
        Event::LoopCreated {
            loop_id: BlueprintLoopId(9),
        },
        3,
    )
    .unwrap()
    .run;
    r2 = step(
        &r2,
        Event::LoopStarted {
            loop_id: BlueprintLoopId(9),
        },
        3,
    )
    .unwrap()
    .run;
    assert!(
        !step(&r2, Event::BlueprintChanged { note: note(2) }, 4)
            .unwrap()
            .changed
    );
}

#[test]
fn duplicate_submit_is_idempotent_and_a_different_one_conflicts() {
    let r = new_run(Mode::Auto);
    let kind = kind_for(WorkState::Clarifying, &note(1));
    let facts = SubmitFacts::default();
    let Submitted::Queued(q) = submit(&r, kind.clone(), ActionSource::Agent, &facts, 1).unwrap()
    else {
        panic!()
    };
    assert_eq!(
        submit(&q, kind, ActionSource::Agent, &facts, 9),
        Ok(Submitted::AlreadyQueued)
    );
    let other = ActionKind::SubmitPathway { reason: "x".into() };
    assert!(matches!(
        submit(&q, other, ActionSource::Agent, &facts, 9),
        Err(SubmitRefusal::Conflict {
            pending: "submit_requirements"
        })
    ));
}

#[test]
fn a_stale_action_is_dropped_with_a_repair_prompt() {
    let r = planned(Mode::Auto, 1);
    let Submitted::Queued(mut q) = submit(
        &r,
        ActionKind::SubmitPathway { reason: "r".into() },
        ActionSource::Agent,
        &SubmitFacts::default(),
        1,
    )
    .unwrap() else {
        panic!()
    };
    q.pathway_revision += 1; // the Pathway was rewritten after the submit
    let t = step(&q, Event::ConsumeAction { note: None }, 2).unwrap();
    assert_eq!(t.run.state, WorkState::Planning);
    assert!(t.run.pending_action.is_none());
    let Some(Effect::DeliverPrompt {
        prompt_type: PromptType::Repair,
        validation_errors,
        ..
    }) = &t.run.effect
    else {
        panic!("{:?}", t.run.effect)
    };
    assert!(
        validation_errors[0].contains("Pathway revision"),
        "{validation_errors:?}"
    );
}

#[test]
fn collaborative_approval_by_the_model_needs_the_persons_word_and_the_reviewed_version() {
    let r = at(Mode::Collaborative, WorkState::AwaitingExecution);
    let k = kind_for(WorkState::AwaitingExecution, &note(1));
    let quiet = SubmitFacts {
        note: Some(note(1)),
        person_spoke: false,
    };
    assert_eq!(
        submit(&r, k.clone(), ActionSource::Agent, &quiet, 1),
        Err(SubmitRefusal::AwaitsPerson)
    );
    assert!(matches!(
        submit(&r, k, ActionSource::Panel, &quiet, 1),
        Ok(Submitted::Queued(_))
    ));
    let stale = kind_for(WorkState::AwaitingExecution, &note(2));
    assert_eq!(
        submit(&r, stale, ActionSource::Panel, &quiet, 1),
        Err(SubmitRefusal::ReviewStale)
    );
}

#[test]
fn user_exit_converges_the_attempt_and_releases_only_a_workflow_latch() {
    let mut r = advance(&at(Mode::Auto, WorkState::ReviewingBlueprint), &note(1));
    r = step(
        &r,
        Event::LoopCreated {
            loop_id: BlueprintLoopId(9),
        },
        3,
    )
    .unwrap()
    .run;
    r = step(
        &r,
        Event::LoopStarted {
            loop_id: BlueprintLoopId(9),
        },
        3,
    )
    .unwrap()
    .run;
    let t = step(&r, Event::Pause(StatusReason::UserExit), 4).unwrap();
    assert_eq!(t.cancel_loops, vec![BlueprintLoopId(9)]);
    assert_eq!(t.run.current_step().unwrap().status, StepStatus::Cancelled);
    assert_eq!(pause::sync(&r, &t.run), pause::LatchChange::ReleaseWorkflow);
    let b = step(&r, Event::Pause(StatusReason::BlueprintLoopFailed), 4).unwrap();
    assert_eq!(
        pause::sync(&r, &b.run),
        pause::LatchChange::Latch("Lattice run paused: blueprint loop failed".into())
    );
}

#[test]
fn cancel_is_terminal_idempotent_and_refused_for_a_completed_run() {
    let r = planned(Mode::Auto, 1);
    let t = step(&r, Event::Cancel(StatusReason::UserCancelled), 1).unwrap();
    assert_eq!(t.run.status, RunStatus::Cancelled);
    assert!(
        !step(&t.run, Event::Cancel(StatusReason::UserCancelled), 2)
            .unwrap()
            .changed
    );
    assert!(step(&t.run, Event::Resume, 2).is_err());
    let mut done = r.clone();
    done.status = RunStatus::Completed;
    assert!(step(&done, Event::Cancel(StatusReason::UserCancelled), 2).is_err());
}

#[test]
fn a_delivered_prompt_is_counted_and_settled_by_id() {
    let r = advance(&new_run(Mode::Auto), &note(1));
    let id = r.effect.as_ref().unwrap().id();
    let t = step(&r, Event::PromptDelivered { effect: id }, 3).unwrap();
    assert!(matches!(
        t.run.effect,
        Some(Effect::DeliverPrompt {
            attempt_count: 1,
            ..
        })
    ));
    assert!(
        !step(&t.run, Event::PromptDelivered { effect: id + 1 }, 3)
            .unwrap()
            .changed
    );
    assert!(
        !step(&t.run, Event::EffectDone { effect: id + 100 }, 4)
            .unwrap()
            .changed
    );
    assert!(
        step(&t.run, Event::EffectDone { effect: id }, 4)
            .unwrap()
            .run
            .effect
            .is_none()
    );
}
