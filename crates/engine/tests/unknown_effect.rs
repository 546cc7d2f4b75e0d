//! A call cut off by Stop has an unknown outcome. Nothing resumes that thread by itself (boot
//! wakes, policies, a timer's task), and each refusal is recorded with the call; a person's new
//! line does start a turn, whose context names the call once.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::{Harness, Reply, build, call};
use troupe_core::ThreadId;
use troupe_core::drive::DriveRefusal;
use troupe_core::effect::EffectOutcome;
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::thread::Interaction;
use troupe_engine::extension::{ContinuationPolicy, Gate, Proposal};
use troupe_engine::{DriveOutcome, StopMode};
use troupe_llm::ChatMessage;

/// A policy that would always continue, counting how often it is asked.
struct Eager(AtomicUsize);
impl ContinuationPolicy for Eager {
    fn id(&self) -> &str {
        "eager"
    }
    fn priority(&self) -> i32 {
        10
    }
    fn propose(&self, _g: &Gate<'_>) -> Result<Proposal, String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(Proposal::Inbox(
            Delivery::user_task("go on")
                .with_mode(InboxMode::Steer)
                .with_origin(Origin::Continuation("eager".into())),
        ))
    }
}

const SLOW: &str = r#"{"command":"echo started > started.txt; exec sleep 1000"}"#;

/// Runs a turn whose shell command hangs and stops it: the command's effect is unknown.
async fn stopped_mid_command(h: &Harness, t: ThreadId) {
    h.engine
        .deliver(t, Delivery::user_task("run the slow thing"))
        .await
        .unwrap();
    let started = h.workspace.join("started.txt");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    h.engine.stop(t, StopMode::User).await.unwrap();
    h.engine.wait_idle(t).await;
    let effects = h
        .engine
        .store()
        .read(|tx| tx.effects_for_thread(t))
        .unwrap();
    assert_eq!(effects.last().unwrap().outcome, EffectOutcome::Unknown);
    // Whatever the person does next, they do after the stop.
    h.clock.advance(1_000);
}

fn unknown_refusal() -> DriveOutcome {
    DriveOutcome::NotHandled {
        refusal: DriveRefusal::UnknownEffect,
    }
}

fn notes_in(messages: &[ChatMessage]) -> usize {
    messages
        .iter()
        .filter(|m| matches!(m, ChatMessage::User { text, .. } if text.contains("Runtime note: the outcome")))
        .count()
}

#[tokio::test]
async fn unknown_effect_still_blocks_boot_wake_and_policies() {
    let eager = Arc::new(Eager(AtomicUsize::new(0)));
    let policy = eager.clone();
    let h = build(
        vec![Reply::Tools(String::new(), vec![call("c1", "shell", SLOW)])],
        move |b| b.policy(policy),
    );
    // Unattended: no pause latch after Stop, so only the unknown effect stands in the way.
    let t = h.thread(Interaction::Unattended);
    stopped_mid_command(&h, t).await;
    let runs_before = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 10))
        .unwrap()
        .len();

    // A boot wake, a policy's chance and a timer's task: none of them is a person's decision.
    assert_eq!(
        h.engine.request_drive(t, "boot", false).await.unwrap(),
        unknown_refusal()
    );
    let timer = Delivery::user_task("routine check")
        .with_origin(Origin::Timer("routine".into()))
        .with_priority(Priority::OWN_TIMER);
    h.engine.deliver(t, timer).await.unwrap();
    assert_eq!(
        h.engine.request_drive(t, "timer", false).await.unwrap(),
        unknown_refusal()
    );
    assert_eq!(eager.0.load(Ordering::SeqCst), 0, "no policy was asked");
    let runs = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 10))
        .unwrap();
    assert_eq!(runs.len(), runs_before, "no turn started");
    assert_eq!(h.engine.store().read(|tx| tx.inbox(t)).unwrap().len(), 1);

    // Each refusal is recorded, and its event names the call.
    let refusals = h.engine.store().read(|tx| tx.refusals(t)).unwrap();
    assert!(refusals.iter().all(|r| r.check_name == "unknown_effect"));
    assert!(refusals.len() >= 2, "{refusals:?}");
    assert!(refusals[0].cause.contains("sleep 1000"), "{refusals:?}");
    let events = h
        .engine
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), Some(t), 1000))
        .unwrap();
    let refused: Vec<_> = events.iter().filter(|e| e.kind == "wake_refused").collect();
    assert!(refused.len() >= 2);
    assert_eq!(refused[0].payload["check"], "unknown_effect");
    assert_eq!(refused[0].payload["call"]["tool"], "shell");
    assert!(
        refused[0].payload["call"]["summary"]
            .as_str()
            .unwrap()
            .contains("exec sleep 1000")
    );
}

