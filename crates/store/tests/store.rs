use std::sync::Arc;
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::run::EndReason;
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{ManualClock, ThreadId};
use troupe_store::{NewRun, NewThread, Store, StoreError};

/// On the backend the run chose (see `troupe_store::testing`).
fn store() -> Store {
    troupe_store::testing::open(Arc::new(ManualClock::new(1_000)))
}

fn thread(s: &Store) -> ThreadId {
    s.write(|tx| {
        tx.create_thread(&NewThread {
            workspace_root: None,
            parent_id: None,
            title: "t".into(),
            agent: AgentBinding::new("a", "be brief"),
            workspace: "/tmp".into(),
            interaction: Interaction::Interactive,
        })
    })
    .unwrap()
    .id
}

fn new_run(t: ThreadId) -> NewRun {
    NewRun {
        thread_id: t,
        trigger: "test".into(),
        owner_pid: std::process::id(),
        owner_boot: "boot".into(),
    }
}

#[test]
fn delivery_key_idempotency_holds_before_and_after_consumption() {
    let s = store();
    let t = thread(&s);
    let d = Delivery::user_task("do it").with_key("k1");
    let first = s.write(|tx| tx.deliver(t, &d)).unwrap();
    assert!(first.created);
    let again = s.write(|tx| tx.deliver(t, &d)).unwrap();
    assert!(!again.created);
    assert_eq!(again.item_id, first.item_id);
    assert_eq!(s.read(|tx| tx.inbox(t)).unwrap().len(), 1);

    let msg = s
        .write(|tx| tx.materialize(first.item_id, None, None, None))
        .unwrap();
    assert!(msg.is_root);
    assert_eq!(msg.root_id, Some(msg.id));
    // After consumption the receipt answers: same item, the message it became, nothing new.
    let after = s.write(|tx| tx.deliver(t, &d)).unwrap();
    assert!(!after.created);
    assert_eq!(after.message_id, Some(msg.id));
    assert!(s.read(|tx| tx.inbox(t)).unwrap().is_empty());
    assert_eq!(s.read(|tx| tx.messages(t, None, 100)).unwrap().len(), 1);
}

#[test]
fn steer_cannot_materialize_without_a_task_to_join() {
    let s = store();
    let t = thread(&s);
    let d = s
        .write(|tx| tx.deliver(t, &Delivery::user_task("also").with_mode(InboxMode::Steer)))
        .unwrap();
    let err = s
        .write(|tx| tx.materialize(d.item_id, None, None, None))
        .unwrap_err();
    assert!(err.to_string().contains("no task for it to join"), "{err}");
    // The failed transaction left the item in place.
    assert_eq!(s.read(|tx| tx.inbox(t)).unwrap().len(), 1);
}

#[test]
fn stale_lease_cannot_end_or_release_a_newer_run() {
    let s = store();
    let t = thread(&s);
    let r1 = s.write(|tx| tx.start_run(&new_run(t))).unwrap();
    assert!(matches!(
        s.write(|tx| tx.start_run(&new_run(t))),
        Err(StoreError::Busy(_, _))
    ));
    // r1 is stopped from outside; r2 takes the lease.
    s.write(|tx| tx.force_end_run(r1.id, &EndReason::Stopped))
        .unwrap();
    let r2 = s.write(|tx| tx.start_run(&new_run(t))).unwrap();
    assert_eq!(r2.generation, r1.generation + 1);
    // The stale owner of r1 tries to end normally: refused, r2 still holds the lease.
    let stale = s.write(|tx| tx.end_run(r1.id, r1.generation, &EndReason::Completed));
    assert!(matches!(stale, Err(StoreError::StaleLease { .. })));
    let th = s.read(|tx| tx.thread(t)).unwrap();
    assert_eq!(th.lease.holder, Some(r2.id));
    assert!(s.read(|tx| tx.check_lease(t, r1.generation)).is_err());
    s.write(|tx| tx.end_run(r2.id, r2.generation, &EndReason::Completed))
        .unwrap();
    assert_eq!(s.read(|tx| tx.thread(t)).unwrap().lease.holder, None);
}

