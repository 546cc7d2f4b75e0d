//! BlueprintLoop scenarios (the digest's §5.7) at runtime: a real engine and store, one queued
//! test model answering the executor and its supervisor auditor (a request is the auditor's
//! when its system prompt is the supervisor's).

mod blueprint_loop_support;
mod support;

use blueprint_loop_support::*;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::{Reply, call, tool_results, user_texts, world};
use troupe_core::blueprint_loop::{LoopStatus, RunMode};
use troupe_core::thread::Interaction;
use troupe_store::{NewNote, NoteId, NoteKind, TaskStatus};
use troupe_workflows::{NewBlueprintLoopRequest, SetWorkflowRequest, WorkflowError};

#[tokio::test]
async fn a_user_loop_clears_plan_binds_the_session_and_queues_the_first_prompt() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    w.wf.set_workflow(
        s,
        SetWorkflowRequest {
            kind: "plan".into(),
            instructions: None,
            max_iterations: None,
            max_model_calls: None,
            mode: None,
            goal: None,
        },
    )
    .await
    .unwrap();
    let note = blueprint(&w);
    let hang = Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(hang.clone()));
    let v = w.wf.create_blueprint_loop(request(s, note)).await.unwrap();
    tokio::time::timeout(Duration::from_secs(20), hang.notified())
        .await
        .expect("the executor did not start");

    assert_eq!(v.record.status, LoopStatus::Running);
    assert_eq!(v.session_id, Some(s));
    let view = w.wf.workflow(s).unwrap();
    assert_eq!(view.kind, None, "Plan was cleared");
    let b = view.blueprint.unwrap();
    assert_eq!(
        (b.role.as_str(), b.phase.as_str()),
        ("execution", "running")
    );
    let n = w.wf.store().read(|tx| tx.note(note)).unwrap();
    assert_eq!((n.active_loop_id, n.run_count), (Some(v.record.id.0), 1));
    let first = user_texts(&w.provider.requests()[0]).join("\n");
    assert!(
        first.contains("Carry out the Blueprint \"Hello file\""),
        "{first}"
    );
    assert!(first.contains("keep it short"), "{first}");
    assert!(
        first.contains("Execution is closed after a successful stop"),
        "{first}"
    );
    assert!(tool_names(&w.provider.requests()[0]).contains(&"blueprint_loop_stop".into()));
    w.wf.cancel_blueprint_loop(v.record.id).await.unwrap();
    assert!(!w.wf.engine().is_running(t));
}

