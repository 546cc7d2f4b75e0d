//! SV-20 on the tick (digest C §12): a hand-over nobody has moved for 15 s is settled by the
//! supervisor's submission pass; a younger one waits, and so does one whose producer's work a
//! stop holds, until the stop lifts. On a clock only the test moves: each tick is
//! `Collab::supervise_submissions`.

mod support;

use support::holds;
use support::supervise::*;
use support::*;
use troupe_core::submission::{SubmissionOrigin, SubmissionState};
use troupe_core::{BotId, EventId, SubmissionId, TicketId};
use troupe_store::NewSubmission;

const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;

/// A words hand-over of `ticket` from the Bot's job work, left at `checking` as a segment that
/// ended before its approval pass ran would leave it.
fn hand_over(w: &World, j: &JobWork, ticket: TicketId, bot: BotId) -> SubmissionId {
    w.collab
        .store()
        .write(|tx| {
            tx.create_submission(&NewSubmission {
                ticket_id: ticket,
                origin: SubmissionOrigin::Answer,
                producer_bot_id: Some(bot),
                run_id: None,
                work_item_id: Some(j.item),
                content: Some("The slogan: bright mornings, every day.".into()),
                note: String::new(),
                claims: Vec::new(),
                files: Vec::new(),
                parts: Vec::new(),
            })
        })
        .unwrap()
        .id
}

fn state_of(w: &World, id: SubmissionId) -> SubmissionState {
    w.collab.store().read(|tx| tx.submission(id)).unwrap().state
}

/// How many `submission_awaiting_word` events the log holds for the hand-over.
fn awaiting_word(w: &World, id: SubmissionId) -> usize {
    w.collab
        .store()
        .read(|tx| tx.events_after(EventId(0), None, 100_000))
        .unwrap()
        .iter()
        .filter(|e| {
            e.kind == "submission_awaiting_word"
                && e.payload["submission_id"] == serde_json::json!(id)
        })
        .count()
}

#[tokio::test]
async fn sv_20_a_hand_over_nobody_moved_for_15_s_is_settled_once_on_the_tick() {
    let (clock, w) = start();
    let ada = bot(&w, "Ada", QUIET);
    let s = direct(&w, ada);
    let j = open_job_work(&w, s, ada, "The slogan");
    let ticket = add_ticket(&w, &j, "Slogan", ada, None);
    let sub = hand_over(&w, &j, ticket, ada);

    // Younger than 15 s: the tick leaves it to the pass already under way.
    clock.advance(14_000);
    assert!(w.collab.supervise_submissions().await.unwrap().is_empty());
    assert_eq!(state_of(&w, sub), SubmissionState::Checking);

    // Past 15 s with no reviewer: a words hand-over is never approved on checks (SV-20 c), so
    // it waits on the person's word, recorded once (h).
    clock.advance(2_000);
    let moved = w.collab.supervise_submissions().await.unwrap();
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_eq!(moved[0]["submission_id"], serde_json::json!(sub));
    assert_eq!(state_of(&w, sub), SubmissionState::AwaitingUser);
    assert_eq!(awaiting_word(&w, sub), 1);

    // Settled: later ticks neither take it again nor record the wait twice.
    clock.advance(60_000);
    assert!(w.collab.supervise_submissions().await.unwrap().is_empty());
    assert_eq!(awaiting_word(&w, sub), 1);
}

#[tokio::test]
async fn sv_20_a_hand_over_under_a_stop_waits_for_the_lift() {
    let (clock, w) = start();
    let ada = bot(&w, "Ada", QUIET);
    let s = direct(&w, ada);
    let j = open_job_work(&w, s, ada, "The slogan");
    let ticket = add_ticket(&w, &j, "Slogan", ada, None);
    let sub = hand_over(&w, &j, ticket, ada);
    let (stop, _) = w.collab.post_hold(holds::bot_stop(ada)).await.unwrap();

    clock.advance(20_000);
    assert!(w.collab.supervise_submissions().await.unwrap().is_empty());
    assert_eq!(state_of(&w, sub), SubmissionState::Checking);

    w.collab.lift_hold(stop.hold.id).await.unwrap();
    let moved = w.collab.supervise_submissions().await.unwrap();
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_eq!(state_of(&w, sub), SubmissionState::AwaitingUser);
}
