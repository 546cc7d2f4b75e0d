//! Lattice Runs in the store: records keyed by id that a new Run never overwrites (LAT-1), the
//! database keeping one non-terminal Run per session and a terminal Run's status fixed, the
//! pointer's repair rule, the single transition point writing its events with the Run, and the
//! lookups the controller's recovery needs (LAT-6's fingerprint, the Runs to reconcile).

use serde_json::json;
use std::sync::Arc;
use troupe_core::blueprint_loop::{BlueprintLoop, LoopSource, LoopStatus, RunMode};
use troupe_core::lattice::effect::{completion_key, prompt_key};
use troupe_core::lattice::{
    Effect, LatticeRun, Mode, PromptType, RunStatus, StatusReason, WorkState,
};
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::{EventId, LatticeRunId, ManualClock, ThreadId};
use troupe_store::{
    Event, NewBlueprintLoop, NewNote, NewThread, NoteKind, SqlErrorKind, Store, StoreError,
};

/// On the backend the run chose (see `troupe_store::testing`).
fn store() -> (Store, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000));
    (troupe_store::testing::open(clock.clone()), clock)
}

fn thread(s: &Store) -> ThreadId {
    s.write(|tx| {
        Ok(tx
            .create_thread(&NewThread {
                workspace_root: None,
                parent_id: None,
                title: "t".into(),
                agent: AgentBinding::new("a", "be brief"),
                workspace: "/tmp".into(),
                interaction: Interaction::Interactive,
            })?
            .id)
    })
    .unwrap()
}

fn create(s: &Store, t: ThreadId) -> LatticeRun {
    s.write(|tx| tx.create_lattice_run(t, Mode::Collaborative, 0, Some("ship it".into())))
        .unwrap()
}

fn read(s: &Store, id: LatticeRunId) -> LatticeRun {
    s.read(|tx| tx.lattice_run(id)).unwrap()
}

/// The Run moved to `status` (with a reason for the ones that carry one) and saved.
fn set_status(s: &Store, run: &LatticeRun, status: RunStatus) -> LatticeRun {
    let mut next = run.clone();
    next.status = status;
    next.status_reason = match status {
        RunStatus::Paused => Some(StatusReason::BlueprintLoopFailed),
        RunStatus::Cancelled => Some(StatusReason::UserCancelled),
        _ => None,
    };
    s.write(|tx| tx.save_lattice_run(&next, &[])).unwrap()
}

fn pointer(s: &Store, t: ThreadId) -> Option<LatticeRunId> {
    // The pointer row itself, read through a write that changes nothing but answers a count.
    s.write(|tx| {
        for r in tx.lattice_runs(1_000)? {
            let n = tx.raw_execute(&format!(
                "UPDATE lattice_current SET updated_at = updated_at
                 WHERE thread_id = {} AND run_id = {}",
                t.0, r.id.0
            ))?;
            if n == 1 {
                return Ok(Some(r.id));
            }
        }
        Ok(None)
    })
    .unwrap()
}