#[tokio::test]
async fn the_audit_binds_a_supervisor_child_and_approval_completes_the_loop() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    let note = blueprint(&w);
    w.provider.push(stop("c1", "wrote hello.txt"));
    w.provider.push(look("l1"));
    w.provider.push(approve("a1"));
    let id =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap()
            .record
            .id;
    let l = reach(&w, id, LoopStatus::Completed).await;
    assert_eq!(l.summary.as_deref(), Some("hello.txt verified"));
    assert_eq!(l.audit_thread_id, None);
    assert_eq!(l.stop_request, None);

    let reqs = w.provider.requests();
    assert_eq!(reqs.len(), 3, "no continuation after approval");
    assert!(!is_auditor(&reqs[0]) && is_auditor(&reqs[1]) && is_auditor(&reqs[2]));
    assert!(!tool_names(&reqs[0]).contains(&"blueprint_loop_approve".into()));
    assert!(tool_names(&reqs[1]).contains(&"blueprint_loop_approve".into()));
    assert!(!tool_names(&reqs[1]).contains(&"blueprint_loop_stop".into()));
    let task = user_texts(&reqs[1]).join("\n");
    assert!(
        task.contains("Audit BlueprintLoop") && task.contains("wrote hello.txt"),
        "{task}"
    );
    // The stop result: queued, host-owned, execution closed, end the turn.
    let stop_result =
        w.wf.store()
            .read(|tx| tx.messages(t, None, 100))
            .unwrap()
            .iter()
            .flat_map(|m| m.parts.clone())
            .find_map(|p| match p.body {
                troupe_core::message::PartBody::ToolResult { content, .. } => Some(content),
                _ => None,
            })
            .unwrap();
    for want in [
        "BLUEPRINT_LOOP_REVIEW_QUEUED",
        "\"transition_owner\":\"host\"",
        "\"execution_closed\":true",
        "end_turn",
    ] {
        assert!(stop_result.contains(want), "{want} in {stop_result}");
    }
    // One visible supervisor child on the review role, unattended, on the same workspace.
    let kids = children(&w, t);
    assert_eq!(kids.len(), 1);
    let a = w.wf.store().read(|tx| tx.thread(kids[0])).unwrap();
    let exec = w.wf.store().read(|tx| tx.thread(t)).unwrap();
    // BL-8: the audit started only after the executor's turn had ended (its lease released).
    let (exec_runs, audit_runs) =
        w.wf.store()
            .read(|tx| Ok((tx.runs_for_thread(t, 10)?, tx.runs_for_thread(kids[0], 10)?)))
            .unwrap();
    let claim_turn_ended = exec_runs.last().unwrap().ended_at.unwrap();
    let audit_started = audit_runs.last().unwrap().started_at;
    assert!(
        audit_started >= claim_turn_ended,
        "the audit started at {audit_started}, before the claiming turn ended at {claim_turn_ended}"
    );
    assert_eq!(
        (a.agent.name.as_str(), a.agent.role.as_str()),
        ("supervisor", "review")
    );
    assert_eq!(a.interaction, Interaction::Unattended);
    assert_eq!(a.workspace, exec.workspace);
    // The audit is a reviewer task whose child is the bound auditor, completed after approval.
    let tasks = ended_audit_tasks(&w, t).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].child_thread_id, a.id);
    assert_eq!(tasks[0].status, TaskStatus::Completed);
    // Bindings cleared, the note released, and the person told.
    assert_eq!(w.wf.store().read(|tx| tx.loop_binding(t)).unwrap(), None);
    assert_eq!(w.wf.store().read(|tx| tx.loop_binding(a.id)).unwrap(), None);
    assert_eq!(
        w.wf.store()
            .read(|tx| tx.note(note))
            .unwrap()
            .active_loop_id,
        None
    );
    assert!(
        lines(&w, s)
            .iter()
            .any(|l| l.contains("completed: the supervisor approved"))
    );
}

