//! Holds on both backends (see `troupe_store::testing`): the database's rules, attacked by raw
//! SQL (HOLD-D1: a covered live turn is refused unless read-only; HOLD-2: never deleted; what a
//! hold is stays fixed; I5: a run that ended says why), and the store's API (making, lifting
//! once, listing, coverage per scope and per target, the live turns a hold covers).
//!
//! On PostgreSQL a refused statement ends its transaction, so each refusal has a write of its
//! own.

mod hold_world;

use hold_world::*;

#[test]
fn trigger_refuses_covered_live_turn() {
    let (s, _) = store();
    let w = world(&s);
    // Ada's turns written before the hold: one on the ad job, one on launch, one read-only.
    let on_ad = live_run(&s, Some(&w.ada_ad));
    raw(
        &s,
        &segment_sql(on_ad, w.ada, w.direct, Some(&w.ada_ad), "'work'"),
    )
    .unwrap();
    let on_launch = live_run(&s, Some(&w.ada_launch));
    raw(
        &s,
        &segment_sql(on_launch, w.ada, w.group, Some(&w.ada_launch), "'work'"),
    )
    .unwrap();
    let reading = live_run(&s, None);
    raw(
        &s,
        &segment_sql(reading, w.ada, w.group, Some(&w.ada_launch), "'readonly'"),
    )
    .unwrap();
    make(
        &s,
        new_hold(HoldScope::BotPlan {
            bot_id: w.ada,
            plan_id: w.launch,
        }),
    );

    // Insert: a new covered turn, with a mode or none.
    let desk_run = live_run(&s, None);
    for mode in ["'work'", "NULL"] {
        assert_held(
            raw(
                &s,
                &segment_sql(desk_run, w.ada, w.group, Some(&w.ada_launch), mode),
            ),
            &format!("a covered turn, mode {mode}"),
        );
    }
    // Through the API too, and the refusal names its holds when asked after.
    let err = s.write(|tx| {
        tx.open_segment(&NewSegment {
            run_id: desk_run,
            bot_id: w.ada,
            session_id: w.group,
            trigger_line_id: None,
            work_item_id: w.ada_launch.id,
            mode: WorkMode::Work,
            candidates: vec![],
            readonly: false,
        })
    });
    assert!(matches!(err, Err(StoreError::Held)), "{err:?}");
    let facts = TurnFacts {
        bot_id: w.ada,
        session_id: w.group,
        thread_id: w.ada_launch.thread_id,
        plan_id: Some(w.launch),
        plan_home: Some(w.group),
        ticket_id: None,
    };
    assert_eq!(s.read(|tx| tx.covering_holds(&facts)).unwrap().len(), 1);
    // Bo's work on the same job is not covered.
    let bo_run = live_run(&s, Some(&w.bo_launch));
    raw(
        &s,
        &segment_sql(bo_run, w.bo, w.group, Some(&w.bo_launch), "'work'"),
    )
    .unwrap();

    // Update: the covered live turn in place, even a counter.
    assert_held(
        raw(
            &s,
            &format!(
                "UPDATE segments SET bounces = bounces + 1 WHERE run_id = {}",
                on_launch.0
            ),
        ),
        "a covered live turn's counter",
    );
    // Move into cover: the ad turn bound to the held job's item.
    assert_held(
        raw(
            &s,
            &format!(
                "UPDATE segments SET work_item_id = {} WHERE run_id = {}",
                w.ada_launch.id.0, on_ad.0
            ),
        ),
        "a live turn moved onto a held job",
    );
    // Mode change: read-only → work, and work → read-only.
    assert_held(
        raw(
            &s,
            &format!(
                "UPDATE segments SET mode = 'work' WHERE run_id = {}",
                reading.0
            ),
        ),
        "a covered read-only turn given work",
    );
    assert_held(
        raw(
            &s,
            &format!(
                "UPDATE segments SET mode = 'readonly' WHERE run_id = {}",
                on_launch.0
            ),
        ),
        "a covered turn's mode changed",
    );
    // What is left alone: the uncovered turn, the read-only one unchanged in its mode.
    raw(
        &s,
        &format!("UPDATE segments SET bounces = 1 WHERE run_id = {}", on_ad.0),
    )
    .unwrap();
    raw(
        &s,
        &format!(
            "UPDATE segments SET bounces = 1 WHERE run_id = {}",
            reading.0
        ),
    )
    .unwrap();
    // A turn that ended is not live: its row may be written.
    end(&s, on_launch);
    raw(
        &s,
        &format!(
            "UPDATE segments SET bounces = 2 WHERE run_id = {}",
            on_launch.0
        ),
    )
    .unwrap();
    // Every refusal wrote nothing.
    let work = s.read(|tx| tx.segment_work(on_ad)).unwrap().unwrap();
    assert_eq!(work.work_item_id, w.ada_ad.id);
}

