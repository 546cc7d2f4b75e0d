//! Recovery at boot: dead-process runs become interrupted without any model call, unknown
//! effects stay unknown, interactive threads latch, unattended ones are driven again.

mod support;

use support::build;
use troupe_core::ThreadId;
use troupe_core::effect::EffectOutcome;
use troupe_core::inbox::Delivery;
use troupe_core::message::{Finish, Origin, Part, PartBody, Role};
use troupe_core::pause::PauseReason;
use troupe_core::run::EndReason;
use troupe_core::thread::Interaction;
use troupe_store::{EffectBegin, NewMessage, NewRun, Store};

/// A pid that certainly belongs to no live process.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Leave the store as a process would that died in the middle of a shell call.
fn crash_mid_shell(store: &Store, t: ThreadId, pid: u32) -> troupe_core::RunId {
    store
        .write(|tx| {
            let d = tx.deliver(t, &Delivery::user_task("run the migration"))?;
            let run = tx.start_run(&NewRun {
                thread_id: t,
                trigger: "inbox".into(),
                owner_pid: pid,
                owner_boot: "dead-boot".into(),
            })?;
            let root = tx.materialize(d.item_id, None, Some(run.id), None)?;
            let reply = tx.insert_message(&NewMessage {
                thread_id: t,
                role: Role::Assistant,
                origin: Origin::Agent,
                is_root: false,
                root_id: Some(root.id),
                run_id: Some(run.id),
                parts: vec![Part {
                    body: PartBody::ToolCall {
                        call_id: "c1".into(),
                        name: "shell".into(),
                        arguments: r#"{"command":"migrate"}"#.into(),
                    },
                    visible: true,
                    in_context: true,
                }],
                finish: Some(Finish::ToolCalls),
                error: None,
                delivery_key: None,
                metadata: None,
            })?;
            let key = troupe_core::effect::effect_key(reply.id, "c1");
            assert!(matches!(
                tx.begin_effect(t, run.id, &key, "shell", "shell: migrate")?,
                EffectBegin::Started(_)
            ));
            // A second line arrived before the crash.
            tx.deliver(t, &Delivery::user_task("then report"))?;
            Ok(run.id)
        })
        .unwrap()
}

#[tokio::test]
async fn a_dead_process_run_is_interrupted_without_calling_a_model() {
    let h = build(vec![], |b| b);
    let t = h.thread(Interaction::Interactive);
    let run = crash_mid_shell(h.engine.store(), t, dead_pid());
    let report = h.engine.recover().await.unwrap();
    assert_eq!(report.interrupted_runs, [run]);
    assert_eq!(report.unknown_effects, 1);
    assert_eq!(h.provider.calls(), 0, "recovery must not call a model");
    let store = h.engine.store();
    let rec = store.read(|tx| tx.run(run)).unwrap();
    assert_eq!(rec.end_reason, Some(EndReason::Interrupted));
    let effects = store.read(|tx| tx.effects_for_thread(t)).unwrap();
    assert_eq!(effects[0].outcome, EffectOutcome::Unknown);
    let thread = store.read(|tx| tx.thread(t)).unwrap();
    assert_eq!(thread.paused.unwrap().reason, PauseReason::Interrupted);
    assert_eq!(thread.lease.holder, None);
    // The queued line is not lost, and the cut-off call has an honest result.
    let inbox = store.read(|tx| tx.inbox(t)).unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].text, "then report");
    let msgs = store.read(|tx| tx.messages(t, None, 10)).unwrap();
    assert!(format!("{:?}", msgs.last().unwrap().parts).contains("it was not run again"));
    // A second recovery changes nothing.
    let again = h.engine.recover().await.unwrap();
    assert!(again.interrupted_runs.is_empty());
}

#[tokio::test]
async fn continue_after_recovery_resumes_without_repeating_the_effect() {
    let h = build(
        vec![
            support::Reply::Text("migration state checked".into()),
            support::Reply::Text("reported".into()),
        ],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    crash_mid_shell(h.engine.store(), t, dead_pid());
    h.engine.recover().await.unwrap();
    // Automatic drives do nothing on the latched thread; Continue does.
    assert!(
        h.engine
            .request_drive(t, "test", false)
            .await
            .unwrap()
            .started()
            .is_none()
    );
    h.engine.continue_thread(t).await.unwrap();
    h.engine.wait_idle(t).await;
    // Continue resumes the breakpoint first (the queued line follows); the model sees the
    // interrupted call's honest result; no effect was started again.
    let reqs = h.provider.requests();
    assert!(format!("{:?}", reqs[0].messages).contains("it was not run again"));
    let effects = h
        .engine
        .store()
        .read(|tx| tx.effects_for_thread(t))
        .unwrap();
    assert_eq!(effects.len(), 1);
    let texts: Vec<String> = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 20))
        .unwrap()
        .iter()
        .map(|m| m.text())
        .collect();
    assert!(texts.contains(&"then report".to_string()));
}

