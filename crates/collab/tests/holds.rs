//! Holds over a real engine and store: the composer Stop and menu stops end what they cover
//! in one write, nothing covered starts by itself or takes an effect while they stand, and
//! only the person's line or Lift lets the work go on.

mod support;

use std::time::Duration;
use support::*;
use troupe_collab::holds::{HoldRequest, ScopeRequest};
use troupe_core::hold::{HoldScope, HoldSource, HoldStatus, LiftedBy};
use troupe_core::inbox::Delivery;
use troupe_core::run::RunStatus;
use troupe_core::{BotId, SessionId, ThreadId};
use troupe_engine::DriveOutcome;

/// A Bot whose first hop runs a long command (it writes `started` first); a line with
/// "again" gets "back at it".
const LONG: &str = r#"{"steps":[
    {"tool_calls":[{"name":"shell","arguments":{"command":"touch started; sleep 30"}}]},
    {"text":"finished"}],
    "rules":[{"when_user_contains":"again","reply":{"text":"back at it"}}]}"#;

fn workspace(w: &World, t: ThreadId) -> std::path::PathBuf {
    std::path::PathBuf::from(w.collab.store().read(|tx| tx.thread(t)).unwrap().workspace)
}

async fn started(w: &World, t: ThreadId) {
    let dir = workspace(w, t);
    tokio::time::timeout(Duration::from_secs(20), async {
        while !dir.join("started").exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the command started");
}

async fn idle(w: &World, t: ThreadId) {
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .expect("the thread went idle");
}

fn scope(kind: &str) -> ScopeRequest {
    ScopeRequest {
        kind: kind.into(),
        bot_id: None,
        session_id: None,
        task_id: None,
        ticket_id: None,
        turn_id: None,
    }
}

fn hold_on_bot(b: BotId, s: Option<SessionId>) -> HoldRequest {
    HoldRequest {
        scope: ScopeRequest {
            bot_id: Some(b),
            ..scope("bot")
        },
        session_id: s,
        action: None,
    }
}

/// Give the thread a piece of work of the app's own and ask it to run.
async fn nudge(w: &World, t: ThreadId, key: &str) -> DriveOutcome {
    w.collab
        .store()
        .write(|tx| tx.deliver(t, &Delivery::user_task("a timer went off").with_key(key)))
        .unwrap();
    w.collab
        .engine()
        .request_drive(t, "check_back", false)
        .await
        .unwrap()
}

fn bot_replies(w: &World, s: SessionId) -> Vec<String> {
    w.collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.author == troupe_core::conversation::Author::Bot)
        .map(|l| l.body)
        .collect()
}

#[tokio::test]
async fn composer_stop_holds_the_turn_until_the_next_line_which_reopens_nothing() {
    let w = world();
    let b = bot(&w, "Worker", LONG);
    let s = direct(&w, b);
    w.collab.post_line(s, "run it".into(), None).await.unwrap();
    let t = w.collab.direct_thread(s).unwrap();
    started(&w, t).await;

    let stop = w.collab.composer_stop(s, None).await.unwrap();
    assert_eq!(stop.run.status, RunStatus::Stopped);
    let hold = w.collab.hold(stop.hold_id).unwrap().hold;
    assert!(matches!(hold.scope, HoldScope::Turn { thread_id, .. } if thread_id == t));
    assert_eq!(hold.source, HoldSource::UserButton);
    assert!(hold.composer_stop && hold.lift_on_next_user_message);
    assert_eq!(hold.effect.stopped_turns.len(), 1);
    assert_eq!(hold.effect.stopped_turns[0].run_id, stop.run.id);
    idle(&w, t).await;
    // The hold is the latch: the thread is not paused, and nothing starts it by itself.
    assert!(
        w.collab
            .store()
            .read(|tx| tx.thread(t))
            .unwrap()
            .paused
            .is_none()
    );
    match nudge(&w, t, "timer-1").await {
        DriveOutcome::Refused { check, cause } => {
            assert_eq!(check, "hold");
            assert!(cause.contains(&hold.id.to_string()), "{cause}");
        }
        other => panic!("a held thread started: {other:?}"),
    }
    let log = w.collab.audit(
        Some("wake_suppressed"),
        Some(hold.id),
        troupe_core::EventId(0),
        10,
    );
    assert_eq!(log.unwrap().len(), 1);

    // The person's next line there lifts it; the Bot goes on from that line, no note.
    let line = w
        .collab
        .post_line(s, "go again".into(), None)
        .await
        .unwrap();
    let lifted = w.collab.hold(hold.id).unwrap().hold;
    assert_eq!(lifted.status, HoldStatus::Lifted);
    assert_eq!(lifted.lifted_by, Some(LiftedBy::UserText));
    assert_eq!(lifted.lift_message_id, Some(line.id));
    idle(&w, t).await;
    assert!(bot_replies(&w, s).iter().any(|r| r == "back at it"));
    assert!(
        unread(
            &w,
            t,
            &format!("hold:{}:reopen:{}", hold.id.0, stop.run.id.0)
        )
        .is_none()
            && delivered(
                &w,
                t,
                &format!("hold:{}:reopen:{}", hold.id.0, stop.run.id.0)
            )
            .is_none(),
        "a Stop's lift reopens nothing"
    );
    assert!(w.collab.holds(false).unwrap().is_empty());
}

#[tokio::test]
async fn a_menu_stop_on_a_bot_ends_its_turn_and_lift_reopens_it_on_a_note() {
    let w = world();
    let b = bot(&w, "Worker", LONG);
    let s = direct(&w, b);
    w.collab.post_line(s, "run it".into(), None).await.unwrap();
    let t = w.collab.direct_thread(s).unwrap();
    started(&w, t).await;
    let run = w
        .collab
        .store()
        .read(|tx| tx.thread(t))
        .unwrap()
        .lease
        .holder
        .unwrap();

    let (view, created) = w.collab.post_hold(hold_on_bot(b, Some(s))).await.unwrap();
    assert!(created);
    assert_eq!(
        w.collab.store().read(|tx| tx.run(run)).unwrap().status,
        RunStatus::Stopped
    );
    // The same scope again is the same hold.
    let (again, created) = w.collab.post_hold(hold_on_bot(b, Some(s))).await.unwrap();
    assert!(!created);
    assert_eq!(again.hold.id, view.hold.id);
    idle(&w, t).await;

    let lifted = w.collab.lift_hold(view.hold.id).await.unwrap().hold;
    assert_eq!(lifted.lifted_by, Some(LiftedBy::UserButton));
    let key = format!("hold:{}:reopen:{}", view.hold.id.0, run.0);
    idle(&w, t).await;
    let note = delivered(&w, t, &key).expect("the stopped turn reopened on a note");
    let text = note.text();
    assert!(text.contains("stopped this work"), "{text}");
    // The note is the Bot's alone: no conversation line says anything about the stop.
    assert!(
        !w.collab
            .lines(s, None, 100)
            .unwrap()
            .iter()
            .any(|l| l.body.contains("stopped"))
    );
    // Lifting again changes nothing.
    let same = w.collab.lift_hold(view.hold.id).await.unwrap().hold;
    assert_eq!(same.lifted_at, lifted.lifted_at);
}

#[tokio::test]
async fn a_turn_a_hold_comes_to_cover_while_it_runs_takes_no_effect() {
    // S-HOLD-8, HOLD-T1: a hold row written beside a live turn (as another node's write would
    // leave it before this node hears of it); its shell call answers `held` without running.
    let w = world();
    let b = bot(
        &w,
        "Reader",
        r#"{"steps":[
            {"tool_calls":[{"name":"shell","arguments":{"command":"touch ran"}}],"delay_ms":300},
            {"text":"done"}]}"#,
    );
    let s = direct(&w, b);
    let t = w.collab.direct_thread(s).unwrap();
    let mut events = w.collab.store().subscribe();
    w.collab.post_line(s, "look".into(), None).await.unwrap();
    until(&mut events, "the turn is live", || {
        w.collab
            .store()
            .read(|tx| tx.thread(t))
            .unwrap()
            .lease
            .holder
            .is_some()
    })
    .await;
    w.collab
        .store()
        .write(|tx| {
            tx.insert_hold(&troupe_store::NewHold {
                scope: HoldScope::Bot { bot_id: b },
                targets: vec![],
                source: HoldSource::UserButton,
                source_message_id: None,
                session_id: None,
                lift_on_next_user_message: true,
                cancel: false,
                composer_stop: false,
                effect: Default::default(),
            })
        })
        .unwrap();
    idle(&w, t).await;
    assert!(
        !workspace(&w, t).join("ran").exists(),
        "the command must not run"
    );
    let run = runs_of(&w, t).pop().unwrap();
    let calls = calls_of(&w, run.id);
    assert!(
        calls[0]
            .result
            .contains("held: the person stopped this work"),
        "{}",
        calls[0].result
    );
}