#[test]
fn first_stop_wins() {
    let s = store();
    let t = thread(&s);
    let r = s.write(|tx| tx.start_run(&new_run(t))).unwrap();
    let (_, ended) = s
        .write(|tx| tx.force_end_run(r.id, &EndReason::Stopped))
        .unwrap();
    assert!(ended);
    let (rec, ended) = s
        .write(|tx| tx.force_end_run(r.id, &EndReason::Interrupted))
        .unwrap();
    assert!(!ended);
    assert_eq!(rec.end_reason, Some(EndReason::Stopped));
}

#[test]
fn effect_ledger_refuses_a_repeat_and_keeps_unknown() {
    use troupe_core::effect::EffectOutcome;
    use troupe_store::EffectBegin;
    let s = store();
    let t = thread(&s);
    let r = s.write(|tx| tx.start_run(&new_run(t))).unwrap();
    let EffectBegin::Started(id) = s
        .write(|tx| tx.begin_effect(t, r.id, "5:call_1", "shell", "shell: ls"))
        .unwrap()
    else {
        panic!("first begin must start")
    };
    s.write(|tx| tx.mark_run_effects_unknown(r.id, "aborted"))
        .unwrap();
    // The loop's late outcome cannot overwrite unknown.
    let changed = s
        .write(|tx| tx.settle_effect(id, EffectOutcome::Succeeded, None))
        .unwrap();
    assert!(!changed);
    let again = s
        .write(|tx| tx.begin_effect(t, r.id, "5:call_1", "shell", "shell: ls"))
        .unwrap();
    assert_eq!(again, EffectBegin::Repeated(EffectOutcome::Unknown));
    assert_eq!(
        s.read(|tx| tx.latest_effect(t)).unwrap(),
        Some((EffectOutcome::Unknown, r.id))
    );
}

#[test]
fn events_have_monotonic_ids_and_resume_after_an_id() {
    let s = store();
    let t = thread(&s);
    s.write(|tx| tx.deliver(t, &Delivery::user_task("a")))
        .unwrap();
    s.write(|tx| tx.deliver(t, &Delivery::user_task("b")))
        .unwrap();
    let all = s
        .read(|tx| tx.events_after(troupe_core::EventId(0), Some(t), 100))
        .unwrap();
    assert!(all.windows(2).all(|w| w[0].id < w[1].id));
    let tail = s
        .read(|tx| tx.events_after(all[0].id, Some(t), 100))
        .unwrap();
    assert_eq!(tail.len(), all.len() - 1);
}

#[test]
fn a_newer_database_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("troupe.db");
    drop(Store::open(&path, Arc::new(ManualClock::new(0))).unwrap());
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.pragma_update(None, "user_version", 999).unwrap();
    }
    let err = Store::open(&path, Arc::new(ManualClock::new(0)))
        .err()
        .unwrap();
    let msg = err.to_string();
    assert!(msg.contains("newer") && msg.contains("troupe.db"), "{msg}");
}

#[test]
fn a_corrupt_file_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.db");
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let err = Store::open(&path, Arc::new(ManualClock::new(0)))
        .err()
        .unwrap();
    let msg = err.to_string();
    assert!(msg.contains("junk.db"), "{msg}");
}

#[test]
fn a_run_keeps_only_its_first_80_tool_call_records() {
    use troupe_store::ToolCallRecord;
    let s = store();
    let t = thread(&s);
    let r = s.write(|tx| tx.start_run(&new_run(t))).unwrap();
    let m = s
        .write(|tx| {
            let d = tx.deliver(t, &Delivery::user_task("x"))?;
            tx.materialize(d.item_id, None, Some(r.id), None)
        })
        .unwrap();
    for i in 0..85 {
        s.write(|tx| {
            tx.record_tool_call(
                t,
                &ToolCallRecord {
                    run_id: r.id,
                    message_id: m.id,
                    call_id: format!("c{i}"),
                    name: "read_file".into(),
                    arguments: "{}".into(),
                    status: "ok".into(),
                    result: String::new(),
                    duration_ms: 0,
                },
            )
        })
        .unwrap();
    }
    assert_eq!(s.read(|tx| tx.tool_calls(r.id)).unwrap().len(), 80);
    assert_eq!(s.read(|tx| tx.run(r.id)).unwrap().tool_calls, 85);
}

