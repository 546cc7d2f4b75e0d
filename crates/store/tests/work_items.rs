//! Work items and the segments that run them, on both backends (see `troupe_store::testing`):
//! one desk per Bot × conversation and one job-level item per Bot × job, a queued item keeping
//! its place, and I5 — a bound segment that ended must say why, on insert and on update.

use std::sync::Arc;
use troupe_core::conversation::SessionKind;
use troupe_core::plan::{PlanSpec, RevisionCause};
use troupe_core::thread::{AgentBinding, Interaction};
use troupe_core::work_item::{WaitingOn, WorkMode, WorkState};
use troupe_core::{BotId, DelegationId, ManualClock, PlanId, SessionId, ThreadId};
use troupe_store::{
    NewBot, NewPlan, NewRun, NewSegment, NewThread, NewWorkItem, Store, StoreError, Tx,
    WorkItemRecord,
};

fn store() -> (Store, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000));
    (troupe_store::testing::open(clock.clone()), clock)
}

fn thread(tx: &mut Tx<'_>) -> ThreadId {
    tx.create_thread(&NewThread {
        workspace_root: None,
        parent_id: None,
        title: "t".into(),
        agent: AgentBinding::new("a", "be brief"),
        workspace: "/tmp".into(),
        interaction: Interaction::Interactive,
    })
    .unwrap()
    .id
}

struct World {
    bot: BotId,
    session: SessionId,
    plan: PlanId,
}

fn world(s: &Store) -> World {
    s.write(|tx| {
        let bot = tx.create_bot(&NewBot {
            name: "Alpha".into(),
            persona: String::new(),
            endpoint: None,
            scripted: true,
        })?;
        let session = tx.create_session(SessionKind::Group, "team", &[bot.id])?;
        let plan = tx.create_plan(
            &NewPlan {
                name: "launch".into(),
                original_request: "plan the launch".into(),
                home_session_id: session.id,
                opening_line_id: None,
                spec: PlanSpec::default(),
                cause: RevisionCause::User,
            },
            |id| format!("/tmp/jobs/{}", id.0),
        )?;
        Ok(World {
            bot: bot.id,
            session: session.id,
            plan: plan.id,
        })
    })
    .unwrap()
}

fn job(tx: &mut Tx<'_>, w: &World) -> Result<WorkItemRecord, StoreError> {
    let t = thread(tx);
    tx.create_work_item(&NewWorkItem {
        bot_id: w.bot,
        mode: WorkMode::Work,
        plan_id: Some(w.plan),
        session_id: None,
        thread_id: t,
        speaks_in: Some(w.session),
    })
}

