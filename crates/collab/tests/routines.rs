//! Routines end to end over a real engine and store with scripted Bots, on a clock the test
//! moves: each due time a ticket of the standing job (PLAN-D11) whose hand-over is approved
//! `by: routine` (RT-a), a due time under a hold owed and run once after the lift (HOLD-W6,
//! S-HOLD-9), the standing job never dormant, never called back, never looked back on, and
//! the Bot's own `set_routine`.

mod support;

use serde_json::json;
use support::holds::bot_stop;
use support::supervise::start;
use support::*;
use troupe_collab::routines::{NewRoutineRequest, RoutinePatchRequest, RoutineView};
use troupe_core::message::Origin;
use troupe_core::submission::{ApprovedBy, SubmissionState};
use troupe_core::ticket::TicketStage;
use troupe_core::{BotId, Clock, ManualClock, PlanId, SessionId, TicketId};
use troupe_store::TicketRecord;

const HOUR: i64 = 3_600_000;

/// Each run writes its brief, hands it over and says so.
const BRIEFER: &str = r#"{"rules":[{"when_user_contains":"is due","reply":{"tool_calls":[{"name":"write_file","arguments":{"path":"brief.md","content":"All quiet."}}]}}],
  "steps":[{"text":"unused"},{"text":"Today's brief: all quiet.","tool_calls":[{"name":"submit","arguments":{"artifacts":["brief.md"]}}]},{"text":"Handed over."}],
  "on_exhausted":"repeat_last"}"#;

fn hourly(w: &World, bot: BotId, s: SessionId) -> RoutineView {
    w.collab
        .create_routine(NewRoutineRequest {
            bot_id: bot.0,
            session_id: s.0,
            name: "Morning brief".into(),
            instruction: "Sum up what changed overnight in brief.md.".into(),
            schedule: json!({"kind": "every", "seconds": 3600}),
        })
        .unwrap()
}

/// A Bot that writes and hands over its brief, its direct, and its hourly routine there.
struct Briefing {
    clock: ManualClock,
    w: World,
    alpha: BotId,
    s: SessionId,
    r: RoutineView,
}

fn briefing() -> Briefing {
    let (clock, w) = start();
    let alpha = bot(&w, "Alpha", BRIEFER);
    let s = direct(&w, alpha);
    let r = hourly(&w, alpha, s);
    Briefing {
        clock,
        w,
        alpha,
        s,
        r,
    }
}

fn tickets(w: &World, plan: PlanId) -> Vec<TicketRecord> {
    w.collab
        .store()
        .read(|tx| tx.tickets_of_plan(plan))
        .unwrap()
}

fn approved(w: &World, ticket: TicketId) -> bool {
    w.collab
        .store()
        .read(|tx| tx.submissions_of_ticket(ticket))
        .unwrap()
        .iter()
        .any(|s| s.state == SubmissionState::Approved)
}

/// One tick of the routines; waits until every run it opened has its hand-over approved and
/// its Bot idle.
async fn tick_and_finish(w: &World) -> troupe_collab::routines::tick::RoutineReport {
    let mut events = w.collab.store().subscribe();
    let report = w.collab.run_due_routines().unwrap();
    for ran in &report.ran {
        let ticket = TicketId(ran.ticket_id);
        until(&mut events, "the run's hand-over is approved", || {
            approved(w, ticket)
        })
        .await;
        let plan = w
            .collab
            .store()
            .read(|tx| tx.ticket(ticket))
            .unwrap()
            .plan_id;
        for item in w
            .collab
            .store()
            .read(|tx| tx.work_items_of_plan(plan))
            .unwrap()
        {
            w.collab.engine().wait_idle(item.thread_id).await;
        }
    }
    report
}

fn suppressed(w: &World) -> Vec<serde_json::Value> {
    w.collab
        .store()
        .read(|tx| tx.events_of_kinds(&["wake_suppressed"], troupe_core::EventId(0), 100))
        .unwrap()
        .into_iter()
        .filter(|e| e.payload["cause"] == "routine")
        .map(|e| e.payload)
        .collect()
}

