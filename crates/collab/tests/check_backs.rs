//! Check-backs end to end (CB-1…9, DEL-24/26) over a real engine and store with scripted Bots:
//! booking with the `check_back` tool, and the due-time scan run on a clock the test moves.

mod support;

use std::sync::Arc;
use support::*;
use troupe_collab::tools::ToolHost;
use troupe_collab::{Collab, SharedRoles};
use troupe_core::check_back::CheckBackState;
use troupe_core::inbox::Delivery;
use troupe_core::message::Origin;
use troupe_core::work_item::{WaitingOn, WorkState};
use troupe_core::{BotId, Clock, DelegationId, ManualClock, SessionId, ThreadId};
use troupe_engine::{Engine, RoleTable};
use troupe_store::{CheckBackFilter, CheckBackRecord};

const MINUTE: i64 = 60_000;
const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;

/// The shared world, on a clock only the test moves.
fn world_at(clock: &ManualClock) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::testing::open_in(dir.path(), Arc::new(clock.clone()));
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = ToolHost::new();
    let builder = troupe_collab::extend(Engine::builder(store, roles.clone()), &host).unwrap();
    let collab = Collab::new(builder.build(), roles, dir.path().join("workspaces"));
    host.attach(&collab);
    World { collab, dir }
}

fn start() -> (ManualClock, World) {
    let clock = ManualClock::new(1_760_000_000_000);
    let w = world_at(&clock);
    (clock, w)
}

fn book(minutes: i64, note: &str) -> String {
    format!(
        r#"{{"tool_calls":[{{"name":"check_back","arguments":{{"after_minutes":{minutes},"note":"{note}"}}}}]}}"#
    )
}

/// Books `check_back(30, note)` on its first turn, says `then` when woken.
fn booking_script(note: &str, then: &str) -> String {
    format!(
        r#"{{"steps":[{},{{"text":"Booked."}},{{"text":"{then}"}}],"on_exhausted":"repeat_last"}}"#,
        book(30, note)
    )
}

fn check_backs_of(w: &World, bot: BotId) -> Vec<CheckBackRecord> {
    let filter = CheckBackFilter {
        bot_id: Some(bot),
        ..Default::default()
    };
    w.collab
        .store()
        .read(|tx| tx.check_backs(&filter, 100))
        .unwrap()
}

/// The check-back wakes a thread was given, as (check-back delivery key, text).
fn wakes_on(w: &World, thread: ThreadId) -> Vec<(String, String)> {
    w.collab
        .store()
        .read(|tx| tx.messages(thread, None, 1000))
        .unwrap()
        .into_iter()
        .filter_map(|m| match &m.origin {
            Origin::Timer(d) if d.starts_with("check_back:") => Some((d.clone(), m.text())),
            _ => None,
        })
        .collect()
}

fn lines_mention(w: &World, s: SessionId, what: &str) -> bool {
    w.collab
        .lines(s, None, 1000)
        .unwrap()
        .iter()
        .any(|l| l.body.contains(what))
}

async fn say(w: &World, s: SessionId, thread: ThreadId, text: &str) {
    let mut events = w.collab.store().subscribe();
    w.collab.post_line(s, text.into(), None).await.unwrap();
    runs_ended(&mut events, thread, 1).await;
    w.collab.engine().wait_idle(thread).await;
}

/// Run the due-time scan and wait for the runs it starts on `woken`.
async fn fire_and_wait(w: &World, woken: &[ThreadId]) -> troupe_collab::check_backs::FireReport {
    let mut events = w.collab.store().subscribe();
    let report = w.collab.fire_due_check_backs().unwrap();
    for t in woken {
        runs_ended(&mut events, *t, 1).await;
        w.collab.engine().wait_idle(*t).await;
    }
    report
}

