//! The Light Loop at runtime: a real engine and store, one queued test model answering both the
//! executor and its reviewer children (a request is the reviewer's when its system prompt is the
//! reviewer's).

mod support;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::{Reply, World, call, tool_results, user_texts, world, world_as_served, world_on};
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::{Origin, PartBody};
use troupe_core::thread::{Interaction, Thread};
use troupe_core::{MessageId, SessionId, ThreadId};
use troupe_engine::extension::ToolCallContext;
use troupe_llm::ModelRequest;
use troupe_store::{TaskRecord, TaskRole, TaskStatus, WorkflowTerminal};
use troupe_workflows::SetWorkflowRequest;
use troupe_workflows::lightloop::host::LoopHost;
use troupe_workflows::lightloop::texts::REVIEWER_AGENT;
use troupe_workflows::lightloop::tools::registrations;

fn lightloop(text: &str, max: Option<u32>) -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "lightloop".into(),
        instructions: Some(text.into()),
        max_iterations: max,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

fn none() -> SetWorkflowRequest {
    SetWorkflowRequest {
        kind: "none".into(),
        instructions: None,
        max_iterations: None,
        max_model_calls: None,
        mode: None,
        goal: None,
    }
}

fn stop(id: &str, summary: &str) -> Reply {
    Reply::Tools(vec![call(id, "loop_stop", json!({"summary": summary}))])
}

fn approve(id: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "light_loop_approve",
        json!({"summary": "verified the file"}),
    )])
}

fn reject(id: &str, reason: &str) -> Reply {
    Reply::Tools(vec![call(
        id,
        "light_loop_reject",
        json!({
            "reason": reason,
            "remaining": ["BLOCKING: create hello.txt"],
            "instructions": "create hello.txt with the greeting",
        }),
    )])
}

fn is_reviewer(req: &ModelRequest) -> bool {
    req.system.contains("independent reviewer of a Light Loop")
}

fn tool_names(req: &ModelRequest) -> Vec<String> {
    req.tools.iter().map(|t| t.name.clone()).collect()
}

async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn terminal(w: &World, s: SessionId) -> Option<WorkflowTerminal> {
    w.wf.workflow(s).unwrap().last_terminal
}

async fn ended(w: &World, s: SessionId) -> WorkflowTerminal {
    until("the loop to end", || terminal(w, s).is_some()).await;
    settle(w, s).await;
    terminal(w, s).unwrap()
}

