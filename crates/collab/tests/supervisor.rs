//! The supervisor (issue 16 item 2, C §12) over a real engine and store with scripted Bots, on
//! a clock only the test moves: each tick is `Collab::supervise`, and every wait is on the
//! runs it starts.

mod support;

use serde_json::json;
use support::supervise::*;
use support::*;
use troupe_collab::holds::{HoldRequest, ScopeRequest};
use troupe_core::delegation::{DelegationState, Expects};
use troupe_core::inbox::Delivery;
use troupe_core::notification::{NotificationKind, NotificationStatus};
use troupe_core::work_item::{WaitingOn, WorkState};
use troupe_core::{BotId, SessionId};
use troupe_store::NewDelegation;

const FAILS: &str = r#"{"steps":[{"error":{"kind":"bad_request","message":"broken"}}],"on_exhausted":"repeat_last"}"#;
const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;

/// Ends its turn with a reason that does not exist, every time: refused twice, the turn ends
/// needing attention.
const BAD_ENDING: &str = r#"{"steps":[{"tool_calls":[{"name":"end_turn","arguments":{"reason":"stop"}}]}],"on_exhausted":"repeat_last"}"#;

/// A desk has no job, so what the supervisor told the person about it is not in a job's work
/// log: it is still told once. Woken again after that by something other than the person's
/// word (a check-back, a delivery) and failing again, it is not told a second time.
#[tokio::test]
async fn sv_7_a_desk_whose_retries_ran_out_is_told_once_though_it_fails_again() {
    let (_clock, w) = start();
    let ada = bot(&w, "Ada", BAD_ENDING);
    let beta = bot(&w, "Beta", QUIET);
    let s = group(&w, &[ada, beta]);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "@Ada look at the intro".into(), None)
        .await
        .unwrap();
    let desk = thread_of(&w, s, ada);
    runs_ended(&mut events, desk, 1).await;
    w.collab.engine().wait_idle(desk).await;
    let item = |w: &World| {
        w.collab
            .store()
            .read(|tx| tx.work_item_of_thread(desk))
            .unwrap()
            .unwrap()
    };
    assert!(item(&w).plan_id.is_none(), "a desk, no job");
    assert_eq!(item(&w).state, WorkState::NeedsAttention);
    for _ in 1..=3 {
        tick_on(&w, desk).await;
    }
    let r = tick_on(&w, desk).await;
    assert_eq!(
        r["work"][0]["pickup"],
        json!({"verdict": "budget_spent", "tell": true}),
        "{r}"
    );
    assert_eq!(supervisor_lines(&w, s).len(), 1);
    // Woken once more, not by the person, and failing again.
    let mut events = w.collab.store().subscribe();
    w.collab
        .engine()
        .deliver(
            desk,
            Delivery::user_task("Check-back: the intro".to_string()),
        )
        .await
        .unwrap();
    runs_ended(&mut events, desk, 1).await;
    w.collab.engine().wait_idle(desk).await;
    assert_eq!(item(&w).state, WorkState::NeedsAttention);
    let r = tick_on(&w, desk).await;
    assert_eq!(
        r["work"][0]["pickup"],
        json!({"verdict": "budget_spent", "tell": false}),
        "{r}"
    );
    assert_eq!(supervisor_lines(&w, s).len(), 1, "told once");
}

/// A person's stop on everything `bot` does, made from `s`'s menu.
fn hold_on(bot: BotId, s: SessionId) -> HoldRequest {
    HoldRequest {
        scope: ScopeRequest {
            kind: "bot".into(),
            bot_id: Some(bot),
            session_id: None,
            task_id: None,
            ticket_id: None,
            turn_id: None,
        },
        session_id: Some(s),
        action: None,
    }
}

