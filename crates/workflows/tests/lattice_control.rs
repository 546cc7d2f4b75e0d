//! Lattice scenarios of control (the digest's §6.9, 2–7 and the invariants): the person's
//! approval, a Blueprint edited after review, drift at the handoff, a failed loop and resume,
//! loops the Run does not own, a paused Run and the latch it shares with the person.

mod lattice_support;
mod support;

use lattice_support::*;
use serde_json::json;
use support::{Reply, call, user_texts, world};
use troupe_core::blueprint_loop::LoopStatus;
use troupe_core::lattice::{
    AttemptStatus, Effect, Event, Mode, RunStatus, StatusReason, StepStatus, WorkState,
};
use troupe_core::pause::PauseReason;
use troupe_workflows::WorkflowError;

fn code(e: WorkflowError) -> &'static str {
    match e {
        WorkflowError::Conflict { code, .. } => code,
        other => panic!("not a conflict: {other}"),
    }
}

#[tokio::test]
async fn collaborative_approval() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    w.turn(s, "hello").await;
    let note = blueprint(&w, "One file");
    let run = staged(
        &w,
        s,
        Mode::Collaborative,
        note,
        1,
        WorkState::AwaitingExecution,
    );
    assert!(
        lattice_loops(&w, s).is_empty(),
        "no loop before the person approves"
    );
    let v = w.wf.approve_lattice_run(run.id).await.unwrap();
    assert_eq!(v.run.state, WorkState::Executing);
    let loops = lattice_loops(&w, s);
    assert_eq!(loops.len(), 1);
    let step = &v.run.pathway[0];
    assert_eq!(step.status, StepStatus::Executing);
    assert_eq!(
        loops[0].user_prompt.as_deref(),
        Some(troupe_workflows::lattice::texts::step_instruction(&v.run, step).as_str()),
        "exactly the reviewed Blueprint, with no extra instruction"
    );
    let e = w.wf.approve_lattice_run(run.id).await.unwrap_err();
    assert_eq!(code(e), "not_awaiting_execution");
}

#[tokio::test]
async fn stale_approval() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    w.turn(s, "hello").await;
    let note = blueprint(&w, "One file");
    let run = staged(
        &w,
        s,
        Mode::Collaborative,
        note,
        1,
        WorkState::AwaitingExecution,
    );
    edit(&w, note, "a changed Blueprint");
    until("the note change to send the Run back to review", || {
        run_by_id(&w, run.id).state == WorkState::ReviewingBlueprint
    })
    .await;
    w.idle(s).await;
    let r = run_by_id(&w, run.id);
    let step = &r.pathway[0];
    assert_eq!(
        step.blueprint_history.len(),
        1,
        "the reviewed binding is kept in history"
    );
    assert_eq!(step.blueprint.as_ref().unwrap().bound_version, 2);
    assert!(
        w.provider.requests().iter().any(|q| user_texts(q)
            .iter()
            .any(|t| t.contains("The Run is now in reviewing_blueprint"))),
        "a state-entry prompt"
    );
    let e = w.wf.approve_lattice_run(run.id).await.unwrap_err();
    assert_eq!(code(e), "not_awaiting_execution");
}

#[tokio::test]
async fn auto_drift_at_handoff() {
    let w = world();
    let s = w.session();
    w.turn(s, "hello").await;
    let note = blueprint(&w, "One file");
    let run = staged(&w, s, Mode::Auto, note, 1, WorkState::Executing);
    let armed = handed_over(&w, &run, false);
    assert!(matches!(
        run_by_id(&w, run.id).effect,
        Some(Effect::StartBlueprintLoop { .. })
    ));
    edit(&w, note, "drifted");
    w.wf.recover_lattice_runs().await.unwrap();
    let r = run_by_id(&w, run.id);
    assert_eq!(r.state, WorkState::ReviewingBlueprint, "LAT-7");
    let l = w.wf.store().read(|tx| tx.blueprint_loop(armed.id)).unwrap();
    assert_eq!(
        l.status,
        LoopStatus::Cancelled,
        "the armed stale loop is cancelled"
    );
    assert_eq!(
        r.pathway[0].loop_history[0].status,
        AttemptStatus::Cancelled
    );
    assert_eq!(r.pathway[0].status, StepStatus::Current);
}

