//! Holds on both backends (see `troupe_store::testing`): the database's rules, attacked by raw
//! SQL (HOLD-D1: a covered live turn is refused unless read-only; HOLD-2: never deleted; what a
//! hold is stays fixed; I5: a run that ended says why), and the store's API (making, lifting
//! once, listing, coverage per scope and per target, the live turns a hold covers).
//!
//! On PostgreSQL a refused statement ends its transaction, so each refusal has a write of its
//! own.

use std::sync::Arc;
use troupe_core::conversation::{Author, SessionKind};
use troupe_core::hold::{
    HoldEffect, HoldScope, HoldSource, HoldStatus, HoldTarget, LiftedBy, StoppedTurn, TurnFacts,
};
use troupe_core::plan::{PlanSpec, RevisionCause};
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::work_item::WorkMode;
use troupe_core::{
    BotId, HoldId, ManualClock, PlanId, RunId, SessionId, SessionMessageId, ThreadId, TicketId,
};
use troupe_store::{
    CoveredTurn, NewBot, NewHold, NewLine, NewPlan, NewRun, NewSegment, NewThread, NewWorkItem,
    SqlErrorKind, Store, StoreError, Tx, WorkItemRecord,
};

fn store() -> (Store, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000));
    (troupe_store::testing::open(clock.clone()), clock)
}

fn thread(tx: &mut Tx<'_>) -> ThreadId {
    tx.create_thread(&NewThread {
        parent_id: None,
        title: "t".into(),
        agent: AgentBinding::new("a", "be brief"),
        workspace: "/tmp".into(),
        interaction: Interaction::Interactive,
    })
    .unwrap()
    .id
}

/// Bots Ada and Bo; a group (the launch job's home) and Ada's direct (the ad job's home); each
/// Bot's item on the launch job, Ada's on the ad job and on launch ticket 5, Ada's desk in the
/// group.
struct World {
    ada: BotId,
    bo: BotId,
    group: SessionId,
    direct: SessionId,
    launch: PlanId,
    ad: PlanId,
    ada_launch: WorkItemRecord,
    bo_launch: WorkItemRecord,
    ada_ad: WorkItemRecord,
    ada_ticket: WorkItemRecord,
    ada_desk: WorkItemRecord,
}

fn world(s: &Store) -> World {
    s.write(|tx| {
        let bot = |tx: &mut Tx<'_>, name: &str| {
            tx.create_bot(&NewBot {
                name: name.into(),
                persona: String::new(),
                endpoint: None,
                scripted: true,
            })
            .map(|b| b.id)
        };
        let ada = bot(tx, "Ada")?;
        let bo = bot(tx, "Bo")?;
        let group = tx
            .create_session(SessionKind::Group, "team", &[ada, bo])?
            .id;
        let direct = tx.create_session(SessionKind::Direct, "ada", &[ada])?.id;
        let plan = |tx: &mut Tx<'_>, name: &str, home: SessionId| {
            tx.create_plan(
                &NewPlan {
                    name: name.into(),
                    original_request: format!("do the {name}"),
                    home_session_id: home,
                    opening_line_id: None,
                    spec: PlanSpec::default(),
                    cause: RevisionCause::User,
                },
                |id| format!("/tmp/jobs/{}", id.0),
            )
            .map(|p| p.id)
        };
        let launch = plan(tx, "launch", group)?;
        let ad = plan(tx, "ad", direct)?;
        let item = |tx: &mut Tx<'_>, bot: BotId, mode: WorkMode, plan: Option<PlanId>| {
            let t = thread(tx);
            tx.create_work_item(&NewWorkItem {
                bot_id: bot,
                mode,
                plan_id: plan,
                session_id: (mode == WorkMode::Desk).then_some(group),
                thread_id: t,
                speaks_in: Some(group),
            })
        };
        let ada_launch = item(tx, ada, WorkMode::Work, Some(launch))?;
        let bo_launch = item(tx, bo, WorkMode::Work, Some(launch))?;
        let ada_ad = item(tx, ada, WorkMode::Work, Some(ad))?;
        let ada_desk = item(tx, ada, WorkMode::Desk, None)?;
        // Ada's item on the launch job's ticket 5 (no API makes tickets yet).
        let t = thread(tx);
        tx.raw_execute(&format!(
            "INSERT INTO work_items (bot_id, mode, plan_id, ticket_id, thread_id, created_at,
                 updated_at) VALUES ({}, 'work', {}, 5, {}, 1, 1)",
            ada.0, launch.0, t.0
        ))?;
        let ada_ticket = tx.work_item_of_thread(t)?.unwrap();
        Ok(World {
            ada,
            bo,
            group,
            direct,
            launch,
            ad,
            ada_launch,
            bo_launch,
            ada_ad,
            ada_ticket,
            ada_desk,
        })
    })
    .unwrap()
}