/// Wait until the executor and every reviewer child are idle.
async fn settle(w: &World, s: SessionId) {
    let t = w.thread(s);
    for _ in 0..3 {
        w.idle(s).await;
        for r in reviewers(w, t) {
            tokio::time::timeout(Duration::from_secs(20), w.wf.engine().wait_idle(r.id))
                .await
                .expect("the reviewer did not go idle");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn reviewers(w: &World, executor: ThreadId) -> Vec<Thread> {
    w.wf.store()
        .read(|tx| tx.threads(u32::MAX))
        .unwrap()
        .into_iter()
        .filter(|t| t.parent_id == Some(executor))
        .collect()
}

/// The tool results stored in a thread, in order.
fn stored_results(w: &World, t: ThreadId) -> Vec<String> {
    w.wf.store()
        .read(|tx| tx.messages(t, None, 1000))
        .unwrap()
        .iter()
        .flat_map(|m| m.parts.clone())
        .filter_map(|p| match p.body {
            PartBody::ToolResult { content, .. } => Some(content),
            _ => None,
        })
        .collect()
}

/// The executor's reviewer tasks as `GET /v1/tasks?parent_thread=` lists them, once each has
/// ended (a task settles just after its child goes idle).
async fn ended_review_tasks(w: &World, executor: ThreadId) -> Vec<TaskRecord> {
    let list = || w.wf.tasks(None, Some(executor), 100).unwrap();
    until("the reviewer tasks to end", || {
        list()
            .iter()
            .all(|t| !matches!(t.status, TaskStatus::Queued | TaskStatus::Running))
    })
    .await;
    let tasks = list();
    for task in &tasks {
        assert_eq!(task.role, TaskRole::Reviewer);
        assert!(
            !task.notify_parent,
            "a reviewer's verdict tools deliver its result"
        );
        assert_eq!(task.agent, REVIEWER_AGENT);
    }
    tasks
}

fn lines(w: &World, s: SessionId) -> Vec<String> {
    w.wf.collab()
        .lines(s, None, 1000)
        .unwrap()
        .into_iter()
        .map(|l| l.body)
        .collect()
}

/// With the conversation layer's tools on (as `troupe serve` runs), a Bot in a Light Loop is
/// not offered `work_on`: the loop's claim, review and continuations come back to its thread,
/// so work moved to a job would leave the loop asking again (a small model opened a new job on
/// every continuation) — nor the hand-over tools, which are a job's.
#[tokio::test]
async fn work_on_is_not_offered_to_a_thread_a_light_loop_is_bound_to() {
    let w = world_as_served(Arc::new(troupe_core::SystemClock));
    let plain = w.session();
    w.turn(plain, "hello").await;
    let offered = tool_names(&w.provider.requests()[0]);
    for tool in ["work_on", "submit", "review", "check_back"] {
        assert!(offered.contains(&tool.to_string()), "{tool}: {offered:?}");
    }

    let s = w.session();
    w.wf.set_workflow(s, lightloop("write hello.txt", None))
        .await
        .unwrap();
    w.hanging_turn(s, "write hello.txt").await;
    let offered = tool_names(w.provider.requests().last().unwrap());
    assert!(offered.contains(&"loop_stop".to_string()), "{offered:?}");
    // Nor the job's hand-over and review, which need a job that work_on would choose, nor a
    // check-back: the loop's continuations bring the work back.
    for tool in ["work_on", "submit", "review", "check_back"] {
        assert!(!offered.contains(&tool.to_string()), "{tool}: {offered:?}");
    }
    w.wf.abandon(s).await.unwrap();
}

#[tokio::test]
async fn approve_after_one_reject_completes_the_loop_and_clears_the_slot() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop("write hello.txt", None))
        .await
        .unwrap();
    w.provider.push(stop("c1", "wrote hello.txt"));
    w.provider.push(reject("r1", "hello.txt does not exist"));
    w.provider.push(stop("c2", "created hello.txt for real"));
    w.provider.push(approve("r2"));
    w.say(s, "go").await;
    let end = ended(&w, s).await;
    assert_eq!(end.status, "completed");
    assert_eq!(w.provider.calls(), 4, "no continuation after approval");

    let reqs = w.provider.requests();
    let who: Vec<bool> = reqs.iter().map(is_reviewer).collect();
    assert_eq!(who, vec![false, true, false, true]);
    // The executor has loop_stop and no verdict tools; the reviewer the reverse.
    assert!(tool_names(&reqs[0]).contains(&"loop_stop".to_string()));
    assert!(!tool_names(&reqs[0]).contains(&"light_loop_approve".to_string()));
    assert!(tool_names(&reqs[1]).contains(&"light_loop_reject".to_string()));
    assert!(!tool_names(&reqs[1]).contains(&"loop_stop".to_string()));
    // The review task carries the task and the claim.
    let task = user_texts(&reqs[1]).join("\n");
    assert!(
        task.contains("write hello.txt") && task.contains("wrote hello.txt"),
        "{task}"
    );
    // The executor saw the reason, the remaining items and the instructions, and continued.
    let back = user_texts(&reqs[2]).join("\n");
    assert!(back.contains("hello.txt does not exist"), "{back}");
    assert!(back.contains("BLOCKING: create hello.txt"), "{back}");
    assert!(
        back.contains("create hello.txt with the greeting"),
        "{back}"
    );
    // A successful stop says it is queued, names the host and ends the turn.
    let stop_result = &tool_results(&reqs[2])[0];
    assert!(
        stop_result.contains("\"disposition\":\"queued\""),
        "{stop_result}"
    );
    assert!(
        stop_result.contains("\"transition_owner\":\"host\""),
        "{stop_result}"
    );
    assert!(stop_result.contains("end_turn"), "{stop_result}");

    // One reviewer per claim, each an unattended child bound to the review role on the
    // executor's workspace, started only after the executor's turn had ended.
    let kids = reviewers(&w, t);
    assert_eq!(kids.len(), 2);
    let exec = w.wf.store().read(|tx| tx.thread(t)).unwrap();
    let exec_runs = w.wf.store().read(|tx| tx.runs_for_thread(t, 10)).unwrap();
    let first_exec_run = exec_runs.last().unwrap();
    for k in &kids {
        assert_eq!(k.agent.name, REVIEWER_AGENT);
        assert_eq!(k.agent.role, "review");
        assert_eq!(k.interaction, Interaction::Unattended);
        assert_eq!(k.workspace, exec.workspace);
    }
    let first_review =
        w.wf.store()
            .read(|tx| tx.runs_for_thread(kids[0].id, 1))
            .unwrap();
    assert!(first_review[0].started_at >= first_exec_run.ended_at.unwrap());

    // Each review is a reviewer task whose child is the bound reviewer, completed after its
    // verdict.
    let tasks = ended_review_tasks(&w, t).await;
    let mut children: Vec<ThreadId> = tasks.iter().map(|k| k.child_thread_id).collect();
    let mut bound: Vec<ThreadId> = kids.iter().map(|k| k.id).collect();
    children.sort();
    bound.sort();
    assert_eq!(children, bound);
    assert!(tasks.iter().all(|k| k.status == TaskStatus::Completed));

    let v = w.wf.workflow(s).unwrap();
    assert!(v.kind.is_none() && v.slot.is_none(), "slot cleared: {v:?}");
    let shown = lines(&w, s).join("\n");
    assert!(shown.contains("rejected the claim"), "{shown}");
    assert!(shown.contains("Light Loop completed"), "{shown}");
}

#[tokio::test]
async fn loop_stop_is_refused_outside_an_active_loop_and_from_the_reviewer() {
    let w = world();
    let s = w.session();
    // No loop: the tool is not offered, and a call is refused.
    w.provider.push(Reply::Tools(vec![call(
        "c1",
        "loop_stop",
        json!({"summary": "x"}),
    )]));
    w.provider.push(Reply::Text("ok".into()));
    w.turn(s, "hi").await;
    let reqs = w.provider.requests();
    assert!(!tool_names(&reqs[0]).contains(&"loop_stop".to_string()));
    assert!(
        tool_results(&reqs[1])[0].contains("not available"),
        "{:?}",
        tool_results(&reqs[1])
    );

    // In a loop, the reviewer cannot call it either.
    w.wf.set_workflow(s, lightloop("task", None)).await.unwrap();
    w.provider.push(stop("c2", "done"));
    w.provider.push(Reply::Tools(vec![call(
        "r1",
        "loop_stop",
        json!({"summary": "me too"}),
    )]));
    w.provider.push(approve("r2"));
    w.say(s, "go").await;
    assert_eq!(ended(&w, s).await.status, "completed");
    let reqs = w.provider.requests();
    let refused = tool_results(&reqs[4]);
    assert!(is_reviewer(&reqs[4]));
    assert!(
        refused
            .iter()
            .any(|r| r.contains("'loop_stop' is not available")),
        "{refused:?}"
    );
}

#[tokio::test]
async fn loop_stop_argument_errors_persist_nothing_and_a_repeat_is_idempotent() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop("task", None)).await.unwrap();
    w.provider.push(Reply::Tools(vec![
        call("c1", "loop_stop", json!({"summary": "  "})),
        call("c2", "loop_stop", json!({"summary": 5})),
    ]));
    w.provider.push(Reply::Tools(vec![
        // `items` is taken for `completed` (the contract speaks of "the items completed").
        call(
            "c3",
            "loop_stop",
            json!({"summary": "done", "items": ["the parser"]}),
        ),
        call("c4", "loop_stop", json!({"summary": "done again"})),
    ]));
    w.provider.push(approve("r1"));
    w.say(s, "go").await;
    assert_eq!(ended(&w, s).await.status, "completed");
    let reqs = w.provider.requests();
    let errs = tool_results(&reqs[1]);
    assert!(
        errs.iter().all(|e| e.contains("invalid_arguments")),
        "{errs:?}"
    );
    assert!(
        errs.iter().all(|e| e.contains("\"persisted\":false")),
        "{errs:?}"
    );
    let oks = stored_results(&w, t);
    assert_eq!(oks.len(), 4, "{oks:?}");
    assert!(oks[2].contains("\"disposition\":\"queued\""), "{oks:?}");
    assert!(oks[3].contains("already_queued"), "{oks:?}");
    assert_eq!(reviewers(&w, t).len(), 1, "one claim, one reviewer");
    // The claim that stood is the first valid one.
    let review = user_texts(&reqs[2]).join("\n");
    assert!(review.contains("Summary: done\n"), "{review}");
    assert!(review.contains("Completed:\n- the parser"), "{review}");
}