#[tokio::test]
async fn a_plan_hold_parks_the_job_and_lift_gives_its_status_back() {
    let w = world();
    let a = bot(
        &w,
        "Ann",
        r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#,
    );
    let g = group(&w, &[a]);
    let plan = open_job(&w, g, "make the poster");
    let (view, _) = w
        .collab
        .post_hold(HoldRequest {
            scope: ScopeRequest {
                task_id: Some(plan.id),
                ..scope("plan")
            },
            session_id: Some(g),
            action: None,
        })
        .await
        .unwrap();
    assert_eq!(view.plan_title.as_deref(), Some(plan.name.as_str()));
    let parked = w.collab.plan(plan.id).unwrap();
    assert_eq!(parked.status, troupe_core::plan::PlanStatus::Parked);
    assert_eq!(view.hold.effect.plans_parked.len(), 1);
    let revs = w.collab.plan_revisions(plan.id).unwrap();
    assert_eq!(
        revs.last().unwrap().cause,
        format!("hold:{}", view.hold.id.0)
    );
    w.collab.lift_hold(view.hold.id).await.unwrap();
    assert_eq!(
        w.collab.plan(plan.id).unwrap().status,
        troupe_core::plan::PlanStatus::Active
    );
}

#[tokio::test]
async fn a_bad_scope_is_refused_naming_what_is_wrong_and_makes_nothing() {
    let w = world();
    let err = w
        .collab
        .post_hold(hold_on_bot(BotId(99), None))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("scope.bot_id: bot_99 does not exist"),
        "{err}"
    );
    let err = w
        .collab
        .post_hold(HoldRequest {
            scope: scope("bot"),
            session_id: None,
            action: None,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("scope.bot_id: required"), "{err}");
    let err = w
        .collab
        .post_hold(HoldRequest {
            scope: scope("galaxy"),
            session_id: None,
            action: None,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("scope.kind"), "{err}");
    assert!(w.collab.holds(true).unwrap().is_empty());
}

#[tokio::test]
async fn the_spec_route_parks_with_a_hold_refuses_a_stale_version_and_lifts_on_active() {
    // HOLD-P9, S-HOLD-6.
    let w = world();
    let a = bot(
        &w,
        "Ann",
        r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#,
    );
    let g = group(&w, &[a]);
    let plan = open_job(&w, g, "make the poster");
    let v = plan.version;
    let edit = |version: i64, status: &str| troupe_collab::PlanPatchRequest {
        version,
        status: Some(status.into()),
        ..Default::default()
    };
    let parked = w
        .collab
        .edit_plan_spec(plan.id, edit(v, "parked"))
        .await
        .unwrap();
    assert_eq!(parked.status, troupe_core::plan::PlanStatus::Parked);
    let holds = w.collab.holds(false).unwrap();
    assert_eq!(holds.len(), 1);
    assert_eq!(holds[0].hold.scope, HoldScope::Plan { plan_id: plan.id });
    // The board still holds version v; the hold wrote v+1.
    let stale = w
        .collab
        .edit_plan_spec(plan.id, edit(v, "active"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            stale,
            troupe_collab::CollabError::Conflict {
                code: "revision_conflict",
                ..
            }
        ),
        "{stale:?}"
    );
    let back = w
        .collab
        .edit_plan_spec(plan.id, edit(parked.version, "active"))
        .await
        .unwrap();
    assert_eq!(back.status, troupe_core::plan::PlanStatus::Active);
    assert!(w.collab.holds(false).unwrap().is_empty());
}

#[tokio::test]
async fn boot_repair_parks_a_held_job_left_active() {
    // Item 10: a plan hold in force over a job that is not parked (as a write cut short by an
    // older build could leave it) is made consistent at boot, and the lift gives it back.
    let w = world();
    let a = bot(
        &w,
        "Ann",
        r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#,
    );
    let g = group(&w, &[a]);
    let plan = open_job(&w, g, "make the poster");
    let hold = w
        .collab
        .store()
        .write(|tx| {
            tx.insert_hold(&troupe_store::NewHold {
                scope: HoldScope::Plan { plan_id: plan.id },
                targets: vec![],
                source: HoldSource::UserButton,
                source_message_id: None,
                session_id: None,
                lift_on_next_user_message: true,
                cancel: false,
                composer_stop: false,
                effect: Default::default(),
            })
        })
        .unwrap();
    let report = w.collab.repair_holds().await.unwrap();
    assert_eq!(report.plans_parked, 1);
    assert_eq!(
        w.collab.plan(plan.id).unwrap().status,
        troupe_core::plan::PlanStatus::Parked
    );
    assert_eq!(w.collab.repair_holds().await.unwrap(), Default::default());
    w.collab.lift_hold(hold.id).await.unwrap();
    assert_eq!(
        w.collab.plan(plan.id).unwrap().status,
        troupe_core::plan::PlanStatus::Active
    );
}

#[tokio::test]
async fn continue_lifts_a_stop_on_that_work_and_is_409_held_under_a_dropped_job() {
    // HOLD-L2, W1: Continue is the person's word to the Bot; an app hold still stands.
    let w = world();
    let b = bot(&w, "Worker", LONG);
    let s = direct(&w, b);
    w.collab.post_line(s, "run it".into(), None).await.unwrap();
    let t = w.collab.direct_thread(s).unwrap();
    started(&w, t).await;
    let stop = w.collab.composer_stop(s, None).await.unwrap();
    idle(&w, t).await;
    w.collab.go_on_by_person(t).await.unwrap();
    assert_eq!(
        w.collab.hold(stop.hold_id).unwrap().hold.status,
        HoldStatus::Lifted
    );
    idle(&w, t).await;
    w.collab
        .post_hold(HoldRequest {
            action: Some("cancel".into()),
            ..hold_on_bot(b, Some(s))
        })
        .await
        .unwrap();
    let err = w.collab.go_on_by_person(t).await.unwrap_err();
    assert!(
        matches!(&err, troupe_collab::CollabError::Conflict { code: "held", message } if message.contains("hold_2")),
        "{err:?}"
    );
}
