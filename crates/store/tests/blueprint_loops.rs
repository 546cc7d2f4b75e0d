//! The BlueprintLoop transition point: the phase projected on the bound sessions always mirrors
//! the loop's status, terminal loops leave no binding, and the database keeps one active loop per
//! note and per session.

use std::sync::Arc;
use troupe_core::blueprint_loop::{BlueprintLoop, LoopStatus, RunMode};
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{ManualClock, ThreadId};
use troupe_store::{NewBlueprintLoop, NewNote, NewThread, NoteKind, Store, StoreError};

/// On the backend the run chose (see `troupe_store::testing`).
fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

fn thread(s: &Store, parent: Option<ThreadId>) -> ThreadId {
    s.write(|tx| {
        Ok(tx
            .create_thread(&NewThread {
                workspace_root: None,
                parent_id: parent,
                title: "t".into(),
                agent: AgentBinding::new("a", "be brief"),
                workspace: "/tmp".into(),
                interaction: Interaction::Interactive,
            })?
            .id)
    })
    .unwrap()
}

fn note(s: &Store) -> i64 {
    s.write(|tx| {
        Ok(tx
            .create_note(&NewNote {
                kind: NoteKind::Blueprint,
                title: "bp".into(),
                body: "body".into(),
            })?
            .id
            .0)
    })
    .unwrap()
}

fn new_loop(note_id: i64, t: ThreadId) -> NewBlueprintLoop {
    NewBlueprintLoop {
        note_id,
        note_version: 1,
        title: "bp".into(),
        thread_id: t,
        origin_thread_id: t,
        audit_agent: "supervisor".into(),
        run_mode: RunMode::Current,
        user_prompt: None,
        max_iterations: None,
        worktree: None,
        source: troupe_core::blueprint_loop::LoopSource::User,
        source_digest: None,
    }
}

fn set(s: &Store, l: &BlueprintLoop, status: LoopStatus, audit: Option<ThreadId>) -> BlueprintLoop {
    let mut next = l.clone();
    next.status = status;
    next.audit_thread_id = audit;
    s.write(|tx| tx.save_blueprint_loop(&next)).unwrap()
}

#[test]
fn phase_projection_follows_every_transition() {
    let s = store();
    let exec = thread(&s, None);
    let auditor = thread(&s, Some(exec));
    let n = note(&s);
    let l = s
        .write(|tx| tx.create_blueprint_loop(&new_loop(n, exec)))
        .unwrap();
    let binding = |t| s.read(|tx| tx.loop_binding(t)).unwrap();
    assert_eq!(binding(exec), None, "armed loops bind nothing");
    let note_link = || s.read(|tx| tx.note(troupe_store::NoteId(n))).unwrap();
    assert_eq!(note_link().active_loop_id, Some(l.id.0));
    assert_eq!(note_link().run_count, 1);

    let l = set(&s, &l, LoopStatus::Running, None);
    assert!(l.started_at.is_some());
    let b = binding(exec).unwrap();
    assert_eq!(
        (b.role.as_str(), b.phase.as_str()),
        ("execution", "running")
    );

    let l = set(&s, &l, LoopStatus::Auditing, Some(auditor));
    assert_eq!(binding(exec).unwrap().phase, "auditing");
    let a = binding(auditor).unwrap();
    assert_eq!((a.role.as_str(), a.phase.as_str()), ("audit", "auditing"));

    // Rejection: back to running, the audit session unbound.
    let l = set(&s, &l, LoopStatus::Running, None);
    assert_eq!(binding(exec).unwrap().phase, "running");
    assert_eq!(binding(auditor), None);

    let l = set(&s, &l, LoopStatus::Completed, None);
    assert_eq!(binding(exec), None, "terminal clears the binding");
    assert!(l.completed_at.is_some());
    assert_eq!(note_link().active_loop_id, None);
    assert_eq!(note_link().run_count, 1);
}

#[test]
fn invalid_transitions_are_refused_and_change_nothing() {
    let s = store();
    let exec = thread(&s, None);
    let n = note(&s);
    let l = s
        .write(|tx| tx.create_blueprint_loop(&new_loop(n, exec)))
        .unwrap();
    let mut next = l.clone();
    next.status = LoopStatus::Auditing;
    let err = s.write(|tx| tx.save_blueprint_loop(&next)).unwrap_err();
    assert!(
        matches!(&err, StoreError::Invalid(m) if m.contains("from armed to auditing")),
        "{err}"
    );
    let cancelled = set(&s, &l, LoopStatus::Cancelled, None);
    let mut again = cancelled.clone();
    again.status = LoopStatus::Running;
    assert!(s.write(|tx| tx.save_blueprint_loop(&again)).is_err());
    let stored = s.read(|tx| tx.blueprint_loop(l.id)).unwrap();
    assert_eq!(stored.status, LoopStatus::Cancelled);
}

#[test]
fn one_active_loop_per_note_and_per_session_is_enforced_by_the_database() {
    let s = store();
    let a = thread(&s, None);
    let b = thread(&s, None);
    let n = note(&s);
    let first = s
        .write(|tx| tx.create_blueprint_loop(&new_loop(n, a)))
        .unwrap();
    assert!(
        s.write(|tx| tx.create_blueprint_loop(&new_loop(n, b)))
            .is_err()
    );
    let other_note = note(&s);
    assert!(
        s.write(|tx| tx.create_blueprint_loop(&new_loop(other_note, a)))
            .is_err()
    );
    set(&s, &first, LoopStatus::Failed, None);
    let second = s
        .write(|tx| tx.create_blueprint_loop(&new_loop(n, b)))
        .unwrap();
    assert_eq!(
        s.read(|tx| tx.active_loop_of_note(n))
            .unwrap()
            .map(|l| l.id),
        Some(second.id)
    );
}
