//! Each extension point, exercised through a small test consumer.

mod support;

use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::{Reply, build, call};
use tokio::sync::Notify;
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::message::Origin;
use troupe_core::thread::{Interaction, Thread};
use troupe_engine::DriveOutcome;
use troupe_engine::extension::*;
use troupe_llm::{ChatMessage, ToolSpec};
use troupe_store::Store;

struct Cap(usize);
impl AdmissionCheck for Cap {
    fn name(&self) -> &str {
        "work_slots"
    }
    fn check(&self, ctx: &AdmissionContext<'_>) -> Admission {
        if ctx.live_runs >= self.0 {
            Admission::Queue(format!("all {} work slots are busy", self.0))
        } else {
            Admission::Admit
        }
    }
}

struct NoUnattended;
impl AdmissionCheck for NoUnattended {
    fn name(&self) -> &str {
        "no_unattended"
    }
    fn check(&self, ctx: &AdmissionContext<'_>) -> Admission {
        if ctx.thread.interaction == Interaction::Unattended {
            Admission::Refuse("unattended threads are held".into())
        } else {
            Admission::Admit
        }
    }
}

#[tokio::test]
async fn admission_refusal_is_recorded_with_its_cause_and_keeps_the_work() {
    let h = build(vec![], |b| b.admission(Arc::new(NoUnattended)));
    let t = h.thread(Interaction::Unattended);
    h.engine
        .deliver(t, Delivery::user_task("work"))
        .await
        .unwrap();
    let refusals = h.engine.store().read(|tx| tx.refusals(t)).unwrap();
    assert_eq!(refusals.len(), 1);
    assert_eq!(refusals[0].check_name, "no_unattended");
    assert_eq!(refusals[0].cause, "unattended threads are held");
    assert!(!refusals[0].queued);
    assert_eq!(h.engine.store().read(|tx| tx.inbox(t)).unwrap().len(), 1);
    assert_eq!(h.provider.calls(), 0);
}

#[tokio::test]
async fn a_queued_wake_runs_when_a_slot_frees_up() {
    let started = Arc::new(Notify::new());
    let h = build(
        vec![Reply::Hang {
            partial: String::new(),
            started: started.clone(),
        }],
        |b| b.admission(Arc::new(Cap(1))),
    );
    let a = h.thread(Interaction::Interactive);
    let b = h.thread(Interaction::Interactive);
    h.engine.deliver(a, Delivery::user_task("a")).await.unwrap();
    started.notified().await;
    h.engine.deliver(b, Delivery::user_task("b")).await.unwrap();
    let refusals = h.engine.store().read(|tx| tx.refusals(b)).unwrap();
    assert!(refusals[0].queued, "b's wake was queued");
    assert!(!h.engine.is_running(b));
    // a's run ends; the queued wake of b is retried and runs.
    h.engine
        .stop(a, troupe_engine::StopMode::Internal)
        .await
        .unwrap();
    h.engine.wait_idle(b).await;
    let runs = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(b, 10))
        .unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status.as_str(), "completed");
}

struct NoWrites;
impl EffectGuard for NoWrites {
    fn name(&self) -> &str {
        "hold"
    }
    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), troupe_engine::extension::Refusal> {
        if ctx.tool == "write_file" {
            Err("a hold covers this run".into())
        } else {
            Ok(())
        }
    }
}

#[tokio::test]
async fn a_guard_refuses_before_the_ledger_records_a_start() {
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![call(
                "c1",
                "write_file",
                r#"{"path":"x.txt","content":"no"}"#,
            )],
        )],
        |b| b.guard(Arc::new(NoWrites)),
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("write it"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    assert!(!h.workspace.join("x.txt").exists());
    assert!(
        h.engine
            .store()
            .read(|tx| tx.effects_for_thread(t))
            .unwrap()
            .is_empty()
    );
    let run = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 1))
        .unwrap()
        .remove(0);
    let calls = h.engine.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    assert_eq!(calls[0].status, "refused");
    // The model read the refusal as the tool result.
    let second = &h.provider.requests()[1];
    let seen = format!("{:?}", second.messages);
    assert!(
        seen.contains("refused by hold: a hold covers this run"),
        "{seen}"
    );
}