#[tokio::test]
async fn s_sv_10_failing_work_is_picked_up_three_times_then_retry_budget_once() {
    let (_clock, w) = start();
    let ada = bot(&w, "Ada", FAILS);
    let s = direct(&w, ada);
    let j = open_job_work(&w, s, ada, "Render the intro");
    work_on(&w, &j, "render the intro").await;
    assert_eq!(state(&w, &j), WorkState::NeedsAttention);

    for attempt in 1..=3 {
        let r = tick(&w, &j).await;
        assert_eq!(
            r["work"][0]["pickup"],
            json!({"verdict": "pick_up", "attempt": attempt, "spends_budget": true, "cause": "failed"}),
            "{r}"
        );
        assert_eq!(state(&w, &j), WorkState::NeedsAttention);
    }
    // The fourth is not attempted: one line to the user, no buttons, no Bot hears it.
    let r = tick(&w, &j).await;
    assert_eq!(
        r["work"][0]["pickup"],
        json!({"verdict": "budget_spent", "tell": true})
    );
    let told = supervisor_lines(&w, s);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["code"], "retry_budget");
    assert_eq!(told[0]["offer"], json!([]));
    // It names only what the person can do here: no ticket, so no board.
    let line = w
        .collab
        .lines(s, None, 1000)
        .unwrap()
        .into_iter()
        .find(|l| {
            l.control
                .as_ref()
                .is_some_and(|c| c["code"] == "retry_budget")
        })
        .unwrap();
    assert!(line.body.contains("write to @Ada"), "{}", line.body);
    // It says how the last attempt ended, so the person need not dig for why.
    assert!(
        line.body
            .contains("The last attempt ended: the model call failed (")
            && line.body.contains("broken"),
        "{}",
        line.body
    );
    assert!(!line.body.contains("ticket"), "{}", line.body);
    // Nothing is due any more: later ticks read nothing and say nothing again.
    assert!(w.collab.supervise().unwrap().is_empty());
    assert_eq!(supervisor_lines(&w, s).len(), 1);
    let kinds = log_kinds(&w, &j);
    assert_eq!(
        kinds
            .iter()
            .filter(|k| *k == "supervisor_picked_up")
            .count(),
        3
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| *k == "supervisor_retry_budget")
            .count(),
        1
    );
    // Each pick-up is a fired supervisor check-back row (SV-2).
    let rows = w
        .collab
        .store()
        .read(|tx| tx.supervisor_pickups_since(j.item, 0))
        .unwrap();
    assert_eq!(rows, 3);
    // SV-18: the person is told outside the conversation too, once; their Continue resolves it.
    let told = w.collab.notifications(false, 50).unwrap();
    assert_eq!(told.open_count, 1);
    let n = &told.notifications[0];
    assert_eq!(n.kind, NotificationKind::Stopped);
    assert_eq!(n.title, "Ada stopped on \u{201c}Render the intro\u{201d}");
    assert_eq!(n.work_item_id, Some(j.item));
    assert_eq!(n.session_id, Some(s));
    let last = w
        .collab
        .store()
        .read(|tx| tx.runs_for_thread(j.thread, 100))
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .max()
        .unwrap();
    let mut events = w.collab.store().subscribe();
    w.collab.continue_turn(last).await.unwrap();
    runs_ended(&mut events, j.thread, 1).await;
    w.collab.engine().wait_idle(j.thread).await;
    let after = w.collab.notifications(true, 50).unwrap();
    assert_eq!(after.open_count, 0);
    assert_eq!(after.notifications[0].status, NotificationStatus::Resolved);
    assert_eq!(
        after.notifications[0].resolution.as_deref(),
        Some("resumed")
    );
}

#[tokio::test]
async fn held_job_gets_no_pickup_and_the_lift_brings_it_back_next_tick() {
    let (_clock, w) = start();
    let ada = bot(&w, "Ada", FAILS);
    let s = direct(&w, ada);
    let j = open_job_work(&w, s, ada, "Cut the trailer");
    work_on(&w, &j, "cut the trailer").await;
    let (hold, _) = w.collab.post_hold(hold_on(ada, s)).await.unwrap();
    let r = tick(&w, &j).await;
    assert_eq!(r["work"][0]["pickup"]["verdict"], "wait", "{r}");
    assert!(
        w.collab.supervise().unwrap().is_empty(),
        "nothing due under the hold"
    );
    w.collab.lift_hold(hold.hold.id).await.unwrap();
    let r = tick(&w, &j).await;
    assert_eq!(r["work"][0]["pickup"]["verdict"], "pick_up", "{r}");
}

