//! The kernel seams a layer above uses to end a run its own way: a tool or a guard that ends
//! the run with a code (the hop's later calls not run), an ending hook that bounces as often as
//! it likes under the kernel's cap or ends the run with a code, and a run observer that sees
//! every start and end inside the writes that record them.

mod support;

use async_trait::async_trait;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::{Reply, build, call};
use tokio::sync::Notify;
use troupe_core::inbox::Delivery;
use troupe_core::run::EndReason;
use troupe_core::thread::{Interaction, Thread};
use troupe_engine::extension::*;
use troupe_llm::ToolSpec;
use troupe_store::{RunRecord, StoreError, Tx};

fn delegated() -> EndReason {
    EndReason::Consumer {
        code: "delegated".into(),
        detail: Some("waits on del_1".into()),
    }
}

struct Ends;
#[async_trait]
impl ToolHandler for Ends {
    async fn call(&self, _ctx: &ToolCallContext, _args: &str) -> ToolReply {
        ToolReply::ending("handed to Bee; your turn ends here", false, delegated())
    }
}

fn ending_tool() -> ToolRegistration {
    ToolRegistration {
        owner: "test-consumer".into(),
        spec: ToolSpec {
            name: "hand_over".into(),
            description: "hand the work over".into(),
            parameters: json!({"type": "object"}),
        },
        effectful: false,
        read_only: false,
        available: Arc::new(|_: &Thread| true),
        handler: Arc::new(Ends),
    }
}

#[tokio::test]
async fn a_tool_that_ends_the_run_leaves_the_rest_of_its_step_unrun() {
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![
                call("c1", "hand_over", "{}"),
                call("c2", "write_file", r#"{"path":"late.txt","content":"no"}"#),
            ],
        )],
        |b| b.tool(ending_tool()).unwrap(),
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let run = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 1))
        .unwrap()
        .remove(0);
    assert_eq!(run.end_reason, Some(delegated()));
    assert_eq!(run.status.as_str(), "completed");
    assert!(
        !h.workspace.join("late.txt").exists(),
        "the later call never ran"
    );
    assert_eq!(h.provider.calls(), 1, "no model call after the ending tool");
    let calls = h.engine.store().read(|tx| tx.tool_calls(run.id)).unwrap();
    let late = calls.iter().find(|c| c.name == "write_file").unwrap();
    assert_eq!(late.status, "refused");
}

struct Budget;
impl EffectGuard for Budget {
    fn name(&self) -> &str {
        "desk"
    }
    fn check(&self, _ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        Err(Refusal::ending(
            "This line needs a job selected before work can proceed.",
            EndReason::Consumer {
                code: "needs_attention".into(),
                detail: None,
            },
        ))
    }
}

#[tokio::test]
async fn a_guard_refusal_may_end_the_run_with_its_code() {
    let h = build(
        vec![Reply::Tools(
            String::new(),
            vec![
                call("c1", "write_file", r#"{"path":"a.txt","content":"a"}"#),
                call("c2", "write_file", r#"{"path":"b.txt","content":"b"}"#),
            ],
        )],
        |b| b.guard(Arc::new(Budget)),
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let run = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 1))
        .unwrap()
        .remove(0);
    assert_eq!(
        run.end_reason.as_ref().map(|r| r.code()),
        Some("needs_attention")
    );
    assert!(!h.workspace.join("a.txt").exists() && !h.workspace.join("b.txt").exists());
    assert_eq!(h.provider.calls(), 1);
    let effects = h
        .engine
        .store()
        .read(|tx| tx.effects_for_thread(t))
        .unwrap();
    assert!(effects.is_empty(), "no effect started: {effects:?}");
}

/// Bounces every ending, forever.
struct Never(AtomicUsize);
impl EndingHook for Never {
    fn name(&self) -> &str {
        "never"
    }
    fn check(&self, _ctx: &EndingContext<'_>) -> EndingVerdict {
        self.0.fetch_add(1, Ordering::SeqCst);
        EndingVerdict::Bounce("not yet".into())
    }
}

#[tokio::test]
async fn an_ending_hook_may_bounce_repeatedly_but_the_kernel_caps_it() {
    let replies = (0..=MAX_ENDING_BOUNCES)
        .map(|i| Reply::Text(format!("ending {i}")))
        .collect();
    let hook = Arc::new(Never(AtomicUsize::new(0)));
    let hk = hook.clone();
    let h = build(replies, move |b| b.ending_hook(hk));
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let run = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 1))
        .unwrap()
        .remove(0);
    assert_eq!(run.ending_bounces as usize, MAX_ENDING_BOUNCES);
    assert_eq!(h.provider.calls(), MAX_ENDING_BOUNCES + 1);
    assert_eq!(hook.0.load(Ordering::SeqCst), MAX_ENDING_BOUNCES);
    assert_eq!(run.status.as_str(), "completed");
}