struct Workflow;
impl ContextContributor for Workflow {
    fn name(&self) -> &str {
        "workflow"
    }
    fn contribute(&self, _t: &Thread, _s: &Store, out: &mut ContextParts) {
        out.system.push("Follow the plan.".into());
        out.situation.push("Ticket 7 is open.".into());
    }
    fn stamp_root(&self, thread: &Thread) -> Option<Value> {
        thread.workflow.as_ref().map(|w| json!({"mode": w["kind"]}))
    }
    fn wrap_root(&self, stamp: &Value, text: &str) -> Option<String> {
        Some(format!(
            "<{0}-user-request>\n{text}\n</{0}-user-request>",
            stamp["mode"].as_str()?
        ))
    }
    fn hides(&self, m: &troupe_core::message::Message) -> bool {
        m.text() == "secret note"
    }
}

#[tokio::test]
async fn context_fragments_shape_the_call_without_rewriting_stored_messages() {
    let h = build(
        vec![Reply::Text("ok".into()), Reply::Text("ok again".into())],
        |b| b.context(Arc::new(Workflow)),
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .store()
        .write(|tx| tx.set_workflow(t, Some(&json!({"kind": "plan"}))))
        .unwrap();
    h.engine
        .deliver(t, Delivery::user_task("build X"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    // A later root while no workflow is active is not stamped, so not wrapped.
    h.engine
        .store()
        .write(|tx| tx.set_workflow(t, None))
        .unwrap();
    h.engine
        .store()
        .write(|tx| {
            tx.deliver(
                t,
                &Delivery::user_task("secret note").with_mode(InboxMode::Context),
            )
        })
        .unwrap();
    h.engine
        .deliver(t, Delivery::user_task("plain question"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;

    let reqs = h.provider.requests();
    let first = &reqs[0];
    assert!(first.system.starts_with("You are a test agent."));
    assert!(first.system.contains("Follow the plan."));
    assert!(first.system.contains("# Situation\n\nTicket 7 is open."));
    assert_eq!(
        first.messages[0],
        ChatMessage::user("<plan-user-request>\nbuild X\n</plan-user-request>")
    );
    let second = &reqs[1];
    // The stamp was fixed at creation: the old root is still wrapped; the new one is not.
    assert_eq!(
        second.messages[0],
        ChatMessage::user("<plan-user-request>\nbuild X\n</plan-user-request>")
    );
    assert!(
        second
            .messages
            .contains(&ChatMessage::user("plain question"))
    );
    assert!(
        !format!("{:?}", second.messages).contains("secret note"),
        "a hidden message was projected"
    );
    // Stored text is untouched.
    let stored = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 10))
        .unwrap();
    assert_eq!(stored[0].text(), "build X");
}

struct Echo(Arc<AtomicUsize>);
#[async_trait]
impl ToolHandler for Echo {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        self.0.fetch_add(1, Ordering::SeqCst);
        ToolReply::ok(format!("echo from {}: {arguments}", ctx.thread.id))
    }
}

fn reviewer_tool(counter: Arc<AtomicUsize>) -> ToolRegistration {
    ToolRegistration {
        owner: "test-consumer".into(),
        spec: ToolSpec {
            name: "approve".into(),
            description: "approve the work".into(),
            parameters: json!({"type": "object"}),
        },
        effectful: false,
        read_only: false,
        // Only unattended threads (the reviewer children) may call it.
        available: Arc::new(|t: &Thread| t.interaction == Interaction::Unattended),
        handler: Arc::new(Echo(counter)),
    }
}

#[tokio::test]
async fn a_registered_tool_is_offered_and_callable_only_where_its_owner_allows() {
    let counter = Arc::new(AtomicUsize::new(0));
    let c = counter.clone();
    let h = build(
        vec![
            Reply::Tools(String::new(), vec![call("c1", "approve", "{}")]),
            Reply::Text("tried".into()),
            Reply::Tools(String::new(), vec![call("c2", "approve", r#"{"ok":true}"#)]),
            Reply::Text("approved".into()),
        ],
        move |b| b.tool(reviewer_tool(c)).unwrap(),
    );
    let person = h.thread(Interaction::Interactive);
    h.engine
        .deliver(person, Delivery::user_task("approve please"))
        .await
        .unwrap();
    h.engine.wait_idle(person).await;
    assert_eq!(
        counter.load(Ordering::SeqCst),
        0,
        "an interactive thread may not call it"
    );
    let reqs = h.provider.requests();
    assert!(!reqs[0].tools.iter().any(|t| t.name == "approve"));
    assert!(format!("{:?}", reqs[1].messages).contains("not available to this thread"));

    let reviewer = h.thread(Interaction::Unattended);
    h.engine
        .deliver(reviewer, Delivery::user_task("review"))
        .await
        .unwrap();
    h.engine.wait_idle(reviewer).await;
    assert_eq!(counter.load(Ordering::SeqCst), 1);
    let reqs = h.provider.requests();
    assert!(reqs[2].tools.iter().any(|t| t.name == "approve"));
    assert!(format!("{:?}", reqs[3].messages).contains(&format!("echo from {reviewer}")));
}

/// Narrows unattended threads to `approve` and `read_file` (a verdict-only turn).
struct VerdictOnly;
impl ToolScope for VerdictOnly {
    fn name(&self) -> &str {
        "verdict_only"
    }
    fn narrow(&self, thread: &Thread, _store: &Store) -> Result<Option<Narrowed>, String> {
        Ok(
            (thread.interaction == Interaction::Unattended).then(|| Narrowed {
                only: vec!["approve".into(), "read_file".into()],
                reason: "this is a verdict turn".into(),
                keep_sourced_read_only: false,
            }),
        )
    }
}

#[tokio::test]
async fn a_tool_scope_narrows_what_a_thread_sees_and_may_call() {
    let counter = Arc::new(AtomicUsize::new(0));
    let c = counter.clone();
    let h = build(
        vec![
            Reply::Tools(
                String::new(),
                vec![call("c1", "shell", r#"{"command": "touch escaped"}"#)],
            ),
            Reply::Tools(String::new(), vec![call("c2", "approve", "{}")]),
            Reply::Text("done".into()),
            Reply::Text("hello".into()),
        ],
        move |b| {
            b.tool(reviewer_tool(c))
                .unwrap()
                .tool_scope(Arc::new(VerdictOnly))
        },
    );
    let reviewer = h.thread(Interaction::Unattended);
    h.engine
        .deliver(reviewer, Delivery::user_task("review"))
        .await
        .unwrap();
    h.engine.wait_idle(reviewer).await;
    let reqs = h.provider.requests();
    let names: Vec<&str> = reqs[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["read_file", "approve"],
        "only the scope's tools are offered"
    );
    let refused = format!("{:?}", reqs[1].messages);
    assert!(
        refused.contains("shell is refused: this is a verdict turn"),
        "{refused}"
    );
    assert_eq!(counter.load(Ordering::SeqCst), 1, "approve was callable");
    assert!(!h.workspace.join("escaped").exists());

    // A thread the scope leaves alone sees every tool.
    let person = h.thread(Interaction::Interactive);
    h.engine
        .deliver(person, Delivery::user_task("hi"))
        .await
        .unwrap();
    h.engine.wait_idle(person).await;
    let reqs = h.provider.requests();
    assert!(reqs[3].tools.iter().any(|t| t.name == "shell"));
}

#[tokio::test]
async fn a_tool_name_cannot_be_registered_twice_or_shadow_a_builtin() {
    let counter = Arc::new(AtomicUsize::new(0));
    let b = support::build(vec![], |b| b);
    let builder = troupe_engine::Engine::builder(
        b.engine.store().clone(),
        Arc::new(troupe_engine::models::FixedModel {
            provider: b.provider.clone(),
            retry: troupe_llm::RetryPolicy::none(),
        }),
    );
    let builder = builder.tool(reviewer_tool(counter.clone())).unwrap();
    assert!(builder.tool(reviewer_tool(counter.clone())).is_err());
    let mut shadow = reviewer_tool(counter);
    shadow.spec.name = "shell".into();
    let fresh = troupe_engine::Engine::builder(
        b.engine.store().clone(),
        Arc::new(troupe_engine::models::FixedModel {
            provider: b.provider.clone(),
            retry: troupe_llm::RetryPolicy::none(),
        }),
    );
    assert!(fresh.tool(shadow).is_err());
}

struct EndingContract(AtomicUsize);
impl EndingHook for EndingContract {
    fn name(&self) -> &str {
        "ending_contract"
    }
    fn check(&self, ctx: &EndingContext<'_>) -> EndingVerdict {
        self.0.fetch_add(1, Ordering::SeqCst);
        // This contract asks once per run; a hook that sees its own bounce lets the next go.
        if ctx.final_text.contains("DONE") || ctx.bounced.iter().any(|h| h == self.name()) {
            return EndingVerdict::Pass;
        }
        EndingVerdict::Bounce("say whether the job is done before you end".to_string())
    }
}

#[tokio::test]
async fn an_ending_hook_sends_the_ending_back_once_with_its_reason() {
    let hook = Arc::new(EndingContract(AtomicUsize::new(0)));
    let hk = hook.clone();
    let h = build(
        vec![Reply::Text("bye".into()), Reply::Text("still bye".into())],
        move |b| b.ending_hook(hk),
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("work"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    // Sent back once (the reason reaches the model), then the second ending stands.
    assert_eq!(h.provider.calls(), 2);
    let second = &h.provider.requests()[1];
    assert_eq!(
        second.messages.last().unwrap(),
        &ChatMessage::user("say whether the job is done before you end")
    );
    let run = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 1))
        .unwrap()
        .remove(0);
    assert_eq!(run.ending_bounces, 1);
    assert_eq!(run.status.as_str(), "completed");
    // The bounce is in context but hidden from people.
    let msgs = h
        .engine
        .store()
        .read(|tx| tx.messages(t, None, 10))
        .unwrap();
    let bounce = msgs
        .iter()
        .find(|m| matches!(&m.origin, Origin::System(d) if d == "ending_hook:ending_contract"))
        .unwrap();
    assert!(!bounce.parts[0].visible && bounce.parts[0].in_context);
}

struct ChildRunning;
impl WaitProvider for ChildRunning {
    fn name(&self) -> &str {
        "children"
    }
    fn waits(&self, _t: &Thread, _s: &Store) -> Result<Vec<String>, String> {
        Ok(vec!["child task 3 is running".into()])
    }
}

struct Always(AtomicUsize);
impl ContinuationPolicy for Always {
    fn id(&self) -> &str {
        "always"
    }
    fn priority(&self) -> i32 {
        10
    }
    fn propose(&self, _g: &Gate<'_>) -> Result<Proposal, String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(Proposal::Inbox(
            Delivery::user_task("go on").with_mode(InboxMode::Steer),
        ))
    }
}

#[tokio::test]
async fn a_blocking_wait_closes_the_gate_for_every_policy() {
    let p = Arc::new(Always(AtomicUsize::new(0)));
    let pp = p.clone();
    let h = build(vec![Reply::Text("answered".into())], move |b| {
        b.policy(pp).wait_provider(Arc::new(ChildRunning))
    });
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("start"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let out = h.engine.request_drive(t, "test", false).await.unwrap();
    assert_eq!(
        out,
        DriveOutcome::NotHandled {
            refusal: troupe_core::drive::DriveRefusal::NoWork
        }
    );
    assert_eq!(p.0.load(Ordering::SeqCst), 0);
    assert_eq!(h.provider.calls(), 1);
}

struct Projector;
impl MessageObserver for Projector {
    fn on_message(
        &self,
        tx: &mut troupe_store::Tx<'_>,
        m: &troupe_core::message::Message,
    ) -> Result<(), troupe_store::StoreError> {
        // Written in the same transaction as the message itself.
        tx.event(
            "projected",
            Some(m.thread_id),
            m.run_id,
            json!({"message_id": m.id, "text": m.text()}),
        )?;
        Ok(())
    }
}

#[tokio::test]
async fn a_message_observer_sees_every_message_in_its_transaction() {
    let h = build(vec![Reply::Text("projected reply".into())], |b| {
        b.message_observer(Arc::new(Projector))
    });
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("project me"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let events = h
        .engine
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), Some(t), 1000))
        .unwrap();
    let projected: Vec<String> = events
        .iter()
        .filter(|e| e.kind == "projected")
        .map(|e| e.payload["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(projected, ["project me", "projected reply"]);
    // Each projection follows the message_created event it mirrors, with no run event between
    // (they were committed together).
    for (i, e) in events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == "projected")
    {
        let created = events[..i]
            .iter()
            .rposition(|c| {
                c.kind == "message_created" && c.payload["message"]["id"] == e.payload["message_id"]
            })
            .expect("the message was created before its projection");
        assert!(
            events[created..i]
                .iter()
                .all(|x| !x.kind.starts_with("run_"))
        );
    }
}

/// Hold the store's write lock on another thread until the returned sender is dropped or sent
/// to; answers once the lock is held.
fn hold_writes(store: &Store) -> (std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (held, is_held) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let store = store.clone();
    let holder = std::thread::spawn(move || {
        store
            .write(|_| {
                held.send(()).unwrap();
                let _ = released.recv();
                Ok(())
            })
            .unwrap();
    });
    is_held.recv().unwrap();
    (release, holder)
}

/// `n` threads with a task each in their inbox, not yet woken; each run hangs in its model call.
fn threads_with_tasks(h: &support::Harness, n: usize) -> Vec<troupe_core::ThreadId> {
    (0..n)
        .map(|i| {
            h.provider.push(Reply::Hang {
                partial: String::new(),
                started: Arc::new(Notify::new()),
            });
            let t = h.thread(Interaction::Interactive);
            h.engine
                .store()
                .write(|tx| tx.deliver(t, &Delivery::user_task(format!("task {i}"))))
                .unwrap();
            t
        })
        .collect()
}

/// Wake every thread at once, answering once each start is queued behind the held writer.
async fn wake_all_queued(
    h: &support::Harness,
    threads: &[troupe_core::ThreadId],
    queued: usize,
) -> Vec<tokio::task::JoinHandle<DriveOutcome>> {
    let drives: Vec<_> = threads
        .iter()
        .map(|&t| {
            let engine = h.engine.clone();
            tokio::spawn(async move { engine.request_drive(t, "test", false).await.unwrap() })
        })
        .collect();
    // A start written with a plain write would block its worker on the lock instead, and the
    // count would never be reached.
    // (The deadline is read by hand: blocked workers would not drive tokio's timer.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while h.engine.store().pending_writes() < queued {
        assert!(
            std::time::Instant::now() < deadline,
            "the starts wait for the group commit"
        );
        tokio::task::yield_now().await;
    }
    drives
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_woken_at_once_queue_their_starts_for_one_commit() {
    // SQLite only: the test holds the store's one writer so that writes queue behind it; on
    // PostgreSQL the store's other writers (own connections) commit them meanwhile.
    if troupe_store::testing::backend() == troupe_store::Dialect::Postgres {
        return;
    }
    let h = build(vec![], |b| b);
    let threads = threads_with_tasks(&h, 5);
    let (release, holder) = hold_writes(h.engine.store());
    // All five starts wait in the writer's queue at once, so its next batch takes them all.
    let drives = wake_all_queued(&h, &threads, 5).await;
    assert_eq!(h.engine.live_runs(), 5, "admitted starts count as live");
    release.send(()).unwrap();
    holder.join().unwrap();
    for d in drives {
        assert!(d.await.unwrap().started().is_some());
    }
    assert_eq!(h.engine.live_runs(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_on_live_runs_counts_the_starts_still_committing() {
    // SQLite only: the test holds the store's one writer so that writes queue behind it; on
    // PostgreSQL the store's other writers (own connections) commit them meanwhile.
    if troupe_store::testing::backend() == troupe_store::Dialect::Postgres {
        return;
    }
    let h = build(vec![], |b| b.admission(Arc::new(Cap(2))));
    let threads = threads_with_tasks(&h, 5);
    let (release, holder) = hold_writes(h.engine.store());
    // Two starts queue behind the held write; the other three are refused a slot meanwhile
    // (their refusals are plain writes that wait for the lock too).
    let drives = wake_all_queued(&h, &threads, 2).await;
    release.send(()).unwrap();
    holder.join().unwrap();
    let mut started = 0;
    let mut queued = 0;
    for d in drives {
        match d.await.unwrap() {
            DriveOutcome::Started { .. } => started += 1,
            DriveOutcome::Queued { check, .. } => {
                assert_eq!(check, "work_slots");
                queued += 1;
            }
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!((started, queued), (2, 3));
    assert_eq!(h.engine.live_runs(), 2);
}