#[test]
fn one_desk_per_bot_and_conversation_and_one_job_item_per_bot_and_job() {
    let (s, _) = store();
    let w = world(&s);
    let t = s.write(|tx| Ok(thread(tx))).unwrap();
    let desk = || NewWorkItem {
        bot_id: w.bot,
        mode: WorkMode::Desk,
        plan_id: None,
        session_id: Some(w.session),
        thread_id: t,
        speaks_in: Some(w.session),
    };
    s.write(|tx| tx.create_work_item(&desk())).unwrap();
    s.write(|tx| job(tx, &w)).unwrap();
    // Each refusal in its own write: on PostgreSQL a failed statement ends its transaction.
    assert!(
        s.write(|tx| tx.create_work_item(&desk())).is_err(),
        "a second desk there"
    );
    assert!(
        s.write(|tx| job(tx, &w)).is_err(),
        "a second job-level item on the job"
    );
    let with_job = NewWorkItem {
        plan_id: Some(w.plan),
        ..desk()
    };
    assert!(
        s.write(|tx| tx.create_work_item(&with_job)).is_err(),
        "a desk with a job is refused by the database"
    );
    s.read(|tx| {
        assert_eq!(
            tx.desk_item(w.bot, w.session)?.unwrap().mode,
            WorkMode::Desk
        );
        assert_eq!(tx.job_item(w.bot, w.plan)?.unwrap().plan_id, Some(w.plan));
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_queued_item_keeps_its_place_and_a_wait_is_stored_with_it() {
    let (s, clock) = store();
    let w = world(&s);
    let item = s.write(|tx| job(tx, &w)).unwrap();
    let first = s
        .write(|tx| tx.set_work_state(item.id, WorkState::Queued, None))
        .unwrap();
    assert_eq!(first.queued_at, Some(1_000));
    clock.advance(500);
    let again = s
        .write(|tx| tx.set_work_state(item.id, WorkState::Queued, None))
        .unwrap();
    assert_eq!(again.queued_at, Some(1_000), "queued again, same place");
    let wait = WaitingOn::Delegation {
        delegation_id: DelegationId(7),
    };
    let waiting = s
        .write(|tx| tx.set_work_state(item.id, WorkState::Waiting, Some(&wait)))
        .unwrap();
    assert_eq!(waiting.waiting_on, Some(wait));
    assert_eq!(waiting.queued_at, None);
    let changes = s
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "work_item_changed")
        .count();
    assert_eq!(
        changes, 3,
        "made, queued, waiting: a repeat writes no event"
    );
}

fn bound_run(s: &Store, w: &World) -> troupe_core::RunId {
    s.write(|tx| {
        let item = job(tx, w)?;
        let run = tx.start_run(&NewRun {
            thread_id: item.thread_id,
            trigger: "test".into(),
            owner_pid: 1,
            owner_boot: "b".into(),
        })?;
        tx.open_segment(&NewSegment {
            run_id: run.id,
            bot_id: w.bot,
            session_id: w.session,
            trigger_line_id: None,
            work_item_id: item.id,
            mode: WorkMode::Work,
            candidates: vec![],
            readonly: false,
        })?;
        assert_eq!(tx.live_work_segments(w.bot)?, 1);
        Ok(run.id)
    })
    .unwrap()
}

#[test]
fn i5_trigger_refuses_blank_reason() {
    let (s, _) = store();
    let w = world(&s);
    let run = bound_run(&s, &w);
    for blank in ["''", "'   '"] {
        let err = s
            .write(|tx| {
                tx.raw_execute(&format!(
                    "UPDATE runs SET status = 'completed', end_reason = {blank}, ended_at = 5 \
                     WHERE id = {}",
                    run.0
                ))
            })
            .unwrap_err();
        assert!(err.to_string().contains("blank_end_reason"), "{err}");
    }
    // The refusal holds on insert too: a bound run written already ended, blank.
    let err = s
        .write(|tx| {
            let t = thread(tx);
            tx.raw_execute(&format!(
                "INSERT INTO runs (id, thread_id, generation, trigger_reason, status, end_reason, \
                 owner_pid, owner_boot, started_at, ended_at) \
                 VALUES ({}, {}, 1, 'x', 'completed', ' ', 1, 'b', 1, 2)",
                run.0 + 1000,
                t.0
            ))?;
            tx.raw_execute(&format!(
                "INSERT INTO segments (run_id, bot_id, session_id, work_item_id, mode, created_at) \
                 VALUES ({}, {}, {}, {}, 'work', 1)",
                run.0 + 1000,
                w.bot.0,
                w.session.0,
                tx.job_item(w.bot, w.plan)?.unwrap().id.0
            ))?;
            // Touching the row now fires the update trigger.
            tx.raw_execute(&format!(
                "UPDATE runs SET hops = 1 WHERE id = {}",
                run.0 + 1000
            ))
        })
        .unwrap_err();
    assert!(err.to_string().contains("blank_end_reason"), "{err}");
    // A reason goes through.
    s.write(|tx| {
        tx.force_end_run(
            run,
            &troupe_core::run::EndReason::Consumer {
                code: "delegated".into(),
                detail: None,
            },
        )
    })
    .unwrap();
    assert_eq!(s.read(|tx| tx.live_work_segments(w.bot)).unwrap(), 0);
}

/// The person's notifications about a work item close with its state: blocked work no longer
/// waiting on them resolves "blocked" and voids the question it went on without (WQ-8); work
/// that closes voids what is left.
#[test]
fn work_state_closes_the_notifications_it_made_moot() {
    use troupe_core::notification::{NotificationKind as K, NotificationStatus as S};
    let (s, _) = store();
    let w = world(&s);
    let (item, blocked, question, stopped) = s
        .write(|tx| {
            let item = job(tx, &w)?;
            tx.set_work_state(item.id, WorkState::Idle, Some(&WaitingOn::User))?;
            let open = |tx: &mut Tx<'_>, kind: K| {
                tx.notify(&troupe_store::NewNotification {
                    kind,
                    title: "Alpha",
                    body: "b",
                    session_id: Some(w.session),
                    plan_id: Some(w.plan),
                    ticket_id: None,
                    work_item_id: Some(item.id),
                    message_id: None,
                })
                .map(|n| n.id)
            };
            let blocked = open(tx, K::Blocked)?;
            let question = open(tx, K::WaitingForAnswer)?;
            let stopped = open(tx, K::Stopped)?;
            Ok((item, blocked, question, stopped))
        })
        .unwrap();
    let status = |id: i64| {
        s.read(|tx| tx.notification(id))
            .map(|n| (n.status, n.resolution))
            .unwrap()
    };
    s.write(|tx| tx.set_work_state(item.id, WorkState::Queued, None))
        .unwrap();
    assert_eq!(status(blocked), (S::Resolved, Some("resumed".into())));
    assert_eq!(status(question), (S::Voided, Some("superseded".into())));
    assert_eq!(
        status(stopped),
        (S::Open, None),
        "it never needed attention"
    );
    s.write(|tx| tx.set_work_state(item.id, WorkState::Closed, None))
        .unwrap();
    assert_eq!(status(stopped), (S::Voided, Some("closed".into())));
    assert_eq!(s.read(|tx| tx.open_notification_count()).unwrap(), 0);
    // Closed is for good: closing again changes nothing.
    assert!(
        !s.write(|tx| tx.close_notification(stopped, S::Resolved, "dismissed"))
            .unwrap()
    );
}

/// WQ-8: a work question card takes no answer once its work went on without it (every open card
/// of the item but the one the current run posted) or closed — each says which.
#[test]
fn work_question_cards_close_when_their_work_goes_on_without_them_or_closes() {
    use troupe_core::conversation::{Ask, Author, LineKind};
    let (s, _) = store();
    let w = world(&s);
    let why = |s: &Store, line| {
        s.read(|tx| tx.line(line))
            .unwrap()
            .ask
            .map(|a| (a.closed_at.is_some(), a.closed_why))
            .unwrap()
    };
    let (item, first, second, second_run) = s
        .write(|tx| {
            let item = job(tx, &w)?;
            let card = |tx: &mut Tx<'_>| -> Result<_, StoreError> {
                let run = tx.start_run(&NewRun {
                    thread_id: item.thread_id,
                    trigger: "test".into(),
                    owner_pid: 1,
                    owner_boot: "b".into(),
                })?;
                let ask = Ask {
                    question: "Alpha needs from you: the key".into(),
                    options: Vec::new(),
                    multiple: false,
                    answer: None,
                    answered_at: None,
                    closed_at: None,
                    closed_why: None,
                };
                let line = tx.insert_line(&troupe_store::NewLine {
                    bot_id: Some(w.bot),
                    turn_id: Some(run.id),
                    kind: LineKind::Ask,
                    ask: Some((ask, item.thread_id)),
                    ..troupe_store::NewLine::plain(w.session, Author::Bot, "the key".into())
                })?;
                tx.create_work_question(line.id, item.id, "the key")?;
                tx.force_end_run(run.id, &troupe_core::run::EndReason::Completed)?;
                Ok((line.id, run.id))
            };
            let (first, _) = card(tx)?;
            let (second, second_run) = card(tx)?;
            Ok((item, first, second, second_run))
        })
        .unwrap();
    let closed = s
        .write(|tx| tx.close_work_questions(item.id, Some(second_run), "superseded"))
        .unwrap();
    assert_eq!(closed, 1);
    assert_eq!(why(&s, first), (true, Some("superseded".into())));
    assert_eq!(
        why(&s, second),
        (false, None),
        "the run's own card stays open"
    );
    s.write(|tx| tx.set_work_state(item.id, WorkState::Closed, None))
        .unwrap();
    assert_eq!(why(&s, second), (true, Some("closed".into())));
    assert_eq!(
        why(&s, first),
        (true, Some("superseded".into())),
        "closed once"
    );
}

