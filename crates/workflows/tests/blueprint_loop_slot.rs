//! Mutual exclusion between the workflow slot and a BlueprintLoop (BL-5): while a loop is bound
//! to a session, Plan and Light Loop cannot be enabled there; a loop replaces neither a
//! workflow this build does not know nor a session mid-turn.

mod support;

use serde_json::json;
use std::sync::Arc;
use support::{Reply, world};
use troupe_store::{NewNote, NoteKind};
use troupe_workflows::{NewBlueprintLoopRequest, SetWorkflowRequest, WorkflowError};

fn kind(k: &str) -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: k.into(),
        instructions: (k == "lightloop").then(|| "do it".to_string()),
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

#[tokio::test]
async fn a_bound_loop_refuses_plan_and_light_loop_and_an_unknown_slot_refuses_the_loop() {
    let w = world();
    let s = w.session();
    let note =
        w.wf.store()
            .write(|tx| {
                tx.create_note(&NewNote {
                    kind: NoteKind::Blueprint,
                    title: "bp".into(),
                    body: "b".into(),
                })
            })
            .unwrap()
            .id;
    let req = |session| NewBlueprintLoopRequest {
        session_id: session,
        note_id: note,
        note_version: None,
        run_mode: None,
        instruction: None,
        max_iterations: None,
        max_model_calls: None,
    };

    // A slot this build does not know is never replaced by a loop.
    let other = w.session();
    w.set_slot(other, json!({"kind": "lattice", "run_id": 3}));
    let err = w.wf.create_blueprint_loop(req(other)).await.unwrap_err();
    assert!(
        matches!(
            &err,
            WorkflowError::Conflict {
                code: "workflow_active",
                ..
            }
        ),
        "{err:?}"
    );

    let hang = Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(hang.clone()));
    let l = w.wf.create_blueprint_loop(req(s)).await.unwrap();
    hang.notified().await;
    // Stop the turn so only the binding, not a running turn, stands in the way.
    w.wf.collab().stop(s).await.unwrap();
    for k in ["plan", "lightloop"] {
        let err = w.wf.set_workflow(s, kind(k)).await.unwrap_err();
        assert!(
            matches!(
                &err,
                WorkflowError::Conflict {
                    code: "blueprint_loop_active",
                    ..
                }
            ),
            "{k}: {err:?}"
        );
    }
    w.wf.cancel_blueprint_loop(l.record.id).await.unwrap();
    // Once the loop ended, the slot is free again.
    w.wf.set_workflow(s, kind("plan")).await.unwrap();
}