#[tokio::test]
async fn a_person_line_after_stop_starts_a_turn() {
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![call("c1", "shell", SLOW)]),
            Reply::Text("I checked: it was cut off.".into()),
        ],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    stopped_mid_command(&h, t).await;
    let out = h
        .engine
        .deliver(t, Delivery::user_task("what happened?"))
        .await
        .unwrap();
    assert!(out.created);
    h.engine.wait_idle(t).await;
    assert_eq!(h.provider.calls(), 2, "the person's line reached the model");
    let last = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 100))
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(last.text(), "I checked: it was cut off.");
    // The turn that started acknowledged the call: automatic drives are no longer refused.
    assert_eq!(
        h.engine
            .store()
            .read(|tx| tx.blocking_unknown_effect(t))
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn unknown_effect_is_named_in_the_next_context_once() {
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![call("c1", "shell", SLOW)]),
            Reply::Tools(
                String::new(),
                vec![call("c2", "read_file", r#"{"path":"started.txt"}"#)],
            ),
            Reply::Text("it had started".into()),
            Reply::Text("second answer".into()),
        ],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    stopped_mid_command(&h, t).await;
    let started_at = h
        .engine
        .store()
        .read(|tx| tx.effects_for_thread(t))
        .unwrap()[0]
        .started_at;
    h.engine
        .deliver(t, Delivery::user_task("did it run?"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    h.engine
        .deliver(t, Delivery::user_task("and now?"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;

    let requests = h.provider.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        notes_in(&requests[0].messages),
        0,
        "nothing was cut off yet"
    );
    // The first call after the stop carries the note, naming tool, command and start time.
    let note = requests[1]
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::User { text, .. } if text.contains("Runtime note") => Some(text.clone()),
            _ => None,
        })
        .expect("the note is in the context");
    assert!(note.contains("`shell`"), "{note}");
    assert!(note.contains("exec sleep 1000"), "{note}");
    assert!(
        note.contains(&troupe_core::time::iso_utc(started_at)),
        "{note}"
    );
    // Written once: later calls see it in the history once, never a second copy.
    for r in &requests[1..] {
        assert_eq!(notes_in(&r.messages), 1);
    }
    assert!(
        h.engine
            .store()
            .read(|tx| tx.unnamed_unknown_effects(t))
            .unwrap()
            .is_empty()
    );
    // The person never sees it as a line of the conversation.
    let hidden = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 100))
        .unwrap()
        .into_iter()
        .find(|m| m.origin == Origin::System("unknown_effect".into()))
        .unwrap();
    assert!(hidden.parts.iter().all(|p| !p.visible && p.in_context));
}

/// A person's forced go-ahead (a lift's reopening, a Continue) that arrives while the stopped
/// loop is still winding down — its shell call waiting out the kill grace of a command that
/// ignores SIGTERM — is not lost: the loop's release drive carries it, so the next turn starts
/// although the call's outcome is unknown and the new task is not a person's line.
#[tokio::test]
async fn a_forced_drive_while_the_stopped_loop_winds_down_starts_the_next_turn() {
    const STUBBORN: &str =
        r#"{"command":"trap '' TERM; echo started > started.txt; exec sleep 1000"}"#;
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![call("c1", "shell", STUBBORN)]),
            Reply::Text("Going on.".into()),
        ],
        |b| b,
    );
    let t = h.thread(Interaction::Unattended);
    h.engine
        .deliver(t, Delivery::user_task("run the stubborn thing"))
        .await
        .unwrap();
    let started = h.workspace.join("started.txt");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // A hold's stop: recorded in a write, released after it (the loop is cancelled, and its
    // shell call waits out the grace before the loop can end).
    let stop = h
        .engine
        .store()
        .write(|tx| h.engine.record_stop(tx, t, StopMode::Hold))
        .unwrap()
        .expect("a live run to stop");
    let _groups = h.engine.release_stops(vec![stop]);
    h.clock.advance(1_000);
    // The go-ahead: a task that is not a person's line, and a forced drive while the loop is
    // still there.
    h.engine
        .deliver(
            t,
            Delivery::user_task("go on").with_origin(Origin::System("reopen".into())),
        )
        .await
        .unwrap();
    assert_eq!(
        h.engine
            .request_drive(t, "hold_lifted", true)
            .await
            .unwrap(),
        DriveOutcome::NotHandled {
            refusal: DriveRefusal::Running
        },
        "the stopped loop is still winding down"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while h.provider.calls() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the go-ahead was lost: {:?}",
            h.engine.store().read(|tx| tx.refusals(t)).unwrap()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    h.engine.wait_idle(t).await;
}