#[tokio::test]
async fn booked_check_back_fires_once_as_a_private_line_on_its_work() {
    // S-CB-1.
    let (clock, w) = start();
    let alpha = bot(
        &w,
        "Alpha",
        &booking_script("verify render", "Render verified."),
    );
    let beta = bot(&w, "Beta", QUIET);
    let s = group(&w, &[alpha, beta]);
    let (ta, tb) = (thread_of(&w, s, alpha), thread_of(&w, s, beta));
    let booked_at = clock.now_ms();
    say(&w, s, ta, "@Alpha render the intro").await;

    let booked = check_backs_of(&w, alpha);
    assert_eq!(booked.len(), 1, "{booked:?}");
    let cb = &booked[0];
    assert_eq!(cb.state, CheckBackState::Pending);
    assert_eq!(cb.due_at, booked_at + 30 * MINUTE);
    assert_eq!((cb.session_id, cb.note.as_str()), (s, "verify render"));
    let call = w.collab.turns(s, 10).unwrap();
    let calls = w
        .collab
        .store()
        .read(|tx| tx.tool_calls(call.last().unwrap().id))
        .unwrap();
    assert!(calls[0].result.contains("due_at"), "{}", calls[0].result);
    // Booked at the desk, on no job: the reply does not speak of one.
    assert_eq!(cb.plan_id, None);
    assert!(
        calls[0].result.contains("you will be woken here with"),
        "{}",
        calls[0].result
    );

    // Not due yet: nothing happens.
    assert_eq!(w.collab.fire_due_check_backs().unwrap(), Default::default());
    clock.advance(30 * MINUTE);
    let report = fire_and_wait(&w, &[ta]).await;
    assert_eq!(report.fired, vec![cb.id]);

    // Only the booking Bot's thread heard it, as a hidden line; the conversation shows none.
    assert_eq!(
        wakes_on(&w, ta),
        vec![(
            format!("check_back:{}", cb.id.0),
            "Check-back: verify render".into()
        )]
    );
    assert!(wakes_on(&w, tb).is_empty());
    let beta_inbox = w.collab.store().read(|tx| tx.inbox(tb)).unwrap();
    assert!(beta_inbox.iter().all(|i| !i.text.contains("Check-back")));
    assert!(!lines_mention(&w, s, "Check-back"));
    assert!(lines_mention(&w, s, "Render verified."));
    let (fired, item) = w
        .collab
        .store()
        .read(|tx| Ok((tx.check_back(cb.id)?, tx.work_item(cb.work_item_id)?)))
        .unwrap();
    assert_eq!(fired.state, CheckBackState::Fired);
    assert_eq!(fired.fired_at, Some(clock.now_ms()));
    assert_eq!(item.speaks_in, Some(s));

    // Once: a later scan finds nothing, and Alpha ran twice in all.
    assert_eq!(w.collab.fire_due_check_backs().unwrap(), Default::default());
    assert_eq!(runs(&w, ta), 2);
    assert_eq!(runs(&w, tb), 0);
}

/// Books on whichever job the line names; says "Checked." when a check-back wakes it.
const TWO_JOBS: &str = r#"{"rules":[
    {"when_user_contains":"Check-back:","reply":{"text":"Checked."}},
    {"when_user_contains":"job-one","reply":{"tool_calls":[{"name":"check_back","arguments":{"after_minutes":30,"note":"verify render"}}]}},
    {"when_user_contains":"job-two","reply":{"tool_calls":[{"name":"check_back","arguments":{"after_minutes":45,"note":"verify audio"}}]}}],
  "steps":[{"text":"Booked."}],"on_exhausted":"repeat_last"}"#;

#[tokio::test]
async fn two_work_items_keep_their_own_check_backs() {
    // S-CB-2, CB-7: the desk's rebooking replaces its own, never the job's.
    let (clock, w) = start();
    let alpha = bot(&w, "Alpha", TWO_JOBS);
    let s = direct(&w, alpha);
    let desk_thread = thread_of(&w, s, alpha);
    let JobWork {
        item: job,
        thread: job_thread,
        ..
    } = open_job_work(&w, s, alpha, "Cut the audio");
    say(&w, s, desk_thread, "job-one: the render").await;
    let mut events = w.collab.store().subscribe();
    w.collab
        .engine()
        .deliver(job_thread, Delivery::user_task("job-two: the audio"))
        .await
        .unwrap();
    runs_ended(&mut events, job_thread, 1).await;
    w.collab.engine().wait_idle(job_thread).await;

    let pending = |w: &World| {
        let mut p: Vec<_> = check_backs_of(w, alpha)
            .into_iter()
            .filter(|c| c.state == CheckBackState::Pending)
            .collect();
        p.sort_by_key(|c| c.due_at);
        p
    };
    let both = pending(&w);
    assert_eq!(both.len(), 2, "{both:?}");
    assert_ne!(both[0].work_item_id, both[1].work_item_id);
    let on_job = &both[1];
    assert_eq!((on_job.work_item_id, on_job.session_id), (job, s));
    assert!(
        on_job.plan_id.is_some(),
        "a job's booking counts against its job"
    );

    // Rebooking on the desk replaces the desk's booking only.
    say(&w, s, desk_thread, "job-one again").await;
    let now = pending(&w);
    assert_eq!(now.len(), 2);
    assert_eq!(now[1].id, on_job.id, "the job's booking stands");
    assert_ne!(now[0].id, both[0].id);

    clock.advance(30 * MINUTE);
    let report = fire_and_wait(&w, &[desk_thread]).await;
    assert_eq!(report.fired, vec![now[0].id]);
    clock.advance(15 * MINUTE);
    let report = fire_and_wait(&w, &[job_thread]).await;
    assert_eq!(report.fired, vec![on_job.id]);
    let texts = |t| -> Vec<String> { wakes_on(&w, t).into_iter().map(|(_, x)| x).collect() };
    assert_eq!(texts(desk_thread), ["Check-back: verify render"]);
    assert_eq!(texts(job_thread), ["Check-back: verify audio"]);
}

