//! The Agenda on a real engine and store whose clock is a `ManualClock`: each trigger, the
//! missed-while-down rule, idempotent delivery, the one-shot watch closing the continuation
//! gate, and `loop_stop` refusing while a watch blocks. Ticks are called with the clock's
//! reading; nothing sleeps for the schedule.

mod support;

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::{Reply, World, world_clocked};
use troupe_core::inbox::InboxMode;
use troupe_core::message::Origin;
use troupe_core::thread::Thread;
use troupe_core::{Clock, ManualClock, MessageId, SessionId, ThreadId};
use troupe_engine::extension::{ToolCallContext, ToolRegistration, WaitProvider};
use troupe_store::{AgendaEdit, AgendaId, AgendaItem, AgendaStatus};
use troupe_workflows::agenda::service::{self, NewAgendaRequest, delivery_key};
use troupe_workflows::agenda::wait::AgendaWaits;
use troupe_workflows::lightloop::host::LoopHost;
use troupe_workflows::{SetWorkflowRequest, TickReport};

const T0: i64 = 1_700_000_000_000;
const MIN: i64 = 60_000;

fn clocked() -> (World, ManualClock) {
    let clock = ManualClock::new(T0);
    let w = world_clocked(
        Arc::new(tempfile::tempdir().unwrap()),
        "agenda-boot",
        Arc::new(clock.clone()),
    );
    (w, clock)
}

fn request(trigger: Value, payload: &str) -> NewAgendaRequest {
    NewAgendaRequest {
        session_id: None,
        title: None,
        trigger,
        payload: payload.into(),
        auto_done: false,
        wake: Some(false),
        silent: None,
    }
}

fn create(w: &World, t: ThreadId, req: NewAgendaRequest) -> AgendaItem {
    service::create(w.wf.store(), t, &req).unwrap()
}

fn item(w: &World, id: AgendaId) -> AgendaItem {
    w.wf.store().read(|tx| tx.agenda_item(id)).unwrap()
}

async fn tick(w: &World, clock: &ManualClock) -> TickReport {
    w.wf.agenda_tick(clock.now_ms()).await.unwrap()
}

fn thread(w: &World, t: ThreadId) -> Thread {
    w.wf.store().read(|tx| tx.thread(t)).unwrap()
}

/// Inbox items of the thread that came from the Agenda, with their keys.
fn agenda_inbox(w: &World, t: ThreadId) -> Vec<(String, String)> {
    w.wf.store()
        .read(|tx| tx.inbox(t))
        .unwrap()
        .into_iter()
        .filter(|i| matches!(&i.origin, Origin::Timer(d) if d.starts_with("agenda:")))
        .map(|i| (i.delivery_key.unwrap_or_default(), i.text))
        .collect()
}

fn tools(w: &World) -> Vec<ToolRegistration> {
    let host = LoopHost::new();
    host.attach(w.wf.engine());
    let mut all = troupe_workflows::agenda::tools::registrations(&host);
    all.extend(troupe_workflows::lightloop::tools::registrations(&host));
    all
}

async fn call(w: &World, t: ThreadId, name: &str, args: Value) -> (bool, Value) {
    let regs = tools(w);
    let reg = regs.iter().find(|r| r.spec.name == name).unwrap();
    let ctx = ToolCallContext {
        thread: thread(w, t),
        run_id: troupe_core::RunId(1),
        message_id: Some(MessageId(1)),
        call_id: "c".into(),
        store: w.wf.store().clone(),
        cancel: Default::default(),
    };
    let r = reg.handler.call(&ctx, &args.to_string()).await;
    (
        r.is_error,
        serde_json::from_str(&r.content).unwrap_or(Value::String(r.content)),
    )
}

fn lightloop() -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "lightloop".into(),
        instructions: Some("write hello.txt".into()),
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn an_at_item_is_delivered_once_at_its_moment_then_done() {
    let (w, clock) = clocked();
    let t = w.thread(w.session());
    let a = create(
        &w,
        t,
        request(json!({"kind": "at", "at": T0 + 5 * MIN}), "check the build"),
    );
    assert_eq!(a.next_run_at, Some(T0 + 5 * MIN));
    assert_eq!(tick(&w, &clock).await, TickReport::default());
    clock.advance(5 * MIN);
    let r = tick(&w, &clock).await;
    assert_eq!((r.delivered.clone(), r.completed), (vec![a.id], vec![a.id]));
    let inbox = agenda_inbox(&w, t);
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].0, delivery_key(a.id, T0 + 5 * MIN));
    assert!(inbox[0].1.contains("check the build"), "{}", inbox[0].1);
    let done = item(&w, a.id);
    assert_eq!(
        (done.status, done.next_run_at, done.run_count),
        (AgendaStatus::Done, None, 1)
    );
    // wake=false delivers as context: it never starts a turn by itself.
    let queued = w.wf.store().read(|tx| tx.inbox(t)).unwrap();
    assert_eq!(queued[0].mode, InboxMode::Context);
    clock.advance(MIN);
    assert_eq!(tick(&w, &clock).await, TickReport::default());
}