#[tokio::test]
async fn plan_d11_each_due_time_adds_a_ticket_to_the_standing_job() {
    let Briefing {
        clock,
        w,
        alpha,
        s,
        r,
    } = briefing();
    assert_eq!(r.routine.next_due_at, Some(clock.now_ms() + HOUR));
    let plan = w.collab.plan(r.routine.plan_id).unwrap();
    assert_eq!(plan.name, "Morning brief");
    assert!(tickets(&w, plan.id).is_empty(), "no run before its time");

    // Not due yet: nothing.
    assert!(w.collab.run_due_routines().unwrap().is_empty());
    clock.advance(HOUR);
    let first_due = clock.now_ms();
    let report = tick_and_finish(&w).await;
    assert_eq!(report.ran.len(), 1, "{report:?}");
    let t = tickets(&w, plan.id);
    assert_eq!(t.len(), 1);
    assert!(t[0].title.starts_with("Morning brief — "), "{}", t[0].title);
    assert_eq!(t[0].owner_bot_id, Some(alpha));
    // RT-a: approved on its checks, by the routine, nobody waiting on the person.
    assert_eq!(t[0].stage, TicketStage::Approved);
    let subs = w
        .collab
        .store()
        .read(|tx| tx.submissions_of_ticket(t[0].id))
        .unwrap();
    assert_eq!(subs[0].approved_by, Some(ApprovedBy::Routine));
    // The Bot was woken on the ticket by a hidden task; its words went to the direct.
    let item = w
        .collab
        .store()
        .read(|tx| tx.ticket_item(alpha, plan.id, t[0].id))
        .unwrap()
        .unwrap();
    let task = w
        .collab
        .store()
        .read(|tx| tx.messages(item.thread_id, None, 100))
        .unwrap()
        .into_iter()
        .find(|m| matches!(&m.origin, Origin::Timer(k) if k.starts_with("routine:")))
        .expect("the routine's task");
    assert!(
        task.text().contains("Sum up what changed overnight"),
        "{}",
        task.text()
    );
    assert!(
        said(&w, s, "Today's brief: all quiet."),
        "{:?}",
        lines_said(&w, s)
    );
    assert!(!lines_said(&w, s).iter().any(|l| l.contains("is due")));

    // The same moment again opens nothing; the next hour opens the next ticket.
    assert!(w.collab.run_due_routines().unwrap().is_empty());
    clock.advance(HOUR);
    let report = tick_and_finish(&w).await;
    assert_eq!(report.ran.len(), 1);
    assert_eq!(tickets(&w, plan.id).len(), 2);
    let view = w.collab.routine(r.routine.id).unwrap();
    assert_eq!(view.routine.runs, 2);
    assert_eq!(
        view.recent_runs
            .iter()
            .map(|r| r.due_at)
            .collect::<Vec<_>>(),
        vec![first_due + HOUR, first_due]
    );
    assert!(
        view.recent_runs
            .iter()
            .all(|r| r.stage.as_deref() == Some("approved"))
    );
    // The same brief two runs in a row is posted both times: a run is work the person
    // scheduled, not a timer's wake whose repeat is held back (AC-12).
    let briefs = lines_said(&w, s)
        .into_iter()
        .filter(|l| l == "Today's brief: all quiet.")
        .count();
    assert_eq!(briefs, 2);
}

#[tokio::test]
async fn periods_slept_through_run_once() {
    let Briefing { clock, w, r, .. } = briefing();
    clock.advance(5 * HOUR + 60_000);
    let report = tick_and_finish(&w).await;
    assert_eq!(report.ran.len(), 1);
    // For the newest period slept through, the fifth.
    assert_eq!(
        report.ran[0].due_at,
        r.routine.next_due_at.unwrap() + 4 * HOUR
    );
    assert_eq!(tickets(&w, r.routine.plan_id).len(), 1);
    let after = w.collab.routine(r.routine.id).unwrap().routine;
    assert_eq!(
        after.next_due_at,
        Some(r.routine.next_due_at.unwrap() + 5 * HOUR)
    );
    assert!(w.collab.run_due_routines().unwrap().is_empty());
}

