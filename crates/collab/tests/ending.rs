//! The ending contract over a real engine and store, with scripted Bots and a scripted reader:
//! promised later (S-END-1), said nothing (S-END-2), and a disposition for mail it never read
//! (S-END-4).

mod support;

use std::time::Duration;
use support::*;
use troupe_core::SessionId;
use troupe_core::conversation::Author;

async fn settle(w: &World, s: SessionId) {
    let t = w.collab.direct_thread(s).unwrap();
    tokio::time::timeout(Duration::from_secs(20), w.collab.engine().wait_idle(t))
        .await
        .unwrap();
}

fn calls(w: &World, s: SessionId) -> Vec<troupe_store::ToolCallRecord> {
    let run = w.collab.turns(s, 10).unwrap().remove(0);
    w.collab.store().read(|tx| tx.tool_calls(run.id)).unwrap()
}

fn app_lines(w: &World, s: SessionId) -> Vec<String> {
    w.collab
        .lines(s, None, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.author == Author::System)
        .map(|l| l.body)
        .collect()
}

fn last_end(w: &World, s: SessionId) -> String {
    w.collab.turns(s, 10).unwrap().remove(0).end_reason.unwrap()
}

#[tokio::test]
async fn promised_later_bounces_once_then_the_app_says_nobody_carries_it_on() {
    let w = world();
    // The reader finds the still-going sentence in the Bot's words.
    let reader = script(
        &w,
        "reader",
        r#"{"steps":[{"text":"{\"control\":\"neither\"}"}],"on_exhausted":"repeat_last",
            "rules":[{"when_user_contains":"troupe-reader:bot","reply":{"text":"{\"restates\":false,\"still_going\":\"I'm now drafting the storyboard\"}"}}]}"#,
    );
    w.collab.set_role("reading", reader).unwrap();
    let b = bot(
        &w,
        "Director",
        r#"{"steps":[
            {"text":"I'm now drafting the storyboard and will post it here.","tool_calls":[{"name":"end_turn","arguments":{"reason":"done"}}]},
            {"tool_calls":[{"name":"end_turn","arguments":{"reason":"done"}}]}]}"#,
    );
    let s = direct(&w, b);
    w.collab
        .post_line(s, "make the EP01 storyboard".into(), None)
        .await
        .unwrap();
    settle(&w, s).await;
    let c = calls(&w, s);
    assert_eq!(c.len(), 2);
    assert!(
        c[0].result.contains("as if you were still working"),
        "{}",
        c[0].result
    );
    assert!(
        c[0].result
            .starts_with("Your reply has gone out as written"),
        "{}",
        c[0].result
    );
    assert_eq!(last_end(&w, s), "done");
    let lines = app_lines(&w, s);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("nobody is carrying it on") && l.contains("Tell it to continue")),
        "{lines:?}"
    );
}

#[tokio::test]
async fn said_nothing_bounces_once_when_the_answer_is_only_in_end_turn() {
    let w = world();
    let b = bot(
        &w,
        "Generalist",
        r#"{"steps":[
            {"tool_calls":[{"name":"end_turn","arguments":{"reason":"answered","note":"It is 42."}}]},
            {"tool_calls":[{"name":"end_turn","arguments":{"reason":"answered"}}]}]}"#,
    );
    let s = direct(&w, b);
    w.collab
        .post_line(s, "what is the answer?".into(), None)
        .await
        .unwrap();
    settle(&w, s).await;
    let c = calls(&w, s);
    assert!(
        c[0].result.contains("never reach the user"),
        "{}",
        c[0].result
    );
    assert_eq!(last_end(&w, s), "answered");
    assert!(
        app_lines(&w, s)
            .iter()
            .any(|l| l.contains("without replying")),
        "{:?}",
        app_lines(&w, s)
    );
}

#[tokio::test]
async fn a_disposition_for_mail_it_never_read_bounces_nothing() {
    let w = world();
    let b = bot(
        &w,
        "Helper",
        r##"{"steps":[
            {"text":"Done.","tool_calls":[{"name":"end_turn","arguments":{"reason":"done","inbox":[{"id":"#1","disposition":"answered"}]}}]}]}"##,
    );
    let s = direct(&w, b);
    w.collab
        .post_line(s, "tidy the notes".into(), None)
        .await
        .unwrap();
    settle(&w, s).await;
    let c = calls(&w, s);
    assert_eq!(c.len(), 1, "no bounce: the id is the line that woke it");
    assert_eq!(last_end(&w, s), "done");
}