#[tokio::test]
async fn pickup_refused_spends_nothing() {
    let (_clock, w) = start();
    let ada = bot(&w, "Ada", FAILS);
    let s = direct(&w, ada);
    let j = open_job_work(&w, s, ada, "Write the brief");
    work_on(&w, &j, "write the brief").await;
    w.collab
        .store()
        .write(|tx| {
            tx.raw_execute(&format!(
                "UPDATE sessions SET archived_at = 1 WHERE id = {}",
                s.0
            ))
        })
        .unwrap();
    let r = tick(&w, &j).await;
    assert_eq!(r["work"][0]["pickup"]["verdict"], "refused", "{r}");
    let spent = w
        .collab
        .store()
        .read(|tx| tx.supervisor_pickups_since(j.item, 0))
        .unwrap();
    assert_eq!(spent, 0);
    assert!(log_kinds(&w, &j).contains(&"supervisor_pickup_refused".to_string()));
}

#[tokio::test]
async fn sv_5_idle_work_with_mail_is_requeued_and_read() {
    let (_clock, w) = start();
    let ada = bot(&w, "Ada", QUIET);
    let s = direct(&w, ada);
    let j = open_job_work(&w, s, ada, "Mix the audio");
    // Mail lands while the work is idle and nothing drives it (written straight to the inbox).
    w.collab
        .store()
        .write(|tx| {
            tx.deliver(
                j.thread,
                &Delivery::user_task("the mix is too loud".to_string()),
            )?;
            tx.set_work_state(j.item, WorkState::Idle, None)
        })
        .unwrap();
    let mut events = w.collab.store().subscribe();
    let r = w.collab.supervise().unwrap();
    assert_eq!(r.work[0]["action"], json!({"kind": "requeue"}));
    runs_ended(&mut events, j.thread, 1).await;
    w.collab.engine().wait_idle(j.thread).await;
    assert!(log_kinds(&w, &j).contains(&"supervisor_requeued".to_string()));
}

#[tokio::test]
async fn s_sv_6_a_quiet_ticket_is_called_back_twice_then_only_noticed() {
    let (clock, w) = start();
    let ada = bot(&w, "Ada", QUIET);
    let s = direct(&w, ada);
    let j = open_job_work(&w, s, ada, "Promo video");
    add_ticket(&w, &j, "Storyboard", ada, None);
    // Activity on the job starts its quiet clock.
    work_on(&w, &j, "draw the storyboard").await;

    clock.advance(60_000);
    assert!(w.collab.supervise().unwrap().tickets.is_empty(), "not due");
    clock.advance(60_000);
    let r = tick(&w, &j).await;
    assert_eq!(verdicts(&r), ["call_back"], "{r}");
    assert_eq!(r["tickets"][0]["verdict"]["n"], 1);
    clock.advance(120_000);
    let r = tick(&w, &j).await;
    assert_eq!(verdicts(&r), ["call_back"], "{r}");
    assert_eq!(r["tickets"][0]["verdict"]["n"], 2);
    clock.advance(120_000);
    let r = tick(&w, &j).await;
    assert_eq!(verdicts(&r), ["notice"], "{r}");
    clock.advance(120_000);
    let r = tick(&w, &j).await;
    assert!(verdicts(&r).iter().all(|v| v == "nothing"), "{r}");
    let kinds = log_kinds(&w, &j);
    let count = |k: &str| kinds.iter().filter(|x| *x == k).count();
    assert_eq!(count("supervisor_called_back"), 2, "{kinds:?}");
    assert_eq!(count("supervisor_notice"), 1, "{kinds:?}");
    // The notice is no line in the conversation (SV-14, SV-18).
    assert!(supervisor_lines(&w, s).is_empty());
}

