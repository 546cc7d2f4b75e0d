//! Plan and the instruction projection over a real engine and store with a queued model.

mod support;

use serde_json::json;
use support::{user_texts, world};
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::message::Origin;
use troupe_engine::DriveOutcome;
use troupe_workflows::{SetWorkflowRequest, WorkflowError};

fn plan() -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "plan".into(),
        instructions: None,
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

fn none() -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "none".into(),
        instructions: None,
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

fn lightloop(text: &str) -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "lightloop".into(),
        instructions: Some(text.into()),
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

fn conflict_code(e: WorkflowError) -> &'static str {
    match e {
        WorkflowError::Conflict { code, .. } => code,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[tokio::test]
async fn plan_request_is_wrapped_for_the_model_and_stored_unchanged() {
    let w = world();
    let s = w.session();
    let v = w.wf.set_workflow(s, plan()).await.unwrap();
    assert_eq!(v.kind.as_deref(), Some("plan"));
    assert!(v.changed);
    w.turn(s, "build X").await;

    let req = &w.provider.requests()[0];
    let first = &user_texts(req)[0];
    assert!(
        first.starts_with("<plan-user-request>\nbuild X\n</plan-user-request>"),
        "{first}"
    );
    assert!(first.contains("decision-complete"), "{first}");
    assert!(first.contains("Acceptance criteria"), "{first}");
    // The stored message is exactly what the person wrote, stamped with the workflow.
    let t = w.thread(s);
    let msgs = w.wf.store().read(|tx| tx.messages(t, None, 10)).unwrap();
    let root = msgs.iter().find(|m| m.is_root).unwrap();
    assert_eq!(root.text(), "build X");
    assert_eq!(
        root.metadata.as_ref().unwrap()["workflow"],
        json!({"kind": "plan", "version": 1})
    );
}

#[tokio::test]
async fn stamp_is_fixed_at_creation_so_disabling_plan_keeps_old_roots_wrapped() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, plan()).await.unwrap();
    w.turn(s, "plan the migration").await;
    w.wf.set_workflow(s, none()).await.unwrap();
    w.turn(s, "thanks").await;

    let reqs = w.provider.requests();
    let texts = user_texts(reqs.last().unwrap());
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].starts_with("<plan-user-request>"), "{texts:?}");
    assert_eq!(texts[1], "thanks");
}

#[tokio::test]
async fn plan_never_proposes_a_continuation() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, plan()).await.unwrap();
    w.turn(s, "think about it").await;
    let calls = w.provider.calls();
    let out =
        w.wf.engine()
            .request_drive(w.thread(s), "release", false)
            .await
            .unwrap();
    assert!(matches!(out, DriveOutcome::NotHandled { .. }), "{out:?}");
    assert_eq!(w.provider.calls(), calls);
}

#[tokio::test]
async fn plan_changes_no_tool_visibility() {
    let w = world();
    let s = w.session();
    w.turn(s, "before").await;
    w.wf.set_workflow(s, plan()).await.unwrap();
    w.turn(s, "during").await;
    let reqs = w.provider.requests();
    let names =
        |i: usize| -> Vec<String> { reqs[i].tools.iter().map(|t| t.name.clone()).collect() };
    assert_eq!(names(0), names(1));
    assert!(names(0).contains(&"note_create".to_string()));
}

#[tokio::test]
async fn non_user_roots_are_not_wrapped() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, plan()).await.unwrap();
    let t = w.thread(s);
    let d = Delivery::user_task("continue the plan")
        .with_origin(Origin::Continuation("test".into()))
        .with_mode(InboxMode::Task);
    w.wf.engine().deliver(t, d).await.unwrap();
    w.idle(s).await;
    let texts = user_texts(&w.provider.requests()[0]);
    assert_eq!(texts, vec!["continue the plan".to_string()]);
}