#[tokio::test]
async fn approve_and_reject_are_refused_from_a_non_reviewer() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop("task", None)).await.unwrap();
    // The executor is not offered the verdict tools and cannot call them.
    w.provider.push(Reply::Tools(vec![call(
        "c1",
        "light_loop_approve",
        json!({"summary": "self-approved"}),
    )]));
    w.provider.push(stop("c2", "done"));
    w.provider
        .push(Reply::Hang(Arc::new(tokio::sync::Notify::new())));
    w.say(s, "go").await;
    until("the reviewer to be bound", || {
        w.wf.workflow(s).unwrap().reviewer.is_some()
    })
    .await;
    let reqs = w.provider.requests();
    assert!(tool_results(&reqs[1])[0].contains("not available"));
    assert!(terminal(&w, s).is_none(), "self-approval changed nothing");

    // The handler checks the caller too: a thread that is not the recorded reviewer is refused
    // even when called directly, and nothing changes.
    let host = LoopHost::new();
    host.attach(w.wf.engine());
    let tools = registrations(&host);
    let exec = w.wf.store().read(|tx| tx.thread(t)).unwrap();
    let reviewer = w.wf.workflow(s).unwrap().reviewer.unwrap().thread_id;
    let mut impostor = w.wf.store().read(|tx| tx.thread(reviewer)).unwrap();
    impostor.id = ThreadId(impostor.id.0 + 1000);
    for (name, args) in [
        ("light_loop_approve", json!({"summary": "ok"})),
        (
            "light_loop_reject",
            json!({"reason": "r", "remaining": ["BLOCKING: x"], "instructions": "i"}),
        ),
    ] {
        let reg = tools.iter().find(|r| r.spec.name == name).unwrap();
        assert!(!(reg.available)(&exec), "{name} offered to the executor");
        assert!(!(reg.available)(&impostor), "{name} offered to an impostor");
        let ctx = ToolCallContext {
            thread: impostor.clone(),
            run_id: troupe_core::RunId(1),
            message_id: Some(MessageId(1)),
            call_id: "x".into(),
            store: w.wf.store().clone(),
            cancel: Default::default(),
        };
        let r = reg.handler.call(&ctx, &args.to_string()).await;
        assert!(
            r.is_error && r.content.contains("only the recorded reviewer"),
            "{}",
            r.content
        );
        assert!(r.content.contains("\"retryable\":false"), "{}", r.content);
    }
    assert_eq!(
        w.wf.workflow(s).unwrap().phase.as_deref(),
        Some("reviewing")
    );
    w.wf.set_workflow(s, none()).await.unwrap();
}

