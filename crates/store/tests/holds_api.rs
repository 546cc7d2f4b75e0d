//! The store's hold API on both backends (see `troupe_store::testing`): making a hold with its
//! targets, lifting it once, listing, coverage per scope and per target, the live turns a hold
//! covers, and reading turns' lines in one pass.

mod hold_world;

use hold_world::*;

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
