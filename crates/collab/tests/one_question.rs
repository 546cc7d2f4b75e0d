//! PLAN-U1: a job is shown as its tickets and turns, and is "one question" once it is closed
//! with no tickets and at most one turn; a second turn or a ticket makes it work, and an open
//! job is never one question.

mod support;

use support::*;
use troupe_collab::PlanPatchRequest;
use troupe_core::PlanId;

const REPLY: &str = r#"{"steps":[{"text":"It is 42."}],"on_exhausted":"repeat_last"}"#;

fn close(w: &World, plan: PlanId) {
    let version = w.collab.plan(plan).unwrap().version;
    w.collab
        .patch_plan_spec(
            plan,
            PlanPatchRequest {
                version,
                status: Some("done".into()),
                ..Default::default()
            },
        )
        .unwrap();
}

fn sized(w: &World, plan: PlanId) -> (u32, u32, bool) {
    let p = w.collab.plan(plan).unwrap();
    (p.tickets, p.turns, p.one_question)
}

#[tokio::test]
async fn plan_u1_a_closed_job_with_one_turn_and_no_ticket_is_one_question() {
    let w = world();
    let alpha = bot(&w, "Alpha", REPLY);
    let s = direct(&w, alpha);
    let job = open_job_work(&w, s, alpha, "What is six times seven");
    task_on_job(&w, &job, "What is six times seven?").await;
    assert_eq!(sized(&w, job.plan), (0, 1, false), "still open: work");
    close(&w, job.plan);
    assert_eq!(sized(&w, job.plan), (0, 1, true));
    // The conversation's list says the same.
    let listed = w.collab.plans(s).unwrap();
    assert!(
        listed
            .iter()
            .any(|p| p.id == job.plan && p.one_question && p.turns == 1)
    );
}

#[tokio::test]
async fn a_second_turn_or_a_ticket_makes_a_closed_job_work() {
    let w = world();
    let alpha = bot(&w, "Alpha", REPLY);
    let s = direct(&w, alpha);
    let talked = open_job_work(&w, s, alpha, "Two questions");
    task_on_job(&w, &talked, "First?").await;
    task_on_job(&w, &talked, "Second?").await;
    close(&w, talked.plan);
    assert_eq!(sized(&w, talked.plan), (0, 2, false));

    let laid = open_job_work(&w, s, alpha, "Poster");
    supervise::add_ticket(&w, &laid, "Poster", alpha, None);
    close(&w, laid.plan);
    assert_eq!(sized(&w, laid.plan), (1, 0, false));
}
