//! Several nodes on one database: events reach every node in id order, control messages cross,
//! a lease is taken by one node only, and a dead node is claimed once.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{Clock, EventId, ManualClock, SystemClock, ThreadId};
use troupe_store::{NewNode, NewRun, NewThread, OpenOptions, Store, StoreError, testing};

/// Two stores on one fresh database: two nodes. `None` (skipped) without PostgreSQL.
fn two_nodes(test: &str, clock: Arc<dyn troupe_core::Clock>) -> Option<(Store, Store)> {
    let server = testing::postgres_or_skip(test)?;
    let url = testing::fresh_postgres_database(&server).unwrap();
    let open = || Store::open_url(&url, clock.clone(), OpenOptions::default()).unwrap();
    Some((open(), open()))
}

fn new_thread(title: &str) -> NewThread {
    NewThread {
        workspace_root: None,
        parent_id: None,
        title: title.into(),
        agent: AgentBinding::new("a", "p"),
        workspace: "/tmp".into(),
        interaction: Interaction::Unattended,
    }
}

/// Wait (bounded) until `n` events arrived on `rx`; the wait ends on the events, not a timer.
async fn take(
    rx: &mut tokio::sync::broadcast::Receiver<troupe_store::Event>,
    n: usize,
) -> Vec<i64> {
    let mut ids = Vec::with_capacity(n);
    while ids.len() < n {
        let e = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .expect("every event arrives")
            .expect("no event is dropped");
        ids.push(e.id.0);
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_on_any_node_sees_all_events_in_order() {
    let Some((a, b)) = two_nodes(
        "sse_on_any_node_sees_all_events_in_order",
        Arc::new(SystemClock),
    ) else {
        return;
    };
    let (mut heard_a, mut heard_b) = (a.subscribe(), b.subscribe());
    // Both nodes write at once, synchronous and group-committed writes mixed.
    let writers: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .enumerate()
        .map(|(n, s)| {
            tokio::spawn(async move {
                for i in 0..100 {
                    if i % 2 == 0 {
                        s.write(|tx| tx.create_thread(&new_thread(&format!("{n}-{i}"))))
                            .unwrap();
                    } else {
                        s.write_async(move |tx| {
                            tx.event("tick", None, None, serde_json::json!({"n": n}))
                        })
                        .await
                        .unwrap();
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    let total = a
        .read(|tx| tx.events_after(EventId(0), None, 10_000))
        .unwrap();
    let all: Vec<i64> = total.iter().map(|e| e.id.0).collect();
    assert_eq!(
        all.len(),
        200,
        "100 threads created and 100 ticks, each one event"
    );
    for (node, heard) in [("a", &mut heard_a), ("b", &mut heard_b)] {
        let ids = take(heard, all.len()).await;
        assert_eq!(ids, all, "node {node} heard every event once, in id order");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_message_from_one_node_reaches_the_other() {
    let Some((a, b)) = two_nodes(
        "a_control_message_from_one_node_reaches_the_other",
        Arc::new(SystemClock),
    ) else {
        return;
    };
    let mut heard = b.subscribe_control();
    a.write(|tx| tx.notify_control(r#"{"stop":7}"#)).unwrap();
    let got = tokio::time::timeout(Duration::from_secs(10), heard.recv())
        .await
        .expect("it arrives")
        .unwrap();
    assert_eq!(got, r#"{"stop":7}"#);
}

#[test]
fn a_control_message_on_sqlite_reaches_the_store_at_commit() {
    let s = Store::open_in_memory(Arc::new(ManualClock::new(0))).unwrap();
    let mut heard = s.subscribe_control();
    // Not while the transaction is open; an undone one sends nothing.
    let _ = s.write(|tx| {
        tx.notify_control("undone")?;
        Err::<(), _>(StoreError::Invalid("no".into()))
    });
    s.write(|tx| tx.notify_control("kept")).unwrap();
    assert_eq!(heard.try_recv().unwrap(), "kept");
    assert!(heard.try_recv().is_err());
}

#[test]
fn two_nodes_racing_for_one_lease_never_both_take_it() {
    let Some((a, b)) = two_nodes(
        "two_nodes_racing_for_one_lease_never_both_take_it",
        Arc::new(SystemClock),
    ) else {
        return;
    };
    for round in 0..30 {
        let t = a
            .write(|tx| tx.create_thread(&new_thread(&format!("r{round}"))))
            .unwrap()
            .id;
        let start = |s: Store, node: &'static str| {
            std::thread::spawn(move || {
                s.write(|tx| {
                    tx.start_run(&NewRun {
                        thread_id: t,
                        trigger: "race".into(),
                        owner_pid: 1,
                        owner_boot: node.into(),
                    })
                })
            })
        };
        let (ra, rb) = (start(a.clone(), "a"), start(b.clone(), "b"));
        let results = [ra.join().unwrap(), rb.join().unwrap()];
        let won = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "round {round}: exactly one start wins: {results:?}");
        assert!(
            results
                .iter()
                .any(|r| matches!(r, Err(StoreError::Busy(..))))
        );
        let live = a.read(|tx| tx.live_runs()).unwrap();
        assert_eq!(live.iter().filter(|r| r.thread_id == t).count(), 1);
    }
}

#[test]
fn a_dead_node_is_claimed_once_and_only_after_it_expired() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let s = testing::open(clock.clone());
    s.write(|tx| {
        for id in ["n1", "n2", "n3"] {
            tx.register_node(&NewNode {
                id: id.into(),
                host: "h".into(),
                pid: 1,
                addr: None,
            })?;
        }
        Ok(())
    })
    .unwrap();
    let t: ThreadId = s
        .write(|tx| tx.create_thread(&new_thread("held")))
        .unwrap()
        .id;
    s.write(|tx| {
        tx.start_run(&NewRun {
            thread_id: t,
            trigger: "x".into(),
            owner_pid: 1,
            owner_boot: "n1".into(),
        })
    })
    .unwrap();
    // Within the expiry nobody can claim it.
    clock.advance(troupe_store::NODE_EXPIRY_MS);
    assert!(!s.write(|tx| tx.claim_node("n1", "n2", true)).unwrap());
    // n2 and n3 beat; n1 does not.
    s.write(|tx| Ok(tx.heartbeat("n2")? && tx.heartbeat("n3")?))
        .unwrap();
    clock.advance(1);
    assert_eq!(
        s.read(|tx| tx.expired_nodes()).unwrap(),
        vec!["n1".to_string()]
    );
    let claims: BTreeSet<bool> = ["n2", "n3"]
        .iter()
        .map(|by| s.write(|tx| tx.claim_node("n1", by, true)).unwrap())
        .collect();
    assert_eq!(claims, BTreeSet::from([true, false]), "one claim wins");
    let nodes = s.read(|tx| tx.nodes()).unwrap();
    let n1 = nodes.iter().find(|n| n.id == "n1").unwrap();
    assert_eq!(n1.reaped_by.as_deref(), Some("n2"));
    assert_eq!(
        n1.threads,
        vec![t],
        "it still holds the thread until its runs are recovered"
    );
    assert!(!n1.alive_at(clock.now_ms()));
    // A node taken over hears so at its next heartbeat.
    assert!(!s.write(|tx| tx.heartbeat("n1")).unwrap());
}

/// Two nodes' writes that take two rows in opposite orders deadlock; PostgreSQL cancels one,
/// and that write is run again instead of failing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_the_database_cancels_to_break_a_deadlock_runs_again() {
    let Some((a, b)) = two_nodes(
        "a_write_the_database_cancels_to_break_a_deadlock_runs_again",
        Arc::new(SystemClock),
    ) else {
        return;
    };
    let t1 = a
        .write(|tx| tx.create_thread(&new_thread("one")))
        .unwrap()
        .id;
    let t2 = a
        .write(|tx| tx.create_thread(&new_thread("two")))
        .unwrap()
        .id;
    let both_hold_one = Arc::new(std::sync::Barrier::new(2));
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let lock = |t: ThreadId| format!("SELECT id FROM threads WHERE id = {} FOR UPDATE", t.0);
    let writer = |s: Store, first: ThreadId, second: ThreadId| {
        let (barrier, runs) = (both_hold_one.clone(), runs.clone());
        tokio::spawn(async move {
            let mut attempt = 0;
            s.write_async(move |tx| {
                attempt += 1;
                runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tx.raw_execute(&lock(first))?;
                if attempt == 1 {
                    barrier.wait();
                }
                tx.raw_execute(&lock(second))?;
                tx.event("locked_both", Some(first), None, serde_json::json!({}))
            })
            .await
        })
    };
    let (wa, wb) = (writer(a.clone(), t1, t2), writer(b.clone(), t2, t1));
    let (ra, rb) = (wa.await.unwrap(), wb.await.unwrap());
    assert!(ra.is_ok() && rb.is_ok(), "both writes stand: {ra:?} {rb:?}");
    // At least one write was cancelled and ran again. A retry can itself be cancelled: the
    // cancelled transaction's row lock is free the moment it aborts, so its retry may take that
    // row before the waiter woken by the abort does, and the two close the same cycle again.
    let runs = runs.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        runs >= 3,
        "the cancelled one ran a second time (runs: {runs})"
    );
    let kinds: Vec<String> = a
        .read(|tx| tx.events_after(EventId(0), None, 100))
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .filter(|k| k == "locked_both")
        .collect();
    assert_eq!(kinds.len(), 2, "each write's event once");
}

/// The server ends every connection of a store (as a restart or a failover would): the store
/// connects again, its next writes stand, and its subscribers hear them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_carries_on_after_the_server_drops_its_connections() {
    let Some((s, admin)) = two_nodes(
        "a_store_carries_on_after_the_server_drops_its_connections",
        Arc::new(SystemClock),
    ) else {
        return;
    };
    s.write(|tx| tx.create_thread(&new_thread("before")))
        .unwrap();
    s.read(|tx| tx.threads(10)).unwrap();
    let mut heard = s.subscribe();
    admin
        .write(|tx| {
            tx.raw_execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
            )
        })
        .unwrap();
    // Queued writes run again on a new connection when the old one is found gone.
    s.write_async(|tx| tx.event("after", None, None, serde_json::json!({})))
        .await
        .expect("the write stands after a reconnect");
    let e = tokio::time::timeout(Duration::from_secs(10), heard.recv())
        .await
        .expect("the event is heard")
        .unwrap();
    assert_eq!(e.kind, "after");
    // A read on a connection that died may fail once, saying so; the next one reconnects.
    if let Err(e) = s.read(|tx| tx.threads(10)) {
        assert!(
            matches!(&e, StoreError::Sql(s) if s.kind == troupe_store::SqlErrorKind::Lost),
            "{e}"
        );
    }
    assert_eq!(s.read(|tx| tx.threads(10)).unwrap().len(), 1);
    s.write(|tx| tx.create_thread(&new_thread("after")))
        .unwrap();
}

#[test]
fn a_node_gone_for_a_day_is_forgotten_when_another_starts() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let s = testing::open(clock.clone());
    let node = |id: &str| NewNode {
        id: id.into(),
        host: "h".into(),
        pid: 1,
        addr: None,
    };
    s.write(|tx| {
        tx.register_node(&node("old"))?;
        tx.stop_node("old")
    })
    .unwrap();
    clock.advance(troupe_store::NODE_RECORD_KEPT_MS - 1);
    s.write(|tx| tx.register_node(&node("a"))).unwrap();
    assert_eq!(
        s.read(|tx| tx.nodes()).unwrap().len(),
        2,
        "kept within the day"
    );
    clock.advance(2);
    s.write(|tx| tx.register_node(&node("b"))).unwrap();
    let ids: Vec<String> = s
        .read(|tx| tx.nodes())
        .unwrap()
        .into_iter()
        .map(|n| n.id)
        .collect();
    assert!(
        !ids.contains(&"old".to_string()) && ids.len() == 2,
        "{ids:?}"
    );
}
