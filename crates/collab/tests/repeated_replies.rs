//! AC-12 end to end: a reply nobody's line asked for (here, check-back turns) that says again
//! what the Bot said in the same conversation and job is not posted; `send_message` refuses it;
//! a reply to the person's line always goes out.

mod support;

use std::sync::Arc;
use support::*;
use troupe_core::conversation::Author;
use troupe_core::{ManualClock, SessionId, ThreadId};

const MINUTE: i64 = 60_000;

const STATUS: &str = "The render of the intro is still going and it will run longer than \
                      planned, so I will report back here when the final cut is ready.";
/// The same status, bold, with other articles and "be" for "run".
const REWORDED: &str = "**Render** of the intro is still going and it will be longer than \
                        planned, so I will report back here when a final cut is ready.";
const NEWS: &str = "The render finished: out/intro.mp4 is ready.";

fn book(note: &str) -> serde_json::Value {
    serde_json::json!({"tool_calls": [{"name": "check_back",
        "arguments": {"after_minutes": 30, "note": note}}]})
}

fn text(t: &str) -> serde_json::Value {
    serde_json::json!({ "text": t })
}

/// The Bot's lines in the conversation, in order.
fn bot_lines(w: &World, s: SessionId) -> Vec<String> {
    w.collab
        .lines(s, None, 1000)
        .unwrap()
        .into_iter()
        .filter(|l| l.author == Author::Bot)
        .map(|l| l.body)
        .collect()
}

/// Fire the check-backs due and wait for the turn they start on `t`.
async fn check_back_fires(w: &World, clock: &ManualClock, t: ThreadId) {
    clock.advance(30 * MINUTE);
    let mut events = w.collab.store().subscribe();
    assert_eq!(w.collab.fire_due_check_backs().unwrap().fired.len(), 1);
    runs_ended(&mut events, t, 1).await;
    w.collab.engine().wait_idle(t).await;
}

async fn say(w: &World, s: SessionId, t: ThreadId, words: &str) {
    let mut events = w.collab.store().subscribe();
    w.collab.post_line(s, words.into(), None).await.unwrap();
    runs_ended(&mut events, t, 1).await;
    w.collab.engine().wait_idle(t).await;
}

#[tokio::test]
async fn ac12_a_check_back_repeating_the_bots_reply_posts_nothing_but_the_person_is_answered() {
    let clock = ManualClock::new(1_760_000_000_000);
    let w = world_on(Arc::new(clock.clone()));
    let steps = serde_json::json!({"steps": [
        book("verify render"), text(STATUS),
        book("verify again"), text(REWORDED),
        {"tool_calls": [{"name": "send_message", "arguments": {"text": STATUS}}]}, text(NEWS),
        text(STATUS)
    ], "on_exhausted": "repeat_last"});
    let alpha = bot(&w, "Alpha", &steps.to_string());
    let s = direct(&w, alpha);
    let t = thread_of(&w, s, alpha);
    say(&w, s, t, "Render the intro, please.").await;
    assert_eq!(bot_lines(&w, s), [STATUS]);

    // Woken by its check-back, it says the same status again: the Bot said it, nobody reads it.
    check_back_fires(&w, &clock, t).await;
    assert_eq!(bot_lines(&w, s), [STATUS], "the repeat was posted");
    let said_in_thread = w
        .collab
        .store()
        .read(|tx| tx.messages(t, None, 1000))
        .unwrap()
        .iter()
        .any(|m| m.text() == REWORDED);
    assert!(
        said_in_thread,
        "the Bot's own transcript keeps what it said"
    );

    // The next check-back: send_message with the old words is refused, the news goes out.
    check_back_fires(&w, &clock, t).await;
    assert_eq!(bot_lines(&w, s), [STATUS, NEWS]);
    let runs = runs_of(&w, t);
    let sent = calls_of(&w, runs[runs.len() - 1].id);
    assert_eq!(sent[0].name, "send_message");
    assert!(
        sent[0].result.contains("repeated_message"),
        "{}",
        sent[0].result
    );

    // A reply to the person's line goes out, whatever it repeats.
    say(&w, s, t, "Where is it?").await;
    assert_eq!(bot_lines(&w, s), [STATUS, NEWS, STATUS]);
}

#[tokio::test]
async fn ac12_on_a_job_only_the_jobs_own_replies_count_and_a_withheld_one_is_logged() {
    let clock = ManualClock::new(1_760_000_000_000);
    let w = world_on(Arc::new(clock.clone()));
    // The desk answers a "desk:" line with the status; the job's work runs the steps.
    let script = serde_json::json!({
        "rules": [{"when_user_contains": "desk:", "reply": text(STATUS)}],
        "steps": [
            book("verify render"), text("Started the render."),
            book("verify again"), text(STATUS),
            text(STATUS)
        ], "on_exhausted": "repeat_last"});
    let alpha = bot(&w, "Alpha", &script.to_string());
    let s = direct(&w, alpha);
    let desk = thread_of(&w, s, alpha);
    say(&w, s, desk, "desk: how are things?").await;
    let job = open_job_work(&w, s, alpha, "Intro render");
    task_on_job(&w, &job, "Render the intro.").await;
    assert_eq!(bot_lines(&w, s), [STATUS, "Started the render."]);

    // The desk said these words, but not on this job: the job's check-back posts them.
    check_back_fires(&w, &clock, job.thread).await;
    assert_eq!(bot_lines(&w, s), [STATUS, "Started the render.", STATUS]);
    let on_job = line_saying_last(&w, s, STATUS);

    // Said again on the job: withheld, and the job's work log says which line it repeats.
    check_back_fires(&w, &clock, job.thread).await;
    assert_eq!(bot_lines(&w, s), [STATUS, "Started the render.", STATUS]);
    let log = w.collab.work_log(job.plan, 0, 100).unwrap();
    let withheld: Vec<_> = log.iter().filter(|r| r.kind == "reply_withheld").collect();
    assert_eq!(withheld.len(), 1, "{log:?}");
    // Nobody read it, so the closing check had nothing to send back.
    assert!(
        log.iter().all(|r| r.kind != "closing_check_sent_back"),
        "{log:?}"
    );
    assert_eq!(withheld[0].payload["repeats"], serde_json::json!(on_job));
    assert_eq!(withheld[0].work_item_id, Some(job.item));
}

/// The id of the newest line with these words.
fn line_saying_last(w: &World, s: SessionId, words: &str) -> i64 {
    w.collab
        .lines(s, None, 1000)
        .unwrap()
        .into_iter()
        .rfind(|l| l.body == words)
        .unwrap()
        .id
        .0
}