/// The Bots' recent jobs are read for all the called Bots in one statement: each Bot's open
/// job-level items count, in the order the Bots were given, and a Bot with none adds nothing.
#[test]
fn jobs_of_bots_work_names_every_called_bots_jobs() {
    let (s, _) = store();
    let w = world(&s);
    let (beta, idle, second) = s
        .write(|tx| {
            let beta = tx.create_bot(&NewBot {
                name: "Beta".into(),
                persona: String::new(),
                endpoint: None,
                scripted: true,
            })?;
            let idle = tx.create_bot(&NewBot {
                name: "Idle".into(),
                persona: String::new(),
                endpoint: None,
                scripted: true,
            })?;
            let second = tx.create_plan(
                &NewPlan {
                    name: "docs".into(),
                    original_request: "write the docs".into(),
                    home_session_id: w.session,
                    opening_line_id: None,
                    spec: PlanSpec::default(),
                    cause: RevisionCause::User,
                },
                |id| format!("/tmp/jobs/{}", id.0),
            )?;
            job(tx, &w)?;
            let on_second = World {
                bot: beta.id,
                session: w.session,
                plan: second.id,
            };
            job(tx, &on_second)?;
            Ok((beta.id, idle.id, second.id))
        })
        .unwrap();
    let found = s
        .read(|tx| tx.jobs_of_bots_work(&[beta, idle, w.bot], 0))
        .unwrap();
    assert_eq!(found, vec![(beta, second), (w.bot, w.plan)]);
    let none = s.read(|tx| tx.jobs_of_bots_work(&[idle], 0)).unwrap();
    assert!(
        none.is_empty(),
        "a Bot with no work brings no job: {none:?}"
    );
}