/// An auditor that approves before any look since the claim is refused (nothing recorded);
/// after a look its approval completes the loop.
#[tokio::test]
async fn an_approval_without_a_look_at_the_work_is_refused_until_the_auditor_looks() {
    let w = world();
    let s = w.session();
    let note = blueprint(&w);
    w.provider.push(stop("c1", "wrote hello.txt"));
    w.provider.push(approve("a1"));
    w.provider.push(look("l1"));
    w.provider.push(approve("a2"));
    let id =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap()
            .record
            .id;
    let l = reach(&w, id, LoopStatus::Completed).await;
    assert_eq!(l.summary.as_deref(), Some("hello.txt verified"));
    let reqs = w.provider.requests();
    assert_eq!(reqs.len(), 4);
    let refused = tool_results(&reqs[2]).join("\n");
    assert!(
        refused.contains("\"code\":\"not_looked\"")
            && refused.contains("you have not looked at the work")
            && refused.contains("Look now: read the Blueprint with note_read"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_rejection_reopens_execution_and_the_next_stop_is_audited_again() {
    let w = world();
    let s = w.session();
    let note = blueprint(&w);
    w.provider.push(stop("c1", "done, I think"));
    w.provider.push(reject("a1", "hello.txt is missing"));
    w.provider.push(stop("c2", "created hello.txt"));
    w.provider.push(look("l2"));
    w.provider.push(approve("a2"));
    let id =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap()
            .record
            .id;
    let l = reach(&w, id, LoopStatus::Completed).await;
    assert_eq!(l.audit.attempts, 1);
    assert_eq!(l.audit.last_reason.as_deref(), Some("hello.txt is missing"));
    let reqs = w.provider.requests();
    let who: Vec<bool> = reqs.iter().map(is_auditor).collect();
    assert_eq!(who, vec![false, true, false, true, true]);
    let back = user_texts(&reqs[2]).join("\n");
    assert!(
        back.contains("hello.txt is missing") && back.contains("BLOCKING: create hello.txt"),
        "{back}"
    );
    assert_eq!(children(&w, l.thread_id).len(), 2, "one auditor per claim");
}

#[tokio::test]
async fn rejection_at_the_iteration_limit_fails_the_loop_without_mail_to_execution() {
    let w = world();
    let s = w.session();
    let note = blueprint(&w);
    w.provider.push(stop("c1", "done"));
    w.provider.push(reject("a1", "nothing exists"));
    let mut req = request(s, note);
    req.max_iterations = Some(1);
    let id = w.wf.create_blueprint_loop(req).await.unwrap().record.id;
    let l = reach(&w, id, LoopStatus::Failed).await;
    assert!(
        l.error
            .as_deref()
            .unwrap()
            .starts_with("iteration_exhausted"),
        "{l:?}"
    );
    assert_eq!(w.provider.calls(), 2, "the executor was not woken again");
    let inbox = w.wf.store().read(|tx| tx.inbox(l.thread_id)).unwrap();
    assert!(inbox.is_empty(), "no rejection mail: {inbox:?}");
}

#[tokio::test]
async fn an_auditor_that_cannot_start_fails_the_loop_with_reviewer_launch_failed() {
    let w = world();
    let s = w.session();
    let note = blueprint(&w);
    w.provider.push(stop("c1", "done"));
    w.provider
        .push(Reply::Fail("no key for the review role".into()));
    let id =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap()
            .record
            .id;
    let l = reach(&w, id, LoopStatus::Failed).await;
    let error = l.error.clone().unwrap();
    assert!(error.starts_with("reviewer_launch_failed: "), "{error}");
    assert!(error.contains("no key for the review role"), "{error}");
    let tasks = ended_audit_tasks(&w, l.thread_id).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].status, TaskStatus::Failed);
}

#[tokio::test]
async fn an_auditor_ending_without_a_verdict_gets_two_recovery_turns_then_fails() {
    let w = world();
    let s = w.session();
    let note = blueprint(&w);
    w.provider.push(stop("c1", "done"));
    w.provider.push(Reply::Text("looks fine".into()));
    w.provider.push(Reply::Tools(vec![call(
        "x",
        "write_file",
        json!({"path": "a", "content": "b"}),
    )]));
    w.provider.push(approve("a1"));
    w.provider.push(Reply::Text("still thinking".into()));
    w.provider.push(Reply::Text("hmm".into()));
    let id =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap()
            .record
            .id;
    let l = reach(&w, id, LoopStatus::Failed).await;
    assert!(
        l.error
            .as_deref()
            .unwrap()
            .starts_with("review_terminal_tool_missing")
    );
    let reqs = w.provider.requests();
    assert!(user_texts(&reqs[2]).join("\n").contains("recovery 1 of 2"));
    // The recovery turn is offered only the two verdict tools.
    let mut offered: Vec<String> = reqs[2].tools.iter().map(|t| t.name.clone()).collect();
    offered.sort();
    assert_eq!(offered, ["blueprint_loop_approve", "blueprint_loop_reject"]);
    let refused = tool_results(&reqs[3]).join("\n");
    assert!(refused.contains("audit recovery turn"), "{refused}");
    // A call that did not run is no look: the approval after it is refused, and in a recovery
    // turn it says to reject.
    let unlooked = tool_results(&reqs[4]).join("\n");
    assert!(
        unlooked.contains("you have not looked at the work")
            && unlooked.contains("only a verdict may be called: reject"),
        "{unlooked}"
    );
    // One task and one child throughout: each recovery turn was a follow-up on it.
    let tasks = ended_audit_tasks(&w, l.thread_id).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(children(&w, l.thread_id), vec![tasks[0].child_thread_id]);
    assert_eq!(tasks[0].resumes, 2, "two follow-up turns");
}

#[tokio::test]
async fn a_turn_ending_without_a_stop_gets_the_continuation() {
    let w = world();
    let s = w.session();
    let note = blueprint(&w);
    w.provider.push(Reply::Text("halfway there".into()));
    w.provider.push(stop("c1", "done"));
    w.provider.push(look("l1"));
    w.provider.push(approve("a1"));
    let id =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap()
            .record
            .id;
    reach(&w, id, LoopStatus::Completed).await;
    let second = user_texts(&w.provider.requests()[1]).join("\n");
    assert!(
        second.contains("A normal final answer does not end this loop"),
        "{second}"
    );
}

#[tokio::test]
async fn only_the_execution_session_may_stop_and_only_the_auditor_may_approve() {
    let w = world();
    let s = w.session();
    let other = w.session();
    let note = blueprint(&w);
    w.provider.push(Reply::Text("waiting".into()));
    w.provider.push(Reply::Text("waiting".into()));
    let hang = Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(hang.clone()));
    let id =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap()
            .record
            .id;
    tokio::time::timeout(Duration::from_secs(20), hang.notified())
        .await
        .unwrap();
    // Another session sees no loop tools at all.
    w.provider.push(Reply::Tools(vec![call(
        "x",
        "blueprint_loop_stop",
        json!({"summary": "mine"}),
    )]));
    w.turn(other, "hi").await;
    let reqs = w.provider.requests();
    let last = reqs.last().unwrap();
    assert!(!tool_names(last).contains(&"blueprint_loop_stop".into()));
    assert!(!tool_names(&reqs[0]).contains(&"blueprint_loop_approve".into()));
    let refused = tool_results(last).join("\n");
    assert!(
        refused.is_empty() || !refused.contains("QUEUED"),
        "{refused}"
    );
    assert_eq!(record(&w, id).stop_request, None);
    w.wf.cancel_blueprint_loop(id).await.unwrap();
}

