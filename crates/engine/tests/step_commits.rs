//! How many commits a model step costs (counted by the store): one for a step whose tool calls
//! are all read-only, two for a step with one effectful call (its start before it acts, then
//! its outcome with the result). Two tasks that differ only in their number of steps are
//! compared, so the run's own fixed writes (delivery, start, end) cancel out.

mod support;

use async_trait::async_trait;
use serde_json::json;
use std::sync::Arc;
use support::{Harness, Reply, build, call};
use troupe_core::effect::EffectOutcome;
use troupe_core::inbox::Delivery;
use troupe_core::thread::Interaction;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;

struct Ok;
#[async_trait]
impl ToolHandler for Ok {
    async fn call(&self, _ctx: &ToolCallContext, _arguments: &str) -> ToolReply {
        ToolReply::ok("ok")
    }
}

fn tool(name: &str, effectful: bool, read_only: bool) -> ToolRegistration {
    ToolRegistration {
        owner: "test".into(),
        spec: ToolSpec {
            name: name.into(),
            description: "answers ok".into(),
            parameters: json!({"type": "object"}),
        },
        effectful,
        read_only,
        available: Arc::new(|_| true),
        handler: Arc::new(Ok),
    }
}

fn steps(name: &str, n: usize) -> Vec<Reply> {
    let mut r: Vec<Reply> = (0..n)
        .map(|i| Reply::Tools(String::new(), vec![call(&format!("c{i}"), name, "{}")]))
        .collect();
    r.push(Reply::Text("done".into()));
    r
}

/// Commits one task of `n` tool steps costs, on a fresh thread.
async fn commits_for(h: &Harness, name: &str, n: usize) -> u64 {
    commits_of_task(h, steps(name, n)).await
}

/// Commits one task answered by `replies` costs, on a fresh thread.
async fn commits_of_task(h: &Harness, replies: Vec<Reply>) -> u64 {
    for r in replies {
        h.provider.push(r);
    }
    let t = h.thread(Interaction::Interactive);
    let before = h.engine.store().stats();
    h.engine
        .deliver(t, Delivery::user_task("go"))
        .await
        .unwrap();
    h.engine.wait_idle(t).await;
    h.engine.store().stats().since(before).commits
}

fn harness() -> Harness {
    build(vec![], |b| {
        b.tool(tool("look", false, true))
            .unwrap()
            .tool(tool("act", true, false))
            .unwrap()
            .tool(tool("record", false, false))
            .unwrap()
    })
}

#[tokio::test]
async fn a_read_only_step_commits_once() {
    let h = harness();
    let few = commits_for(&h, "look", 1).await;
    let more = commits_for(&h, "look", 4).await;
    assert_eq!(
        more - few,
        3,
        "three more read-only steps cost three more commits"
    );
    // The built-in read-only tools take the same path.
    std::fs::write(h.workspace.join("a.txt"), "hi").unwrap();
    let few = commits_for_builtin(&h, 1).await;
    let more = commits_for_builtin(&h, 4).await;
    assert_eq!(more - few, 3);
}

async fn commits_for_builtin(h: &Harness, n: usize) -> u64 {
    let mut replies: Vec<Reply> = (0..n)
        .map(|i| {
            Reply::Tools(
                String::new(),
                vec![call(&format!("r{i}"), "read_file", r#"{"path":"a.txt"}"#)],
            )
        })
        .collect();
    replies.push(Reply::Text("done".into()));
    commits_of_task(h, replies).await
}

#[tokio::test]
async fn an_effectful_step_commits_twice() {
    let h = harness();
    let few = commits_for(&h, "act", 1).await;
    let more = commits_for(&h, "act", 4).await;
    assert_eq!(
        more - few,
        6,
        "each effectful step: its start, then its outcome"
    );
    // Every effect was settled, none left started.
    let effects: Vec<_> = h
        .engine
        .store()
        .read(|tx| tx.threads(u32::MAX))
        .unwrap()
        .into_iter()
        .flat_map(|t| {
            h.engine
                .store()
                .read(|tx| tx.effects_for_thread(t.id))
                .unwrap()
        })
        .collect();
    assert_eq!(effects.len(), 5);
    assert!(
        effects
            .iter()
            .all(|e| e.outcome == EffectOutcome::Succeeded)
    );
}

#[tokio::test]
async fn a_tool_not_declared_read_only_commits_its_reply_before_it_runs() {
    let h = harness();
    // Not read-only: the reply commits first (so the handler sees it), then the result.
    let few = commits_for(&h, "record", 1).await;
    let more = commits_for(&h, "record", 4).await;
    assert_eq!(more - few, 6);
}