// Opening retries SQLITE_BUSY while a brand-new file switches to WAL, and each migration takes
// the write lock and reads the version again, so every opener gets the same schema.
#[test]
fn stores_opening_a_new_file_at_once_migrate_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("troupe.db");
    let barrier = Arc::new(std::sync::Barrier::new(4));
    let openers: Vec<_> = (0..4)
        .map(|_| {
            let (path, barrier) = (path.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                Store::open(&path, Arc::new(ManualClock::new(0))).map(|_| ())
            })
        })
        .collect();
    for o in openers {
        o.join().unwrap().expect("every opener gets a usable store");
    }
    let s = Store::open(&path, Arc::new(ManualClock::new(0))).unwrap();
    thread(&s);
}

fn model_call(run: troupe_core::RunId, cached: u64) -> troupe_store::ModelCallRecord {
    troupe_store::ModelCallRecord {
        run_id: run,
        role: "main".into(),
        endpoint: "http://127.0.0.1:1/v1".into(),
        model: "m".into(),
        input_tokens: 900,
        cached_input_tokens: cached,
        output_tokens: 12,
        latency_ms: 40,
        attempts: 1,
        error: None,
        attempt_errors: Vec::new(),
        started_at: 1_000,
        finish: Some("stop".into()),
    }
}

#[test]
fn a_model_call_keeps_its_cached_input_tokens() {
    let s = store();
    let t = thread(&s);
    let r = s.write(|tx| tx.start_run(&new_run(t))).unwrap();
    let call = model_call(r.id, 768);
    s.write(|tx| tx.record_model_call(t, &call)).unwrap();
    assert_eq!(s.read(|tx| tx.model_calls(r.id)).unwrap(), vec![call]);
}

// Model calls recorded before migration 9 read back with nothing cached and no finish.
#[test]
fn model_calls_from_before_cached_tokens_read_as_none_cached() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("troupe.db");
    // A file as migration 8 left it, with one model call written the way it wrote them.
    troupe_store::testing::sqlite_file_at_version(&path, 8).unwrap();
    let run = {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "INSERT INTO threads (id, title, agent, workspace, created_at, updated_at)
                 VALUES (1, 't', '{}', '/tmp', 0, 0);
             INSERT INTO runs (id, thread_id, generation, trigger_reason, status, owner_pid,
                               owner_boot, started_at)
                 VALUES (1, 1, 1, 'test', 'running', 1, 'old', 0);
             INSERT INTO model_calls (run_id, role, endpoint, model, input_tokens, output_tokens,
                                      latency_ms, attempts, started_at)
                 VALUES (1, 'main', 'http://127.0.0.1:1/v1', 'm', 900, 12, 40, 1, 1000);",
        )
        .unwrap();
        troupe_core::RunId(1)
    };
    let s = Store::open(&path, Arc::new(ManualClock::new(0))).unwrap();
    let calls = s.read(|tx| tx.model_calls(run)).unwrap();
    // Nor did they keep how the answer ended (migration 39).
    let old = troupe_store::ModelCallRecord {
        finish: None,
        ..model_call(run, 0)
    };
    assert_eq!(calls, vec![old]);
}

#[test]
fn the_latest_root_of_an_origin_is_found_however_far_back_it_is() {
    use troupe_core::message::{Origin, Role};
    let s = store();
    let t = thread(&s);
    let root = |origin: Origin, key: &str| troupe_store::NewMessage {
        thread_id: t,
        role: Role::User,
        origin,
        is_root: true,
        root_id: None,
        run_id: None,
        parts: Vec::new(),
        finish: None,
        error: None,
        delivery_key: Some(key.into()),
        metadata: None,
    };
    let assign = Origin::System("boss_assign".into());
    s.write(|tx| {
        tx.insert_message(&root(assign.clone(), "first"))?;
        tx.insert_message(&root(assign.clone(), "second"))?;
        // Far more later lines than any tail a caller would read.
        for i in 0..450 {
            tx.insert_message(&root(Origin::User, &format!("user-{i}")))?;
        }
        tx.insert_message(&root(Origin::System("other".into()), "other"))
    })
    .unwrap();
    let found = s
        .read(|tx| tx.latest_root_with_origin(t, &assign))
        .unwrap()
        .unwrap();
    assert_eq!(found.delivery_key.as_deref(), Some("second"));
    let user = s
        .read(|tx| tx.latest_root_with_origin(t, &Origin::User))
        .unwrap()
        .unwrap();
    assert_eq!(user.delivery_key.as_deref(), Some("user-449"));
    let none = s
        .read(|tx| tx.latest_root_with_origin(t, &Origin::Timer("x".into())))
        .unwrap();
    assert!(none.is_none());
}

