//! A job's turns as its view lists them (STOP-13): every Bot's work on the job, newest first,
//! and a turn the person stopped marked with the stop that ended it and what it was doing.

mod support;

use support::*;
use troupe_core::RunId;
use troupe_core::inbox::Delivery;

#[tokio::test]
async fn stop_13_the_jobs_turns_mark_the_stopped_one_with_its_stop_and_last_step() {
    let w = world();
    let script = format!(
        r#"{{"steps":[{{"text":"Started the cut."}},{{"tool_calls":[{GATE}]}},{{"text":"done"}}],
            "on_exhausted":"repeat_last"}}"#
    );
    let alpha = bot(&w, "Alpha", &script);
    let s = direct(&w, alpha);
    let job = open_job_work(&w, s, alpha, "Trailer cut");

    // A first turn that ends by itself, then a second that the person stops at its command.
    task_on_job(&w, &job, "Cut the trailer.").await;
    let mut events = w.collab.store().subscribe();
    w.collab
        .engine()
        .deliver(job.thread, Delivery::user_task("Now the long version."))
        .await
        .unwrap();
    until(&mut events, "the second turn is at its gate", || {
        at_gate(&w, job.thread)
    })
    .await;
    let (stop, _) = w
        .collab
        .post_hold(support::holds::bot_stop(alpha))
        .await
        .unwrap();
    w.collab.engine().wait_idle(job.thread).await;

    let turns = w.collab.job_turns(job.plan, None, 50).unwrap();
    let shown: Vec<(&str, Option<troupe_core::HoldId>)> = turns
        .iter()
        .map(|t| (t.turn.status.as_str(), t.stopped_by))
        .collect();
    assert_eq!(
        shown,
        [("stopped", Some(stop.hold.id)), ("completed", None)],
        "{turns:?}"
    );
    let stopped = &turns[0];
    assert_eq!(
        (
            stopped.turn.bot_id,
            stopped.turn.session_id,
            stopped.ticket_id
        ),
        (Some(alpha), Some(s), None)
    );
    let step = stopped.stopped_while.as_deref().unwrap_or_default();
    assert!(step.contains("shell"), "where it stopped: {step:?}");
    assert_eq!(turns[1].stopped_while, None);

    // Paged: older than the newest is only the first; a bad limit or job is refused.
    let older = w.collab.job_turns(job.plan, Some(turns[0].turn.id), 50);
    let older: Vec<RunId> = older.unwrap().iter().map(|t| t.turn.id).collect();
    assert_eq!(older, [turns[1].turn.id]);
    assert!(w.collab.job_turns(job.plan, None, 0).is_err());
    assert!(
        w.collab
            .job_turns(troupe_core::PlanId(999), None, 5)
            .is_err()
    );
}
