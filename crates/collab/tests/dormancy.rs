//! Dormancy (PLAN-D3, D9): opening a job sets an older one of the conversation dormant only
//! when it has been quiet for 2 h; a person's line filed under it wakes it again.

mod support;

use std::sync::Arc;
use support::*;
use troupe_core::ManualClock;
use troupe_core::conversation::Author;
use troupe_core::plan::RevisionCause;
use troupe_core::{PlanId, SessionId};

fn open(w: &World, s: SessionId, words: &str) -> PlanId {
    let line = w
        .collab
        .store()
        .write(|tx| tx.insert_line(&troupe_store::NewLine::plain(s, Author::User, words.into())))
        .unwrap();
    w.collab
        .open_plan(troupe_collab::OpenPlan {
            home_session_id: s,
            opening_line_id: Some(line.id),
            title: None,
            cause: RevisionCause::User,
        })
        .unwrap()
        .id
}

#[tokio::test]
async fn quiet_plan_goes_dormant() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let w = world_on(clock.clone());
    let alpha = bot(&w, "Alpha", r#"{"steps":[{"text":"ok"}]}"#);
    let s = group(&w, &[alpha]);
    let first = open(&w, s, "the launch plan");
    // Within two hours a new job leaves the older one as it is.
    clock.advance(60 * 60 * 1000);
    let second = open(&w, s, "the budget");
    assert!(!w.collab.plan(first).unwrap().dormant);
    // Two quiet hours after the person last spoke of it, the next opening sets it aside.
    clock.advance(60 * 60 * 1000 + 1);
    open(&w, s, "the venue");
    let first_now = w.collab.plan(first).unwrap();
    assert!(first_now.dormant);
    assert_eq!(first_now.dormant_cause.as_deref(), Some("set_aside"));
    assert!(
        !w.collab.plan(second).unwrap().dormant,
        "the budget is an hour old"
    );
    // Dormant: no longer a candidate for the conversation's lines.
    let candidates: Vec<PlanId> = w
        .collab
        .plans(s)
        .unwrap()
        .into_iter()
        .filter(|p| !p.dormant)
        .map(|p| p.id)
        .collect();
    assert!(!candidates.contains(&first));
    // A person's edit wakes it (PLAN-D9).
    let version = first_now.version;
    w.collab
        .patch_plan_spec(
            first,
            serde_json::from_value(
                serde_json::json!({"version": version, "goal": "launch in May"}),
            )
            .unwrap(),
        )
        .unwrap();
    assert!(!w.collab.plan(first).unwrap().dormant);
}

#[tokio::test]
async fn plan_d5_a_delivered_job_goes_dormant_72_hours_after_the_person_on_the_clock() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let w = world_on(clock.clone());
    let alpha = bot(&w, "Alpha", r#"{"steps":[{"text":"ok"}]}"#);
    let s = group(&w, &[alpha]);
    let job = open(&w, s, "the launch plan");
    w.collab
        .store()
        .write(|tx| tx.set_plan_delivered(job, true))
        .unwrap();
    const HOUR: i64 = 60 * 60 * 1000;
    // The person looks at it again 71 h later: the 72 h count from then.
    clock.advance(71 * HOUR);
    w.collab
        .store()
        .write(|tx| tx.touch_plan_user_activity(job))
        .unwrap();
    clock.advance(2 * HOUR);
    let _ = w.collab.scheduler_tick().await;
    assert!(!w.collab.plan(job).unwrap().dormant, "2 h after the person");
    // No other job opened: the tick alone sets it aside, 72 h after the person.
    clock.advance(70 * HOUR + 1);
    let r = w.collab.scheduler_tick().await;
    let plan = w.collab.plan(job).unwrap();
    assert!(plan.dormant);
    assert_eq!(plan.dormant_cause.as_deref(), Some("delivered"));
    assert_eq!(r.supervisor.unwrap()["dormant"], serde_json::json!([job]));
}