#[tokio::test]
async fn rejection_at_max_iterations_ends_the_loop_as_iteration_exhausted() {
    let w = world();
    let s = w.session();
    w.wf.set_workflow(s, lightloop("task", Some(2)))
        .await
        .unwrap();
    w.provider.push(stop("c1", "first try"));
    w.provider.push(reject("r1", "not yet"));
    w.provider.push(stop("c2", "second try"));
    w.provider.push(reject("r2", "still not"));
    w.say(s, "go").await;
    let end = ended(&w, s).await;
    assert_eq!(end.status, "iteration_exhausted");
    assert!(end.error.unwrap().contains("still not"));
    assert_eq!(
        w.provider.calls(),
        4,
        "the executor is not sent back to work"
    );
    let v = w.wf.workflow(s).unwrap();
    assert!(v.kind.is_none());
    assert!(lines(&w, s).join("\n").contains("iteration_exhausted"));
}

#[tokio::test]
async fn a_reviewer_ending_without_a_verdict_twice_more_fails_with_review_terminal_tool_missing() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop("task", None)).await.unwrap();
    w.provider.push(stop("c1", "done"));
    w.provider.push(Reply::Text("looks fine to me".into()));
    // In the recovery turn, an effectful tool is refused: only the verdict tools may run.
    w.provider.push(Reply::Tools(vec![call(
        "r2",
        "shell",
        json!({"command": "true"}),
    )]));
    w.provider.push(Reply::Text("still fine".into()));
    w.provider.push(Reply::Text("fine".into()));
    w.say(s, "go").await;
    let end = ended(&w, s).await;
    assert_eq!(end.status, "failed");
    assert!(
        end.error
            .as_deref()
            .unwrap()
            .starts_with("review_terminal_tool_missing"),
        "{end:?}"
    );
    let reqs = w.provider.requests();
    assert_eq!(reqs.len(), 5);
    assert!(reqs[1..].iter().all(is_reviewer));
    assert!(user_texts(&reqs[2]).join("\n").contains("recovery 1 of 2"));
    // The recovery turn is offered only the two verdict tools.
    let mut offered: Vec<String> = reqs[2].tools.iter().map(|t| t.name.clone()).collect();
    offered.sort();
    assert_eq!(offered, ["light_loop_approve", "light_loop_reject"]);
    assert!(user_texts(&reqs[4]).join("\n").contains("recovery 2 of 2"));
    let refused = &tool_results(&reqs[3])[0];
    assert!(refused.contains("recovery turn"), "{refused}");
    assert_eq!(
        reviewers(&w, t).len(),
        1,
        "the same reviewer thread throughout"
    );
    // One task: each recovery turn was a follow-up on it.
    let tasks = ended_review_tasks(&w, t).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].child_thread_id, reviewers(&w, t)[0].id);
    assert_eq!(tasks[0].resumes, 2, "two follow-up turns");
    assert_eq!(tasks[0].status, TaskStatus::Completed);
    assert!(lines(&w, s).join("\n").contains("Light Loop failed"));
    assert!(w.wf.workflow(s).unwrap().kind.is_none());
}