// BH-3: the ball holder has no work on the job yet (its ticket was laid out for it, it never
// worked on it): the call-back gives it its job work and wakes it in the job's conversation.
#[tokio::test]
async fn a_quiet_ticket_whose_holder_has_no_work_yet_wakes_it_in_the_job_conversation() {
    let (clock, w) = start();
    let ada = bot(&w, "Ada", QUIET);
    let bo = bot(&w, "Bo", QUIET);
    let s = group(&w, &[ada, bo]);
    let j = open_job_work(&w, s, ada, "Launch video");
    add_ticket(&w, &j, "Voice-over", bo, None);
    work_on(&w, &j, "plan the launch video").await;
    let bo_work = |w: &World| w.collab.store().read(|tx| tx.job_item(bo, j.plan)).unwrap();
    assert!(bo_work(&w).is_none(), "Bo has not worked on the job");

    clock.advance(120_000);
    let mut events = w.collab.store().subscribe();
    let r = serde_json::to_value(w.collab.supervise().unwrap()).unwrap();
    assert!(verdicts(&r).contains(&"call_back".to_string()), "{r}");
    let item = bo_work(&w).expect("the call-back made Bo's job work");
    runs_ended(&mut events, item.thread_id, 1).await;
    w.collab.engine().wait_idle(item.thread_id).await;
    assert_eq!(runs(&w, item.thread_id), 1, "Bo was woken once");
    let item = w.collab.store().read(|tx| tx.work_item(item.id)).unwrap();
    assert_eq!(item.speaks_in, Some(s), "woken in the job's conversation");
    let log = w
        .collab
        .store()
        .read(|tx| tx.work_log_of_plan(j.plan, 0, 1000))
        .unwrap();
    assert!(
        log.iter()
            .any(|e| e.kind == "supervisor_called_back" && e.work_item_id == Some(item.id)),
        "{log:?}"
    );
}

#[tokio::test]
async fn s_sv_4_cut_work_on_the_job_blocks_call_backs_to_its_tickets() {
    let (clock, w) = start();
    let ada = bot(&w, "Ada", FAILS);
    let bo = bot(&w, "Bo", QUIET);
    let s = group(&w, &[ada, bo]);
    let j = open_job_work(&w, s, ada, "Music video");
    add_ticket(&w, &j, "Scene 03", bo, None);
    // Ada's work on the job fails and waits for a pick-up it cannot get (a hold covers Ada).
    work_on(&w, &j, "cut scene 02").await;
    w.collab.post_hold(hold_on(ada, s)).await.unwrap();
    clock.advance(600_000);
    let r = serde_json::to_value(w.collab.supervise().unwrap()).unwrap();
    assert_eq!(verdicts(&r), ["nothing"], "{r}");
}

#[tokio::test]
async fn a_tick_after_a_pickup_repeats_no_wake() {
    let (_clock, w) = start();
    // Fails, until the pick-up's line reaches it.
    let ada = bot(
        &w,
        "Ada",
        r#"{"steps":[{"error":{"kind":"bad_request","message":"broken"}}],"on_exhausted":"repeat_last","rules":[{"when_user_contains":"Pick it up","reply":{"text":"done"}}]}"#,
    );
    let s = direct(&w, ada);
    let j = open_job_work(&w, s, ada, "Grade the colour");
    work_on(&w, &j, "grade the colour").await;
    assert_eq!(state(&w, &j), WorkState::NeedsAttention);
    let r = tick(&w, &j).await;
    assert_eq!(r["work"][0]["pickup"]["verdict"], "pick_up", "{r}");
    assert_eq!(state(&w, &j), WorkState::Idle);
    // Every later tick finds the work settled: no second wake, no second pick-up row.
    for _ in 0..3 {
        let r = w.collab.supervise().unwrap();
        assert!(r.work.iter().all(|a| a["pickup"].is_null()), "{r:?}");
    }
    assert_eq!(runs(&w, j.thread), 2);
    let rows = w
        .collab
        .store()
        .read(|tx| tx.supervisor_pickups_since(j.item, 0))
        .unwrap();
    assert_eq!(rows, 1);
}