struct EndsItsWay;
impl EndingHook for EndsItsWay {
    fn name(&self) -> &str {
        "contract"
    }
    fn check(&self, _ctx: &EndingContext<'_>) -> EndingVerdict {
        EndingVerdict::End(EndReason::Consumer {
            code: "answered".into(),
            detail: None,
        })
    }
}

#[tokio::test]
async fn an_ending_hook_may_end_the_run_with_its_own_code() {
    let h = build(vec![Reply::Text("here you go".into())], |b| {
        b.ending_hook(Arc::new(EndsItsWay))
    });
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    let run = h
        .engine
        .store()
        .read(|tx| tx.runs_for_thread(t, 1))
        .unwrap()
        .remove(0);
    assert_eq!(run.end_reason.as_ref().map(|r| r.code()), Some("answered"));
    assert_eq!(run.ending_bounces, 0);
}

/// Writes an event in the very transaction that starts or ends a run.
struct Witness;
impl RunObserver for Witness {
    fn on_run_started(&self, tx: &mut Tx<'_>, run: &RunRecord) -> Result<(), StoreError> {
        tx.event(
            "witness_start",
            Some(run.thread_id),
            Some(run.id),
            json!({}),
        )
    }
    fn on_run_ended(&self, tx: &mut Tx<'_>, run: &RunRecord) -> Result<(), StoreError> {
        let code = run.end_reason.as_ref().map(|r| r.code().to_string());
        tx.event(
            "witness_end",
            Some(run.thread_id),
            Some(run.id),
            json!({"code": code}),
        )
    }
}

fn witnessed(h: &support::Harness) -> Vec<(String, Option<String>)> {
    h.engine
        .store()
        .read(|tx| tx.events_after(troupe_core::EventId(0), None, 1000))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind.starts_with("witness_"))
        .map(|e| (e.kind, e.payload["code"].as_str().map(str::to_string)))
        .collect()
}

#[tokio::test]
async fn a_run_observer_sees_the_start_and_the_end_of_a_finished_run_and_a_stopped_one() {
    let started = Arc::new(Notify::new());
    let h = build(
        vec![
            Reply::Text("done".into()),
            Reply::Hang {
                partial: String::new(),
                started: started.clone(),
            },
        ],
        |b| b.run_observer(Arc::new(Witness)),
    );
    let t = h.thread(Interaction::Interactive);
    h.engine
        .deliver(t, Delivery::user_task("one"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    h.engine
        .deliver(t, Delivery::user_task("two"))
        .await
        .unwrap();
    started.notified().await;
    h.engine
        .stop(t, troupe_engine::StopMode::Internal)
        .await
        .unwrap();
    assert_eq!(
        witnessed(&h),
        vec![
            ("witness_start".to_string(), None),
            ("witness_end".to_string(), Some("completed".to_string())),
            ("witness_start".to_string(), None),
            ("witness_end".to_string(), Some("stopped".to_string())),
        ]
    );
}