#[tokio::test]
async fn a_reviewer_whose_first_call_fails_ends_the_loop_with_reviewer_launch_failed() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop("task", None)).await.unwrap();
    w.provider.push(stop("c1", "done"));
    w.provider
        .push(Reply::Fail("no key for the review role".into()));
    w.say(s, "go").await;
    let end = ended(&w, s).await;
    assert_eq!(end.status, "failed");
    let error = end.error.unwrap();
    assert!(error.starts_with("reviewer_launch_failed: "), "{error}");
    assert!(error.contains("no key for the review role"), "{error}");
    let tasks = ended_review_tasks(&w, t).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].status, TaskStatus::Failed);
    assert_eq!(tasks[0].resumes, 0, "no recovery turn for a launch failure");
    settle(&w, s).await;
    assert_eq!(w.provider.calls(), 2, "nothing ran after the failure");
}

#[tokio::test]
async fn cancel_during_review_stops_the_reviewer_and_is_idempotent() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop("task", None)).await.unwrap();
    let started = Arc::new(tokio::sync::Notify::new());
    w.provider.push(stop("c1", "done"));
    w.provider.push(Reply::Hang(started.clone()));
    w.say(s, "go").await;
    tokio::time::timeout(Duration::from_secs(20), started.notified())
        .await
        .expect("the reviewer did not start");
    let view = w.wf.workflow(s).unwrap();
    assert_eq!(view.phase.as_deref(), Some("reviewing"));
    let reviewer = view.reviewer.unwrap();
    assert!(reviewer.running && reviewer.turn_id.is_some());

    let v = w.wf.set_workflow(s, none()).await.unwrap();
    assert!(v.changed);
    assert_eq!(v.last_terminal.unwrap().status, "cancelled");
    assert!(!w.wf.engine().is_running(reviewer.thread_id));
    assert!(!w.wf.engine().is_running(t));
    // The reviewer's task is cancelled with the loop, not just its run.
    let tasks = ended_review_tasks(&w, t).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].child_thread_id, reviewer.thread_id);
    assert_eq!(
        reviewer.task_id,
        Some(tasks[0].id),
        "the view names the task"
    );
    assert_eq!(tasks[0].status, TaskStatus::Cancelled);
    // Again: nothing to cancel.
    assert!(!w.wf.set_workflow(s, none()).await.unwrap().changed);
    assert_eq!(w.wf.cancel_light_loop(t).await.unwrap(), None);
    settle(&w, s).await;
    assert_eq!(w.provider.calls(), 2, "nothing restarted");
}