#[tokio::test]
async fn a_delay_counts_from_creation_on_the_injected_clock() {
    let (w, clock) = clocked();
    let t = w.thread(w.session());
    let a = create(
        &w,
        t,
        request(json!({"kind": "delay", "seconds": 90}), "tea"),
    );
    assert_eq!(a.next_run_at, Some(T0 + 90_000));
    clock.advance(89_999);
    assert!(tick(&w, &clock).await.delivered.is_empty());
    clock.advance(1);
    assert_eq!(tick(&w, &clock).await.delivered, vec![a.id]);
    assert_eq!(item(&w, a.id).status, AgendaStatus::Done);
}

#[tokio::test]
async fn every_repeats_and_periods_missed_while_down_fire_once() {
    let (w, clock) = clocked();
    let t = w.thread(w.session());
    let a = create(
        &w,
        t,
        request(json!({"kind": "every", "seconds": 60}), "ping"),
    );
    assert_eq!(a.next_run_at, Some(T0 + MIN));
    clock.advance(MIN);
    assert_eq!(tick(&w, &clock).await.delivered, vec![a.id]);
    assert_eq!(item(&w, a.id).next_run_at, Some(T0 + 2 * MIN));
    // Down for five periods and a bit: one delivery, for the stored deadline, then the next
    // boundary after now.
    clock.set(T0 + 6 * MIN + 10_000);
    let r = tick(&w, &clock).await;
    assert_eq!((r.delivered, r.completed), (vec![a.id], vec![]));
    let after = item(&w, a.id);
    assert_eq!(after.next_run_at, Some(T0 + 7 * MIN));
    assert_eq!((after.status, after.run_count), (AgendaStatus::Active, 2));
    let keys: Vec<String> = agenda_inbox(&w, t).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            delivery_key(a.id, T0 + MIN),
            delivery_key(a.id, T0 + 2 * MIN)
        ]
    );
    assert!(tick(&w, &clock).await.delivered.is_empty());
}

#[tokio::test]
async fn a_due_time_missed_while_the_daemon_was_down_fires_once_on_start() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let clock = ManualClock::new(T0);
    let (t, id) = {
        let w = world_clocked(dir.clone(), "boot-1", Arc::new(clock.clone()));
        let t = w.thread(w.session());
        let a = create(
            &w,
            t,
            request(json!({"kind": "every", "seconds": 60}), "hb"),
        );
        (t, a.id)
    };
    // The daemon was down for an hour; the new process reads the stored deadline.
    clock.advance(60 * MIN);
    let w = world_clocked(dir, "boot-2", Arc::new(clock.clone()));
    let r = tick(&w, &clock).await;
    assert_eq!(r.delivered, vec![id]);
    assert_eq!(agenda_inbox(&w, t).len(), 1);
    assert_eq!(item(&w, id).next_run_at, Some(T0 + 61 * MIN));
    assert!(tick(&w, &clock).await.delivered.is_empty());
}

/// Epoch ms of a UTC wall-clock reading.
fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
    use chrono::TimeZone as _;
    chrono::Utc
        .with_ymd_and_hms(y, mo, d, h, mi, 0)
        .single()
        .unwrap()
        .timestamp_millis()
}

#[tokio::test]
async fn cron_in_a_zone_skips_the_weekend_crosses_dst_and_fires_once_after_downtime() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    // Friday 27 Mar 2026, 10:00 in Paris (CET, UTC+1).
    let clock = ManualClock::new(utc(2026, 3, 27, 9, 0));
    let cron = json!({"kind": "cron", "expr": "0 9 * * MON-FRI", "tz": "Europe/Paris"});
    let (t, id) = {
        let w = world_clocked(dir.clone(), "cron-1", Arc::new(clock.clone()));
        let t = w.thread(w.session());
        let a = create(&w, t, request(cron.clone(), "standup"));
        assert_eq!(a.trigger, cron);
        // Past the weekend and the spring-forward change: Monday 09:00 CEST is 07:00 UTC.
        assert_eq!(a.next_run_at, Some(utc(2026, 3, 30, 7, 0)));
        clock.set(utc(2026, 3, 30, 7, 0) - 1);
        assert!(tick(&w, &clock).await.delivered.is_empty());
        clock.advance(1);
        assert_eq!(tick(&w, &clock).await.delivered, vec![a.id]);
        assert_eq!(item(&w, a.id).next_run_at, Some(utc(2026, 3, 31, 7, 0)));
        (t, a.id)
    };
    // Down from Monday until Thursday noon in Paris: Tuesday's deadline fires once on start,
    // and the next is Friday 09:00.
    clock.set(utc(2026, 4, 2, 10, 0));
    let w = world_clocked(dir, "cron-2", Arc::new(clock.clone()));
    let r = tick(&w, &clock).await;
    assert_eq!((r.delivered, r.completed), (vec![id], vec![]));
    let after = item(&w, id);
    assert_eq!(after.next_run_at, Some(utc(2026, 4, 3, 7, 0)));
    assert_eq!((after.status, after.run_count), (AgendaStatus::Active, 2));
    assert_eq!(agenda_inbox(&w, t).len(), 2);
    assert!(tick(&w, &clock).await.delivered.is_empty());
}