#[test]
fn readonly_passes() {
    let (s, _) = store();
    let w = world(&s);
    let hold = make(&s, new_hold(HoldScope::Everything));
    let run = live_run(&s, None);
    for mode in ["'work'", "'desk'", "NULL"] {
        assert_held(
            raw(
                &s,
                &segment_sql(run, w.ada, w.group, Some(&w.ada_desk), mode),
            ),
            &format!("mode {mode} under everything"),
        );
    }
    raw(&s, &segment_sql(run, w.ada, w.group, None, "'readonly'")).unwrap();
    raw(
        &s,
        &format!(
            "UPDATE segments SET progress_messages = 1 WHERE run_id = {}",
            run.0
        ),
    )
    .unwrap();
    assert!(s.read(|tx| tx.covered_live_turns(hold)).unwrap().is_empty());
    // Once lifted, the same write passes in any mode.
    lift(&s, hold);
    let other = live_run(&s, Some(&w.ada_launch));
    raw(
        &s,
        &segment_sql(other, w.ada, w.group, Some(&w.ada_launch), "'work'"),
    )
    .unwrap();
}

#[test]
fn holds_never_deleted() {
    let (s, _) = store();
    let w = world(&s);
    let mut h = new_hold(HoldScope::Session {
        session_id: w.group,
    });
    h.targets = vec![HoldTarget::Direct {
        session_id: w.direct,
    }];
    let id = make(&s, h);
    lift(&s, id);
    for sql in [
        format!("DELETE FROM holds WHERE id = {}", id.0),
        "DELETE FROM holds".to_string(),
        format!("DELETE FROM hold_targets WHERE hold_id = {}", id.0),
    ] {
        assert_refused(raw(&s, &sql), "hold_not_deleted", &sql);
    }
    let kept = s.read(|tx| tx.hold(id)).unwrap();
    assert_eq!(kept.targets.len(), 1);
}

#[test]
fn hold_fields_immutable() {
    let (s, _) = store();
    let w = world(&s);
    let mut h = new_hold(HoldScope::Plan { plan_id: w.launch });
    h.targets = vec![HoldTarget::BotPlan {
        bot_id: w.bo,
        plan_id: w.ad,
    }];
    let id = make(&s, h).0;
    for set in [
        "scope_kind = 'everything', plan_id = NULL".to_string(),
        format!("plan_id = {}", w.ad.0),
        "source = 'migration'".into(),
        "created_at = 5".into(),
        "target_count = 2".into(),
        format!("id = {}", id + 100),
    ] {
        assert_refused(
            raw(&s, &format!("UPDATE holds SET {set} WHERE id = {id}")),
            "hold_immutable",
            &set,
        );
    }
    // Targets: none added after creation, none changed.
    assert_refused(
        raw(
            &s,
            &format!(
                "INSERT INTO hold_targets (hold_id, kind, session_id) VALUES ({id}, 'direct', {})",
                w.group.0
            ),
        ),
        "hold_immutable",
        "a target added later",
    );
    assert_refused(
        raw(
            &s,
            &format!(
                "UPDATE hold_targets SET bot_id = {} WHERE hold_id = {id}",
                w.ada.0
            ),
        ),
        "hold_immutable",
        "a target changed",
    );
    // What may change: the effect, the line it points at (cleared), and the lift, once.
    raw(
        &s,
        &format!("UPDATE holds SET composer_stop = 0, source_message_id = NULL WHERE id = {id}"),
    )
    .unwrap();
    lift(&s, HoldId(id));
    for set in [
        "status = 'in_force', lifted_at = NULL, lifted_by = NULL",
        "lifted_at = 99999",
        "lifted_by = 'user_text'",
    ] {
        assert_refused(
            raw(&s, &format!("UPDATE holds SET {set} WHERE id = {id}")),
            "hold_immutable",
            set,
        );
    }
    let kept = s.read(|tx| tx.hold(HoldId(id))).unwrap();
    assert_eq!(kept.scope, HoldScope::Plan { plan_id: w.launch });
    assert_eq!(kept.status, HoldStatus::Lifted);
    assert_eq!(kept.targets.len(), 1);
}