#[tokio::test]
async fn a_restart_during_review_resumes_the_same_review_without_spending_recovery() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let s = before.session();
    let t = before.thread(s);
    before
        .wf
        .set_workflow(s, lightloop("task", None))
        .await
        .unwrap();
    let started = Arc::new(tokio::sync::Notify::new());
    before.provider.push(stop("c1", "done"));
    before.provider.push(Reply::Hang(started.clone()));
    before.say(s, "go").await;
    tokio::time::timeout(Duration::from_secs(20), started.notified())
        .await
        .expect("the reviewer did not start");
    let reviewer = before.wf.workflow(s).unwrap().reviewer.unwrap().thread_id;
    // The process "dies" with the reviewer mid-call: the old engine is simply abandoned.
    drop(before);

    let after = world_on(dir, "boot-2");
    after.provider.push(approve("r1"));
    // The daemon's order: tasks are reconciled before the kernel's recovery.
    let cut = after.wf.reconcile_tasks().unwrap();
    assert_eq!(cut.interrupted.len(), 1, "the review task was interrupted");
    let kernel = after.wf.engine().recover().await.unwrap();
    assert_eq!(kernel.interrupted_runs.len(), 1, "{kernel:?}");
    let report = after.wf.recover_light_loops().await.unwrap();
    assert_eq!(report.replaced_reviewers, vec![reviewer]);
    assert_eq!(report.claims, vec![t]);
    after.wf.continue_session(s).await.unwrap();
    let end = ended(&after, s).await;
    assert_eq!(end.status, "completed");

    let reqs = after.provider.requests();
    assert_eq!(reqs.len(), 1, "only the resumed review ran");
    assert!(is_reviewer(&reqs[0]));
    let seen = user_texts(&reqs[0]).join("\n");
    assert!(
        seen.contains("Review a Light Loop completion claim"),
        "{seen}"
    );
    assert!(
        !seen.contains("recovery"),
        "no recovery turn was spent: {seen}"
    );
    assert_eq!(
        reviewers(&after, t).len(),
        1,
        "the same reviewer thread resumed"
    );
    // The interrupted task was taken up again under its claim's key, on the same child.
    let tasks = ended_review_tasks(&after, t).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].child_thread_id, reviewer);
    assert_eq!(tasks[0].resumes, 1);
    assert_eq!(tasks[0].status, TaskStatus::Completed);
}