/// A running run on the item's thread (or a new thread), with no segment yet.
fn live_run(s: &Store, item: Option<&WorkItemRecord>) -> RunId {
    s.write(|tx| {
        let thread = match item {
            Some(i) => i.thread_id,
            None => thread(tx),
        };
        tx.start_run(&NewRun {
            thread_id: thread,
            trigger: "test".into(),
            owner_pid: 1,
            owner_boot: "b".into(),
        })
        .map(|r| r.id)
    })
    .unwrap()
}

/// The raw insert of a segment: `mode` is SQL (`'work'`, `NULL`, ...).
fn segment_sql(
    run: RunId,
    bot: BotId,
    session: SessionId,
    item: Option<&WorkItemRecord>,
    mode: &str,
) -> String {
    let item = item.map_or("NULL".to_string(), |i| i.id.0.to_string());
    format!(
        "INSERT INTO segments (run_id, bot_id, session_id, work_item_id, mode, created_at)
         VALUES ({}, {}, {}, {item}, {mode}, 1)",
        run.0, bot.0, session.0
    )
}

fn raw(s: &Store, sql: &str) -> Result<usize, StoreError> {
    s.write(|tx| tx.raw_execute(sql))
}

fn assert_held(r: Result<usize, StoreError>, what: &str) {
    match r {
        Err(StoreError::Held) => {}
        other => panic!("{what}: expected the held refusal, got {other:?}"),
    }
}

/// A constraint's refusal naming `rule`.
fn assert_refused(r: Result<usize, StoreError>, rule: &str, what: &str) {
    match r {
        Err(StoreError::Sql(e)) if e.kind == SqlErrorKind::Constraint => {
            assert!(e.message.contains(rule), "{what}: {}", e.message)
        }
        other => panic!("{what}: expected {rule}, got {other:?}"),
    }
}

fn new_hold(scope: HoldScope) -> NewHold {
    NewHold {
        scope,
        targets: vec![],
        source: HoldSource::UserButton,
        source_message_id: None,
        session_id: None,
        lift_on_next_user_message: true,
        cancel: false,
        composer_stop: false,
        effect: HoldEffect::default(),
    }
}

fn make(s: &Store, h: NewHold) -> HoldId {
    s.write(|tx| tx.insert_hold(&h)).unwrap().id
}

fn lift(s: &Store, id: HoldId) {
    s.write(|tx| tx.lift_hold(id, LiftedBy::UserButton, None))
        .unwrap();
}

fn end(s: &Store, run: RunId) {
    raw(
        s,
        &format!(
            "UPDATE runs SET status = 'stopped', end_reason = 'stopped', ended_at = 9 WHERE id = {}",
            run.0
        ),
    )
    .unwrap();
}

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

#[test]
fn insert_reads_back_whole_with_its_targets_and_an_event() {
    let (s, _) = store();
    let w = world(&s);
    let run = live_run(&s, Some(&w.ada_launch));
    let line = s
        .write(|tx| {
            tx.insert_line(&NewLine::plain(w.group, Author::User, "stop".into()))
                .map(|l| l.id)
        })
        .unwrap();
    let scope = HoldScope::Turn {
        run_id: run,
        thread_id: w.ada_launch.thread_id,
        bot_id: w.ada,
        session_id: w.group,
        plan_id: Some(w.launch),
    };
    let targets = vec![
        HoldTarget::Turn {
            run_id: run,
            thread_id: w.bo_launch.thread_id,
            bot_id: w.bo,
        },
        HoldTarget::BotPlan {
            bot_id: w.bo,
            plan_id: w.ad,
        },
        HoldTarget::Direct {
            session_id: w.direct,
        },
    ];
    let effect = HoldEffect {
        working_beside: vec![run],
        stopped_turns: vec![StoppedTurn {
            run_id: run,
            thread_id: w.ada_launch.thread_id,
            bot_id: w.ada,
            session_id: w.group,
            plan_id: Some(w.launch),
            work_item_id: Some(w.ada_launch.id),
            last_step: "writing".into(),
            files: vec!["a.md".into()],
            last_calls: vec!["shell: ls".into()],
        }],
        ..HoldEffect::default()
    };
    let made = s
        .write(|tx| {
            tx.insert_hold(&NewHold {
                scope: scope.clone(),
                targets: targets.clone(),
                source: HoldSource::UserText,
                source_message_id: Some(line),
                session_id: Some(w.group),
                lift_on_next_user_message: false,
                cancel: true,
                composer_stop: true,
                effect: effect.clone(),
            })
        })
        .unwrap();
    let read = s.read(|tx| tx.hold(made.id)).unwrap();
    assert_eq!(read, made);
    assert_eq!(read.scope, scope);
    assert_eq!(read.targets, targets);
    assert_eq!(read.effect, effect);
    assert_eq!(read.created_at, 1_000);
    assert_eq!(read.status, HoldStatus::InForce);
    assert_eq!(read.source_message_id, Some(line));
    assert_eq!(read.session_id, Some(w.group));
    assert!(!read.lift_on_next_user_message && read.cancel && read.composer_stop);
    assert!(read.is_app_hold());
    // A missing one.
    assert!(s.read(|tx| tx.find_hold(HoldId(999))).unwrap().is_none());
    assert!(matches!(
        s.read(|tx| tx.hold(HoldId(999))),
        Err(StoreError::NotFound { what: "hold", .. })
    ));
    // The effect, recorded later.
    let later = HoldEffect {
        still_running: vec![run],
        ..effect
    };
    let set = s.write(|tx| tx.set_hold_effect(made.id, &later)).unwrap();
    assert_eq!(set.effect, later);
    let events = s
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 1000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "hold_changed")
        .count();
    assert_eq!(events, 2, "made, effect recorded");
}