#[tokio::test]
async fn check_back_under_five_minutes_or_seventh_in_an_hour_is_refused() {
    // S-CB-4.
    let (_clock, w) = start();
    let mut steps = vec![book(2, "too soon")];
    steps.extend((1..=7).map(|n| book(30, &format!("try {n}"))));
    steps.push(r#"{"text":"done"}"#.into());
    let alpha = bot(
        &w,
        "Alpha",
        &format!(r#"{{"steps":[{}]}}"#, steps.join(",")),
    );
    let s = direct(&w, alpha);
    let t = thread_of(&w, s, alpha);
    say(&w, s, t, "keep an eye on the build").await;
    let turn = w.collab.turns(s, 10).unwrap().remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(turn.id)).unwrap();
    assert_eq!(calls.len(), 8);
    assert!(
        calls[0].result.starts_with("invalid:"),
        "{}",
        calls[0].result
    );
    assert!(
        calls[0].result.contains("5 to 10080"),
        "{}",
        calls[0].result
    );
    for c in &calls[1..7] {
        assert_eq!(c.status, "ok", "{}", c.result);
    }
    assert!(
        calls[7].result.starts_with("check_back_limit:"),
        "{}",
        calls[7].result
    );
    // Six bookings, each replacing the one before: one stands.
    let booked = check_backs_of(&w, alpha);
    assert_eq!(booked.len(), 6);
    let pending: Vec<_> = booked
        .iter()
        .filter(|c| c.state == CheckBackState::Pending)
        .collect();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].note, "try 6");
}

#[tokio::test]
async fn missed_due_time_fires_once() {
    // S-CB-6: the daemon slept a day past the due time.
    let (clock, w) = start();
    let alpha = bot(&w, "Alpha", &booking_script("verify render", "Verified."));
    let s = direct(&w, alpha);
    let t = thread_of(&w, s, alpha);
    say(&w, s, t, "render the intro").await;
    clock.advance(24 * 60 * MINUTE);
    let report = fire_and_wait(&w, &[t]).await;
    assert_eq!(report.fired.len(), 1);
    for _ in 0..3 {
        assert_eq!(w.collab.fire_due_check_backs().unwrap(), Default::default());
    }
    assert_eq!(wakes_on(&w, t).len(), 1);
    assert_eq!(runs(&w, t), 2);
}

#[tokio::test]
async fn archived_bot_check_back_is_cleared_waking_nobody() {
    let (clock, w) = start();
    let alpha = bot(&w, "Alpha", &booking_script("verify render", "Verified."));
    let s = direct(&w, alpha);
    let t = thread_of(&w, s, alpha);
    say(&w, s, t, "render the intro").await;
    w.collab.archive_bot(alpha).unwrap();
    clock.advance(30 * MINUTE);
    let report = w.collab.fire_due_check_backs().unwrap();
    assert!(report.fired.is_empty());
    assert_eq!(report.cleared.len(), 1);
    let cb = w
        .collab
        .store()
        .read(|tx| tx.check_back(report.cleared[0]))
        .unwrap();
    assert_eq!(cb.state, CheckBackState::Cleared);
    w.collab.engine().wait_idle(t).await;
    assert!(wakes_on(&w, t).is_empty());
    assert!(w.collab.store().read(|tx| tx.inbox(t)).unwrap().is_empty());
    assert_eq!(runs(&w, t), 1);
}