#[tokio::test]
async fn s_hold_9_a_routine_due_three_times_under_a_hold_runs_once_after_the_lift() {
    let Briefing {
        clock, w, alpha, r, ..
    } = briefing();
    let (hold, _) = w.collab.post_hold(bot_stop(alpha)).await.unwrap();
    for _ in 0..3 {
        clock.advance(HOUR);
        let report = w.collab.run_due_routines().unwrap();
        assert!(report.ran.is_empty(), "{report:?}");
        assert_eq!(report.owed, vec![r.routine.id]);
    }
    assert!(
        tickets(&w, r.routine.plan_id).is_empty(),
        "no run under the hold"
    );
    let latest = r.routine.next_due_at.unwrap() + 2 * HOUR;
    let owed = w.collab.routine(r.routine.id).unwrap().routine;
    assert_eq!(owed.owed_due_at, Some(latest));
    let records = suppressed(&w);
    assert_eq!(records.len(), 1, "recorded once: {records:?}");
    assert_eq!(records[0]["hold_ids"], json!([hold.hold.id.0]));
    assert_eq!(records[0]["routine_id"], json!(r.routine.id));

    // Still held: nothing more. Lifted: one run, for the latest due time.
    assert!(w.collab.run_due_routines().unwrap().ran.is_empty());
    w.collab.lift_hold(hold.hold.id).await.unwrap();
    let report = tick_and_finish(&w).await;
    assert_eq!(report.ran.len(), 1, "{report:?}");
    assert_eq!(report.ran[0].due_at, latest);
    assert_eq!(tickets(&w, r.routine.plan_id).len(), 1);
    assert_eq!(
        w.collab.routine(r.routine.id).unwrap().routine.owed_due_at,
        None
    );
    assert!(w.collab.run_due_routines().unwrap().is_empty());
}

#[tokio::test]
async fn the_standing_job_never_goes_dormant_nor_is_looked_back_on() {
    let Briefing { clock, w, s, r, .. } = briefing();
    clock.advance(HOUR);
    tick_and_finish(&w).await;
    let plan = w.collab.plan(r.routine.plan_id).unwrap();
    assert!(plan.delivered_at.is_some(), "its one ticket is approved");
    // PLAN-D5 would set a delivered job dormant after 72 quiet hours; PLAN-D11 says never.
    w.collab
        .patch_routine(
            r.routine.id,
            RoutinePatchRequest {
                status: Some("paused".into()),
                ..Default::default()
            },
        )
        .unwrap();
    clock.advance(80 * HOUR);
    assert!(w.collab.sweep_delivered_dormancy().unwrap().is_empty());
    assert!(!w.collab.plan(plan.id).unwrap().dormant);
    // RS3: never a routine's job.
    let looked = w.collab.run_due_retrospectives().await.unwrap();
    assert!(looked.is_empty(), "{looked:?}");
    // A clear of the conversation keeps it, awake, and the routine goes on adding tickets.
    w.collab.clear_session(s, false).await.unwrap();
    let kept = w.collab.plan(plan.id).unwrap();
    assert!(!kept.dormant);
    w.collab
        .patch_routine(
            r.routine.id,
            RoutinePatchRequest {
                status: Some("active".into()),
                ..Default::default()
            },
        )
        .unwrap();
    clock.advance(HOUR);
    let report = tick_and_finish(&w).await;
    assert_eq!(report.ran.len(), 1);
    assert_eq!(tickets(&w, plan.id).len(), 2);
}

