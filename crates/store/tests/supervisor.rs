//! The supervisor's records (issue 16 §2–3): how the process that ran a cut segment ended
//! decides whether its pick-up spends budget, and the stored deadlines the triggers arm.

use std::sync::Arc;
use troupe_core::conversation::SessionKind;
use troupe_core::plan::{PlanSpec, RevisionCause};
use troupe_core::run::EndReason;
use troupe_core::supervisor::RestartCause;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{ManualClock, RunId};
use troupe_store::{
    NewBot, NewNode, NewPlan, NewRun, NewThread, PlanRecord, Store, StoreError, Tx, testing,
};

fn node(id: &str) -> NewNode {
    NewNode {
        id: id.into(),
        host: "h".into(),
        pid: 1,
        addr: None,
    }
}

/// A run of `boot` on a fresh thread, ended as interrupted.
fn cut_run(store: &Store, boot: &str) -> RunId {
    store
        .write(|tx| {
            let t = tx.create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: "t".into(),
                agent: AgentBinding::new("a", "p"),
                workspace: "/tmp".into(),
                interaction: Interaction::Interactive,
            })?;
            let run = tx.start_run(&NewRun {
                thread_id: t.id,
                trigger: "test".into(),
                owner_pid: 1,
                owner_boot: boot.into(),
            })?;
            tx.force_end_run(run.id, &EndReason::Interrupted)?;
            Ok(run.id)
        })
        .unwrap()
}

#[test]
fn clean_stop_spends_no_budget_crash_does() {
    let clock = ManualClock::new(1_000_000);
    let store = testing::open(Arc::new(clock.clone()));
    store.write(|tx| tx.register_node(&node("boot-a"))).unwrap();
    let drained = cut_run(&store, "boot-a");
    // Still running: no cause yet.
    assert_eq!(store.read(|tx| tx.restart_cause_of(drained)).unwrap(), None);
    clock.advance(1_000);
    store.write(|tx| tx.stop_node("boot-a")).unwrap();
    assert_eq!(
        store.read(|tx| tx.restart_cause_of(drained)).unwrap(),
        Some(RestartCause::CleanStop)
    );
    // A process that never stopped cleanly, then a new one started: a crash.
    store.write(|tx| tx.register_node(&node("boot-b"))).unwrap();
    let killed = cut_run(&store, "boot-b");
    clock.advance(1_000);
    store.write(|tx| tx.register_node(&node("boot-c"))).unwrap();
    assert_eq!(
        store.read(|tx| tx.restart_cause_of(killed)).unwrap(),
        Some(RestartCause::Crash)
    );
}

/// A job in a new direct conversation.
fn job(tx: &mut Tx<'_>, name: &str) -> Result<PlanRecord, StoreError> {
    let bot = tx.create_bot(&NewBot {
        name: format!("Bot {name}"),
        persona: String::new(),
        endpoint: None,
        scripted: true,
    })?;
    let session = tx.create_session(SessionKind::Direct, "t", &[bot.id])?;
    tx.create_plan(
        &NewPlan {
            name: name.into(),
            original_request: name.into(),
            home_session_id: session.id,
            opening_line_id: None,
            spec: PlanSpec::default(),
            cause: RevisionCause::User,
        },
        |id| format!("/work/jobs/{}", id.0),
    )
}

#[test]
fn the_work_log_is_listed_per_job_and_each_row_is_an_event() {
    let clock = ManualClock::new(1_000_000);
    let store = testing::open(Arc::new(clock.clone()));
    let mut events = store.subscribe();
    let (a, b) = store
        .write(|tx| {
            let a = job(tx, "Job A")?;
            let b = job(tx, "Job B")?;
            tx.log_work(
                troupe_store::WorkRef::plan(a.id),
                "supervisor_notice",
                serde_json::json!({"code": "stalled"}),
            )?;
            tx.log_work(
                troupe_store::WorkRef::plan(b.id),
                "supervisor_requeued",
                serde_json::json!({}),
            )?;
            Ok((a.id, b.id))
        })
        .unwrap();
    let rows = store.read(|tx| tx.work_log_of_plan(a, 0, 10)).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].kind, "supervisor_notice");
    assert_eq!(rows[0].payload["code"], "stalled");
    let after = store
        .read(|tx| tx.work_log_of_plan(a, rows[0].id, 10))
        .unwrap();
    assert!(after.is_empty());
    let e = std::iter::from_fn(|| events.try_recv().ok())
        .find(|e| e.kind == "supervisor_notice")
        .unwrap();
    assert_eq!(e.kind, "supervisor_notice");
    assert_eq!(e.payload["task_id"], serde_json::json!(a));
    assert_eq!(e.payload["log_id"], serde_json::json!(rows[0].id));
    // Writing to a job's log is activity: its quiet deadline is two minutes later.
    let due = store
        .read(|tx| tx.due_supervised_plans(1_000_000 + 120_000, 10))
        .unwrap();
    assert_eq!(due, vec![a, b]);
    assert!(
        store
            .read(|tx| tx.due_supervised_plans(1_000_000 + 119_999, 10))
            .unwrap()
            .is_empty()
    );
}