#[tokio::test]
async fn departed_member_check_back_is_cleared_waking_nobody() {
    let (clock, w) = start();
    let alpha = bot(&w, "Alpha", &booking_script("verify render", "Verified."));
    let beta = bot(&w, "Beta", QUIET);
    let s = group(&w, &[alpha, beta]);
    let t = thread_of(&w, s, alpha);
    say(&w, s, t, "@Alpha render the intro").await;
    w.collab.remove_member(s, alpha).await.unwrap();
    clock.advance(30 * MINUTE);
    let report = w.collab.fire_due_check_backs().unwrap();
    assert_eq!((report.fired.len(), report.cleared.len()), (0, 1));
    assert!(wakes_on(&w, t).is_empty());
    assert_eq!(runs(&w, t), 1);
}

#[tokio::test]
async fn check_back_spares_delegation_wait() {
    // DEL-24/26: the Bot's job waits on a delegation; a check-back it books on its desk in
    // the same conversation neither replaces nor fires that wait.
    let (clock, w) = start();
    let alpha = bot(&w, "Alpha", TWO_JOBS);
    let s = direct(&w, alpha);
    let desk_thread = thread_of(&w, s, alpha);
    let JobWork {
        item: job,
        thread: job_thread,
        ..
    } = open_job_work(&w, s, alpha, "Cut the audio");
    let wait = WaitingOn::Delegation {
        delegation_id: DelegationId(77),
    };
    w.collab
        .store()
        .write(|tx| tx.set_work_state(job, WorkState::Waiting, Some(&wait)))
        .unwrap();
    let job_as = |w: &World| w.collab.store().read(|tx| tx.work_item(job)).unwrap();
    let before = job_as(&w);

    say(&w, s, desk_thread, "job-one: the render").await;
    let booked = check_backs_of(&w, alpha);
    assert_eq!(booked.len(), 1);
    assert_ne!(booked[0].work_item_id, job);
    let after = job_as(&w);
    assert_eq!(
        (after.state, after.waiting_on.clone()),
        (before.state, before.waiting_on.clone())
    );

    clock.advance(30 * MINUTE);
    let report = fire_and_wait(&w, &[desk_thread]).await;
    assert_eq!(report.fired, vec![booked[0].id]);
    let after = job_as(&w);
    assert_eq!(
        (after.state, after.waiting_on),
        (WorkState::Waiting, Some(wait))
    );
    assert!(wakes_on(&w, job_thread).is_empty());
    assert!(
        w.collab
            .store()
            .read(|tx| tx.inbox(job_thread))
            .unwrap()
            .is_empty()
    );
    assert_eq!(runs(&w, job_thread), 0);
}

fn hold_bot(b: BotId) -> troupe_collab::holds::HoldRequest {
    troupe_collab::holds::HoldRequest {
        scope: troupe_collab::holds::ScopeRequest {
            kind: "bot".into(),
            bot_id: Some(b),
            session_id: None,
            task_id: None,
            ticket_id: None,
            turn_id: None,
        },
        session_id: None,
        action: None,
    }
}

#[tokio::test]
async fn a_held_check_back_is_set_aside_and_fires_once_after_the_lift() {
    // S-HOLD-7 / S-CB-5: due at T during the hold, lifted at T+1h, fires once after.
    let (clock, w) = start();
    let alpha = bot(&w, "Alpha", &booking_script("verify render", "Verified."));
    let s = direct(&w, alpha);
    let t = thread_of(&w, s, alpha);
    say(&w, s, t, "render the intro").await;
    let cb = check_backs_of(&w, alpha).remove(0);
    let (hold, _) = w.collab.post_hold(hold_bot(alpha)).await.unwrap();
    assert_eq!(hold.hold.effect.check_backs_set_aside, vec![cb.id]);
    assert_eq!(check_backs_of(&w, alpha)[0].state, CheckBackState::SetAside);
    clock.advance(30 * MINUTE);
    assert_eq!(w.collab.fire_due_check_backs().unwrap(), Default::default());
    clock.advance(60 * MINUTE);
    w.collab.lift_hold(hold.hold.id).await.unwrap();
    assert_eq!(check_backs_of(&w, alpha)[0].state, CheckBackState::Pending);
    let report = fire_and_wait(&w, &[t]).await;
    assert_eq!(report.fired, vec![cb.id]);
    assert_eq!(w.collab.fire_due_check_backs().unwrap(), Default::default());
    assert_eq!(wakes_on(&w, t).len(), 1);
    assert_eq!(runs(&w, t), 2);
}

