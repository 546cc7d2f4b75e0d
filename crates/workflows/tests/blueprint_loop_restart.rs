//! BlueprintLoop at restart (the digest's §5.7 reconciliation): a loop without a durable driver
//! is latched, not terminalized; a stop intent survives, and an audit the stop cut off is
//! resumed on its own task and child.

mod blueprint_loop_support;
mod support;

use blueprint_loop_support::*;
use std::sync::Arc;
use std::time::Duration;
use support::{Reply, World, user_texts, world_on};
use troupe_core::blueprint_loop::{BlueprintLoopId, LoopStatus, RunMode};
use troupe_core::pause::PauseReason;
use troupe_core::{SessionId, ThreadId};
use troupe_store::TaskStatus;

/// A loop `running` with no intent and nothing queued, as a process leaves it when it dies
/// between the executor's turn and the continuation: the session had a finished turn, then the
/// loop's record moved to `running` with its first prompt already answered.
async fn driverless(w: &World) -> (SessionId, ThreadId, BlueprintLoopId) {
    let s = w.session();
    let t = w.thread(s);
    w.turn(s, "hello").await;
    let note = blueprint(w);
    let id =
        w.wf.store()
            .write(|tx| {
                let l = tx.create_blueprint_loop(&troupe_store::NewBlueprintLoop {
                    note_id: note.0,
                    note_version: 1,
                    title: "Hello file".into(),
                    thread_id: t,
                    origin_thread_id: t,
                    audit_agent: "supervisor".into(),
                    run_mode: RunMode::Current,
                    user_prompt: None,
                    max_iterations: None,
                    worktree: None,
                    source: troupe_core::blueprint_loop::LoopSource::User,
                    source_digest: None,
                })?;
                let mut running = l.clone();
                running.status = LoopStatus::Running;
                Ok(tx.save_blueprint_loop(&running)?.id)
            })
            .unwrap();
    (s, t, id)
}

fn stored_json(w: &World, id: BlueprintLoopId) -> String {
    w.wf.store()
        .read(|tx| Ok(serde_json::to_string(&tx.blueprint_loop(id)?).unwrap()))
        .unwrap()
}

#[tokio::test]
async fn a_driverless_loop_after_restart_is_latched_not_terminalized_and_continue_resumes_it() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let (s, t, id) = driverless(&before).await;
    let stored = stored_json(&before, id);
    drop(before);

    let after = world_on(dir, "boot-2");
    after.wf.engine().recover().await.unwrap();
    let report = after.wf.recover_blueprint_loops().await.unwrap();
    assert_eq!(report.latched, vec![id]);
    let paused = after
        .wf
        .store()
        .read(|tx| tx.thread(t))
        .unwrap()
        .paused
        .unwrap();
    assert_eq!(paused.reason, PauseReason::Workflow);
    assert_eq!(
        stored_json(&after, id),
        stored,
        "the record is left byte-identical"
    );
    assert_eq!(after.provider.calls(), 0, "startup called no model");
    // The latch holds: an ordinary drive does not restart the loop.
    after
        .wf
        .engine()
        .request_drive(t, "test", false)
        .await
        .unwrap();
    assert_eq!(after.provider.calls(), 0);

    // Continue: the loop's continuation resumes it.
    after.provider.push(stop("c1", "done"));
    after.provider.push(look("l1"));
    after.provider.push(approve("a1"));
    after.wf.continue_session(s).await.unwrap();
    reach(&after, id, LoopStatus::Completed).await;
    let first = user_texts(&after.provider.requests()[0]).join("\n");
    assert!(
        first.contains("A normal final answer does not end this loop"),
        "{first}"
    );
}

#[tokio::test]
async fn a_loop_with_its_session_mid_turn_keeps_the_kernels_interrupted_latch() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let (s, t, id) = driverless(&before).await;
    before.hanging_turn(s, "more").await;
    drop(before);
    let after = world_on(dir, "boot-2");
    after.wf.engine().recover().await.unwrap();
    let report = after.wf.recover_blueprint_loops().await.unwrap();
    assert!(report.latched.is_empty(), "first latch wins");
    let paused = after
        .wf
        .store()
        .read(|tx| tx.thread(t))
        .unwrap()
        .paused
        .unwrap();
    assert_eq!(paused.reason, PauseReason::Interrupted);
    assert_eq!(record(&after, id).status, LoopStatus::Running);
}

#[tokio::test]
async fn abandon_cancels_a_latched_loop_and_clears_the_latch_last() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let (s, t, id) = driverless(&before).await;
    drop(before);
    let after = world_on(dir, "boot-2");
    after.wf.engine().recover().await.unwrap();
    after.wf.recover_blueprint_loops().await.unwrap();
    let report = after.wf.abandon(s).await.unwrap();
    assert_eq!(report.workflow_cancelled.as_deref(), Some("blueprint_loop"));
    assert!(report.latch_cleared);
    let l = record(&after, id);
    assert_eq!(l.status, LoopStatus::Cancelled);
    assert_eq!(
        after.wf.store().read(|tx| tx.loop_binding(t)).unwrap(),
        None
    );
    assert_eq!(
        after.wf.store().read(|tx| tx.thread(t)).unwrap().paused,
        None
    );
    assert_eq!(
        after.provider.calls(),
        0,
        "nothing restarted the abandoned work"
    );
}

#[tokio::test]
async fn a_loop_with_a_stop_intent_is_not_latched_at_restart_and_an_interrupted_audit_is_replaced()
{
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let s = before.session();
    let t = before.thread(s);
    let note = blueprint(&before);
    let hang = Arc::new(tokio::sync::Notify::new());
    before.provider.push(stop("c1", "done"));
    before.provider.push(Reply::Hang(hang.clone()));
    let id = before
        .wf
        .create_blueprint_loop(request(s, note))
        .await
        .unwrap()
        .record
        .id;
    tokio::time::timeout(Duration::from_secs(20), hang.notified())
        .await
        .expect("the auditor did not start");
    let auditor = record(&before, id).audit_thread_id.unwrap();
    drop(before);

    let after = world_on(dir, "boot-2");
    after.provider.push(look("l1"));
    after.provider.push(approve("a1"));
    // The daemon's order: tasks are reconciled before the kernel's recovery.
    let cut = after.wf.reconcile_tasks().unwrap();
    assert_eq!(cut.interrupted.len(), 1, "the audit task was interrupted");
    after.wf.engine().recover().await.unwrap();
    let report = after.wf.recover_blueprint_loops().await.unwrap();
    assert!(
        report.latched.is_empty(),
        "a stop intent is a durable driver"
    );
    assert_eq!(report.replaced_auditors, vec![auditor]);
    assert_eq!(report.stop_intents, vec![id]);
    let l = reach(&after, id, LoopStatus::Completed).await;
    assert_eq!(l.audit.attempts, 0);
    let reqs = after.provider.requests();
    assert_eq!(
        reqs.len(),
        2,
        "only the resumed audit ran (its look, its verdict)"
    );
    assert!(reqs.iter().all(is_auditor));
    assert!(
        !user_texts(&reqs[0]).join("\n").contains("recovery"),
        "no recovery turn spent"
    );
    assert_eq!(
        children(&after, t),
        vec![auditor],
        "the same audit session resumed"
    );
    // The interrupted task was taken up again under its claim's key, on the same child.
    let tasks = ended_audit_tasks(&after, t).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].child_thread_id, auditor);
    assert_eq!(tasks[0].resumes, 1);
    assert_eq!(tasks[0].status, TaskStatus::Completed);
}
