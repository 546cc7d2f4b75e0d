//! `troupe db copy`'s core: a whole database moves to another one with nothing lost.

use std::sync::Arc;
use troupe_core::inbox::Delivery;
use troupe_core::run::EndReason;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{ManualClock, ThreadId};
use troupe_store::{NewBot, NewRun, NewThread, OpenOptions, Store, StoreError, testing};

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(5_000))
}

fn new_thread(parent: Option<ThreadId>, title: &str) -> NewThread {
    NewThread {
        workspace_root: None,
        parent_id: parent,
        title: title.into(),
        agent: AgentBinding::new("a", "be brief"),
        workspace: "/tmp".into(),
        interaction: Interaction::Interactive,
    }
}

/// Threads (one a child), runs ended and live, inbox items, messages, a Bot: rows in most tables.
fn fill(s: &Store) {
    s.write(|tx| {
        tx.create_bot(&NewBot {
            name: "Ada".into(),
            persona: "précise, brève — \"quoted\"".into(),
            endpoint: None,
            scripted: false,
        })?;
        for i in 0..5 {
            let t = tx.create_thread(&new_thread(None, &format!("thread {i}")))?;
            let child = tx.create_thread(&new_thread(Some(t.id), "child"))?;
            let run = tx.start_run(&NewRun {
                thread_id: t.id,
                trigger: "test".into(),
                owner_pid: 7,
                owner_boot: "boot".into(),
            })?;
            let item = tx.deliver(
                t.id,
                &Delivery::user_task(format!("task {i}")).with_key(format!("k{i}")),
            )?;
            tx.materialize(item.item_id, None, Some(run.id), None)?;
            tx.deliver(child.id, &Delivery::user_task("queued"))?;
            if i % 2 == 0 {
                tx.end_run(run.id, run.generation, &EndReason::Completed)?;
            }
        }
        Ok(())
    })
    .unwrap();
}

fn copy_keeps_every_row(from: &Store, to: &Store) {
    fill(from);
    let before = from.table_summaries().unwrap();
    let after = from.copy_into(to).unwrap();
    assert_eq!(
        before, after,
        "every table's rows and checksum arrive unchanged"
    );
    assert!(before["threads"].rows == 10 && before["events"].rows > 10);
    // The destination goes on from there: new rows get ids past the copied ones.
    let t = to
        .write(|tx| tx.create_thread(&new_thread(None, "after the copy")))
        .unwrap();
    assert_eq!(t.id, ThreadId(11));
    assert_eq!(to.read(|tx| tx.live_runs()).unwrap().len(), 2);
}

#[test]
fn db_copy_sqlite_to_sqlite_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let from = Store::open(dir.path().join("a.db"), clock()).unwrap();
    let to = Store::open(dir.path().join("b.db"), clock()).unwrap();
    copy_keeps_every_row(&from, &to);
}

#[test]
fn db_copy_sqlite_to_postgres_loses_nothing() {
    let Some(server) = testing::postgres_or_skip("db_copy_sqlite_to_postgres_loses_nothing") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let from = Store::open(dir.path().join("a.db"), clock()).unwrap();
    let url = testing::fresh_postgres_database(&server).unwrap();
    let to = Store::open_url(&url, clock(), OpenOptions::default()).unwrap();
    copy_keeps_every_row(&from, &to);
}

#[test]
fn a_copy_into_a_database_that_holds_data_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let from = Store::open(dir.path().join("a.db"), clock()).unwrap();
    fill(&from);
    let to = testing::open_in(&dir.path().join("b"), clock());
    to.write(|tx| tx.create_thread(&new_thread(None, "already here")))
        .unwrap();
    let before = to.table_summaries().unwrap();
    match from.copy_into(&to) {
        Err(StoreError::Conflict(m)) => assert!(m.contains("already holds data"), "{m}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(to.table_summaries().unwrap(), before);
}