#[tokio::test]
async fn a_quiet_routine_ticket_is_never_called_back() {
    // SV-12: an open ticket of a routine's job is not the supervisor's to call back.
    let (clock, w) = start();
    let quiet = r#"{"steps":[{"text":"Noted."}],"on_exhausted":"repeat_last"}"#;
    let alpha = bot(&w, "Alpha", quiet);
    let s = direct(&w, alpha);
    let r = hourly(&w, alpha, s);
    clock.advance(HOUR);
    let mut events = w.collab.store().subscribe();
    let report = w.collab.run_due_routines().unwrap();
    let ticket = TicketId(report.ran[0].ticket_id);
    let item = w
        .collab
        .store()
        .read(|tx| tx.ticket_item(alpha, r.routine.plan_id, ticket))
        .unwrap()
        .unwrap();
    runs_ended(&mut events, item.thread_id, 1).await;
    w.collab.engine().wait_idle(item.thread_id).await;
    assert_ne!(
        w.collab.store().read(|tx| tx.ticket(ticket)).unwrap().stage,
        TicketStage::Approved
    );
    let runs_before = runs(&w, item.thread_id);
    clock.advance(30 * 60_000);
    let looked = serde_json::to_value(w.collab.supervise().unwrap()).unwrap();
    assert!(
        !looked.to_string().contains("call_back"),
        "a routine's ticket is not called back: {looked}"
    );
    assert_eq!(runs(&w, item.thread_id), runs_before);
}

#[tokio::test]
async fn deleting_a_routine_ends_its_runs_and_closes_its_job() {
    let Briefing {
        clock, w, alpha, r, ..
    } = briefing();
    clock.advance(HOUR);
    tick_and_finish(&w).await;
    w.collab.delete_routine(r.routine.id).unwrap();
    let plan = w.collab.plan(r.routine.plan_id).unwrap();
    assert_eq!(plan.status, troupe_core::plan::PlanStatus::Done);
    assert_eq!(tickets(&w, plan.id).len(), 1, "its tickets stay");
    clock.advance(HOUR);
    assert!(w.collab.run_due_routines().unwrap().is_empty());
    assert!(w.collab.routines(Some(alpha), None).unwrap().is_empty());
}

#[tokio::test]
async fn an_archived_bots_routine_pauses() {
    let Briefing {
        clock, w, alpha, r, ..
    } = briefing();
    w.collab.archive_bot(alpha).unwrap();
    clock.advance(HOUR);
    let report = w.collab.run_due_routines().unwrap();
    assert_eq!(report.paused, vec![r.routine.id]);
    assert!(report.ran.is_empty());
    let now = w.collab.routine(r.routine.id).unwrap().routine;
    assert_eq!(now.status, troupe_store::RoutineStatus::Paused);
}

#[tokio::test]
async fn a_routine_is_checked_before_anything_is_made() {
    let (clock, w) = start();
    let alpha = bot(&w, "Alpha", BRIEFER);
    let beta = bot(&w, "Beta", BRIEFER);
    let s = direct(&w, alpha);
    let req = |bot: BotId, name: &str, schedule: serde_json::Value| NewRoutineRequest {
        bot_id: bot.0,
        session_id: s.0,
        name: name.into(),
        instruction: "Sum up.".into(),
        schedule,
    };
    let every = json!({"kind": "every", "seconds": 3600});
    let fault = |r: NewRoutineRequest| w.collab.create_routine(r).unwrap_err().to_string();
    assert!(fault(req(beta, "Brief", every.clone())).contains("Beta is not a member"));
    assert!(
        fault(req(alpha, "Brief", json!({"kind": "every", "seconds": 60})))
            .contains("at least 900")
    );
    assert!(
        fault(req(
            alpha,
            "Brief",
            json!({"kind": "at", "at": clock.now_ms() + HOUR})
        ))
        .contains("a routine repeats")
    );
    assert!(fault(req(alpha, "", every.clone())).contains("name is empty"));
    let unknown = fault(req(BotId(999), "Brief", every.clone()));
    assert!(unknown.contains("no Bot 999"), "{unknown}");
    // Nothing was made by the refusals: no routine, no job.
    assert!(w.collab.routines(None, None).unwrap().is_empty());
    assert!(w.collab.plans(s).unwrap().is_empty());
    w.collab
        .create_routine(req(alpha, "Brief", every.clone()))
        .unwrap();
    let taken = w
        .collab
        .create_routine(req(alpha, "brief", every))
        .unwrap_err();
    assert!(
        taken.to_string().contains("already has a routine"),
        "{taken}"
    );
}

