//! Scenario tests for the inbox, drive and lease rules, through the real engine on SQLite.

mod support;

use std::sync::Arc;
use support::{Reply, build, call};
use tokio::sync::Notify;
use troupe_core::drive::DriveRefusal;
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::message::Role;
use troupe_core::pause::PauseReason;
use troupe_core::thread::Interaction;
use troupe_engine::extension::{ContinuationPolicy, Gate, Proposal};
use troupe_engine::{DriveOutcome, StopMode};

#[tokio::test]
async fn delivery_key_makes_delivery_idempotent() {
    let h = build(vec![Reply::Text("ok".into())], |b| b);
    let t = h.thread(Interaction::Interactive);
    let d = Delivery::user_task("hello").with_key("line-1");
    let first = h.engine.deliver(t, d.clone()).await.unwrap();
    h.engine.wait_idle(t).await;
    let again = h.engine.deliver(t, d).await.unwrap();
    assert!(first.created && !again.created);
    assert_eq!(again.item_id, first.item_id);
    let msgs = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 100))
        .unwrap();
    assert_eq!(msgs.iter().filter(|m| m.role == Role::User).count(), 1);
    assert_eq!(h.provider.calls(), 1, "the repeat did not wake the thread");
}

#[tokio::test]
async fn steer_joins_before_the_next_model_call() {
    // First answer asks for a tool that blocks until the test lets it go.
    let started = Arc::new(Notify::new());
    let h = build(
        vec![Reply::Hang {
            partial: "thinking".into(),
            started: started.clone(),
        }],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("first task"))
        .await
        .unwrap();
    started.notified().await;
    // While the model call runs: a steer and a second task arrive.
    h.engine
        .deliver(
            t,
            Delivery::user_task("use tabs").with_mode(InboxMode::Steer),
        )
        .await
        .unwrap();
    h.engine
        .deliver(t, Delivery::user_task("second task"))
        .await
        .unwrap();
    // Interrupt the hung call internally, then resume: the steer must be in the very next call.
    h.engine.stop(t, StopMode::Internal).await.unwrap();
    h.engine.wait_idle(t).await;
    let reqs = h.provider.requests();
    assert!(reqs.len() >= 2);
    let second = &reqs[1];
    let text: Vec<String> = second.messages.iter().map(|m| format!("{m:?}")).collect();
    let joined = text.join("\n");
    assert!(
        joined.contains("use tabs"),
        "steer missing from the next call: {joined}"
    );
    assert!(joined.contains("second task"));
}

#[tokio::test]
async fn steer_is_read_between_tool_calls_of_one_task() {
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![call("c1", "list_dir", "{}")]),
            Reply::Text("finished".into()),
        ],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    // Queue the task and the steer before the loop starts: the steer joins the task at once.
    h.engine
        .store()
        .write(|tx| tx.deliver(t, &Delivery::user_task("task").with_mode(InboxMode::Task)))
        .unwrap();
    h.engine
        .deliver(
            t,
            Delivery::user_task("and hurry").with_mode(InboxMode::Steer),
        )
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 2);
    let first = format!("{:?}", reqs[0].messages);
    assert!(
        first.contains("task") && first.contains("and hurry"),
        "{first}"
    );
}

#[tokio::test]
async fn abort_drops_steer_and_context_and_keeps_tasks() {
    let started = Arc::new(Notify::new());
    let h = build(
        vec![Reply::Hang {
            partial: "half an ans".into(),
            started: started.clone(),
        }],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("long job"))
        .await
        .unwrap();
    started.notified().await;
    h.engine
        .deliver(
            t,
            Delivery::user_task("steer me").with_mode(InboxMode::Steer),
        )
        .await
        .unwrap();
    h.engine
        .deliver(t, Delivery::user_task("fyi").with_mode(InboxMode::Context))
        .await
        .unwrap();
    // A queued task from another thread's delegation (not a person: it does not lift latches).
    let task = Delivery::user_task("next job")
        .with_origin(troupe_core::message::Origin::Delegation("peer".into()));
    h.engine.deliver(t, task).await.unwrap();

    let run = h.engine.stop(t, StopMode::User).await.unwrap();
    assert_eq!(run.status.as_str(), "stopped");
    let (items, thread, msgs) = h
        .engine
        .store()
        .read(|tx| Ok((tx.inbox(t)?, tx.thread(t)?, tx.messages(t, None, 100)?)))
        .unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].mode, InboxMode::Task);
    assert_eq!(thread.paused.unwrap().reason, PauseReason::Aborted);
    assert_eq!(thread.lease.holder, None);
    // The partial answer is kept as the interrupted breakpoint.
    let last = msgs.last().unwrap();
    assert_eq!(last.text(), "half an ans");
    assert_eq!(last.finish, Some(troupe_core::message::Finish::Interrupted));
    // The queued task is not auto-started.
    assert!(!h.engine.is_running(t));
    assert_eq!(h.provider.calls(), 1);
}