#[tokio::test]
async fn a_second_loop_on_the_same_blueprint_is_refused_as_already_active() {
    let w = world();
    let (a, b) = (w.session(), w.session());
    let note = blueprint(&w);
    let hang = Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(hang.clone()));
    let first = w.wf.create_blueprint_loop(request(a, note)).await.unwrap();
    let err =
        w.wf.create_blueprint_loop(request(b, note))
            .await
            .unwrap_err();
    assert!(
        matches!(&err, WorkflowError::Conflict { code: "already_active", message } if message.contains(&first.record.id.to_string())),
        "{err:?}"
    );
    // Nothing was written for the refused loop.
    assert_eq!(w.wf.blueprint_loops(false, 10).unwrap().len(), 1);
    let (cancelled, changed) = w.wf.cancel_blueprint_loop(first.record.id).await.unwrap();
    assert!(changed);
    assert_eq!(cancelled.record.status, LoopStatus::Cancelled);
    assert_eq!(
        cancelled.record.error.as_deref(),
        Some("stopped by user request")
    );
    let (_, again) = w.wf.cancel_blueprint_loop(first.record.id).await.unwrap();
    assert!(!again, "cancel is idempotent");
}

#[tokio::test]
async fn bad_requests_are_refused_with_what_is_wrong_and_write_nothing() {
    let w = world();
    let s = w.session();
    let plain =
        w.wf.store()
            .write(|tx| {
                tx.create_note(&NewNote {
                    kind: NoteKind::Note,
                    title: "n".into(),
                    body: "b".into(),
                })
            })
            .unwrap()
            .id;
    let note = blueprint(&w);
    let cases: Vec<(NewBlueprintLoopRequest, &str)> = vec![
        (request(s, plain), "not a Blueprint"),
        (request(s, NoteId(999)), "does not exist"),
        (
            NewBlueprintLoopRequest {
                run_mode: Some("sideways".into()),
                ..request(s, note)
            },
            "run_mode",
        ),
        (
            NewBlueprintLoopRequest {
                max_iterations: Some(0),
                ..request(s, note)
            },
            "max_iterations",
        ),
        (
            NewBlueprintLoopRequest {
                note_version: Some(7),
                ..request(s, note)
            },
            "version 1, not 7",
        ),
    ];
    for (req, want) in cases {
        let err = w.wf.create_blueprint_loop(req).await.unwrap_err();
        assert!(err.to_string().contains(want), "{want}: {err}");
    }
    assert!(w.wf.blueprint_loops(false, 10).unwrap().is_empty());
    // A session holding a Light Loop under way is not idle enough to replace while running.
    let hang = Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(hang.clone()));
    w.say(s, "busy").await;
    tokio::time::timeout(Duration::from_secs(20), hang.notified())
        .await
        .unwrap();
    let err =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap_err();
    assert!(
        matches!(
            err,
            WorkflowError::Conflict {
                code: "session_running",
                ..
            }
        ),
        "{err:?}"
    );
    w.wf.collab().stop(s).await.unwrap();
}

#[tokio::test]
async fn stop_is_refused_while_a_one_shot_watch_blocks_the_session() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    let note = blueprint(&w);
    w.provider.push(Reply::Tools(vec![call(
        "w1",
        "agenda_create",
        json!({"trigger": {"kind": "delay", "seconds": 3600}, "auto_done": true, "payload": "check CI"}),
    )]));
    w.provider.push(stop("c1", "done"));
    w.provider.push(Reply::Text("ok, waiting".into()));
    let id =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap()
            .record
            .id;
    until("the executor to stop after the refusal", || {
        w.provider.calls() >= 3
    })
    .await;
    w.wf.engine().wait_idle(t).await;
    let refused = tool_results(&w.provider.requests()[2]).join("\n");
    assert!(
        refused.contains("blocking_waits") && refused.contains("agenda_cancel(id="),
        "{refused}"
    );
    assert_eq!(record(&w, id).stop_request, None, "no intent written");
    w.wf.cancel_blueprint_loop(id).await.unwrap();
}

