//! What the Lattice scenario files share: a World with the follower running, scripted replies
//! for each Lattice step, and waits on the Run's record.
#![allow(dead_code)]

use super::support::{Reply, World, call};
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use troupe_core::lattice::{LatticeRun, RunStatus, WorkState};
use troupe_core::{LatticeRunId, SessionId};
use troupe_store::{NewNote, NoteId, NoteKind};
use troupe_workflows::SetWorkflowRequest;

pub fn follow(w: &World) -> CancellationToken {
    let t = CancellationToken::new();
    w.wf.spawn_lattice_follower(t.clone());
    t
}

pub fn blueprint(w: &World, title: &str) -> NoteId {
    let body = troupe_workflows::notes::blueprint::SECTIONS
        .iter()
        .map(|s| format!("## {s}\n{title}\n"))
        .collect::<String>();
    w.wf.store()
        .write(|tx| {
            tx.create_note(&NewNote {
                kind: NoteKind::Blueprint,
                title: title.into(),
                body: body.clone(),
            })
        })
        .unwrap()
        .id
}

pub fn enable(mode: &str, goal: Option<&str>, cap: Option<u32>) -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "lattice".into(),
        instructions: None,
        max_iterations: None,
        max_model_calls: cap,
        mode: Some(mode.into()),
        goal: goal.map(str::to_string),
    }
}

pub fn disable() -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "none".into(),
        instructions: None,
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

pub fn submit(id: &str, args: serde_json::Value) -> Reply {
    Reply::Tools(vec![call(id, "lattice_submit", args)])
}

pub fn requirements(id: &str) -> Reply {
    submit(
        id,
        json!({"action": "submit_requirements", "goal": "two files", "success_criteria": ["a.txt and b.txt exist"]}),
    )
}

pub fn write_pathway(id: &str, n: usize) -> Reply {
    let steps: Vec<_> = (1..=n)
        .map(|i| json!({"title": format!("file {i}"), "objective": format!("write file {i}")}))
        .collect();
    Reply::Tools(vec![call(
        id,
        "pathway_write",
        json!({"future_steps": steps}),
    )])
}

pub fn reason(id: &str, action: &str) -> Reply {
    submit(id, json!({"action": action, "reason": "it holds"}))
}

pub fn submit_blueprint(id: &str, note: NoteId) -> Reply {
    submit(
        id,
        json!({"action": "submit_blueprint", "blueprint_id": note.0}),
    )
}

pub fn stop(id: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "blueprint_loop_stop",
        json!({"summary": "done", "evidence": ["cat"]}),
    )])
}

pub fn approve(id: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "blueprint_loop_approve",
        json!({"summary": "verified"}),
    )])
}

pub fn reject(id: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "blueprint_loop_reject",
        json!({"reason": "missing", "remaining": ["BLOCKING: the file"], "instructions": "write it"}),
    )])
}

pub fn run(w: &World, s: SessionId) -> LatticeRun {
    w.wf.lattice_current(s).unwrap().expect("a Run").run
}

pub fn run_by_id(w: &World, id: LatticeRunId) -> LatticeRun {
    w.wf.store().read(|tx| tx.lattice_run(id)).unwrap()
}

pub async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Wait until the current Run is in `state` with `status`, and the session is idle.
pub async fn reach(w: &World, s: SessionId, status: RunStatus, state: WorkState) -> LatticeRun {
    until(&format!("the Run to be {status:?} in {state:?}"), || {
        let r = run(w, s);
        r.status == status && r.state == state
    })
    .await;
    w.idle(s).await;
    run(w, s)
}