#[tokio::test]
async fn enabling_while_running_is_refused_and_the_slot_is_unchanged() {
    let w = world();
    let s = w.session();
    w.hanging_turn(s, "long job").await;
    let e = w.wf.set_workflow(s, plan()).await.unwrap_err();
    assert_eq!(conflict_code(e), "session_running");
    assert!(w.wf.workflow(s).unwrap().kind.is_none());
    w.wf.abandon(s).await.unwrap();
}

#[tokio::test]
async fn another_active_kind_refuses_enable_and_enabling_the_same_is_a_no_op() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, plan()).await.unwrap();
    assert!(!w.wf.set_workflow(s, plan()).await.unwrap().changed);
    let e = w.wf.set_workflow(s, lightloop("ship")).await.unwrap_err();
    assert_eq!(conflict_code(e), "workflow_active");
    assert_eq!(w.wf.workflow(s).unwrap().kind.as_deref(), Some("plan"));
}

#[tokio::test]
async fn unknown_kind_round_trips_and_is_never_stamped() {
    let w = world();
    let s = w.session();
    let stored = json!({"kind": "crew", "role": "captain"});
    w.set_slot(s, stored.clone());
    let v = w.wf.workflow(s).unwrap();
    assert_eq!(v.kind.as_deref(), Some("crew"));
    assert_eq!(v.slot, Some(stored.clone()));
    let e = w.wf.set_workflow(s, plan()).await.unwrap_err();
    assert_eq!(conflict_code(e), "workflow_active");
    w.turn(s, "hello").await;
    assert_eq!(user_texts(&w.provider.requests()[0]), vec!["hello"]);
    assert_eq!(w.wf.workflow(s).unwrap().slot, Some(stored));
}

#[tokio::test]
async fn lightloop_needs_instructions_and_shows_its_task_to_the_model() {
    let w = world();
    let s = w.session();
    let e = w.wf.set_workflow(s, lightloop("   ")).await.unwrap_err();
    assert!(matches!(e, WorkflowError::Invalid(_)), "{e:?}");
    let v =
        w.wf.set_workflow(s, lightloop("write the report"))
            .await
            .unwrap();
    assert_eq!(v.phase.as_deref(), Some("executing"));
    // Instructions may change while no review is pending; the next call reads them.
    w.wf.set_workflow(s, lightloop("write the short report"))
        .await
        .unwrap();
    // The turn claims completion and the reviewer approves, so the loop ends by itself.
    w.provider.push(support::Reply::Tools(vec![support::call(
        "c1",
        "loop_stop",
        json!({"summary": "written"}),
    )]));
    w.provider.push(support::Reply::Tools(vec![support::call(
        "r1",
        "light_loop_approve",
        json!({"summary": "checked"}),
    )]));
    w.turn(s, "go").await;
    let req = &w.provider.requests()[0];
    assert!(
        req.system.contains("write the short report"),
        "{}",
        req.system
    );
    assert!(user_texts(req)[0].starts_with("<lightloop-user-request>\ngo\n"));
    // Cleanup so no continuation work is left running.
    w.wf.abandon(s).await.unwrap();
}

#[tokio::test]
async fn lightloop_instruction_update_is_refused_while_a_review_is_pending() {
    let w = world();
    let s = w.session();
    w.set_slot(
        s,
        json!({"kind": "lightloop", "instructions": "task", "stop_request": {
            "summary": "done", "requested_at": 1, "requester_message_id": 9
        }}),
    );
    assert_eq!(
        w.wf.workflow(s).unwrap().phase.as_deref(),
        Some("stop_pending")
    );
    let e = w.wf.set_workflow(s, lightloop("other")).await.unwrap_err();
    assert_eq!(conflict_code(e), "review_pending");
}

#[tokio::test]
async fn disabling_a_lightloop_writes_its_terminal_record_and_frees_the_slot() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, lightloop("task")).await.unwrap();
    let v = w.wf.set_workflow(s, none()).await.unwrap();
    assert!(v.kind.is_none());
    let last = v.last_terminal.unwrap();
    assert_eq!(last.status, "cancelled");
    assert_eq!(last.instructions, "task");
    // The slot is free: Plan can be enabled now.
    w.wf.set_workflow(s, plan()).await.unwrap();
}