fn events(s: &Store, t: ThreadId, kind: &str) -> Vec<Event> {
    s.read(|tx| tx.events_after(EventId(0), Some(t), 1_000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == kind)
        .collect()
}

fn lattice_events(s: &Store, t: ThreadId) -> Vec<Event> {
    s.read(|tx| tx.events_after(EventId(0), Some(t), 1_000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind.starts_with("lattice_"))
        .collect()
}

fn is_terminal_refusal(e: &StoreError) -> bool {
    matches!(e, StoreError::Sql(f) if f.kind == SqlErrorKind::Constraint
        && f.message.contains("lattice_run_terminal"))
}

#[test]
fn terminal_run_trigger() {
    let (s, _) = store();
    for end in [
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Cancelled,
    ] {
        let t = thread(&s);
        let run = set_status(&s, &create(&s, t), end);
        let before = lattice_events(&s, t).len();

        // The trigger itself: raw SQL through the Tx cannot revive it or end it otherwise.
        for to in ["active", "paused", "completed", "failed", "cancelled"] {
            if to == end.as_str() {
                continue;
            }
            let err = s
                .write(|tx| {
                    tx.raw_execute(&format!(
                        "UPDATE lattice_runs SET status = '{to}' WHERE id = {}",
                        run.id.0
                    ))
                })
                .unwrap_err();
            assert!(is_terminal_refusal(&err), "{end:?} -> {to}: {err}");
        }
        // The same status may be written again (a completion's acknowledgement does).
        let same = s
            .write(|tx| {
                tx.raw_execute(&format!(
                    "UPDATE lattice_runs SET status = '{}', updated_at = updated_at WHERE id = {}",
                    end.as_str(),
                    run.id.0
                ))
            })
            .unwrap();
        assert_eq!(same, 1);

        // The transition point surfaces the refusal as a conflict, and writes nothing.
        let mut revived = run.clone();
        revived.status = RunStatus::Active;
        revived.status_reason = None;
        revived.state = WorkState::Planning;
        let err = s
            .write(|tx| tx.save_lattice_run(&revived, &[("run_resumed", json!({}))]))
            .unwrap_err();
        match &err {
            StoreError::Conflict(m) => {
                assert!(m.contains(&run.id.to_string()), "{m}");
                assert!(m.contains(end.as_str()), "{m}");
            }
            other => panic!("{end:?}: expected a conflict, got {other:?}"),
        }
        assert_eq!(read(&s, run.id), run, "{end:?}: the record is unchanged");
        assert_eq!(lattice_events(&s, t).len(), before, "no event was written");
    }
}

#[test]
fn one_non_terminal_run_per_session() {
    let (s, _) = store();
    let t = thread(&s);
    let first = create(&s, t);
    let second = s.write(|tx| tx.create_lattice_run(t, Mode::Auto, 0, None));
    match second {
        Err(StoreError::Conflict(m)) => assert_eq!(
            m,
            "a non-terminal Lattice Run already exists on this session"
        ),
        other => panic!("expected a conflict, got {other:?}"),
    }
    // Paused is not terminal either.
    let paused = set_status(&s, &first, RunStatus::Paused);
    assert!(matches!(
        s.write(|tx| tx.create_lattice_run(t, Mode::Auto, 0, None)),
        Err(StoreError::Conflict(_))
    ));
    // The database refuses it by itself, past the store's check.
    let raw = s
        .write(|tx| {
            tx.raw_execute(&format!(
                "INSERT INTO lattice_runs (thread_id, status, record, created_at, updated_at)
                 VALUES ({}, 'active', '{{}}', 1, 1)",
                t.0
            ))
        })
        .unwrap_err();
    assert!(
        matches!(&raw, StoreError::Sql(f) if f.kind == SqlErrorKind::Constraint),
        "{raw}"
    );
    assert_eq!(
        s.read(|tx| tx.lattice_runs_of_thread(t, 10)).unwrap(),
        vec![paused.clone()],
        "nothing was added"
    );

    // Another session has its own; an ended Run frees the session for a new one.
    let other = thread(&s);
    create(&s, other);
    set_status(&s, &paused, RunStatus::Cancelled);
    let next = s
        .write(|tx| tx.create_lattice_run(t, Mode::Auto, 5, None))
        .unwrap();
    assert_eq!(
        (next.status, next.state, next.mode, next.max_model_calls),
        (RunStatus::Active, WorkState::Clarifying, Mode::Auto, 5)
    );
}

#[test]
fn a_new_run_never_overwrites_history() {
    let (s, clock) = store();
    let t = thread(&s);
    let a = create(&s, t);
    assert_eq!(a.goal_seed.as_deref(), Some("ship it"));
    assert_eq!(pointer(&s, t), Some(a.id));
    let created = events(&s, t, "lattice_run_created");
    assert_eq!(created.len(), 1);
    assert_eq!(
        created[0].payload,
        json!({"run_id": a.id.0, "state": "clarifying", "status": "active",
               "mode": "collaborative", "max_model_calls": 0})
    );

    clock.advance(10);
    let a = set_status(&s, &a, RunStatus::Cancelled);
    clock.advance(10);
    let b = s
        .write(|tx| tx.create_lattice_run(t, Mode::Auto, 3, None))
        .unwrap();
    assert_ne!(a.id, b.id);
    assert_eq!(read(&s, a.id), a, "the cancelled Run is kept as it ended");
    assert_eq!(read(&s, b.id), b);
    assert_eq!(pointer(&s, t), Some(b.id), "the pointer is on the new Run");
    assert_eq!(
        s.read(|tx| tx.peek_current_lattice_run(t)).unwrap(),
        Some(b.clone())
    );
    assert_eq!(
        s.read(|tx| tx.lattice_runs_of_thread(t, 10)).unwrap(),
        vec![b.clone(), a.clone()],
        "newest first"
    );
    assert_eq!(
        s.read(|tx| tx.lattice_runs_of_thread(t, 1)).unwrap(),
        vec![b.clone()]
    );
    let elsewhere = create(&s, thread(&s));
    assert_eq!(
        s.read(|tx| tx.lattice_runs(10)).unwrap(),
        vec![elsewhere, b, a]
    );
    let missing = LatticeRunId(9_999);
    assert!(matches!(
        s.read(|tx| tx.lattice_run(missing)),
        Err(StoreError::NotFound {
            what: "lattice run",
            ..
        })
    ));
    assert_eq!(s.read(|tx| tx.find_lattice_run(missing)).unwrap(), None);
}

#[test]
fn reads_repair_a_missing_or_wrong_pointer() {
    let (s, _) = store();
    let t = thread(&s);
    let old = set_status(&s, &create(&s, t), RunStatus::Cancelled);
    let live = create(&s, t);
    let stranger = thread(&s);
    let foreign = create(&s, stranger);
    let repaired = || events(&s, t, "lattice_pointer_repaired");
    let raw = |sql: String| s.write(|tx| tx.raw_execute(&sql)).unwrap();

    // Missing: peek picks the one non-terminal Run and writes nothing.
    raw(format!(
        "DELETE FROM lattice_current WHERE thread_id = {}",
        t.0
    ));
    assert_eq!(
        s.read(|tx| tx.peek_current_lattice_run(t)).unwrap(),
        Some(live.clone())
    );
    assert_eq!(pointer(&s, t), None, "peek does not write");
    assert!(repaired().is_empty());
    // current_lattice_run repairs it, once.
    assert_eq!(
        s.write(|tx| tx.current_lattice_run(t)).unwrap(),
        Some(live.clone())
    );
    assert_eq!(pointer(&s, t), Some(live.id));
    assert_eq!(
        s.write(|tx| tx.current_lattice_run(t)).unwrap(),
        Some(live.clone())
    );
    let r = repaired();
    assert_eq!(r.len(), 1, "a right pointer is not written again");
    assert_eq!(r[0].payload, json!({"from": null, "to": live.id.0}));

    // Wrong: at a terminal Run while a non-terminal one exists, or at another session's Run.
    for wrong in [old.id, foreign.id] {
        raw(format!(
            "UPDATE lattice_current SET run_id = {} WHERE thread_id = {}",
            wrong.0, t.0
        ));
        assert_eq!(
            s.read(|tx| tx.peek_current_lattice_run(t)).unwrap(),
            Some(live.clone()),
            "pointer at {wrong}"
        );
        assert_eq!(pointer(&s, t), Some(wrong), "peek does not write");
        assert_eq!(
            s.write(|tx| tx.current_lattice_run(t)).unwrap(),
            Some(live.clone())
        );
        assert_eq!(pointer(&s, t), Some(live.id));
        assert_eq!(
            repaired().last().unwrap().payload,
            json!({"from": wrong.0, "to": live.id.0})
        );
    }
    assert_eq!(repaired().len(), 3);

    // No non-terminal Run: a pointer at any of the session's Runs stands; a missing one goes
    // to the newest.
    let live = set_status(&s, &live, RunStatus::Completed);
    raw(format!(
        "UPDATE lattice_current SET run_id = {} WHERE thread_id = {}",
        old.id.0, t.0
    ));
    assert_eq!(
        s.write(|tx| tx.current_lattice_run(t)).unwrap(),
        Some(old.clone())
    );
    assert_eq!(
        repaired().len(),
        3,
        "a pointer at an ended Run of its own stands"
    );
    raw(format!(
        "DELETE FROM lattice_current WHERE thread_id = {}",
        t.0
    ));
    assert_eq!(
        s.write(|tx| tx.current_lattice_run(t)).unwrap(),
        Some(live.clone())
    );
    assert_eq!(pointer(&s, t), Some(live.id));
    assert_eq!(repaired().len(), 4);

    // A session with no Run: nothing is current, and a stray pointer is removed.
    let empty = thread(&s);
    assert_eq!(
        s.read(|tx| tx.peek_current_lattice_run(empty)).unwrap(),
        None
    );
    raw(format!(
        "INSERT INTO lattice_current (thread_id, run_id, updated_at) VALUES ({}, {}, 1)",
        empty.0, foreign.id.0
    ));
    assert_eq!(s.write(|tx| tx.current_lattice_run(empty)).unwrap(), None);
    assert_eq!(
        s.write(|tx| tx.raw_execute(&format!(
            "UPDATE lattice_current SET updated_at = 0 WHERE thread_id = {}",
            empty.0
        )))
        .unwrap(),
        0,
        "the stray pointer is gone"
    );
    assert_eq!(
        events(&s, empty, "lattice_pointer_repaired")[0].payload,
        json!({"from": foreign.id.0, "to": null})
    );

    // Setting the pointer: only to the session's own Run, and not away from a live one.
    assert!(matches!(
        s.write(|tx| tx.set_current_lattice_run(t, foreign.id)),
        Err(StoreError::Invalid(_))
    ));
    s.write(|tx| tx.set_current_lattice_run(t, old.id)).unwrap();
    assert_eq!(pointer(&s, t), Some(old.id));
    assert!(matches!(
        s.write(|tx| tx.set_current_lattice_run(stranger, LatticeRunId(9_999))),
        Err(StoreError::NotFound { .. })
    ));
    let stranger_old = set_status(&s, &foreign, RunStatus::Cancelled);
    let stranger_live = create(&s, stranger);
    assert!(matches!(
        s.write(|tx| tx.set_current_lattice_run(stranger, stranger_old.id)),
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(pointer(&s, stranger), Some(stranger_live.id));
}

#[test]
fn save_writes_events_in_the_same_transaction() {
    let (s, clock) = store();
    let t = thread(&s);
    let run = create(&s, t);
    let mut next = run.clone();
    next.state = WorkState::Planning;
    next.state_revision = 1;
    next.effect = Some(Effect::DeliverPrompt {
        id: 1,
        prompt_type: PromptType::StateEntry,
        state: WorkState::Planning,
        delivery_key: prompt_key(run.id, 1),
        validation_errors: Vec::new(),
        attempt_count: 0,
    });
    let steps: [(&'static str, serde_json::Value); 2] = [
        (
            "state_changed",
            json!({"from": "clarifying", "to": "planning"}),
        ),
        ("action_consumed", json!({"action": "submit_requirements"})),
    ];
    clock.advance(50);

    // A transaction that fails after the save leaves neither the Run nor its events.
    let rolled_back = s.write(|tx| -> troupe_store::Result<()> {
        tx.save_lattice_run(&next, &steps)?;
        Err(StoreError::Conflict("the caller gave up".into()))
    });
    assert!(rolled_back.is_err());
    assert_eq!(read(&s, run.id), run);
    assert!(events(&s, t, "lattice_state_changed").is_empty());

    // A bad entry is refused before anything is written.
    for (bad, why) in [
        (("state_changed", json!({"status": "x"})), "status"),
        (("lattice_state_changed", json!({})), "prefix"),
        (("state_changed", json!(["x"])), "object"),
    ] {
        let err = s
            .write(|tx| tx.save_lattice_run(&next, std::slice::from_ref(&bad)))
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid(m) if m.contains(why)),
            "{why}: {err}"
        );
    }
    assert_eq!(read(&s, run.id), run);

    let saved = s.write(|tx| tx.save_lattice_run(&next, &steps)).unwrap();
    assert_eq!(
        saved.updated_at, 1_050,
        "stamped with the transaction's time"
    );
    assert_eq!(
        saved,
        LatticeRun {
            updated_at: 1_050,
            ..next.clone()
        }
    );
    assert_eq!(read(&s, run.id), saved);

    let written = lattice_events(&s, t);
    let kinds: Vec<_> = written.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "lattice_run_created",
            "lattice_state_changed",
            "lattice_action_consumed"
        ]
    );
    assert_eq!(
        written[1].payload,
        json!({"run_id": run.id.0, "state": "planning", "status": "active",
               "from": "clarifying", "to": "planning"})
    );
    assert_eq!(
        written[2].payload,
        json!({"run_id": run.id.0, "state": "planning", "status": "active",
               "action": "submit_requirements"})
    );

    // The effect's name is kept beside the record.
    let effect_rows = |kind: &str| {
        s.write(|tx| {
            tx.raw_execute(&format!(
                "UPDATE lattice_runs SET updated_at = updated_at
                 WHERE id = {} AND effect_kind = '{kind}'",
                run.id.0
            ))
        })
        .unwrap()
    };
    assert_eq!(effect_rows("deliver_prompt"), 1);
    let mut done = saved.clone();
    done.effect = None;
    s.write(|tx| tx.save_lattice_run(&done, &[])).unwrap();
    assert_eq!(effect_rows("deliver_prompt"), 0);
    assert_eq!(
        lattice_events(&s, t).len(),
        3,
        "a save without entries logs nothing"
    );

    // A Run that is not stored, or moved to another session, is refused.
    let ghost = LatticeRun {
        id: LatticeRunId(9_999),
        ..done.clone()
    };
    assert!(matches!(
        s.write(|tx| tx.save_lattice_run(&ghost, &[])),
        Err(StoreError::NotFound { .. })
    ));
    let moved = LatticeRun {
        thread_id: thread(&s),
        ..done
    };
    assert!(matches!(
        s.write(|tx| tx.save_lattice_run(&moved, &[])),
        Err(StoreError::Invalid(_))
    ));
}

fn note(s: &Store, title: &str) -> i64 {
    s.write(|tx| {
        Ok(tx
            .create_note(&NewNote {
                kind: NoteKind::Blueprint,
                title: title.into(),
                body: "body".into(),
            })?
            .id
            .0)
    })
    .unwrap()
}

fn new_loop(note_id: i64, t: ThreadId, digest: Option<&str>) -> NewBlueprintLoop {
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
        source: if digest.is_some() {
            LoopSource::Lattice
        } else {
            LoopSource::User
        },
        source_digest: digest.map(str::to_string),
    }
}