#[tokio::test]
async fn a_bad_cron_expression_or_zone_is_refused_naming_the_field() {
    let (w, _clock) = clocked();
    let t = w.thread(w.session());
    let bad_expr = json!({"kind": "cron", "expr": "0 25 * * *", "tz": "UTC"});
    let e = service::create(w.wf.store(), t, &request(bad_expr, "x")).unwrap_err();
    assert!(e.to_string().contains("trigger.expr: "), "{e}");
    let bad_tz = json!({"kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Atlantis"});
    let e = service::create(w.wf.store(), t, &request(bad_tz.clone(), "x")).unwrap_err();
    assert!(
        e.to_string()
            .contains("trigger.tz: unknown time zone 'Europe/Atlantis'"),
        "{e}"
    );
    let (is_error, v) = call(
        &w,
        t,
        "agenda_create",
        json!({"trigger": bad_tz, "payload": "x"}),
    )
    .await;
    assert!(is_error);
    assert_eq!(v["code"], "invalid_arguments");
    assert!(v["message"].as_str().unwrap().contains("trigger.tz"), "{v}");
    let left =
        w.wf.store()
            .read(|tx| tx.agenda_items(Some(t), None, 10))
            .unwrap();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn a_repeat_tick_for_the_same_due_time_never_delivers_twice() {
    let (w, clock) = clocked();
    let t = w.thread(w.session());
    let a = create(&w, t, request(json!({"kind": "every", "seconds": 60}), "x"));
    clock.advance(MIN);
    tick(&w, &clock).await;
    // Rewind the deadline as if the advance had been lost: the delivery key still holds.
    w.wf.store()
        .write(|tx| {
            tx.edit_agenda_item(
                a.id,
                &AgendaEdit {
                    next_run_at: Some(Some(T0 + MIN)),
                    ..AgendaEdit::default()
                },
            )
        })
        .unwrap();
    let r = tick(&w, &clock).await;
    assert!(r.delivered.is_empty(), "{r:?}");
    assert_eq!(agenda_inbox(&w, t).len(), 1);
    assert_eq!(item(&w, a.id).next_run_at, Some(T0 + 2 * MIN));
}

#[tokio::test]
async fn a_waking_delivery_drives_the_origin_thread() {
    let (w, clock) = clocked();
    let s = w.session();
    let t = w.thread(s);
    let req = NewAgendaRequest {
        wake: None,
        ..request(json!({"kind": "at", "at": T0}), "water the plants")
    };
    create(&w, t, req);
    w.provider.push(Reply::Text("watered".into()));
    tick(&w, &clock).await;
    until("the agenda turn", || w.provider.calls() == 1).await;
    let texts = support::user_texts(&w.provider.requests()[0]);
    assert!(
        texts.iter().any(|x| x.contains("water the plants")),
        "{texts:?}"
    );
}

#[tokio::test]
async fn a_one_shot_watch_is_a_wait_until_delivered_and_its_deadline_is_ignored() {
    let (w, clock) = clocked();
    let t = w.thread(w.session());
    let watch = create(
        &w,
        t,
        NewAgendaRequest {
            auto_done: true,
            wake: None,
            ..request(json!({"kind": "at", "at": T0 - MIN}), "build finished?")
        },
    );
    // Recurring, silent and non-waking items never block.
    create(
        &w,
        t,
        request(json!({"kind": "every", "seconds": 3600}), "hourly"),
    );
    create(
        &w,
        t,
        NewAgendaRequest {
            auto_done: true,
            silent: Some(true),
            ..request(json!({"kind": "at", "at": T0}), "quiet")
        },
    );
    let waits = AgendaWaits.waits(&thread(&w, t), w.wf.store()).unwrap();
    assert_eq!(waits, [format!("agenda_cancel(id=\"{}\")", watch.id)]);
    // Overdue and still active: it holds (AG-2). Delivered: it is done and the wait is gone.
    let r = tick(&w, &clock).await;
    assert!(r.completed.contains(&watch.id));
    assert_eq!(item(&w, watch.id).status, AgendaStatus::Done);
    assert!(
        AgendaWaits
            .waits(&thread(&w, t), w.wf.store())
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn loop_stop_is_refused_while_a_watch_blocks_and_accepted_after_cancel() {
    let (w, _clock) = clocked();
    let s: SessionId = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop()).await.unwrap();
    let (err, created) = call(
        &w,
        t,
        "agenda_create",
        json!({"trigger": {"kind": "delay", "seconds": 600}, "payload": "deploy done?", "auto_done": true}),
    )
    .await;
    assert!(!err, "{created}");
    let id = created["item"]["id"].as_str().unwrap().to_string();
    let (err, refused) = call(&w, t, "loop_stop", json!({"summary": "done"})).await;
    assert!(err, "{refused}");
    let cmd = format!("agenda_cancel(id=\"{id}\")");
    assert_eq!(refused["code"], "blocking_waits");
    assert_eq!(refused["waits"], json!([cmd]));
    assert_eq!(refused["retryable"], true);
    let view = w.wf.workflow(s).unwrap();
    assert_eq!(
        view.phase.as_deref(),
        Some("executing"),
        "no intent written"
    );

    let (_, listed) = call(&w, t, "agenda_list", json!({})).await;
    assert_eq!(listed["blocking_waits"], json!([cmd]));
    let (err, cancelled) = call(&w, t, "agenda_cancel", json!({"id": id})).await;
    assert!(!err, "{cancelled}");
    assert_eq!(cancelled["item"]["status"], "cancelled");
    assert_eq!(cancelled["wait_released"], true);
    let (err, ok) = call(&w, t, "loop_stop", json!({"summary": "done"})).await;
    assert!(!err, "{ok}");
    assert_eq!(ok["code"], "stop_requested");
}

#[tokio::test]
async fn the_watch_closes_the_gate_and_making_it_silent_releases_the_continuation() {
    let (w, _clock) = clocked();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop()).await.unwrap();
    let (_, created) = call(
        &w,
        t,
        "agenda_create",
        json!({"trigger": {"kind": "delay", "seconds": 600}, "payload": "ci green?", "auto_done": true}),
    )
    .await;
    let id = created["item"]["id"].as_str().unwrap().to_string();
    // A finished turn with the Light Loop active would normally be continued; the watch holds.
    w.provider.push(Reply::Text("waiting for CI".into()));
    w.turn(s, "start").await;
    let out = w.wf.engine().request_drive(t, "test", false).await.unwrap();
    assert!(
        format!("{out:?}").contains("NoWork"),
        "the gate should be closed: {out:?}"
    );
    assert_eq!(w.provider.calls(), 1);
    // A watch of another thread cannot be touched from here.
    let other = w.thread(w.session());
    let (err, r) = call(
        &w,
        other,
        "agenda_update",
        json!({"id": id, "silent": true}),
    )
    .await;
    assert!(err && r["code"] == "not_found", "{r}");
    // Silent releases it; the release drives the thread and the continuation is proposed.
    w.provider.push(Reply::Text("still waiting".into()));
    let (err, r) = call(&w, t, "agenda_update", json!({"id": id, "silent": true})).await;
    assert!(!err, "{r}");
    assert_eq!(r["wait_released"], true);
    until("the continuation turn", || w.provider.calls() >= 2).await;
}

/// Two nodes on one database tick at the same moment: each due firing is recorded and
/// delivered once in the cluster (on SQLite the two nodes are two stores on one file).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timer_fires_once_in_cluster() {
    let clock = ManualClock::new(T0);
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let a = world_clocked(dir.clone(), "node-a", Arc::new(clock.clone()));
    let b = world_clocked(dir, "node-b", Arc::new(clock.clone()));
    let t = a.thread(a.session());
    let item_id = create(
        &a,
        t,
        request(json!({"kind": "every", "seconds": 60}), "ping"),
    )
    .id;
    for period in 1..=5 {
        clock.advance(MIN);
        let now = clock.now_ms();
        let (ra, rb) = tokio::join!(a.wf.agenda_tick(now), b.wf.agenda_tick(now));
        let fired = ra.unwrap().delivered.len() + rb.unwrap().delivered.len();
        assert_eq!(fired, 1, "period {period}: one node delivered it");
        let after = item(&a, item_id);
        assert_eq!(after.run_count, period, "period {period}: recorded once");
        assert_eq!(after.next_run_at, Some(T0 + (period + 1) * MIN));
    }
    assert_eq!(agenda_inbox(&a, t).len(), 5, "five deliveries, no repeats");
}