#[test]
fn end_reason_non_blank() {
    let (s, _) = store();
    // A run bound to nothing: the rule is every run's now.
    let run = live_run(&s, None);
    for reason in ["''", "'   '", "NULL"] {
        assert_refused(
            raw(
                &s,
                &format!(
                    "UPDATE runs SET status = 'completed', end_reason = {reason}, ended_at = 5
                     WHERE id = {}",
                    run.0
                ),
            ),
            "blank_end_reason",
            reason,
        );
    }
    let thread = s.read(|tx| tx.run(run)).unwrap().thread_id;
    assert_refused(
        raw(
            &s,
            &format!(
                "INSERT INTO runs (thread_id, generation, trigger_reason, status, end_reason,
                     owner_pid, owner_boot, started_at, ended_at)
                 VALUES ({}, 99, 'x', 'failed', ' ', 1, 'b', 1, 2)",
                thread.0
            ),
        ),
        "blank_end_reason",
        "a run written ended, blank",
    );
    end(&s, run);
    assert_eq!(s.read(|tx| tx.run(run)).unwrap().status.as_str(), "stopped");
}

/// On PostgreSQL a hold and a turn written at once on two connections see each other: the
/// second waits for the first (the hold lock) and then reads what it committed. Without the
/// lock each would miss the other's uncommitted row, and a covered turn would run.
#[test]
fn postgres_hold_and_turn_written_at_once_see_each_other() {
    use std::sync::mpsc;
    use std::time::Duration;
    let Some(server) = troupe_store::testing::postgres_or_skip(
        "postgres_hold_and_turn_written_at_once_see_each_other",
    ) else {
        return;
    };
    let url = troupe_store::testing::fresh_postgres_schema(&server).unwrap();
    let open = || {
        Store::open_url(
            &url,
            Arc::new(ManualClock::new(1_000)),
            troupe_store::OpenOptions::default(),
        )
        .unwrap()
    };
    let (one, two) = (open(), open());
    let w = world(&one);

    // A hold first, still uncommitted while the turn is written on the other connection.
    let run = live_run(&one, Some(&w.ada_launch));
    let (made_tx, made) = mpsc::channel();
    let (go_tx, go) = mpsc::channel::<()>();
    let maker = {
        let one = one.clone();
        std::thread::spawn(move || {
            one.write(|tx| {
                let hold = tx.insert_hold(&new_hold(HoldScope::Everything))?;
                made_tx.send(()).unwrap();
                go.recv().unwrap();
                Ok(hold.id)
            })
            .unwrap()
        })
    };
    made.recv().unwrap();
    let sql = segment_sql(run, w.ada, w.group, Some(&w.ada_launch), "'work'");
    let writer = {
        let two = two.clone();
        std::thread::spawn(move || raw(&two, &sql))
    };
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !writer.is_finished(),
        "the turn waits for the hold being made"
    );
    go_tx.send(()).unwrap();
    let hold = maker.join().unwrap();
    assert_held(
        writer.join().unwrap(),
        "a turn written while a hold was made",
    );
    lift(&one, hold);

    // A turn first, still uncommitted while the hold is made on the other connection.
    let run = live_run(&one, Some(&w.bo_launch));
    let (wrote_tx, wrote) = mpsc::channel();
    let (go_tx, go) = mpsc::channel::<()>();
    let sql = segment_sql(run, w.bo, w.group, Some(&w.bo_launch), "'work'");
    let writer = {
        let one = one.clone();
        std::thread::spawn(move || {
            one.write(|tx| {
                tx.raw_execute(&sql)?;
                wrote_tx.send(()).unwrap();
                go.recv().unwrap();
                Ok(())
            })
        })
    };
    wrote.recv().unwrap();
    let maker = {
        let two = two.clone();
        std::thread::spawn(move || {
            two.write(|tx| {
                let hold = tx.insert_hold(&new_hold(HoldScope::Bot { bot_id: w.bo }))?;
                tx.covered_live_turns(hold.id)
            })
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !maker.is_finished(),
        "the hold waits for the turn being written"
    );
    go_tx.send(()).unwrap();
    writer.join().unwrap().unwrap();
    let covered = maker.join().unwrap().unwrap();
    assert_eq!(
        covered.iter().map(|t| t.run_id).collect::<Vec<_>>(),
        vec![run],
        "the hold sees the turn committed before it"
    );
}