/// A loop created then cancelled, so the note and session are free for the next one.
fn ended_loop(s: &Store, note_id: i64, t: ThreadId, digest: Option<&str>) -> BlueprintLoop {
    s.write(|tx| {
        let l = tx.create_blueprint_loop(&new_loop(note_id, t, digest))?;
        let mut c = l.clone();
        c.status = LoopStatus::Cancelled;
        tx.save_blueprint_loop(&c)
    })
    .unwrap()
}

#[test]
fn fingerprint_finds_only_lattice_loops_of_that_note_digest_and_time() {
    let (s, clock) = store();
    let t = thread(&s);
    let u = thread(&s);
    let n = note(&s, "step 1");
    let m = note(&s, "step 2");
    let early = ended_loop(&s, n, t, Some("d1"));
    assert_eq!(
        (early.source, early.source_digest.as_deref()),
        (LoopSource::Lattice, Some("d1"))
    );
    clock.set(2_000);
    ended_loop(&s, n, t, None); // a person's loop
    ended_loop(&s, n, t, Some("d2")); // other content
    ended_loop(&s, n, u, Some("d1")); // another session
    ended_loop(&s, m, t, Some("d1")); // another note
    let ours = s
        .write(|tx| tx.create_blueprint_loop(&new_loop(n, t, Some("d1"))))
        .unwrap();
    let created = events(&s, t, "blueprint_loop_created");
    assert_eq!(created.last().unwrap().payload["source"], "lattice");
    assert_eq!(created[1].payload["source"], "user");

    let find = |since| {
        s.read(|tx| tx.lattice_loops_by_fingerprint(t, n, "d1", since))
            .unwrap()
            .into_iter()
            .map(|l| l.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(find(2_000), vec![ours.id]);
    assert_eq!(find(1_000), vec![early.id, ours.id], "oldest first");
    assert_eq!(find(2_001), vec![]);
    let read_back = s.read(|tx| tx.blueprint_loop(ours.id)).unwrap();
    assert_eq!(read_back, ours);

    // A lattice loop names its content; a person's does not; neither changes later.
    for (bad, why) in [
        (new_loop(m, u, None), "needs the digest"),
        (new_loop(m, u, Some(" ")), "empty"),
    ] {
        let bad = NewBlueprintLoop {
            source: LoopSource::Lattice,
            ..bad
        };
        let err = s.write(|tx| tx.create_blueprint_loop(&bad)).unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid(e) if e.contains(why)),
            "{err}"
        );
    }
    let user_with_digest = NewBlueprintLoop {
        source: LoopSource::User,
        ..new_loop(m, u, Some("d1"))
    };
    assert!(matches!(
        s.write(|tx| tx.create_blueprint_loop(&user_with_digest)),
        Err(StoreError::Invalid(_))
    ));
    let mut relabelled = ours.clone();
    relabelled.source = LoopSource::User;
    relabelled.source_digest = None;
    assert!(matches!(
        s.write(|tx| tx.save_blueprint_loop(&relabelled)),
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(s.read(|tx| tx.blueprint_loop(ours.id)).unwrap(), ours);
}

#[test]
fn runs_needing_reconcile_include_a_completed_run_with_its_completion_pending() {
    let (s, _) = store();
    let active = create(&s, thread(&s));
    let paused = set_status(&s, &create(&s, thread(&s)), RunStatus::Paused);
    let mut completing = create(&s, thread(&s));
    completing.status = RunStatus::Completed;
    completing.completed_at = Some(1_000);
    completing.effect = Some(Effect::DeliverCompletion {
        id: 1,
        delivery_key: completion_key(completing.id),
    });
    let completing = s
        .write(|tx| tx.save_lattice_run(&completing, &[("run_completed", json!({}))]))
        .unwrap();
    let cancelled = set_status(&s, &create(&s, thread(&s)), RunStatus::Cancelled);
    let ids = || {
        s.read(|tx| tx.lattice_runs_needing_reconcile())
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(),
        vec![active.id, paused.id, completing.id],
        "oldest first"
    );
    assert!(!ids().contains(&cancelled.id));

    // Acknowledging the completion (a terminal Run's record written, its status kept) ends
    // its need.
    let mut acknowledged = completing.clone();
    acknowledged.effect = None;
    s.write(|tx| tx.save_lattice_run(&acknowledged, &[]))
        .unwrap();
    assert_eq!(ids(), vec![active.id, paused.id]);
}