#[tokio::test]
async fn loop_failure_and_resume() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    w.turn(s, "hello").await;
    let note = blueprint(&w, "One file");
    let run = staged(&w, s, Mode::Auto, note, 1, WorkState::Executing);
    let l = handed_over(&w, &run, true);
    end_loop(
        &w,
        l.id,
        LoopStatus::Failed,
        "iteration_exhausted: rejected 3 time(s)",
    );
    until("the failure to pause the Run", || {
        run_by_id(&w, run.id).status == RunStatus::Paused
    })
    .await;
    let r = run_by_id(&w, run.id);
    assert_eq!(r.status_reason, Some(StatusReason::BlueprintLoopFailed));
    assert_eq!(r.pathway[0].status, StepStatus::Failed);
    let paused = w.wf.workflow(s).unwrap().paused.unwrap();
    assert_eq!(
        (paused.reason, paused.description.as_deref()),
        (
            PauseReason::Workflow,
            Some("Lattice run paused: blueprint loop failed")
        )
    );
    // The resumed turn hangs, so the latch is read before anything else could set one.
    let started = std::sync::Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(started.clone()));
    let v = w.wf.resume_lattice_run(run.id).await.unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(20), started.notified())
        .await
        .expect("the resume prompt started a turn");
    let latch = w.wf.workflow(s).unwrap().paused;
    assert!(latch.is_none(), "the latch was released: {latch:?}");
    assert_eq!(
        (v.run.status, v.run.state),
        (RunStatus::Active, WorkState::Blueprinting)
    );
    assert_eq!(
        v.run.pathway[0].status,
        StepStatus::Current,
        "the same Step reopened"
    );
    assert_eq!(
        v.run.pathway[0].loop_history[0].status,
        AttemptStatus::Failed,
        "the failure is kept"
    );
    w.wf.engine()
        .stop(w.thread(s), troupe_engine::StopMode::Internal)
        .await
        .unwrap();
}

#[tokio::test]
async fn foreign_loop_cannot_advance() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    w.turn(s, "hello").await;
    let note = blueprint(&w, "One file");
    let run = staged(&w, s, Mode::Auto, note, 1, WorkState::Executing);
    let l = handed_over(&w, &run, true);
    // The recorded attempt's loop is swapped for one whose digest is not the reviewed one.
    w.wf.store()
        .write(|tx| {
            let mut r = tx.lattice_run(run.id)?;
            r.pathway[0].loop_history[0].source_digest = "someone else's".into();
            tx.save_lattice_run(&r, &[])
        })
        .unwrap();
    end_loop(&w, l.id, LoopStatus::Completed, "done");
    until("the Run to pause", || {
        run_by_id(&w, run.id).status == RunStatus::Paused
    })
    .await;
    let r = run_by_id(&w, run.id);
    assert_eq!(
        r.status_reason,
        Some(StatusReason::BlueprintLoopOwnershipConflict)
    );
    assert_ne!(r.pathway[0].status, StepStatus::Completed, "LAT-5");
}

#[tokio::test]
async fn paused_run_ignores_late_loop_event() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    w.turn(s, "hello").await;
    let note = blueprint(&w, "One file");
    let run = staged(&w, s, Mode::Auto, note, 1, WorkState::Executing);
    let l = handed_over(&w, &run, true);
    w.wf.store()
        .write(|tx| {
            let cur = tx.lattice_run(run.id)?;
            let t = troupe_core::lattice::step(
                &cur,
                Event::Pause(StatusReason::ModelCallBudgetExhausted),
                tx.now(),
            )
            .unwrap();
            tx.save_lattice_run(&t.run, &t.events)
        })
        .unwrap();
    end_loop(&w, l.id, LoopStatus::Completed, "late");
    w.wf.recover_lattice_runs().await.unwrap();
    let r = run_by_id(&w, run.id);
    assert_eq!(
        (r.status, r.state),
        (RunStatus::Paused, WorkState::Executing),
        "LAT-12"
    );
    assert_eq!(r.pathway[0].status, StepStatus::Executing);
}

#[tokio::test]
async fn latch_keeps_foreign_reason() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, enable("auto", Some("g"), Some(1)))
        .await
        .unwrap();
    until("the budget pause", || {
        run(&w, s).status == RunStatus::Paused
    })
    .await;
    w.idle(s).await;
    // The person's own stop latch replaces the workflow one (as a stop would).
    w.wf.store()
        .write(|tx| {
            tx.clear_pause(t)?;
            tx.pause(
                t,
                PauseReason::Aborted,
                Some("stopped by the person".into()),
            )
        })
        .unwrap();
    let id = run(&w, s).id;
    w.wf.resume_lattice_run(id).await.unwrap();
    let paused = w.wf.workflow(s).unwrap().paused.unwrap();
    assert_eq!(
        paused.reason,
        PauseReason::Aborted,
        "a latch the person owns stays"
    );
}

#[tokio::test]
async fn stale_revision_repair_prompt() {
    let w = world();
    let _f = follow(&w);
    let s = w.session();
    w.turn(s, "hello").await;
    let note = blueprint(&w, "One file");
    let run = staged(&w, s, Mode::Auto, note, 2, WorkState::Planning);
    // One hop: the submit, then a Pathway rewrite that makes it stale.
    w.provider.push(Reply::Tools(vec![
        call(
            "p1",
            "lattice_submit",
            json!({"action": "submit_pathway", "reason": "ok"}),
        ),
        call(
            "p2",
            "pathway_write",
            json!({"future_steps": [{"title": "only", "objective": "one Step"}]}),
        ),
    ]));
    w.turn(s, "go on").await;
    until("the repair prompt", || {
        w.provider.requests().iter().any(|q| {
            user_texts(q)
                .iter()
                .any(|t| t.contains("could not be taken") && t.contains("Pathway revision"))
        })
    })
    .await;
    w.idle(s).await;
    assert_eq!(run_by_id(&w, run.id).state, WorkState::Planning);
}