#[tokio::test]
async fn a_bot_makes_its_own_routine_where_it_speaks() {
    let (_clock, w) = start();
    let set = json!({"name": "set_routine", "arguments": {
        "name": "Standup notes",
        "instruction": "Collect yesterday's commits into notes.md.",
        "schedule": {"kind": "cron", "expr": "0 9 * * MON-FRI", "tz": "Europe/Paris"}
    }});
    let script = json!({
        "rules": [{"when_user_contains": "every weekday", "reply": {"tool_calls": [set]}}],
        "steps": [{"text": "unused"}, {"text": "Done."}],
        "on_exhausted": "repeat_last"
    });
    let alpha = bot(&w, "Alpha", &script.to_string());
    let g = group(&w, &[alpha]);
    let t = thread_of(&w, g, alpha);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(
            g,
            "@Alpha every weekday at 9, collect the commits".into(),
            None,
        )
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    w.collab.engine().wait_idle(t).await;
    let mine = w.collab.routines(Some(alpha), None).unwrap();
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(
        mine[0].routine.session_id, g,
        "it speaks where the turn spoke"
    );
    assert_eq!(mine[0].routine.created_by, "bot");
    assert!(
        mine[0]
            .next_due_label
            .as_deref()
            .is_some_and(|l| l.ends_with("09:00")),
        "{mine:?}"
    );
    let calls = calls_of(&w, runs_of(&w, t).pop().unwrap().id);
    assert!(
        calls[0].result.contains("Made the routine"),
        "{}",
        calls[0].result
    );
}

#[tokio::test]
async fn hold_t1_a_stopped_bot_lists_its_routines_but_cannot_set_one() {
    let w = world();
    let reader = script(
        &w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\",\"status_question\":true}"}],
            "on_exhausted":"repeat_last"}"#,
    );
    w.collab.set_role("reading", reader).unwrap();
    let b = bot(
        &w,
        "Worker",
        r#"{"steps":[
            {"tool_calls":[{"name":"list_routines","arguments":{}}]},
            {"tool_calls":[{"name":"set_routine","arguments":{"name":"Brief","paused":true}}]},
            {"text":"Stopped."}]}"#,
    );
    let s = direct(&w, b);
    let r = hourly(&w, b, s);
    let t = w.collab.direct_thread(s).unwrap();
    w.collab.post_hold(bot_stop(b)).await.unwrap();
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "how is it going?".into(), None)
        .await
        .unwrap();
    runs_ended(&mut events, t, 1).await;
    w.collab.engine().wait_idle(t).await;
    let run = runs_of(&w, t).pop().expect("a read-only turn ran");
    assert!(segment_of(&w, run.id).readonly);
    let calls = calls_of(&w, run.id);
    assert_eq!(calls[0].status, "ok", "{calls:?}");
    assert!(
        calls[0].result.contains("Morning brief"),
        "{}",
        calls[0].result
    );
    assert_eq!(calls[1].name, "set_routine");
    assert_ne!(calls[1].status, "ok", "{calls:?}");
    assert!(calls[1].result.contains("held:"), "{}", calls[1].result);
    let kept = w.collab.routine(r.routine.id).unwrap().routine;
    assert_eq!(
        kept.status,
        troupe_store::RoutineStatus::Active,
        "nothing changed under the stop"
    );
}

/// Each run waits at a gate in its ticket's folder until the test opens it.
fn gated(w: &World) -> BotId {
    let script = format!(
        r#"{{"rules":[{{"when_user_contains":"is due","reply":{{"tool_calls":[{GATE}]}}}}],
            "steps":[{{"text":"unused"}},{{"text":"Ran."}}],"on_exhausted":"repeat_last"}}"#
    );
    bot(w, "Alpha", &script)
}

/// The thread of the Bot's work on the run's ticket.
fn run_thread(w: &World, bot: BotId, plan: PlanId, ticket: i64) -> troupe_core::ThreadId {
    w.collab
        .store()
        .read(|tx| tx.ticket_item(bot, plan, TicketId(ticket)))
        .unwrap()
        .unwrap()
        .thread_id
}