#[test]
fn lift_once_then_unchanged() {
    let (s, clock) = store();
    let w = world(&s);
    let id = make(&s, new_hold(HoldScope::Bot { bot_id: w.ada }));
    clock.advance(500);
    let (lifted, changed) = s
        .write(|tx| tx.lift_hold(id, LiftedBy::UserText, None))
        .unwrap();
    assert!(changed);
    assert_eq!(lifted.status, HoldStatus::Lifted);
    assert_eq!(lifted.lifted_at, Some(1_500));
    assert_eq!(lifted.lifted_by, Some(LiftedBy::UserText));
    clock.advance(500);
    let (again, changed) = s
        .write(|tx| tx.lift_hold(id, LiftedBy::UserButton, Some(SessionMessageId(1))))
        .unwrap();
    assert!(!changed, "HOLD-3: lifting again changes nothing");
    assert_eq!(again, lifted);
    assert!(matches!(
        s.write(|tx| tx.lift_hold(HoldId(999), LiftedBy::UserButton, None)),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn listed_newest_first() {
    let (s, _) = store();
    let w = world(&s);
    let first = make(&s, new_hold(HoldScope::Everything));
    let mut second = new_hold(HoldScope::Plan { plan_id: w.launch });
    second.targets = vec![HoldTarget::Direct {
        session_id: w.direct,
    }];
    let second = make(&s, second);
    let third = make(
        &s,
        new_hold(HoldScope::Ticket {
            ticket_id: TicketId(5),
        }),
    );
    lift(&s, second);
    let ids = |holds: Vec<troupe_core::hold::Hold>| holds.iter().map(|h| h.id).collect::<Vec<_>>();
    assert_eq!(
        ids(s.read(|tx| tx.holds(false)).unwrap()),
        vec![third, first]
    );
    assert_eq!(
        ids(s.read(|tx| tx.holds_in_force()).unwrap()),
        vec![third, first]
    );
    let all = s.read(|tx| tx.holds(true)).unwrap();
    assert_eq!(ids(all.clone()), vec![third, second, first]);
    assert_eq!(
        all[1].targets.len(),
        1,
        "a listing carries each hold's targets"
    );
    assert!(all[0].targets.is_empty() && all[2].targets.is_empty());
    // A repeat of a scope in force finds it; a lifted one's does not.
    let found = s
        .read(|tx| {
            tx.hold_in_force_with_scope(&HoldScope::Ticket {
                ticket_id: TicketId(5),
            })
        })
        .unwrap();
    assert_eq!(found.map(|h| h.id), Some(third));
    let gone = s
        .read(|tx| tx.hold_in_force_with_scope(&HoldScope::Plan { plan_id: w.launch }))
        .unwrap();
    assert!(gone.is_none());
}

#[test]
fn covering_per_scope_and_target() {
    let (s, _) = store();
    let w = world(&s);
    // Ada on the launch job (home: the group), speaking in her direct, on its ticket 5.
    let turn = TurnFacts {
        bot_id: w.ada,
        session_id: w.direct,
        thread_id: w.ada_ticket.thread_id,
        plan_id: Some(w.launch),
        plan_home: Some(w.group),
        ticket_id: Some(TicketId(5)),
    };
    let other_run = live_run(&s, Some(&w.bo_launch));
    let cases: Vec<(&str, NewHold, bool)> = vec![
        ("everything", new_hold(HoldScope::Everything), true),
        ("her", new_hold(HoldScope::Bot { bot_id: w.ada }), true),
        ("Bo", new_hold(HoldScope::Bot { bot_id: w.bo }), false),
        (
            "where she speaks",
            new_hold(HoldScope::Session {
                session_id: w.direct,
            }),
            true,
        ),
        (
            "the job's home",
            new_hold(HoldScope::Session {
                session_id: w.group,
            }),
            true,
        ),
        (
            "the job",
            new_hold(HoldScope::Plan { plan_id: w.launch }),
            true,
        ),
        (
            "another job",
            new_hold(HoldScope::Plan { plan_id: w.ad }),
            false,
        ),
        (
            "the ticket",
            new_hold(HoldScope::Ticket {
                ticket_id: TicketId(5),
            }),
            true,
        ),
        (
            "another ticket",
            new_hold(HoldScope::Ticket {
                ticket_id: TicketId(6),
            }),
            false,
        ),
        (
            "her on the job",
            new_hold(HoldScope::BotPlan {
                bot_id: w.ada,
                plan_id: w.launch,
            }),
            true,
        ),
        (
            "Bo on the job",
            new_hold(HoldScope::BotPlan {
                bot_id: w.bo,
                plan_id: w.launch,
            }),
            false,
        ),
        (
            "her thread's turn",
            new_hold(HoldScope::Turn {
                run_id: other_run,
                thread_id: w.ada_ticket.thread_id,
                bot_id: w.ada,
                session_id: w.direct,
                plan_id: None,
            }),
            true,
        ),
        (
            "another thread's turn",
            new_hold(HoldScope::Turn {
                run_id: other_run,
                thread_id: w.bo_launch.thread_id,
                bot_id: w.bo,
                session_id: w.group,
                plan_id: Some(w.launch),
            }),
            false,
        ),
    ];
    // Targets cover beside a scope that does not.
    let beside = |target: HoldTarget| {
        let mut h = new_hold(HoldScope::Bot { bot_id: w.bo });
        h.targets = vec![target];
        h
    };
    let targets = vec![
        (
            "a turn target on her thread",
            beside(HoldTarget::Turn {
                run_id: other_run,
                thread_id: w.ada_ticket.thread_id,
                bot_id: w.ada,
            }),
            true,
        ),
        (
            "her on the job, as a target",
            beside(HoldTarget::BotPlan {
                bot_id: w.ada,
                plan_id: w.launch,
            }),
            true,
        ),
        (
            "the direct she speaks in",
            beside(HoldTarget::Direct {
                session_id: w.direct,
            }),
            true,
        ),
        (
            "another direct",
            beside(HoldTarget::Direct {
                session_id: w.group,
            }),
            false,
        ),
    ];
    for (what, hold, covers) in cases.into_iter().chain(targets) {
        let id = make(&s, hold);
        let covering = s.read(|tx| tx.covering_holds(&turn)).unwrap();
        assert_eq!(covering == vec![id], covers, "{what}: {covering:?}");
        lift(&s, id);
    }
    // Several at once, oldest first; a lifted one never.
    let a = make(&s, new_hold(HoldScope::Everything));
    let b = make(&s, new_hold(HoldScope::Bot { bot_id: w.ada }));
    assert_eq!(s.read(|tx| tx.covering_holds(&turn)).unwrap(), vec![a, b]);
    lift(&s, a);
    assert_eq!(s.read(|tx| tx.covering_holds(&turn)).unwrap(), vec![b]);
}

#[test]
fn covered_live_turns_and_turn_facts() {
    let (s, _) = store();
    let w = world(&s);
    let write = |run, bot, session, item: Option<&WorkItemRecord>, mode| {
        raw(&s, &segment_sql(run, bot, session, item, mode)).unwrap();
    };
    let ada_launch = live_run(&s, Some(&w.ada_launch));
    write(ada_launch, w.ada, w.group, Some(&w.ada_launch), "'work'");
    let ada_ad = live_run(&s, Some(&w.ada_ad));
    write(ada_ad, w.ada, w.direct, Some(&w.ada_ad), "'work'");
    let bo_launch = live_run(&s, Some(&w.bo_launch));
    write(bo_launch, w.bo, w.group, Some(&w.bo_launch), "'work'");
    // A conversation segment from before work items: no item, no mode; its run's thread.
    let plain = live_run(&s, None);
    write(plain, w.ada, w.group, None, "NULL");
    let reading = live_run(&s, None);
    write(reading, w.ada, w.group, None, "'readonly'");
    let ended = live_run(&s, Some(&w.ada_desk));
    write(ended, w.ada, w.group, Some(&w.ada_desk), "'desk'");
    end(&s, ended);

    let facts = s.read(|tx| tx.turn_facts(ada_launch)).unwrap().unwrap();
    assert_eq!(
        facts,
        TurnFacts {
            bot_id: w.ada,
            session_id: w.group,
            thread_id: w.ada_launch.thread_id,
            plan_id: Some(w.launch),
            plan_home: Some(w.group),
            ticket_id: None,
        }
    );
    let plain_facts = s.read(|tx| tx.turn_facts(plain)).unwrap().unwrap();
    let plain_thread = s.read(|tx| tx.run(plain)).unwrap().thread_id;
    assert_eq!(plain_facts.thread_id, plain_thread);
    assert_eq!((plain_facts.plan_id, plain_facts.plan_home), (None, None));
    let no_segment = live_run(&s, None);
    assert!(s.read(|tx| tx.turn_facts(no_segment)).unwrap().is_none());

    let runs = |hold| {
        s.read(|tx| tx.covered_live_turns(hold))
            .unwrap()
            .into_iter()
            .map(|t| t.run_id)
            .collect::<Vec<_>>()
    };
    // Ada everywhere: her live turns, not the read-only one nor the ended one.
    let ada = make(&s, new_hold(HoldScope::Bot { bot_id: w.ada }));
    assert_eq!(runs(ada), vec![ada_launch, ada_ad, plain]);
    // The group: every turn speaking there, and none elsewhere unless its job's home is there.
    let group = make(
        &s,
        new_hold(HoldScope::Session {
            session_id: w.group,
        }),
    );
    assert_eq!(runs(group), vec![ada_launch, bo_launch, plain]);
    // The launch job, with Ada's ad job reached as a target.
    let mut job = new_hold(HoldScope::Plan { plan_id: w.launch });
    job.targets = vec![HoldTarget::BotPlan {
        bot_id: w.ada,
        plan_id: w.ad,
    }];
    let job = make(&s, job);
    let turns = s.read(|tx| tx.covered_live_turns(job)).unwrap();
    assert_eq!(
        turns.iter().map(|t| t.run_id).collect::<Vec<_>>(),
        vec![ada_launch, ada_ad, bo_launch]
    );
    assert_eq!(
        turns[0],
        CoveredTurn {
            run_id: ada_launch,
            thread_id: w.ada_launch.thread_id,
            bot_id: w.ada,
            session_id: w.group,
            plan_id: Some(w.launch),
            work_item_id: Some(w.ada_launch.id),
            mode: Some("work".into()),
        }
    );
    // A lifted hold covers nothing.
    lift(&s, ada);
    assert!(runs(ada).is_empty());
}

#[test]
fn lines_of_turns_reads_each_turns_lines_in_one_pass() {
    let (s, _) = store();
    let w = world(&s);
    let (a, b, c) = (
        live_run(&s, Some(&w.ada_launch)),
        live_run(&s, Some(&w.bo_launch)),
        live_run(&s, Some(&w.ada_ad)),
    );
    let line = |turn: Option<RunId>, bot: BotId| {
        s.write(|tx| {
            tx.insert_line(&NewLine {
                bot_id: Some(bot),
                turn_id: turn,
                ..NewLine::plain(w.group, Author::Bot, "a line".into())
            })
            .map(|l| l.id)
        })
        .unwrap()
    };
    let a1 = line(Some(a), w.ada);
    let c1 = line(Some(c), w.ada);
    line(Some(b), w.bo);
    line(None, w.ada);
    let a2 = line(Some(a), w.ada);
    // Oldest first; b's line lies between a and c by id and is left out.
    let got = s.read(|tx| tx.lines_of_turns(&[c, a])).unwrap();
    assert_eq!(got, vec![(a, a1), (c, c1), (a, a2)]);
    // The same lines as asking turn by turn.
    for run in [a, b, c] {
        let one: Vec<SessionMessageId> = s
            .read(|tx| tx.lines_of_turn(run))
            .unwrap()
            .into_iter()
            .map(|l| l.id)
            .collect();
        let many: Vec<SessionMessageId> = s
            .read(|tx| tx.lines_of_turns(&[run]))
            .unwrap()
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        assert_eq!(one, many);
    }
    assert!(s.read(|tx| tx.lines_of_turns(&[])).unwrap().is_empty());
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