#[tokio::test]
async fn sv_4_a_cancelled_request_no_longer_stands_and_the_wait_needs_attention() {
    let (_clock, w) = start();
    let ada = bot(&w, "Ada", QUIET);
    let bo = bot(&w, "Bo", QUIET);
    let s = group(&w, &[ada, bo]);
    let j = open_job_work(&w, s, ada, "Storyboard");
    let theirs = work_on_job(&w, j.plan, s, bo, "Storyboard frames");
    // Ada waits on a request to Bo; then the request is cancelled.
    let asked = w
        .collab
        .store()
        .write(|tx| {
            let d = tx.create_delegation(&NewDelegation {
                plan_id: j.plan,
                ticket_id: None,
                part_ids: vec![],
                requirement_ids: vec![],
                sender_work_item: j.item,
                recipient_work_item: theirs.item,
                originating_run_id: None,
                pair_session_id: s,
                ask: "draw the frames".into(),
                expects: Expects::Deliverable,
                continue_working: false,
            })?;
            let on = WaitingOn::Delegation {
                delegation_id: d.id,
            };
            tx.set_work_state(j.item, WorkState::Waiting, Some(&on))?;
            Ok(d.id)
        })
        .unwrap();
    // An open request stands: nothing happens.
    let r = w.collab.supervise().unwrap();
    assert_eq!(r.work[0]["action"], json!({"kind": "nothing"}), "{r:?}");
    w.collab
        .store()
        .write(|tx| {
            tx.settle_delegation(asked, DelegationState::Cancelled, &json!({"reason": "x"}))
        })
        .unwrap();
    let r = w.collab.supervise().unwrap();
    let mine: Vec<_> = r
        .work
        .iter()
        .filter(|a| a["work_item_id"] == json!(j.item))
        .collect();
    assert_eq!(mine[0]["action"]["kind"], "wait_invalid", "{r:?}");
    assert_eq!(state(&w, &j), WorkState::NeedsAttention);
    // The Bot-only note is on Ada's thread, as context; nobody else's.
    let inbox = w.collab.store().read(|tx| tx.inbox(j.thread)).unwrap();
    assert!(
        inbox
            .iter()
            .any(|i| i.text.contains("no longer stands") && i.text.contains("cancelled")),
        "{inbox:?}"
    );
    assert!(log_kinds(&w, &j).contains(&"supervisor_wait_invalid".to_string()));
}

// T17, T18, LJ6: a ticket waiting on another is left alone until that one is handed over
// (not approved); then its owner is called at the next tick, not after the quiet window.
#[tokio::test]
async fn t18_a_ticket_released_by_a_hand_over_has_its_owner_called_at_the_next_tick() {
    let (clock, w) = start();
    let ada = bot(&w, "Ada", QUIET);
    let bo = bot(&w, "Bo", QUIET);
    let s = group(&w, &[ada, bo]);
    let j = open_job_work(&w, s, ada, "Launch video");
    let board = add_ticket(&w, &j, "Storyboard", ada, None);
    let anim = add_ticket(&w, &j, "Animation", bo, None);
    let patch = |id, p: troupe_collab::tickets::TicketPatchRequest| {
        w.collab.patch_ticket(id, p).unwrap();
    };
    patch(
        anim,
        troupe_collab::tickets::TicketPatchRequest {
            depends_on: Some(vec![board]),
            ..Default::default()
        },
    );
    work_on(&w, &j, "plan the launch video").await;
    clock.advance(120_000);
    let r = serde_json::to_value(w.collab.supervise().unwrap()).unwrap();
    let of = |r: &serde_json::Value, t: troupe_core::TicketId| {
        r["tickets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["ticket_id"] == json!(t))
            .map(|x| x["verdict"]["verdict"].as_str().unwrap().to_string())
    };
    assert_eq!(of(&r, anim).as_deref(), Some("nothing"), "it waits: {r}");
    // The storyboard is handed over (in review, not approved yet).
    clock.advance(1_000);
    patch(
        board,
        troupe_collab::tickets::TicketPatchRequest {
            status: Some(troupe_core::ticket::TicketStatus::InReview),
            ..Default::default()
        },
    );
    clock.advance(1_000);
    let r = serde_json::to_value(w.collab.supervise().unwrap()).unwrap();
    assert_eq!(of(&r, anim).as_deref(), Some("call_back"), "{r}");
    let bo_work = w.collab.store().read(|tx| tx.job_item(bo, j.plan)).unwrap();
    assert!(bo_work.is_some(), "Bo was called to the animation");
}