#[tokio::test]
async fn cancelling_a_loop_under_audit_cancels_its_audit_task() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    let note = blueprint(&w);
    let hang = Arc::new(tokio::sync::Notify::new());
    w.provider.push(stop("c1", "done"));
    w.provider.push(Reply::Hang(hang.clone()));
    let id =
        w.wf.create_blueprint_loop(request(s, note))
            .await
            .unwrap()
            .record
            .id;
    tokio::time::timeout(Duration::from_secs(20), hang.notified())
        .await
        .expect("the auditor did not start");
    let auditor = record(&w, id).audit_thread_id.unwrap();
    let listed = w.wf.tasks(Some(s), None, 100).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].child_thread_id, auditor);
    assert_eq!(listed[0].status, TaskStatus::Running);
    // The audit task belongs to the loop: it is not cancelled on its own.
    let err = w.wf.cancel_task(listed[0].id).await.unwrap_err();
    assert!(
        matches!(
            &err,
            WorkflowError::Conflict {
                code: "reviewer_task",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(w.wf.task(listed[0].id).unwrap().status, TaskStatus::Running);

    let (view, changed) = w.wf.cancel_blueprint_loop(id).await.unwrap();
    assert!(changed);
    assert_eq!(view.record.status, LoopStatus::Cancelled);
    let tasks = ended_audit_tasks(&w, t).await;
    assert_eq!(tasks[0].status, TaskStatus::Cancelled);
    assert!(!w.wf.engine().is_running(auditor));
    reach(&w, id, LoopStatus::Cancelled).await;
    assert_eq!(w.provider.calls(), 2, "nothing restarted");
}

#[tokio::test]
async fn worktree_mode_runs_the_execution_in_a_git_worktree_on_its_own_branch() {
    let w = world();
    let s = w.session();
    let t = w.thread(s);
    let ws = std::path::PathBuf::from(w.wf.store().read(|tx| tx.thread(t)).unwrap().workspace);
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&ws)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let note = blueprint(&w);
    // Not a repository yet: a clear refusal, nothing written.
    let err =
        w.wf.create_blueprint_loop(NewBlueprintLoopRequest {
            run_mode: Some("worktree".into()),
            ..request(s, note)
        })
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            WorkflowError::Conflict {
                code: "worktree_failed",
                ..
            }
        ),
        "{err:?}"
    );
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(ws.join("README"), "hi").unwrap();
    git(&["add", "README"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-qm",
        "init",
    ]);

    let hang = Arc::new(tokio::sync::Notify::new());
    w.provider.push(Reply::Hang(hang.clone()));
    let v =
        w.wf.create_blueprint_loop(NewBlueprintLoopRequest {
            run_mode: Some("worktree".into()),
            ..request(s, note)
        })
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), hang.notified())
        .await
        .unwrap();
    assert_eq!(v.record.run_mode, RunMode::Worktree);
    assert_ne!(v.session_id, Some(s), "a fresh session executes");
    assert_eq!(v.record.origin_thread_id, t);
    let exec =
        w.wf.store()
            .read(|tx| tx.thread(v.record.thread_id))
            .unwrap();
    assert_eq!(Some(exec.workspace.clone()), v.record.worktree);
    assert!(
        std::path::Path::new(&exec.workspace)
            .join("README")
            .exists()
    );
    let branch = std::process::Command::new("git")
        .args(["-C", &exec.workspace, "branch", "--show-current"])
        .output()
        .unwrap();
    let branch = String::from_utf8_lossy(&branch.stdout).trim().to_string();
    assert!(branch.starts_with("troupe/blueprint-"), "{branch}");
    assert!(git(&["worktree", "list"]).contains(&exec.workspace));
    // The original session is not bound: it may go on with other work.
    assert_eq!(w.wf.workflow(s).unwrap().blueprint, None);
    w.wf.cancel_blueprint_loop(v.record.id).await.unwrap();
}
