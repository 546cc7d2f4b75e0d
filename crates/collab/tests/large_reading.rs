//! Finding a large job (digest 003-B §2.2, LJ1–LJ3; S-LJ1, S-LJ2, S-LJ4) over a real engine and
//! store: the reader reads an unread job when a person's line is filed under it, and the
//! scheduler's tick has an unread job read again after three ended segments with nothing
//! approved.

mod support;

use serde_json::json;
use support::*;
use troupe_collab::tickets::LargeChoiceRequest;
use troupe_core::inbox::Delivery;
use troupe_core::large_job::{LargeSource, LargeState};
use troupe_core::{PlanId, SessionId};
use troupe_store::PlanDeliverables;

const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;

/// The reading role: files every group line under plan_1, answers the size reading with
/// `large`, and reads person lines as saying nothing in particular.
fn reader_with(w: &World, large: &str) {
    // A new script file each time: an endpoint's script is read once.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let spec = script(
        w,
        &format!("reader-{n}"),
        &json!({
            "steps": [{"text": r#"{"control":"neither","objections":[],"let_through":[]}"#}],
            "on_exhausted": "repeat_last",
            "rules": [
                {"when_user_contains": "troupe-reader:filing",
                 "reply": {"text": r#"{"belongs":"jobs","jobs":["plan_1"]}"#}},
                {"when_user_contains": "troupe-reader:large_job", "reply": {"text": large}}
            ]
        })
        .to_string(),
    );
    w.collab.set_role("reading", spec).unwrap();
}

fn size(w: &World, plan: PlanId) -> PlanDeliverables {
    w.collab
        .store()
        .read(|tx| tx.plan_deliverables(plan))
        .unwrap()
}

/// A group with one quiet Bot and a job opened in it.
fn job() -> (World, SessionId, troupe_core::BotId, PlanId) {
    let w = world();
    let maker = bot(&w, "Maker", QUIET);
    let s = group(&w, &[maker]);
    let plan = open_job(&w, s, "a music video for the launch").id;
    (w, s, maker, plan)
}

/// S-LJ1: an unread job; the user says "make a 5-minute MV"; the reader marks it large with
/// what showed it.
#[tokio::test]
async fn s_lj1_the_reader_marks_an_unread_job_large_with_evidence() {
    let (w, s, _, plan) = job();
    reader_with(&w, r#"{"large": true, "evidence": "a 5-minute MV"}"#);
    let mut events = w.collab.store().subscribe();
    w.collab
        .post_line(s, "make it a 5-minute MV".into(), None)
        .await
        .unwrap();
    until(&mut events, "the job read as large", || {
        size(&w, plan).large_state == LargeState::Large
    })
    .await;
    let d = size(&w, plan);
    assert_eq!(d.large_source, Some(LargeSource::Reader));
    assert_eq!(d.large_evidence.as_deref(), Some("a 5-minute MV"));
    let changed = w
        .collab
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100_000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "large_job_changed")
        .count();
    assert_eq!(changed, 1);
}

/// LJ1: unsure is no; a failed reading leaves the job unread; a read job is never read again.
#[tokio::test]
async fn lj1_unsure_is_no_and_a_failed_reading_leaves_the_job_unread() {
    let (w, _, _, plan) = job();
    reader_with(&w, "It might be large, hard to say.");
    let d = w.collab.read_large_job(plan, None).await.unwrap();
    assert_eq!(d.large_state, LargeState::Unread, "a failed reading");

    reader_with(&w, r#"{"large": false, "evidence": ""}"#);
    let d = w.collab.read_large_job(plan, None).await.unwrap();
    assert_eq!(d.large_state, LargeState::NotLarge);
    assert_eq!(d.large_source, Some(LargeSource::Reader));

    reader_with(&w, r#"{"large": true, "evidence": "ten episodes"}"#);
    let d = w.collab.read_large_job(plan, None).await.unwrap();
    assert_eq!(d.large_state, LargeState::NotLarge, "read once only");
}

/// Three job segments of the Maker's end.
async fn three_segments_end(w: &World, s: SessionId, maker: troupe_core::BotId, plan: PlanId) {
    let work = work_on_job(w, plan, s, maker, "the video");
    for n in 1..=3 {
        let mut events = w.collab.store().subscribe();
        w.collab
            .engine()
            .deliver(work.thread, Delivery::user_task(format!("part {n}")))
            .await
            .unwrap();
        runs_ended(&mut events, work.thread, 1).await;
        w.collab.engine().wait_idle(work.thread).await;
    }
    let ended = w
        .collab
        .store()
        .read(|tx| tx.ended_job_segments(plan))
        .unwrap();
    assert_eq!(ended, 3);
}

/// S-LJ4: an unread job, not laid out, nothing approved, a third segment ended, and no
/// reading model: the tick marks it large itself.
#[tokio::test]
async fn s_lj4_with_no_reading_model_the_supervisor_marks_it_large() {
    let (w, s, maker, plan) = job();
    let tick = w.collab.scheduler_tick().await;
    assert!(tick.failed.is_empty(), "{:?}", tick.failed);
    assert_eq!(
        size(&w, plan).large_state,
        LargeState::Unread,
        "not due yet"
    );

    three_segments_end(&w, s, maker, plan).await;
    let tick = w.collab.scheduler_tick().await;
    let jobs = &tick.supervisor.as_ref().unwrap()["large_jobs"];
    assert_eq!(jobs[0]["plan_id"], json!(plan));
    let d = size(&w, plan);
    assert_eq!(d.large_state, LargeState::Large);
    assert_eq!(d.large_source, Some(LargeSource::Supervisor));
    assert!(d.large_evidence.unwrap().contains("no model could read"));
}

/// LJ3: with a reading model the tick's re-read decides, with the facts in its prompt.
#[tokio::test]
async fn lj3_the_tick_rereads_with_a_model() {
    let (w, s, maker, plan) = job();
    three_segments_end(&w, s, maker, plan).await;
    reader_with(&w, r#"{"large": false}"#);
    w.collab.scheduler_tick().await;
    let d = size(&w, plan);
    assert_eq!(d.large_state, LargeState::NotLarge);
    assert_eq!(d.large_source, Some(LargeSource::Supervisor));
}

/// S-LJ2: after "No need", segments ending with nothing approved never have it re-read.
#[tokio::test]
async fn s_lj2_no_need_is_never_reread() {
    let (w, s, maker, plan) = job();
    w.collab
        .choose_large(
            plan,
            LargeChoiceRequest {
                choice: "no_need".into(),
            },
        )
        .unwrap();
    three_segments_end(&w, s, maker, plan).await;
    let tick = w.collab.scheduler_tick().await;
    let supervisor = tick.supervisor.unwrap_or_default();
    assert!(supervisor.get("large_jobs").is_none(), "{supervisor}");
    let d = size(&w, plan);
    assert_eq!(d.large_state, LargeState::NotLarge);
    assert!(d.user_said_no_need);
}