#[tokio::test]
async fn a_check_back_coming_due_under_a_hold_is_set_aside_not_fired() {
    // HOLD-C1, W4: a hold that came to cover a pending check-back (here written beside it, as
    // another node's write would be) sets it aside when it comes due, and logs the wake.
    let (clock, w) = start();
    let alpha = bot(&w, "Alpha", &booking_script("verify render", "Verified."));
    let s = direct(&w, alpha);
    let t = thread_of(&w, s, alpha);
    say(&w, s, t, "render the intro").await;
    let cb = check_backs_of(&w, alpha).remove(0);
    let hold = w
        .collab
        .store()
        .write(|tx| {
            tx.insert_hold(&troupe_store::NewHold {
                scope: troupe_core::hold::HoldScope::Bot { bot_id: alpha },
                targets: vec![],
                source: troupe_core::hold::HoldSource::UserButton,
                source_message_id: None,
                session_id: None,
                lift_on_next_user_message: true,
                cancel: false,
                composer_stop: false,
                effect: Default::default(),
            })
        })
        .unwrap();
    clock.advance(30 * MINUTE);
    let report = w.collab.fire_due_check_backs().unwrap();
    assert_eq!(
        (report.fired.len(), report.set_aside.clone()),
        (0, vec![cb.id])
    );
    assert_eq!(
        w.collab
            .hold(hold.id)
            .unwrap()
            .hold
            .effect
            .check_backs_set_aside,
        vec![cb.id]
    );
    let log = w
        .collab
        .audit(
            Some("wake_suppressed"),
            Some(hold.id),
            troupe_core::EventId(0),
            10,
        )
        .unwrap();
    assert_eq!(log.len(), 1);
    assert!(wakes_on(&w, t).is_empty());
}

/// PLN-3: Plan changes neither the tools a Bot has nor what they may do — its Bot books a
/// check-back as it would without Plan (the loops, whose continuations bring work back to the
/// thread themselves, are the workflows that take `check_back` away).
#[tokio::test]
async fn pln3_a_bot_in_plan_keeps_its_tools() {
    let (_clock, w) = start();
    let alpha = bot(&w, "Alpha", &booking_script("look again", "Looked."));
    let s = direct(&w, alpha);
    let ta = thread_of(&w, s, alpha);
    w.collab
        .store()
        .write(|tx| tx.set_workflow(ta, Some(&serde_json::json!({"kind": "plan"}))))
        .unwrap();
    say(&w, s, ta, "plan the migration").await;
    assert_eq!(check_backs_of(&w, alpha).len(), 1, "booked in Plan");
}

/// END-15: a turn a check-back woke in the person's direct answers no line of theirs, so it may
/// end with nothing new and no words — not sent back as if it had left the person unanswered.
#[tokio::test]
async fn end15_a_check_back_turn_owes_the_person_no_reply() {
    let (clock, w) = start();
    let nothing = r#"{"tool_calls":[{"name":"end_turn","arguments":{"reason":"nothing_new"}}]}"#;
    let alpha = bot(
        &w,
        "Alpha",
        &format!(
            r#"{{"steps":[{},{{"text":"Booked."}},{nothing}],"on_exhausted":"repeat_last"}}"#,
            book(30, "look at the build")
        ),
    );
    let s = direct(&w, alpha);
    let t = thread_of(&w, s, alpha);
    say(&w, s, t, "keep an eye on the build").await;
    clock.advance(30 * MINUTE);
    fire_and_wait(&w, &[t]).await;
    let woken = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(t, 1))
        .unwrap()
        .remove(0);
    let calls = w.collab.store().read(|tx| tx.tool_calls(woken.id)).unwrap();
    assert_eq!(calls.len(), 1, "ended at once: {calls:?}");
    assert_eq!(calls[0].status, "ok", "{}", calls[0].result);
    assert!(
        !lines_said(&w, s)
            .iter()
            .any(|l| l.contains("without replying")),
        "{:?}",
        lines_said(&w, s)
    );
    assert_eq!(ends(&w, t).last().map(String::as_str), Some("nothing_new"));
}