fn open_run_gate(w: &World, thread: troupe_core::ThreadId) {
    let dir = w
        .collab
        .store()
        .read(|tx| tx.thread(thread))
        .unwrap()
        .workspace;
    std::fs::write(std::path::Path::new(&dir).join("go"), "").unwrap();
}

#[tokio::test]
async fn a_due_time_while_the_last_run_is_going_waits_for_it() {
    // WI-2: one live segment a Bot and job; the due time is owed, not a wake a hold refused.
    let (clock, w) = start();
    let alpha = gated(&w);
    let s = direct(&w, alpha);
    let r = hourly(&w, alpha, s);
    let plan = r.routine.plan_id;
    clock.advance(HOUR);
    let mut events = w.collab.store().subscribe();
    let first = w.collab.run_due_routines().unwrap();
    let t1 = run_thread(&w, alpha, plan, first.ran[0].ticket_id);
    until(&mut events, "the first run waits at its gate", || {
        at_gate(&w, t1)
    })
    .await;

    clock.advance(HOUR);
    let second_due = clock.now_ms();
    let busy = w.collab.run_due_routines().unwrap();
    assert!(busy.ran.is_empty(), "{busy:?}");
    assert_eq!(busy.owed, vec![r.routine.id]);
    assert!(suppressed(&w).is_empty(), "no hold turned it away");
    assert_eq!(
        w.collab.routine(r.routine.id).unwrap().routine.owed_due_at,
        Some(second_due)
    );
    open_run_gate(&w, t1);
    runs_ended(&mut events, t1, 1).await;
    w.collab.engine().wait_idle(t1).await;

    let after = w.collab.run_due_routines().unwrap();
    assert_eq!(after.ran.len(), 1, "{after:?}");
    assert_eq!(after.ran[0].due_at, second_due);
    let t2 = run_thread(&w, alpha, plan, after.ran[0].ticket_id);
    assert_ne!(t1, t2, "each run works on its own ticket");
    until(&mut events, "the second run waits at its gate", || {
        at_gate(&w, t2)
    })
    .await;
    // Run now is refused while a run is going.
    let going = w.collab.run_routine_now(r.routine.id).unwrap_err();
    assert!(going.to_string().contains("still going"), "{going}");
    open_run_gate(&w, t2);
    runs_ended(&mut events, t2, 1).await;
    w.collab.engine().wait_idle(t2).await;
}

#[tokio::test]
async fn a_deleted_group_takes_its_routines_along() {
    let (_clock, w) = start();
    let alpha = bot(&w, "Alpha", BRIEFER);
    let beta = bot(&w, "Beta", BRIEFER);
    let g = group(&w, &[alpha, beta]);
    let r = hourly(&w, alpha, g);
    w.collab.delete_group(g, false).await.unwrap();
    assert!(w.collab.routines(None, None).unwrap().is_empty());
    assert!(w.collab.routine(r.routine.id).is_err());
}

#[tokio::test]
async fn pausing_drops_a_run_a_stop_kept_back_and_resuming_counts_from_now() {
    let Briefing {
        clock, w, alpha, r, ..
    } = briefing();
    let (hold, _) = w.collab.post_hold(bot_stop(alpha)).await.unwrap();
    clock.advance(HOUR);
    assert_eq!(
        w.collab.run_due_routines().unwrap().owed,
        vec![r.routine.id]
    );
    let pause = |status: &str| RoutinePatchRequest {
        status: Some(status.into()),
        ..Default::default()
    };
    let paused = w
        .collab
        .patch_routine(r.routine.id, pause("paused"))
        .unwrap();
    assert_eq!(paused.routine.owed_due_at, None);
    clock.advance(3 * HOUR);
    let resumed = w
        .collab
        .patch_routine(r.routine.id, pause("active"))
        .unwrap();
    assert_eq!(resumed.routine.next_due_at, Some(clock.now_ms() + HOUR));
    w.collab.lift_hold(hold.hold.id).await.unwrap();
    assert!(
        w.collab.run_due_routines().unwrap().is_empty(),
        "nothing owed, nothing due"
    );
    assert!(tickets(&w, r.routine.plan_id).is_empty());
}
