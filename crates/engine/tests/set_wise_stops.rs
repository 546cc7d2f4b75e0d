//! A set-wise stop (`Engine::record_stops`, what a hold makes) leaves exactly what stopping the
//! same runs one at a time leaves: the runs, their effects, the messages (the dangling calls
//! answered), the threads' leases, latches and inboxes, and the events by kind.

mod support;

use std::collections::BTreeMap;
use support::{Harness, Reply, build, call};
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::thread::Interaction;
use troupe_core::{EventId, ThreadId};
use troupe_engine::StopMode;

const RUNS: usize = 4;
/// The same call for every turn, so the records do not depend on which turn got which reply.
const SLOW: &str = r#"{"command":"mktemp started.XXXXXX; exec sleep 1000"}"#;

/// `RUNS` turns, each mid shell call, with a steer line waiting in its inbox.
async fn live_turns() -> (Harness, Vec<ThreadId>) {
    let replies = (0..RUNS)
        .map(|_| Reply::Tools(String::new(), vec![call("c1", "shell", SLOW)]))
        .collect();
    let h = build(replies, |b| b);
    let threads: Vec<ThreadId> = (0..RUNS)
        .map(|_| h.thread(Interaction::Interactive))
        .collect();
    for t in &threads {
        h.engine
            .deliver(*t, Delivery::user_task("run the slow thing"))
            .await
            .unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let started = std::fs::read_dir(&h.workspace)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("started.")
            })
            .count();
        if started == RUNS {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{started} of {RUNS} commands ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for t in &threads {
        h.engine
            .deliver(
                *t,
                Delivery::user_task("also this").with_mode(InboxMode::Steer),
            )
            .await
            .unwrap();
    }
    h.clock.advance(1_000);
    (h, threads)
}

/// What the stop left, without ids (which depend on how the turns interleaved): one line per
/// thread, sorted, and the events the stop wrote, counted by kind.
fn left(
    h: &Harness,
    threads: &[ThreadId],
    since: EventId,
) -> (Vec<String>, BTreeMap<String, usize>) {
    h.engine
        .store()
        .read(|tx| {
            let mut lines = Vec::new();
            for t in threads {
                let thread = tx.thread(*t)?;
                let runs: Vec<String> = tx
                    .runs_for_thread(*t, 10)?
                    .iter()
                    .map(|r| {
                        format!(
                            "{:?} {:?} gen {} ended {:?}",
                            r.status, r.end_reason, r.generation, r.ended_at
                        )
                    })
                    .collect();
                let effects: Vec<String> = tx
                    .effects_for_thread(*t)?
                    .iter()
                    .map(|e| {
                        format!(
                            "{} {} {:?} {:?} {:?}",
                            e.tool, e.summary, e.outcome, e.detail, e.settled_at
                        )
                    })
                    .collect();
                let messages: Vec<String> = tx
                    .messages(*t, None, 100)?
                    .iter()
                    .map(|m| {
                        format!(
                            "{:?} {:?} root {} {:?} {:?} run {}",
                            m.role,
                            m.origin,
                            m.is_root,
                            m.finish,
                            m.parts,
                            m.run_id.is_some()
                        )
                    })
                    .collect();
                let inbox: Vec<String> = tx
                    .inbox(*t)?
                    .iter()
                    .map(|i| format!("{:?}", i.mode))
                    .collect();
                lines.push(format!(
                    "lease {:?} paused {:?} runs {runs:?} effects {effects:?} messages {messages:?} inbox {inbox:?}",
                    thread.lease.holder.is_some(),
                    thread.paused.map(|p| p.reason),
                ));
            }
            lines.sort();
            let mut kinds = BTreeMap::new();
            for e in tx.events_after(since, None, 10_000)? {
                *kinds.entry(e.kind).or_insert(0) += 1;
            }
            Ok((lines, kinds))
        })
        .unwrap()
}