#[tokio::test]
async fn a_restart_during_a_recovery_turn_resumes_that_turn_without_spending_another() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let before = world_on(dir.clone(), "boot-1");
    let s = before.session();
    let t = before.thread(s);
    before
        .wf
        .set_workflow(s, lightloop("task", None))
        .await
        .unwrap();
    let started = Arc::new(tokio::sync::Notify::new());
    before.provider.push(stop("c1", "done"));
    before.provider.push(Reply::Text("looks fine".into()));
    before.provider.push(Reply::Hang(started.clone()));
    before.say(s, "go").await;
    tokio::time::timeout(Duration::from_secs(20), started.notified())
        .await
        .expect("the recovery turn did not start");
    let reviewer = before.wf.workflow(s).unwrap().reviewer.unwrap();
    assert_eq!(reviewer.recovery_attempts, 1);
    drop(before);

    let after = world_on(dir, "boot-2");
    after.provider.push(approve("r1"));
    assert_eq!(after.wf.reconcile_tasks().unwrap().interrupted.len(), 1);
    after.wf.engine().recover().await.unwrap();
    let report = after.wf.recover_light_loops().await.unwrap();
    assert_eq!(report.replaced_reviewers, vec![reviewer.thread_id]);
    after.wf.continue_session(s).await.unwrap();
    assert_eq!(ended(&after, s).await.status, "completed");

    let reqs = after.provider.requests();
    assert_eq!(reqs.len(), 1, "only the resumed recovery turn ran");
    let seen = user_texts(&reqs[0]).join("\n");
    assert!(seen.contains("recovery 1 of 2"), "{seen}");
    assert!(
        !seen.contains("recovery 2 of 2"),
        "no second recovery turn: {seen}"
    );
    let tasks = ended_review_tasks(&after, t).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].child_thread_id, reviewer.thread_id);
    assert_eq!(tasks[0].resumes, 2, "one follow-up, one resume");
    assert_eq!(tasks[0].status, TaskStatus::Completed);
}

#[tokio::test]
async fn cancelling_a_light_loop_under_review_cancels_its_reviewer_task() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop("task", None)).await.unwrap();
    let started = Arc::new(tokio::sync::Notify::new());
    w.provider.push(stop("c1", "done"));
    w.provider.push(Reply::Hang(started.clone()));
    w.say(s, "go").await;
    tokio::time::timeout(Duration::from_secs(20), started.notified())
        .await
        .expect("the reviewer did not start");
    let reviewer = w.wf.workflow(s).unwrap().reviewer.unwrap().thread_id;
    let listed = w.wf.tasks(None, Some(t), 100).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].child_thread_id, reviewer);
    assert_eq!(listed[0].status, TaskStatus::Running);

    // The domain cancel (Abandon's path).
    assert_eq!(
        w.wf.cancel_light_loop(t).await.unwrap().as_deref(),
        Some("lightloop")
    );
    assert_eq!(terminal(&w, s).unwrap().status, "cancelled");
    let tasks = ended_review_tasks(&w, t).await;
    assert_eq!(tasks[0].status, TaskStatus::Cancelled);
    assert!(!w.wf.engine().is_running(reviewer));
    settle(&w, s).await;
    assert_eq!(w.provider.calls(), 2, "nothing restarted");
}

#[tokio::test]
async fn a_continuation_is_proposed_when_the_executor_ends_without_a_claim() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(s, lightloop("write the parser", None))
        .await
        .unwrap();
    w.provider.push(Reply::Text("halfway".into()));
    w.provider.push(stop("c1", "parser written"));
    w.provider.push(approve("r1"));
    w.say(s, "go").await;
    assert_eq!(ended(&w, s).await.status, "completed");
    let reqs = w.provider.requests();
    let cont = user_texts(&reqs[1]).join("\n");
    assert!(cont.contains("[Light Loop] Continue the task") && cont.contains("write the parser"));
    // The continuation is a keyed delivery with the policy's origin: a repeat is a no-op.
    let msgs = w.wf.store().read(|tx| tx.messages(t, None, 100)).unwrap();
    let c = msgs
        .iter()
        .find(|m| m.origin == Origin::Continuation("light_loop".into()))
        .unwrap();
    let key = c.delivery_key.clone().unwrap();
    assert!(key.starts_with("continuation:light_loop:"), "{key}");
    let again =
        w.wf.store()
            .write(|tx| {
                tx.deliver(
                    t,
                    &Delivery {
                        mode: InboxMode::Steer,
                        priority: Priority::OWN_TIMER,
                        origin: Origin::Continuation("light_loop".into()),
                        text: "dup".into(),
                        visible: true,
                        delivery_key: Some(key.clone()),
                        order_key: None,
                        defers_calls: false,
                    },
                )
            })
            .unwrap();
    assert!(!again.created);
}