#[tokio::test]
async fn drive_never_runs_a_paused_thread_and_records_why() {
    let h = build(vec![], |b| b);
    let t = h.thread(Interaction::Interactive);
    h.engine
        .store()
        .write(|tx| {
            tx.pause(t, PauseReason::Aborted, None)?;
            tx.deliver(
                t,
                &Delivery::user_task("queued")
                    .with_origin(troupe_core::message::Origin::Timer("tick".into())),
            )
        })
        .unwrap();
    for force in [false, true] {
        let out = h.engine.request_drive(t, "test", force).await.unwrap();
        assert_eq!(
            out,
            DriveOutcome::NotHandled {
                refusal: DriveRefusal::Paused
            }
        );
    }
    let refusals = h.engine.store().read(|tx| tx.refusals(t)).unwrap();
    assert_eq!(refusals.len(), 2);
    assert!(refusals[0].cause.contains("aborted"));
    assert_eq!(h.provider.calls(), 0);
    // Continue lifts the latch and the task runs.
    let out = h.engine.continue_thread(t).await.unwrap();
    assert!(out.started().is_some());
    h.engine.wait_idle(t).await;
    assert_eq!(h.provider.calls(), 1);
}

#[tokio::test]
async fn drive_never_starts_a_second_loop_on_a_running_thread() {
    let started = Arc::new(Notify::new());
    let h = build(
        vec![Reply::Hang {
            partial: String::new(),
            started: started.clone(),
        }],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    started.notified().await;
    let (a, b) = tokio::join!(
        h.engine.request_drive(t, "a", true),
        h.engine.request_drive(t, "b", false)
    );
    assert_eq!(
        a.unwrap(),
        DriveOutcome::NotHandled {
            refusal: DriveRefusal::Running
        }
    );
    assert_eq!(
        b.unwrap(),
        DriveOutcome::NotHandled {
            refusal: DriveRefusal::Running
        }
    );
    h.engine.stop(t, StopMode::Internal).await.unwrap();
    let runs = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 10))
        .unwrap();
    assert_eq!(runs.len(), 1);
}

#[tokio::test]
async fn a_person_s_line_lifts_the_latch() {
    let h = build(vec![Reply::Text("hi".into())], |b| b);
    let t = h.thread(Interaction::Interactive);
    h.engine
        .store()
        .write(|tx| tx.pause(t, PauseReason::Failed, None))
        .unwrap();
    h.engine
        .deliver(t, Delivery::user_task("are you there?"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    assert_eq!(h.provider.calls(), 1);
    assert!(
        h.engine
            .store()
            .read(|tx| tx.thread(t))
            .unwrap()
            .paused
            .is_none()
    );
}

#[tokio::test]
async fn lines_in_a_row_are_answered_in_the_order_they_came() {
    let h = build(
        vec![
            Reply::Text("one".into()),
            Reply::Text("two".into()),
            Reply::Text("three".into()),
        ],
        |b| b,
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .store()
        .write(|tx| {
            tx.deliver(t, &Delivery::user_task("first"))?;
            tx.deliver(t, &Delivery::user_task("second"))?;
            tx.deliver(t, &Delivery::user_task("third"))
        })
        .unwrap();
    h.engine.request_drive(t, "test", false).await.unwrap();
    h.engine.wait_idle(t).await;
    let msgs = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 100))
        .unwrap();
    let order: Vec<String> = msgs.iter().map(|m| m.text()).collect();
    assert_eq!(order, ["first", "one", "second", "two", "third", "three"]);
    assert!(
        msgs.iter()
            .filter(|m| m.role == Role::User)
            .all(|m| m.is_root)
    );
}

struct TestPolicy {
    id: &'static str,
    priority: i32,
    text: &'static str,
    asked: std::sync::atomic::AtomicUsize,
}

impl ContinuationPolicy for TestPolicy {
    fn id(&self) -> &str {
        self.id
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn propose(&self, _gate: &Gate<'_>) -> Result<Proposal, String> {
        // Each test policy proposes once, so the thread comes to rest.
        if self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) > 0 {
            return Ok(Proposal::None);
        }
        Ok(Proposal::Inbox(
            Delivery::user_task(self.text)
                .with_mode(InboxMode::Steer)
                .with_origin(troupe_core::message::Origin::Continuation(self.id.into())),
        ))
    }
}

fn policy(id: &'static str, priority: i32, text: &'static str) -> Arc<TestPolicy> {
    Arc::new(TestPolicy {
        id,
        priority,
        text,
        asked: Default::default(),
    })
}

#[tokio::test]
async fn policies_go_in_priority_order_and_the_first_proposal_wins_once_per_reply() {
    let low = policy("low", 25, "keep going (low)");
    let high = policy("high", 100, "keep going (high)");
    let (l, hi) = (low.clone(), high.clone());
    let _ = &high;
    let h = build(
        vec![
            Reply::Text("first answer".into()),
            Reply::Text("second answer".into()),
        ],
        move |b| b.policy(l).policy(hi),
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("start"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    // After the first answer the high policy proposed; after the second (high has nothing
    // more), the low one did: one proposal per arbitration, higher priority first.
    let msgs = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 100))
        .unwrap();
    let continuation: Vec<&troupe_core::message::Message> = msgs
        .iter()
        .filter(|m| matches!(&m.origin, troupe_core::message::Origin::Continuation(_)))
        .collect();
    let texts: Vec<String> = continuation.iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["keep going (high)", "keep going (low)"]);
    let key = continuation[0].delivery_key.clone().unwrap();
    assert!(key.starts_with("continuation:high:"), "{key}");
    assert_eq!(low.asked.load(std::sync::atomic::Ordering::SeqCst), 2);
    // Once per terminal reply: driving again on the same reply proposes nothing new.
    let before = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 1000))
        .unwrap()
        .len();
    let out = h.engine.request_drive(t, "again", false).await.unwrap();
    h.engine.wait_idle(t).await;
    let after = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 1000))
        .unwrap()
        .len();
    assert_eq!(
        out,
        DriveOutcome::NotHandled {
            refusal: DriveRefusal::NoWork
        }
    );
    assert_eq!(before, after);
}