fn last_event(h: &Harness) -> EventId {
    h.engine
        .store()
        .read(|tx| tx.events_after(EventId(0), None, 100_000))
        .unwrap()
        .last()
        .map_or(EventId(0), |e| e.id)
}

/// Stops every turn, set-wise or one `record_stop` each, in one write; answers what it left.
async fn stopped(set_wise: bool, mode: StopMode) -> (Vec<String>, BTreeMap<String, usize>) {
    let (h, threads) = live_turns().await;
    let since = last_event(&h);
    let stops = h
        .engine
        .store()
        .write(|tx| {
            if set_wise {
                h.engine.record_stops(tx, &threads, mode)
            } else {
                let mut stops = Vec::new();
                for t in &threads {
                    stops.extend(h.engine.record_stop(tx, *t, mode)?);
                }
                Ok(stops)
            }
        })
        .unwrap();
    assert_eq!(stops.len(), RUNS, "every live turn is stopped");
    assert!(stops.iter().all(|s| s.ended), "each stop ended its run");
    // Read before the release: the cancelled loops write their own endings after it.
    let left = left(&h, &threads, since);
    let _groups = h.engine.release_stops(stops);
    for t in &threads {
        h.engine.wait_idle(*t).await;
    }
    left
}

#[tokio::test]
async fn a_set_wise_hold_stop_leaves_what_single_stops_leave() {
    let one_by_one = stopped(false, StopMode::Hold).await;
    let set_wise = stopped(true, StopMode::Hold).await;
    assert_eq!(set_wise, one_by_one);
    // And what it leaves is a stop: ended, effect unknown, the dangling call answered.
    let (lines, kinds) = set_wise;
    for line in &lines {
        assert!(line.starts_with("lease false paused None"), "{line}");
        assert!(line.contains("Stopped"), "{line}");
        assert!(line.contains("Unknown"), "{line}");
        assert!(
            line.contains("stopped before it finished; whether it took effect is unknown"),
            "{line}"
        );
        // A hold keeps unread lines queued (HOLD-L8).
        assert!(line.ends_with("inbox [\"Steer\"]"), "{line}");
    }
    assert_eq!(kinds.get("run_ended"), Some(&RUNS));
    assert_eq!(kinds.get("effect_settled"), Some(&RUNS));
    assert_eq!(kinds.get("message_part_added"), Some(&RUNS));
}

#[tokio::test]
async fn a_set_wise_user_stop_leaves_what_single_stops_leave() {
    let one_by_one = stopped(false, StopMode::User).await;
    let set_wise = stopped(true, StopMode::User).await;
    assert_eq!(set_wise, one_by_one);
    for line in &set_wise.0 {
        // A person's Stop latches the thread and drops the steer line.
        assert!(line.contains("paused Some(Aborted)"), "{line}");
        assert!(line.ends_with("inbox []"), "{line}");
    }
}

#[tokio::test]
async fn a_thread_named_twice_or_running_nothing_is_stopped_once_or_left_out() {
    let (h, threads) = live_turns().await;
    let idle = h.thread(Interaction::Interactive);
    let mut asked = vec![idle];
    asked.extend(threads.iter().copied());
    asked.push(threads[0]);
    let stops = h
        .engine
        .store()
        .write(|tx| h.engine.record_stops(tx, &asked, StopMode::Hold))
        .unwrap();
    let stopped: Vec<ThreadId> = stops.iter().map(|s| s.run.thread_id).collect();
    assert_eq!(
        stopped, threads,
        "in the order given, each once, the idle thread left out"
    );
    // A second stop of the same runs changes nothing: the first stop wins.
    let again = h
        .engine
        .store()
        .write(|tx| h.engine.record_stops(tx, &threads, StopMode::Hold))
        .unwrap();
    assert!(again.iter().all(|s| !s.ended));
    let _groups = h.engine.release_stops(stops);
    let _again = h.engine.release_stops(again);
    for t in &threads {
        h.engine.wait_idle(*t).await;
    }
}
