//! A job's last change (PLAN-O7), as its view's head says it: the newest of the job's own
//! edit, a turn on it, a ticket's stage and a check's run.

mod support;

use std::sync::Arc;
use support::*;
use troupe_collab::checks::NewCheckRequest;
use troupe_collab::tickets::{NewTicketRequest, TicketPatchRequest};
use troupe_core::ManualClock;
use troupe_core::ticket::TicketStatus;

#[tokio::test]
async fn plan_o7_the_last_change_names_what_moved_last_on_the_job() {
    let clock = ManualClock::new(1_800_000_000_000);
    let w = world_on(Arc::new(clock.clone()));
    let alpha = bot(
        &w,
        "Alpha",
        r#"{"steps":[{"text":"On it."}],"on_exhausted":"repeat_last"}"#,
    );
    let s = direct(&w, alpha);
    let job = open_job_work(&w, s, alpha, "Launch kit");
    let what = |w: &World| w.collab.plan(job.plan).unwrap().last_change.unwrap().what;
    assert_eq!(what(&w), "the job's plan");

    clock.advance(1_000);
    task_on_job(&w, &job, "Make the poster.").await;
    assert_eq!(what(&w), "Alpha's turn");

    clock.advance(1_000);
    let t = w
        .collab
        .add_ticket(
            job.plan,
            NewTicketRequest {
                title: "Poster".into(),
                description: None,
                done_when: None,
                owner_bot_id: Some(alpha),
                reviewer_bot_id: None,
            },
        )
        .unwrap();
    clock.advance(1_000);
    w.collab
        .patch_ticket(
            t.id,
            TicketPatchRequest {
                status: Some(TicketStatus::InReview),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(what(&w), "ticket 01 \"Poster\": review");

    clock.advance(1_000);
    let checks = w.collab.checks();
    let c = checks
        .create(
            job.plan,
            &NewCheckRequest {
                kind: "command".into(),
                command: Some("true".into()),
                ..NewCheckRequest::default()
            },
        )
        .unwrap();
    checks.run_check(c.id, None).await.unwrap();
    assert_eq!(what(&w), format!("check {}: passed", c.id));
    let at = w.collab.plan(job.plan).unwrap().last_change.unwrap().at;
    assert_eq!(at, troupe_core::Clock::now_ms(&clock));
    // The conversation's list of jobs says the same.
    let listed = w.collab.plans(s).unwrap();
    assert_eq!(
        listed[0].last_change.as_ref().map(|c| c.what.clone()),
        Some(format!("check {}: passed", c.id))
    );
}