/// A policy that only counts how often it is asked.
struct Counting(std::sync::atomic::AtomicUsize);

impl ContinuationPolicy for Counting {
    fn id(&self) -> &str {
        "counting"
    }
    fn priority(&self) -> i32 {
        50
    }
    fn propose(&self, _gate: &Gate<'_>) -> Result<Proposal, String> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(Proposal::None)
    }
}

#[tokio::test]
async fn inbox_work_comes_before_policies() {
    let asked = Arc::new(Counting(Default::default()));
    let a = asked.clone();
    let started = Arc::new(Notify::new());
    let h = build(
        vec![
            Reply::Text("first answer".into()),
            Reply::Hang {
                partial: String::new(),
                started: started.clone(),
            },
        ],
        move |b| b.policy(a),
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("first"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    // The gate is open now (a terminal reply): an idle drive asks the policy.
    let count = |p: &Counting| p.0.load(std::sync::atomic::Ordering::SeqCst);
    let before = count(&asked);
    assert!(
        before >= 1,
        "the release drive after the answer asked the policy"
    );
    h.engine.request_drive(t, "idle", false).await.unwrap();
    assert_eq!(count(&asked), before + 1);
    // With a task waiting in the inbox, the drive starts it without asking any policy.
    h.engine
        .store()
        .write(|tx| tx.deliver(t, &Delivery::user_task("real work")))
        .unwrap();
    let out = h.engine.request_drive(t, "test", false).await.unwrap();
    assert!(out.started().is_some());
    assert_eq!(
        count(&asked),
        before + 1,
        "a policy was consulted although inbox work existed"
    );
    started.notified().await;
    h.engine.stop(t, StopMode::Internal).await.unwrap();
}

/// A consumer tool that blocks until the test lets it go.
struct Blocker {
    entered: Arc<Notify>,
    release: Arc<Notify>,
}

#[async_trait::async_trait]
impl troupe_engine::extension::ToolHandler for Blocker {
    async fn call(
        &self,
        _ctx: &troupe_engine::extension::ToolCallContext,
        _args: &str,
    ) -> troupe_engine::extension::ToolReply {
        self.entered.notify_one();
        self.release.notified().await;
        troupe_engine::extension::ToolReply::ok("unblocked")
    }
}

#[tokio::test]
async fn a_steer_sent_during_a_tool_call_joins_the_same_task_before_its_next_model_call() {
    let entered = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let tool = troupe_engine::extension::ToolRegistration {
        owner: "test".into(),
        spec: troupe_llm::ToolSpec {
            name: "wait".into(),
            description: "waits".into(),
            parameters: serde_json::json!({"type":"object"}),
        },
        effectful: false,
        read_only: false,
        available: Arc::new(|_| true),
        handler: Arc::new(Blocker {
            entered: entered.clone(),
            release: release.clone(),
        }),
    };
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![call("c1", "wait", "{}")]),
            Reply::Text("adjusted".into()),
        ],
        move |b| b.tool(tool).unwrap(),
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("build it"))
        .await
        .unwrap();
    entered.notified().await;
    let d = h
        .engine
        .deliver(
            t,
            Delivery::user_task("use blue").with_mode(InboxMode::Steer),
        )
        .await
        .unwrap();
    assert!(d.created);
    release.notify_one();
    h.engine.wait_idle(t).await;
    let reqs = h.provider.requests();
    assert_eq!(
        reqs.len(),
        2,
        "the steer joined the running task: no second run"
    );
    assert_eq!(
        reqs[1].messages.last().unwrap(),
        &troupe_llm::ChatMessage::user("use blue")
    );
    let runs = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 10))
        .unwrap();
    assert_eq!(runs.len(), 1);
    let msgs = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 10))
        .unwrap();
    let steer = msgs.iter().find(|m| m.text() == "use blue").unwrap();
    assert!(!steer.is_root);
    assert_eq!(steer.root_id, msgs[0].root_id);
}
