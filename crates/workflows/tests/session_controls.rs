//! Continue and Abandon over a real engine and store.

mod support;

use serde_json::json;
use std::sync::Arc;
use support::{Reply, world, world_as_served};
use troupe_core::drive::DriveRefusal;
use troupe_core::message::Finish;
use troupe_core::pause::PauseReason;
use troupe_engine::{DriveOutcome, StopMode};
use troupe_workflows::SetWorkflowRequest;
use troupe_workflows::session_controls::{AbandonFacts, AbandonStep, abandon_plan};
use troupe_workflows::slot::WorkflowSlot;

#[test]
fn abandon_clears_the_latch_last() {
    let f = AbandonFacts {
        running: true,
        open_task: true,
        slot: Some(WorkflowSlot::from_value(
            &json!({"kind": "lightloop", "instructions": "x"}),
        )),
        blueprint_loop: None,
        child_tasks: false,
        latched: false,
    };
    assert_eq!(
        abandon_plan(&f),
        vec![
            AbandonStep::StopLiveWork,
            AbandonStep::TerminalizeTurn,
            AbandonStep::CancelLightLoop,
            AbandonStep::ClearLatch
        ]
    );
}

#[test]
fn abandon_leaves_plan_and_unknown_kinds_alone() {
    for slot in [
        json!({"kind": "plan"}),
        json!({"kind": "boss", "role": "boss"}),
    ] {
        let f = AbandonFacts {
            running: false,
            open_task: false,
            slot: Some(WorkflowSlot::from_value(&slot)),
            blueprint_loop: None,
            child_tasks: false,
            latched: true,
        };
        assert_eq!(abandon_plan(&f), vec![AbandonStep::ClearLatch]);
    }
}

#[test]
fn abandon_cancels_a_blueprint_loop_and_child_tasks_before_the_latch_is_cleared() {
    let id = troupe_core::blueprint_loop::BlueprintLoopId(7);
    let f = AbandonFacts {
        running: false,
        open_task: false,
        slot: None,
        blueprint_loop: Some(id),
        child_tasks: true,
        latched: true,
    };
    assert_eq!(
        abandon_plan(&f),
        vec![
            AbandonStep::CancelBlueprintLoop(id),
            AbandonStep::CancelChildTasks,
            AbandonStep::ClearLatch
        ]
    );
}

#[tokio::test]
async fn continue_lifts_the_latch_and_forces_a_drive_that_resumes_the_breakpoint() {
    let w = world();
    let s = w.session();
    w.hanging_turn(s, "long job").await;
    w.wf.collab().stop(s).await.unwrap();
    let t = w.thread(s);
    let paused = w.wf.store().read(|tx| tx.thread(t)).unwrap().paused;
    assert_eq!(paused.unwrap().reason, PauseReason::Aborted);
    // An automatic drive cannot start it while latched.
    let auto = w.wf.engine().request_drive(t, "test", false).await.unwrap();
    assert!(matches!(
        auto,
        DriveOutcome::NotHandled {
            refusal: DriveRefusal::Paused
        }
    ));

    w.provider.push(Reply::Text("finished".into()));
    let report = w.wf.continue_session(s).await.unwrap();
    assert!(report.latch_cleared);
    assert!(report.drive.started().is_some(), "{:?}", report.drive);
    w.idle(s).await;
    assert_eq!(w.provider.calls(), 2);
    assert!(
        w.wf.store()
            .read(|tx| tx.thread(t))
            .unwrap()
            .paused
            .is_none()
    );
}

#[tokio::test]
async fn continue_after_a_failed_turn_picks_that_turn_up_again() {
    let w = world_as_served(Arc::new(troupe_core::SystemClock));
    let s = w.session();
    w.provider.push(Reply::Fail("the key was refused".into()));
    w.turn(s, "write the report").await;
    let t = w.thread(s);
    let paused = w.wf.store().read(|tx| tx.thread(t)).unwrap().paused;
    assert_eq!(paused.unwrap().reason, PauseReason::Failed);
    let failed =
        w.wf.store()
            .read(|tx| tx.runs_for_thread(t, 1))
            .unwrap()
            .pop()
            .unwrap();

    w.provider.push(Reply::Text("the report is written".into()));
    let report = w.wf.continue_session(s).await.unwrap();
    assert!(report.latch_cleared);
    assert_eq!(report.continued_turn, Some(failed.id), "{report:?}");
    w.idle(s).await;
    assert_eq!(w.provider.calls(), 2, "the failed turn's work ran again");
    let lines = w.wf.collab().lines(s, None, 50).unwrap();
    assert_eq!(lines.last().unwrap().body, "the report is written");

    // With nothing failed and nothing waiting, Continue picks nothing up.
    let again = w.wf.continue_session(s).await.unwrap();
    assert_eq!(again.continued_turn, None);
    w.idle(s).await;
    assert_eq!(w.provider.calls(), 2);
}

#[tokio::test]
async fn continue_never_drives_a_running_session() {
    let w = world();
    let s = w.session();
    w.hanging_turn(s, "long job").await;
    let report = w.wf.continue_session(s).await.unwrap();
    assert!(!report.latch_cleared);
    assert_eq!(
        report.drive,
        DriveOutcome::NotHandled {
            refusal: DriveRefusal::Running
        }
    );
    w.wf.engine()
        .stop(w.thread(s), StopMode::Internal)
        .await
        .unwrap();
}

#[tokio::test]
async fn abandon_stops_work_ends_the_turn_cancels_the_loop_and_is_idempotent() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(
        s,
        SetWorkflowRequest {
            kind: "lightloop".into(),
            instructions: Some("write it".into()),
            max_iterations: None,
            max_model_calls: None,
            mode: None,
            goal: None,
        },
    )
    .await
    .unwrap();
    w.hanging_turn(s, "go").await;

    let r = w.wf.abandon(s).await.unwrap();
    assert!(r.changed);
    assert!(r.stopped_run_id.is_some());
    assert_eq!(r.workflow_cancelled.as_deref(), Some("lightloop"));
    assert!(r.latch_cleared, "Stop's `aborted` latch is lifted last");
    let t = w.thread(s);
    let ended = r.terminalized_message_id.unwrap();
    let m = w.wf.store().read(|tx| tx.message(ended)).unwrap();
    assert_eq!(m.finish, Some(Finish::Error));
    assert!(m.error.as_deref().unwrap().starts_with("abandoned"));
    assert_eq!(m.text(), "working on it", "the partial reply is kept");

    let v = w.wf.workflow(s).unwrap();
    assert!(v.kind.is_none());
    assert!(v.paused.is_none());
    assert_eq!(v.last_terminal.unwrap().status, "cancelled");
    // Nothing restarts the abandoned work.
    w.idle(s).await;
    assert!(!w.wf.engine().is_running(t));
    assert_eq!(w.provider.calls(), 1);

    let again = w.wf.abandon(s).await.unwrap();
    assert!(!again.changed, "{again:?}");
}

#[tokio::test]
async fn abandon_ends_an_interrupted_task_found_paused() {
    let w = world();
    let s = w.session();
    w.hanging_turn(s, "long job").await;
    w.wf.collab().stop(s).await.unwrap();
    let r = w.wf.abandon(s).await.unwrap();
    assert!(r.stopped_run_id.is_none());
    assert!(r.terminalized_message_id.is_some());
    assert!(r.latch_cleared);
    assert!(r.workflow_cancelled.is_none());
    // The task is answered now, so a forced drive finds no work.
    let report = w.wf.continue_session(s).await.unwrap();
    assert!(report.drive.started().is_none(), "{:?}", report.drive);
}
