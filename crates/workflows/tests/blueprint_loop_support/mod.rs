//! What the BlueprintLoop scenario files share: a Blueprint note, a loop request, the scripted
//! replies of the executor and the auditor, and waits on the loop's record and its tasks.
#![allow(dead_code)]

use super::support::{Reply, World, call};
use serde_json::json;
use std::time::Duration;
use troupe_core::blueprint_loop::{BlueprintLoop, BlueprintLoopId, LoopStatus};
use troupe_core::{SessionId, ThreadId};
use troupe_llm::ModelRequest;
use troupe_store::{NewNote, NoteId, NoteKind, TaskRecord, TaskRole, TaskStatus};
use troupe_workflows::NewBlueprintLoopRequest;

pub fn blueprint(w: &World) -> NoteId {
    let body = troupe_workflows::notes::blueprint::SECTIONS
        .iter()
        .map(|s| format!("## {s}\nwrite hello.txt\n"))
        .collect::<String>();
    w.wf.store()
        .write(|tx| {
            tx.create_note(&NewNote {
                kind: NoteKind::Blueprint,
                title: "Hello file".into(),
                body: body.clone(),
            })
        })
        .unwrap()
        .id
}

pub fn request(s: SessionId, note: NoteId) -> NewBlueprintLoopRequest {
    NewBlueprintLoopRequest {
        session_id: s,
        note_id: note,
        note_version: None,
        run_mode: None,
        instruction: Some("keep it short".into()),
        max_iterations: None,
        max_model_calls: None,
    }
}

pub fn stop(id: &str, summary: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "blueprint_loop_stop",
        json!({"summary": summary, "evidence": ["cat hello.txt"]}),
    )])
}

/// An auditor's look at the workspace: an approval needs one since the claim.
pub fn look(id: &str) -> Reply {
    Reply::Tools(vec![call(id, "list_dir", json!({"path": "."}))])
}

pub fn approve(id: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "blueprint_loop_approve",
        json!({"summary": "hello.txt verified"}),
    )])
}

pub fn reject(id: &str, reason: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "blueprint_loop_reject",
        json!({
            "reason": reason,
            "remaining": ["BLOCKING: create hello.txt"],
            "instructions": "create hello.txt",
        }),
    )])
}

pub fn is_auditor(req: &ModelRequest) -> bool {
    req.system
        .contains("independent auditor of a BlueprintLoop")
}

pub fn tool_names(req: &ModelRequest) -> Vec<String> {
    req.tools.iter().map(|t| t.name.clone()).collect()
}

pub async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn record(w: &World, id: BlueprintLoopId) -> BlueprintLoop {
    w.wf.store().read(|tx| tx.blueprint_loop(id)).unwrap()
}

/// Wait for the loop to reach `status`, then for every thread of it to be idle.
pub async fn reach(w: &World, id: BlueprintLoopId, status: LoopStatus) -> BlueprintLoop {
    until(&format!("the loop to be {status:?}"), || {
        record(w, id).status == status
    })
    .await;
    let l = record(w, id);
    for t in std::iter::once(l.thread_id).chain(children(w, l.thread_id)) {
        tokio::time::timeout(Duration::from_secs(20), w.wf.engine().wait_idle(t))
            .await
            .expect("a loop thread did not go idle");
    }
    record(w, id)
}

pub fn children(w: &World, parent: ThreadId) -> Vec<ThreadId> {
    w.wf.store()
        .read(|tx| tx.threads(u32::MAX))
        .unwrap()
        .into_iter()
        .filter(|t| t.parent_id == Some(parent))
        .map(|t| t.id)
        .collect()
}

/// The execution session's audit tasks as `GET /v1/tasks?parent_thread=` lists them, once
/// each has ended (a task settles just after its child goes idle).
pub async fn ended_audit_tasks(w: &World, execution: ThreadId) -> Vec<TaskRecord> {
    let list = || w.wf.tasks(None, Some(execution), 100).unwrap();
    until("the audit tasks to end", || {
        list()
            .iter()
            .all(|t| !matches!(t.status, TaskStatus::Queued | TaskStatus::Running))
    })
    .await;
    let tasks = list();
    for task in &tasks {
        assert_eq!(task.role, TaskRole::Reviewer);
        assert!(
            !task.notify_parent,
            "an auditor's verdict tools deliver its result"
        );
        assert_eq!(task.agent, "supervisor");
    }
    tasks
}

pub fn lines(w: &World, s: SessionId) -> Vec<String> {
    w.wf.collab()
        .lines(s, None, 1000)
        .unwrap()
        .into_iter()
        .map(|l| l.body)
        .collect()
}
