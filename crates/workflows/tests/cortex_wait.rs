//! `task_output` waits for a task still working (up to a minute), so a Bot that wants a
//! child's result asks once instead of polling with a model call each time. The child is held
//! in flight by the scripted model until the test releases it; the wait's deadline is read from
//! a hand-moved clock.

mod cortex_support;

use cortex_support::{Step, W, call_tool, task_call, text, tool_ctx, world_clocked};
use serde_json::{Value, json};
use std::sync::Arc;
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::{ManualClock, SessionId, ThreadId};
use troupe_store::TaskId;

fn world_at(clock: &ManualClock) -> W {
    world_clocked(
        Arc::new(tempfile::tempdir().unwrap()),
        "boot-a",
        Arc::new(clock.clone()),
    )
}

/// A lead whose task (its child's prompt `CHILD-<m>`) is held in flight; the lead's turn over.
async fn held_task(w: &W, m: &str) -> (SessionId, ThreadId, TaskId) {
    let (s, parent) = w.lead();
    w.bot("ann");
    let child = format!("CHILD-{m}");
    w.model.route(
        &format!("LEAD-{m}"),
        vec![
            Step::Tools(vec![task_call(
                "c1",
                json!({"agent": "ann", "prompt": child}),
            )]),
            text("asked Ann"),
            text("read it"),
        ],
    );
    w.model
        .route(&child, vec![Step::Hold("There are 3 files.".into())]);
    w.say(s, &format!("LEAD-{m} go")).await;
    w.until("the child in flight", || {
        w.model.holding() == [child.as_str()]
    })
    .await;
    w.idle(parent).await;
    (s, parent, w.tasks(parent).remove(0).id)
}

/// Polls the call once: it must still be waiting.
async fn still_waiting(
    call: &mut std::pin::Pin<&mut impl std::future::Future<Output = (Value, bool)>>,
) {
    tokio::select! {
        biased;
        (v, _) = call.as_mut() => panic!("task_output answered while its task works: {v}"),
        _ = std::future::ready(()) => {}
    }
}

#[tokio::test]
async fn task_output_waits_for_a_working_task_and_answers_with_its_result() {
    let clock = ManualClock::new(1_000_000);
    let w = world_at(&clock);
    let (_, parent, id) = held_task(&w, "A").await;
    let ctx = tool_ctx(&w, parent, "q1");
    let call = call_tool(&w, "task_output", &ctx, json!({"task_id": id.to_string()}));
    tokio::pin!(call);
    still_waiting(&mut call).await;
    w.model.release("CHILD-A");
    let (v, err) = call.await;
    assert!(!err, "{v}");
    assert_eq!(v["status"], "completed");
    assert_eq!(v["output"], "There are 3 files.");
    assert!(v.get("note").is_none(), "{v}");
}

#[tokio::test]
async fn task_output_says_the_task_still_works_when_its_wait_is_up() {
    let clock = ManualClock::new(1_000_000);
    let w = world_at(&clock);
    let (_, parent, id) = held_task(&w, "B").await;
    let ctx = tool_ctx(&w, parent, "q1");
    let call = call_tool(&w, "task_output", &ctx, json!({"task_id": id.to_string()}));
    tokio::pin!(call);
    still_waiting(&mut call).await;
    clock.advance(59_999);
    still_waiting(&mut call).await;
    clock.advance(1);
    let (v, err) = call.await;
    assert!(!err, "{v}");
    assert_eq!(v["status"], "running");
    let note = v["note"].as_str().unwrap();
    assert!(
        note.starts_with("Still running after waiting 60 s.") && note.contains("end your turn"),
        "{note}"
    );
    w.model.release("CHILD-B");
}

#[tokio::test]
async fn task_output_stops_waiting_when_a_message_comes_for_the_bot() {
    let clock = ManualClock::new(1_000_000);
    let w = world_at(&clock);
    let (_, parent, id) = held_task(&w, "C").await;
    let ctx = tool_ctx(&w, parent, "q1");
    let call = call_tool(&w, "task_output", &ctx, json!({"task_id": id.to_string()}));
    tokio::pin!(call);
    still_waiting(&mut call).await;
    let line = Delivery::user_task("LEAD-C: stop and tell me where you are")
        .with_mode(InboxMode::Steer)
        .with_key("test:steer:1");
    w.wf.store().write(|tx| tx.deliver(parent, &line)).unwrap();
    let (v, err) = call.await;
    assert!(!err, "{v}");
    assert_eq!(v["status"], "running");
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .starts_with("A message for you is waiting"),
        "{v}"
    );
    w.model.release("CHILD-C");
}

/// A line already waiting for the Bot when it asks (it came during the model call) is read
/// first: no wait at all.
#[tokio::test]
async fn task_output_does_not_wait_while_a_message_already_waits_for_the_bot() {
    let clock = ManualClock::new(1_000_000);
    let w = world_at(&clock);
    let (_, parent, id) = held_task(&w, "E").await;
    let ctx = tool_ctx(&w, parent, "q1");
    // Held: the line stays in the inbox (the parent's drive is not asked for).
    let line = Delivery::user_task("LEAD-E: where are you?")
        .with_mode(InboxMode::Steer)
        .with_key("test:steer:2");
    w.wf.store()
        .write(|tx| {
            tx.deliver(parent, &line)?;
            Ok(())
        })
        .unwrap();
    let (v, err) = call_tool(&w, "task_output", &ctx, json!({"task_id": id.to_string()})).await;
    assert!(!err, "{v}");
    assert_eq!(v["status"], "running");
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .starts_with("A message for you is waiting"),
        "{v}"
    );
    w.model.release("CHILD-E");
}

#[tokio::test]
async fn task_output_stops_waiting_when_the_turn_is_stopped() {
    let clock = ManualClock::new(1_000_000);
    let w = world_at(&clock);
    let (_, parent, id) = held_task(&w, "D").await;
    let ctx = tool_ctx(&w, parent, "q1");
    let call = call_tool(&w, "task_output", &ctx, json!({"task_id": id.to_string()}));
    tokio::pin!(call);
    still_waiting(&mut call).await;
    ctx.cancel.cancel();
    let (v, _) = call.await;
    assert_eq!(v["status"], "running");
    assert_eq!(v["note"], "The wait was cut short: your turn is stopping.");
    w.model.release("CHILD-D");
}
