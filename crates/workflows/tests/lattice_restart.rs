//! Lattice at restart (the digest's §6.9, 8–10): the controller finishes a half-done handoff
//! once, gives a running loop its missing first prompt once, and delivers a completed Run's
//! mail once — however often the process starts.

mod lattice_support;
mod support;

use lattice_support::*;
use std::sync::Arc;
use support::{World, world_on};
use troupe_core::blueprint_loop::LoopStatus;
use troupe_core::lattice::{AttemptStatus, Effect, Mode, RunStatus, WorkState};

async fn restart(dir: &Arc<tempfile::TempDir>, boot: &str) -> World {
    let w = world_on(dir.clone(), boot);
    w.wf.recover_blueprint_loops().await.unwrap();
    w.wf.recover_lattice_runs().await.unwrap();
    w
}

#[tokio::test]
async fn crash_between_create_and_start() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let s = before.session();
    before.turn(s, "hello").await;
    let note = blueprint(&before, "One file");
    let run = staged(&before, s, Mode::Auto, note, 1, WorkState::Executing);
    assert!(matches!(
        run.effect,
        Some(Effect::CreateBlueprintLoop { .. })
    ));
    // The loop was created, then the process died before the Run recorded it.
    let created = before
        .wf
        .store()
        .write(|tx| {
            let Some(Effect::CreateBlueprintLoop {
                note_id,
                blueprint_version,
                source_digest,
                ..
            }) = run.effect.clone()
            else {
                unreachable!()
            };
            tx.create_blueprint_loop(&troupe_store::NewBlueprintLoop {
                note_id,
                note_version: blueprint_version,
                title: "One file".into(),
                thread_id: run.thread_id,
                origin_thread_id: run.thread_id,
                audit_agent: "supervisor".into(),
                run_mode: troupe_core::blueprint_loop::RunMode::Current,
                user_prompt: None,
                max_iterations: None,
                worktree: None,
                source: troupe_core::blueprint_loop::LoopSource::Lattice,
                source_digest: Some(source_digest),
            })
        })
        .unwrap();
    drop(before);
    let after = restart(&dir, "boot-2").await;
    let loops = lattice_loops(&after, s);
    assert_eq!(
        loops.len(),
        1,
        "LAT-6: the fingerprint found it; no second loop"
    );
    assert_eq!(loops[0].id, created.id);
    assert_ne!(loops[0].status, LoopStatus::Armed, "started once");
    let r = run_by_id(&after, run.id);
    assert!(r.effect.is_none());
    assert_eq!(r.pathway[0].loop_history.len(), 1);
    assert_eq!(
        delivered(&after, s, &format!("blueprint-loop-start:{}", created.id)),
        1
    );
    drop(after);
    let again = restart(&dir, "boot-3").await;
    assert_eq!(lattice_loops(&again, s).len(), 1);
}

#[tokio::test]
async fn crash_running_loop_first_prompt() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let s = before.session();
    before.turn(s, "hello").await;
    let note = blueprint(&before, "One file");
    let run = staged(&before, s, Mode::Auto, note, 1, WorkState::Executing);
    let l = handed_over(&before, &run, true);
    let key = format!("blueprint-loop-start:{}", l.id);
    assert_eq!(
        delivered(&before, s, &key),
        0,
        "the crash left the loop without its prompt"
    );
    drop(before);
    let after = restart(&dir, "boot-2").await;
    assert_eq!(
        delivered(&after, s, &key),
        1,
        "given once at the cold start"
    );
    let r = run_by_id(&after, run.id);
    assert_eq!(r.pathway[0].loop_history[0].status, AttemptStatus::Running);
    drop(after);
    let again = restart(&dir, "boot-3").await;
    assert_eq!(delivered(&again, s, &key), 1, "and never again");
}

#[tokio::test]
async fn crash_after_final_approval() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let s = before.session();
    before.turn(s, "hello").await;
    let note = blueprint(&before, "One file");
    let run = staged(&before, s, Mode::Auto, note, 1, WorkState::Executing);
    let l = handed_over(&before, &run, true);
    end_loop(&before, l.id, LoopStatus::Completed, "verified");
    // The Run recorded its completion with the mail still to send, then the process died.
    before
        .wf
        .store()
        .write(|tx| {
            let cur = tx.lattice_run(run.id)?;
            let t = troupe_core::lattice::step(
                &cur,
                troupe_core::lattice::Event::LoopEnded {
                    loop_id: l.id,
                    outcome: troupe_core::lattice::LoopOutcome::Completed {
                        summary: "verified".into(),
                    },
                },
                tx.now(),
            )
            .unwrap();
            tx.save_lattice_run(&t.run, &[])
        })
        .unwrap();
    let key = format!("lattice:{}:completion", run.id.0);
    assert_eq!(delivered(&before, s, &key), 0);
    drop(before);
    let after = restart(&dir, "boot-2").await;
    let r = run_by_id(&after, run.id);
    assert_eq!(r.status, RunStatus::Completed);
    assert!(r.effect.is_none(), "acknowledged after the mail");
    assert_eq!(delivered(&after, s, &key), 1);
    after.idle(s).await;
    drop(after);
    let again = restart(&dir, "boot-3").await;
    assert_eq!(
        delivered(&again, s, &key),
        1,
        "one mail, even after a second restart"
    );
}