#[tokio::test]
async fn runs_of_a_live_process_are_left_alone() {
    let h = build(vec![], |b| b);
    let t = h.thread(Interaction::Interactive);
    // Our parent process is alive and is not this engine.
    let parent = std::os::unix::process::parent_id();
    let run = crash_mid_shell(h.engine.store(), t, parent);
    let report = h.engine.recover().await.unwrap();
    assert!(report.interrupted_runs.is_empty());
    // Its open work is that run's, not unfinished: a second process starting beside it (or a
    // new node) must not latch a thread another one is driving.
    assert!(report.latched.is_empty(), "{report:?}");
    assert!(
        h.engine
            .store()
            .read(|tx| tx.thread(t))
            .unwrap()
            .paused
            .is_none()
    );
    assert_eq!(
        h.engine
            .store()
            .read(|tx| tx.run(run))
            .unwrap()
            .status
            .as_str(),
        "running"
    );
}

#[tokio::test]
async fn boot_wakes_unattended_threads_and_latches_interactive_ones() {
    let h = build(vec![support::Reply::Text("worker answer".into())], |b| b);
    let person = h.thread(Interaction::Interactive);
    let worker = h.thread(Interaction::Unattended);
    h.engine
        .store()
        .write(|tx| {
            tx.deliver(person, &Delivery::user_task("queued for a person"))?;
            tx.deliver(worker, &Delivery::user_task("queued for a worker"))
        })
        .unwrap();
    let report = h.engine.recover().await.unwrap();
    assert_eq!(report.latched, [person]);
    h.engine.wait_idle(worker).await;
    let person_thread = h.engine.store().read(|tx| tx.thread(person)).unwrap();
    assert_eq!(
        person_thread.paused.unwrap().reason,
        PauseReason::Interrupted
    );
    assert_eq!(
        h.engine.store().read(|tx| tx.inbox(person)).unwrap().len(),
        1
    );
    let worker_msgs = h
        .engine
        .store()
        .read(|tx| tx.messages(worker, None, 10))
        .unwrap();
    assert_eq!(worker_msgs.last().unwrap().text(), "worker answer");
    assert_eq!(h.provider.calls(), 1);
}

#[tokio::test]
async fn work_whose_last_effect_is_unknown_does_not_resume_by_itself() {
    let h = build(vec![], |b| b);
    let worker = h.thread(Interaction::Unattended);
    crash_mid_shell(h.engine.store(), worker, dead_pid());
    let report = h.engine.recover().await.unwrap();
    // Unattended: never latched, but the unknown effect keeps the boot wake away.
    assert!(report.latched.is_empty());
    assert_eq!(h.provider.calls(), 0);
    let (_, outcome) = &report.woken[0];
    assert_eq!(
        outcome,
        &troupe_engine::DriveOutcome::NotHandled {
            refusal: troupe_core::drive::DriveRefusal::UnknownEffect
        }
    );
    // A forced drive (Continue) is the way on.
    assert!(
        h.engine
            .continue_thread(worker)
            .await
            .unwrap()
            .started()
            .is_some()
    );
    h.engine.wait_idle(worker).await;
    // Once a later run has started, new work is driven normally again.
    h.engine
        .deliver(worker, Delivery::user_task("next"))
        .await
        .unwrap();
    h.engine.wait_idle(worker).await;
    assert_eq!(
        h.engine
            .store()
            .read(|tx| tx.runs_for_thread(worker, 10))
            .unwrap()
            .len(),
        3
    );
}

/// A task its run was stopped on (a hold's stop: no latch, the hold keeps it) is open by that
/// stop's choice: a restart does not call it unfinished work and latch it `interrupted`.
#[tokio::test]
async fn a_task_stopped_before_the_restart_is_not_latched_as_cut_off() {
    let started = std::sync::Arc::new(tokio::sync::Notify::new());
    let h = build(
        vec![support::Reply::Hang {
            partial: "half".into(),
            started: started.clone(),
        }],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("a long one"))
        .await
        .unwrap();
    started.notified().await;
    h.engine
        .stop(t, troupe_engine::StopMode::Hold)
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let report = h.engine.recover().await.unwrap();
    assert!(report.latched.is_empty(), "{:?}", report.latched);
    let thread = h.engine.store().read(|tx| tx.thread(t)).unwrap();
    assert_eq!(thread.paused, None);
}
