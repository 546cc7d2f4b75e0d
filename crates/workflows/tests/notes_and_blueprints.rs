//! Notes and Blueprints through the model-facing tools and the service.

mod support;

use serde_json::{Value, json};
use support::{Reply, call, tool_results, world};
use troupe_store::NoteKind;
use troupe_workflows::notes::blueprint;
use troupe_workflows::{NewNoteRequest, NotePatchRequest, SetWorkflowRequest, WorkflowError};

fn enable(kind: &str, instructions: Option<&str>) -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: kind.into(),
        instructions: instructions.map(String::from),
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

fn last_result(w: &support::World) -> Value {
    let reqs = w.provider.requests();
    let results = tool_results(reqs.last().unwrap());
    serde_json::from_str(results.last().unwrap()).unwrap()
}

#[tokio::test]
async fn blueprint_write_outside_plan_is_refused_and_writes_nothing() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, enable("lightloop", Some("task")))
        .await
        .unwrap();
    w.provider.push(Reply::Tools(vec![call(
        "c1",
        "note_create",
        json!({"title": "BP", "body": blueprint::template(), "kind": "blueprint"}),
    )]));
    // The Light Loop would keep the session working: the next call hangs until abandoned.
    w.hanging_turn(s, "write a blueprint").await;
    let r = last_result(&w);
    assert_eq!(r["code"], "non_plan_blueprint_write", "{r}");
    assert_eq!(r["persisted"], false);
    assert!(w.wf.notes(None, None, 50).unwrap().is_empty());
    w.wf.abandon(s).await.unwrap();
}

#[tokio::test]
async fn plan_session_writes_a_blueprint_and_ordinary_notes_stay_writable_elsewhere() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, enable("plan", None)).await.unwrap();
    w.provider.push(Reply::Tools(vec![call(
        "c1",
        "note_create",
        json!({"title": "Migration", "body": blueprint::template(), "kind": "blueprint"}),
    )]));
    w.provider.push(Reply::Text("written".into()));
    w.turn(s, "plan it").await;
    let r = last_result(&w);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["note"]["kind"], "blueprint");

    // Another session without Plan: an ordinary note is fine, reading the Blueprint too.
    let other = w.session();
    w.provider.push(Reply::Tools(vec![
        call(
            "c2",
            "note_create",
            json!({"title": "scratch", "body": "x"}),
        ),
        call("c3", "note_search", json!({"query": "Migration"})),
    ]));
    w.provider.push(Reply::Text("ok".into()));
    w.turn(other, "take notes").await;
    let reqs = w.provider.requests();
    let results = tool_results(reqs.last().unwrap());
    let created: Value = serde_json::from_str(&results[0]).unwrap();
    let found: Value = serde_json::from_str(&results[1]).unwrap();
    assert_eq!(created["note"]["kind"], "note", "{created}");
    assert_eq!(found["notes"][0]["title"], "Migration", "{found}");
}

#[tokio::test]
async fn editing_an_existing_blueprint_needs_plan_even_without_a_kind() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, enable("plan", None)).await.unwrap();
    let bp =
        w.wf.create_note(NewNoteRequest {
            kind: Some("blueprint".into()),
            title: "BP".into(),
            body: blueprint::template(),
            session_id: Some(s),
        })
        .unwrap();
    let other = w.session();
    let e =
        w.wf.update_note(
            bp.id,
            NotePatchRequest {
                version: 1,
                kind: None,
                title: Some("renamed".into()),
                body: None,
                session_id: Some(other),
            },
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            WorkflowError::Conflict {
                code: "plan_required",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(w.wf.note(bp.id).unwrap().version, 1);
}

#[tokio::test]
async fn stale_version_is_a_revision_conflict_and_the_tool_says_which_is_current() {
    let w = world();
    let s = w.session();
    let n =
        w.wf.create_note(NewNoteRequest {
            kind: None,
            title: "todo".into(),
            body: "a".into(),
            session_id: None,
        })
        .unwrap();
    let patch = |version, body: &str| NotePatchRequest {
        version,
        kind: None,
        title: None,
        body: Some(body.into()),
        session_id: None,
    };
    let n2 = w.wf.update_note(n.id, patch(1, "b")).unwrap();
    assert_eq!(n2.version, 2);
    let e = w.wf.update_note(n.id, patch(1, "c")).unwrap_err();
    assert!(
        matches!(
            e,
            WorkflowError::Conflict {
                code: "revision_conflict",
                ..
            }
        ),
        "{e:?}"
    );

    w.provider.push(Reply::Tools(vec![call(
        "c1",
        "note_update",
        json!({"id": n.id.0, "version": 1, "body": "d"}),
    )]));
    w.provider.push(Reply::Text("ok".into()));
    w.turn(s, "edit").await;
    let r = last_result(&w);
    assert_eq!(r["code"], "revision_conflict", "{r}");
    assert_eq!(r["current_version"], 2);
    assert_eq!(w.wf.note(n.id).unwrap().body, "b");
}

#[tokio::test]
async fn argument_errors_are_repairable_and_persist_nothing() {
    let w = world();
    let s = w.session();
    w.provider.push(Reply::Tools(vec![call(
        "c1",
        "note_create",
        json!({"body": "no title"}),
    )]));
    w.provider.push(Reply::Text("ok".into()));
    w.turn(s, "note").await;
    let r = last_result(&w);
    assert_eq!(r["code"], "invalid_arguments", "{r}");
    assert_eq!(r["retryable"], true);
    assert!(
        w.wf.notes(None, Some(NoteKind::Note), 50)
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn an_incomplete_blueprint_is_refused_with_the_missing_sections() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, enable("plan", None)).await.unwrap();
    let e =
        w.wf.create_note(NewNoteRequest {
            kind: Some("blueprint".into()),
            title: "BP".into(),
            body: "## Goal\nship\n".into(),
            session_id: Some(s),
        })
        .unwrap_err();
    let WorkflowError::Invalid(m) = e else {
        panic!("expected invalid")
    };
    assert!(m.contains("Exclusions"), "{m}");
}