#[test]
fn context_for_many_threads_keeps_each_key_once_in_one_statement() {
    let s = store();
    let (waiting, taken, fresh) = (thread(&s), thread(&s), thread(&s));
    // One key still waits as an item, one was taken (its receipt stands), one is new.
    s.write(|tx| {
        tx.deliver(
            waiting,
            &Delivery::user_task("first").with_key("line:1:to:1"),
        )
    })
    .unwrap();
    let task = s
        .write(|tx| tx.deliver(taken, &Delivery::user_task("first").with_key("line:1:to:2")))
        .unwrap();
    s.write(|tx| tx.materialize(task.item_id, None, None, None))
        .unwrap();
    let d = Delivery::user_task("[Ada in group \"g\"] hello").with_mode(InboxMode::Context);
    let to = vec![
        (waiting, "line:1:to:1".to_string()),
        (taken, "line:1:to:2".to_string()),
        (fresh, "line:1:to:3".to_string()),
    ];
    let before = s
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 1000))
        .unwrap()
        .len();
    assert_eq!(s.write(|tx| tx.deliver_context_many(&d, &to)).unwrap(), 1);
    let got = s.read(|tx| tx.inbox(fresh)).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].mode, InboxMode::Context);
    assert_eq!(got[0].text, d.text);
    assert_eq!(got[0].delivery_key.as_deref(), Some("line:1:to:3"));
    assert_eq!(s.read(|tx| tx.inbox(waiting)).unwrap().len(), 1);
    assert!(s.read(|tx| tx.inbox(taken)).unwrap().is_empty());
    // Context wakes nobody, so it is not announced item by item.
    let after = s
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 1000))
        .unwrap();
    assert_eq!(after.len(), before);
    // Again: nothing new anywhere.
    assert_eq!(s.write(|tx| tx.deliver_context_many(&d, &to)).unwrap(), 0);
}

#[test]
fn context_for_many_threads_refuses_a_missing_thread_or_another_mode_and_writes_nothing() {
    let s = store();
    let t = thread(&s);
    let d = Delivery::user_task("heard").with_mode(InboxMode::Context);
    let to = vec![(t, "k1".to_string()), (ThreadId(9_999), "k2".to_string())];
    let err = s.write(|tx| tx.deliver_context_many(&d, &to)).unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    assert!(s.read(|tx| tx.inbox(t)).unwrap().is_empty());
    let task = Delivery::user_task("work");
    let err = s
        .write(|tx| tx.deliver_context_many(&task, &[(t, "k1".to_string())]))
        .unwrap_err();
    assert!(err.to_string().contains("only context"), "{err}");
    let err = s
        .write(|tx| tx.deliver_context_many(&d, &[(t, " ".to_string())]))
        .unwrap_err();
    assert!(err.to_string().contains("key"), "{err}");
    assert!(s.read(|tx| tx.inbox(t)).unwrap().is_empty());
}

#[test]
fn only_an_item_that_wakes_counts_as_waiting() {
    let s = store();
    let t = thread(&s);
    assert!(!s.read(|tx| tx.has_waking_item(t)).unwrap());
    let heard = Delivery::user_task("heard").with_mode(InboxMode::Context);
    s.write(|tx| tx.deliver_context_many(&heard, &[(t, "k1".to_string())]))
        .unwrap();
    assert!(
        !s.read(|tx| tx.has_waking_item(t)).unwrap(),
        "a context item wakes nobody"
    );
    s.write(|tx| tx.deliver(t, &Delivery::user_task("do it")))
        .unwrap();
    assert!(s.read(|tx| tx.has_waking_item(t)).unwrap());
}
