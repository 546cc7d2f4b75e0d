//! Child tasks (Cortex) at runtime: a real engine and store; the model answers each thread by
//! a marker in the thread's first user text, and a child can be held in flight until the test
//! releases it. Waiting is on store events and on the model's request counter, never on time.

mod cortex_support;

use cortex_support::{Step, W, call_tool, task_call, text, tool_ctx, user_texts, world, world_on};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use troupe_core::ThreadId;
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::message::Origin;
use troupe_core::thread::Interaction;
use troupe_engine::DriveOutcome;
use troupe_llm::ChatMessage;
use troupe_store::{TaskRecord, TaskStatus};

#[tokio::test]
async fn task_starts_a_child_and_the_parent_gets_the_result_as_a_steer_item() {
    let w = world();
    let (s, parent) = w.lead();
    w.bot("Ann");
    w.model.route(
        "P-ONE",
        vec![
            Step::Tools(vec![task_call(
                "c1",
                json!({"agent": "ann", "prompt": "JOB-1 count the files", "description": "count files", "output": {"kind": "final"}}),
            )]),
            text("asked Ann"),
            text("Ann counted 3"),
        ],
    );
    w.model
        .route("JOB-1", vec![Step::Hold("There are 3 files.".into())]);
    w.say(s, "P-ONE go").await;
    w.until("the child in flight", || w.model.holding() == ["JOB-1"])
        .await;
    w.idle(parent).await;
    let t = w.tasks(parent).remove(0);
    assert_eq!(t.status, TaskStatus::Running);
    assert_eq!(t.agent, "Ann");
    // The tool answered at once with the id, while the child works.
    let first = &w.model.requests_for("P-ONE")[1];
    let result = first
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        result.contains(&format!("\"task_id\":\"{}\"", t.id)),
        "{result}"
    );

    // The child: unattended, under the parent, on its workspace, bound to the agent, and
    // without the task tools.
    let (parent_t, child) =
        w.wf.store()
            .read(|tx| Ok((tx.thread(parent)?, tx.thread(t.child_thread_id)?)))
            .unwrap();
    assert_eq!(child.parent_id, Some(parent));
    assert_eq!(child.interaction, Interaction::Unattended);
    assert_eq!(child.workspace, parent_t.workspace);
    assert_eq!(child.agent.name, "Ann");
    let child_req = &w.model.requests_for("JOB-1")[0];
    assert!(!child_req.tools.iter().any(|t| t.name == "task"));

    w.model.release("JOB-1");
    w.until("the result in the parent", || !w.notices(parent).is_empty())
        .await;
    w.idle(parent).await;
    let done = w.task(t.id);
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.output_text.as_deref(), Some("There are 3 files."));
    // A steer item (no new root), with the result, read by the parent's next model call.
    let steer =
        w.wf.store()
            .read(|tx| tx.messages(parent, None, 1000))
            .unwrap()
            .into_iter()
            .find(|m| m.origin == Origin::Delegation(format!("cortex:{}", t.id)))
            .unwrap();
    assert!(!steer.is_root);
    assert_eq!(
        steer.delivery_key.as_deref(),
        Some(format!("cortex:{}:result:0", t.id).as_str())
    );
    let last = w.model.requests_for("P-ONE").pop().unwrap();
    let seen = user_texts(&last).join("\n");
    assert!(
        seen.contains(&format!("[Task {} (Ann) completed: count files]", t.id))
            && seen.contains("There are 3 files."),
        "{seen}"
    );
}

/// A lead that asks for `n` held tasks, JOB-1..JOB-n, spread over `agents` in turn.
async fn fan_out(w: &W, n: usize, agents: &[&str]) -> ThreadId {
    let (s, parent) = w.lead();
    let calls = (1..=n)
        .map(|i| {
            task_call(
                &format!("c{i}"),
                json!({"agent": agents[(i - 1) % agents.len()], "prompt": format!("JOB-{i}.")}),
            )
        })
        .collect();
    w.model
        .route("FAN", vec![Step::Tools(calls), text("waiting")]);
    for i in 1..=n {
        w.model
            .route(&format!("JOB-{i}."), vec![Step::Hold(format!("done {i}"))]);
    }
    w.say(s, "FAN out").await;
    w.until("eight children in flight", || w.model.holding().len() == 8)
        .await;
    w.idle(parent).await;
    parent
}

#[tokio::test]
async fn the_ninth_task_on_one_agent_is_queued_and_starts_when_one_finishes_in_creation_order() {
    let w = world();
    w.bot("ann");
    let parent = fan_out(&w, 10, &["ann"]).await;
    use TaskStatus::*;
    let mut want = vec![Running; 8];
    want.extend([Queued, Queued]);
    assert_eq!(w.statuses(parent), want);
    assert_eq!(w.model.requests_for("JOB-9.").len(), 0);

    w.model.release("JOB-3.");
    w.until("the ninth child in flight", || {
        w.model.holding().contains(&"JOB-9.".to_string())
    })
    .await;
    let st = w.statuses(parent);
    assert_eq!(st[2], Completed);
    assert_eq!(st[8], Running);
    assert_eq!(st[9], Queued, "the tenth waits: creation order");
    assert_eq!(w.model.holding().len(), 8);
}

#[tokio::test]
async fn the_overall_cap_of_eight_counts_every_agent() {
    let w = world();
    w.bot("ann");
    w.bot("bob");
    let parent = fan_out(&w, 9, &["ann", "bob"]).await;
    let tasks = w.tasks(parent);
    assert_eq!(tasks[8].agent, "ann");
    // Neither agent has eight running, yet the ninth waits: the cap is overall.
    assert_eq!(tasks[8].status, TaskStatus::Queued);
    assert_eq!(
        tasks
            .iter()
            .filter(|t| t.agent == "bob" && t.status == TaskStatus::Running)
            .count(),
        4
    );
    w.model.release("JOB-2."); // one of bob's
    w.until("the ninth child in flight", || {
        w.model.holding().contains(&"JOB-9.".to_string())
    })
    .await;
    assert_eq!(w.task(tasks[8].id).status, TaskStatus::Running);
}

#[tokio::test]
async fn the_parents_continuation_is_held_while_a_child_runs_and_proceeds_after() {
    let w = world();
    let (s, parent) = w.lead();
    w.bot("ann");
    w.model.route(
        "P-WAIT",
        vec![
            Step::Tools(vec![task_call(
                "c1",
                json!({"agent": "ann", "prompt": "JOB-W check"}),
            )]),
            text("waiting for ann"),
            text("read the result"),
        ],
    );
    w.model.route("JOB-W", vec![Step::Hold("all good".into())]);
    w.nudge.armed.store(true, Ordering::SeqCst);
    w.say(s, "P-WAIT go").await;
    w.until("the child in flight", || w.model.holding() == ["JOB-W"])
        .await;
    w.idle(parent).await;
    // The parent ended its turn, but the gate stays closed while the child runs.
    let outcome =
        w.wf.engine()
            .request_drive(parent, "test", false)
            .await
            .unwrap();
    assert!(
        matches!(outcome, DriveOutcome::NotHandled { .. }),
        "{outcome:?}"
    );
    assert_eq!(w.nudge.proposals.load(Ordering::SeqCst), 0);
    assert!(w.wf.store().read(|tx| tx.inbox(parent)).unwrap().is_empty());

    w.model.release("JOB-W");
    w.until("the nudge after the result", || {
        w.model
            .requests_for("P-WAIT")
            .iter()
            .any(|r| user_texts(r).iter().any(|t| t.contains("[nudge]")))
    })
    .await;
    assert_eq!(w.nudge.proposals.load(Ordering::SeqCst), 1);
    // The result came first (as a steer), the nudge after the parent's reply to it.
    let reqs = w.model.requests_for("P-WAIT");
    let seen = user_texts(&reqs[2]).join("\n");
    assert!(
        seen.contains("all good") && !seen.contains("[nudge]"),
        "{seen}"
    );
}

async fn one_task(w: &W, marker: &str, args: Value, child: Vec<Step>) -> (ThreadId, TaskRecord) {
    let (s, parent) = w.lead();
    w.bot("ann");
    w.model.route(
        marker,
        vec![Step::Tools(vec![task_call("c1", args)]), text("waiting")],
    );
    let prompt = w_prompt(marker);
    w.model.route(&prompt, child);
    w.say(s, &format!("{marker} go")).await;
    w.until("the task to end", || {
        w.tasks(parent)
            .first()
            .is_some_and(|t| !t.status.is_active())
    })
    .await;
    w.until("the parent told", || !w.notices(parent).is_empty())
        .await;
    w.idle(parent).await;
    (parent, w.tasks(parent).remove(0))
}

fn w_prompt(marker: &str) -> String {
    format!("JOB-{marker}")
}

fn count_schema() -> Value {
    json!({
        "kind": "structured",
        "schema": {
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"]
        }
    })
}

#[tokio::test]
async fn structured_output_is_repaired_once_then_accepted() {
    let w = world();
    let (_, t) = one_task(
        &w,
        "S-OK",
        json!({"agent": "ann", "prompt": "JOB-S-OK count", "output": count_schema()}),
        vec![
            text("There are three."),
            text("```json\n{\"count\": 3}\n```"),
        ],
    )
    .await;
    assert_eq!(t.status, TaskStatus::Completed);
    assert_eq!(t.output_json, Some(json!({"count": 3})));
    assert_eq!(t.repair_attempts, 1);
    let child = w.model.requests_for("JOB-S-OK");
    assert_eq!(child.len(), 2);
    assert!(user_texts(&child[0])[0].contains("\"required\":[\"count\"]"));
    let repair = user_texts(&child[1]).join("\n");
    assert!(
        repair.contains("[Task output repair 1 of 3]") && repair.contains("not one JSON value"),
        "{repair}"
    );
}

#[tokio::test]
async fn structured_output_failing_three_repairs_fails_with_the_validation_error() {
    let w = world();
    let bad = || text(r#"{"count": "many"}"#);
    let (parent, t) = one_task(
        &w,
        "S-BAD",
        json!({"agent": "ann", "prompt": "JOB-S-BAD count", "output": count_schema()}),
        vec![bad(), bad(), bad(), bad(), text(r#"{"count": 1}"#)],
    )
    .await;
    assert_eq!(t.status, TaskStatus::Failed);
    assert_eq!(t.repair_attempts, 3);
    let e = t.error.unwrap();
    assert!(
        e.contains("after 3 repair turns") && e.contains("at /count") && e.contains("integer"),
        "{e}"
    );
    assert_eq!(w.model.requests_for("JOB-S-BAD").len(), 4);
    let notice = w.notices(parent).join("\n");
    assert!(
        notice.contains("failed") && notice.contains("at /count"),
        "{notice}"
    );
}

#[tokio::test]
async fn a_child_model_failure_fails_the_task_and_tells_the_parent() {
    let w = world();
    let (parent, t) = one_task(
        &w,
        "F-1",
        json!({"agent": "ann", "prompt": "JOB-F-1 try"}),
        vec![Step::Fail("the endpoint is down".into())],
    )
    .await;
    assert_eq!(t.status, TaskStatus::Failed);
    assert!(
        t.error.as_deref().unwrap().contains("the endpoint is down"),
        "{t:?}"
    );
    let notice = w.notices(parent).join("\n");
    assert!(
        notice.contains(&format!("[Task {} (ann) failed", t.id))
            && notice.contains("the endpoint is down"),
        "{notice}"
    );
}

#[tokio::test]
async fn a_running_task_is_interrupted_at_startup_the_parent_told_once_and_no_model_called() {
    let a = world();
    let (s, parent) = a.lead();
    a.bot("ann");
    a.model.route(
        "P-CRASH",
        vec![
            Step::Tools(vec![task_call(
                "c1",
                json!({"agent": "ann", "prompt": "JOB-C work"}),
            )]),
            text("waiting"),
        ],
    );
    a.model.route("JOB-C", vec![Step::Hold("never".into())]);
    a.say(s, "P-CRASH go").await;
    a.until("the child in flight", || a.model.holding() == ["JOB-C"])
        .await;
    a.idle(parent).await;
    let id = a.tasks(parent)[0].id;
    // A second task was written but the process stopped before starting it: its prompt is
    // still a runnable task item in its child's inbox.
    let queued =
        a.wf.store()
            .write(|tx| {
                troupe_workflows::cortex::prepare_child(
                    tx,
                    &troupe_workflows::cortex::ChildRequest {
                        parent,
                        parent_message: None,
                        agent: troupe_core::thread::AgentBinding::new("ann", "work"),
                        prompt: "JOB-Q later".into(),
                        description: "later".into(),
                        output: troupe_workflows::cortex::OutputContract::Summary,
                        role: troupe_store::TaskRole::Task,
                        notify_parent: true,
                        key: "not-started".into(),
                    },
                )
            })
            .unwrap()
            .task;
    assert_eq!(queued.status, TaskStatus::Queued);

    // A new process on the same data: reconcile, then the kernel's recovery (whose boot
    // wakes find the queued child's prompt, and must not run it).
    let b = world_on(a.dir.clone(), "boot-b");
    let found = b.wf.reconcile_tasks().unwrap();
    assert_eq!(found.interrupted, vec![id, queued.id]);
    let report = b.wf.engine().recover().await.unwrap();
    let (_, woken) = report
        .woken
        .iter()
        .find(|(t, _)| *t == queued.child_thread_id)
        .expect("the boot wake looked at the queued child");
    assert!(
        matches!(woken, DriveOutcome::Refused { check, .. } if check == "cortex"),
        "{woken:?}"
    );
    b.idle(queued.child_thread_id).await;
    assert_eq!(b.model.calls(), 0, "startup calls no model");
    let t = b.task(id);
    assert_eq!(t.status, TaskStatus::Interrupted);
    let steers = |w: &W| -> Vec<String> {
        w.wf.store()
            .read(|tx| tx.inbox(parent))
            .unwrap()
            .into_iter()
            .filter(|i| i.mode == InboxMode::Steer)
            .map(|i| i.text)
            .collect()
    };
    assert_eq!(b.task(queued.id).status, TaskStatus::Interrupted);
    assert_eq!(steers(&b).len(), 2, "one notice per task");
    assert!(steers(&b)[0].contains(&format!("\"resume\": \"{id}\"")));
    // Told once: a second reconciliation finds nothing and writes nothing.
    assert!(b.wf.reconcile_tasks().unwrap().interrupted.is_empty());
    assert_eq!(steers(&b).len(), 2);
    assert_eq!(b.model.calls(), 0);

    // A later task call takes it up again on the same child.
    b.model.route(
        "P-CRASH",
        vec![
            Step::Tools(vec![task_call("c2", json!({"resume": id.to_string()}))]),
            text("resumed it"),
        ],
    );
    b.model
        .route("JOB-C", vec![text("finished after the restart")]);
    b.say(s, "carry on").await;
    b.until("the resumed task to complete", || {
        b.task(id).status == TaskStatus::Completed
    })
    .await;
    let t = b.task(id);
    assert_eq!(t.resumes, 1);
    assert_eq!(t.output_text.as_deref(), Some("finished after the restart"));
    assert_eq!(b.tasks(parent).len(), 2, "the same task, not a new one");
}

#[tokio::test]
async fn task_output_for_an_unknown_id_is_a_clear_error() {
    let w = world();
    let (_, parent) = w.lead();
    let ctx = tool_ctx(&w, parent, "q1");
    let (v, err) = call_tool(&w, "task_output", &ctx, json!({"task_id": "task_999"})).await;
    assert!(err);
    assert_eq!(v["code"], "not_found");
    assert_eq!(
        v["message"],
        "task task_999 not found among the tasks you started"
    );
    let (v, err) = call_tool(&w, "task_output", &ctx, json!({"task_id": "soon"})).await;
    assert!(err);
    assert_eq!(v["code"], "invalid_arguments");
    assert!(v["message"].as_str().unwrap().contains("task_N"), "{v}");
}

#[tokio::test]
async fn a_repeated_tool_call_with_the_same_delivery_key_creates_one_task() {
    let w = world();
    let (_, parent) = w.lead();
    w.bot("ann");
    w.model.route("JOB-D", vec![Step::Hold("ok".into())]);
    let ctx = tool_ctx(&w, parent, "dup");
    let args = json!({"agent": "ann", "prompt": "JOB-D once"});
    let (first, err) = call_tool(&w, "task", &ctx, args.clone()).await;
    assert!(!err, "{first}");
    assert_eq!(first["code"], "task_created");
    let (again, err) = call_tool(&w, "task", &ctx, args).await;
    assert!(!err, "{again}");
    assert_eq!(again["code"], "task_exists");
    assert_eq!(again["task_id"], first["task_id"]);
    assert_eq!(w.tasks(parent).len(), 1);
    let children =
        w.wf.store()
            .read(|tx| tx.threads(u32::MAX))
            .unwrap()
            .into_iter()
            .filter(|t| t.parent_id == Some(parent))
            .count();
    assert_eq!(children, 1);
}

/// A task given only a description is asked in the description's words.
#[tokio::test]
async fn a_task_given_only_a_description_takes_it_as_its_prompt() {
    let w = world();
    let (_, parent) = w.lead();
    w.bot("ann");
    w.model.route("JOB-D", vec![Step::Hold("ok".into())]);
    let ctx = tool_ctx(&w, parent, "described");
    let args = json!({"agent": "ann", "description": "JOB-D count the lines of each file"});
    let (v, err) = call_tool(&w, "task", &ctx, args).await;
    assert!(!err, "{v}");
    assert_eq!(v["code"], "task_created");
    w.until("the child asked", || w.model.holding() == ["JOB-D"])
        .await;
    let asked = user_texts(&w.model.requests_for("JOB-D")[0]).join("\n");
    assert!(
        asked.contains("JOB-D count the lines of each file"),
        "{asked}"
    );
    w.model.release("JOB-D");
}

/// A new task's fields with `"resume": ""` beside them start the new task.
#[tokio::test]
async fn a_blank_resume_beside_a_new_tasks_fields_starts_the_task() {
    let w = world();
    let (_, parent) = w.lead();
    w.bot("ann");
    w.model.route("JOB-R", vec![Step::Hold("ok".into())]);
    let ctx = tool_ctx(&w, parent, "blank-resume");
    let args = json!({"agent": "ann", "prompt": "JOB-R count", "resume": ""});
    let (v, err) = call_tool(&w, "task", &ctx, args).await;
    assert!(!err, "{v}");
    assert_eq!(v["code"], "task_created");
    assert_eq!(w.tasks(parent).len(), 1);
}

#[tokio::test]
async fn tool_argument_errors_persist_nothing_and_say_what_is_wrong() {
    let w = world();
    let (_, parent) = w.lead();
    w.bot("ann");
    let ctx = tool_ctx(&w, parent, "bad");
    let cases = [
        (
            json!({"agent": "zed", "prompt": "x"}),
            "no agent named 'zed' (known agents: lead, ann)",
        ),
        (json!({"agent": "ann"}), "prompt: required"),
        (
            json!({"agent": "ann", "prompt": "x", "output": {"kind": "structured"}}),
            "output",
        ),
        (
            json!({"agent": "ann", "prompt": "x", "speed": 3}),
            "unknown field `speed`",
        ),
        (
            json!({"resume": "task_1", "prompt": "x"}),
            "resume: give it alone",
        ),
        // A blank resume is no resume: what is missing is a new task's agent.
        (json!({"resume": " "}), "agent: required"),
    ];
    for (args, want) in cases {
        let (v, err) = call_tool(&w, "task", &ctx, args.clone()).await;
        assert!(err, "{args}");
        assert_eq!(v["code"], "invalid_arguments", "{v}");
        assert_eq!(v["persisted"], false);
        assert!(v["message"].as_str().unwrap().contains(want), "{args}: {v}");
    }
    assert!(w.tasks(parent).is_empty());
    let threads = w.wf.store().read(|tx| tx.threads(u32::MAX)).unwrap();
    assert_eq!(threads.len(), 1, "no child thread was written");
}

#[tokio::test]
async fn a_reviewer_task_is_exempt_from_the_caps_and_a_follow_up_turn_reuses_its_child() {
    use troupe_core::inbox::Priority;
    use troupe_core::thread::AgentBinding;
    use troupe_store::TaskRole;
    use troupe_workflows::cortex::{self, ChildRequest, OutputContract};

    let w = world();
    w.bot("ann");
    let parent = fan_out(&w, 8, &["ann"]).await;
    let engine = w.wf.engine();
    let req = ChildRequest {
        parent,
        parent_message: None,
        agent: AgentBinding::new("reviewer", "You review."),
        prompt: "JOB-R review the work".into(),
        description: "review".into(),
        output: OutputContract::Summary,
        role: TaskRole::Reviewer,
        notify_parent: false,
        key: "review:claim-1".into(),
    };
    w.model.route(
        "JOB-R",
        vec![Step::Hold("looks fine".into()), text("second look: fine")],
    );
    let prepared =
        w.wf.store()
            .write(|tx| cortex::prepare_child(tx, &req))
            .unwrap();
    assert!(prepared.created);
    // The same key finds the same task.
    let again =
        w.wf.store()
            .write(|tx| cortex::prepare_child(tx, &req))
            .unwrap();
    assert!(!again.created && again.task.id == prepared.task.id);
    cortex::start_admitted(engine);
    w.until("the reviewer in flight beside eight tasks", || {
        w.model.holding().len() == 9
    })
    .await;
    let id = prepared.task.id;
    assert_eq!(w.task(id).status, TaskStatus::Running);

    w.model.release("JOB-R");
    w.until("the review to end", || {
        w.task(id).status == TaskStatus::Completed
    })
    .await;
    assert_eq!(w.task(id).output_text.as_deref(), Some("looks fine"));
    assert!(
        w.notices(parent).is_empty(),
        "a reviewer's parent is not told"
    );

    // A recovery turn on the same child thread, which keeps its first turn.
    let child = w.task(id).child_thread_id;
    let turn = Delivery::user_task("call a verdict tool now")
        .with_mode(InboxMode::Task)
        .with_priority(Priority::SUPERVISOR)
        .with_origin(Origin::Delegation("test".into()))
        .with_key("review:claim-1:recovery:1");
    let queued =
        w.wf.store()
            .write(|tx| cortex::follow_up(tx, id, &turn))
            .unwrap();
    assert_eq!(queued.status, TaskStatus::Queued);
    cortex::start_admitted(engine);
    w.until("the follow-up to end", || {
        w.task(id).status == TaskStatus::Completed && w.task(id).resumes == 1
    })
    .await;
    assert_eq!(w.task(id).output_text.as_deref(), Some("second look: fine"));
    assert_eq!(w.task(id).child_thread_id, child);
    let second = w.model.requests_for("JOB-R").pop().unwrap();
    let seen = user_texts(&second).join("\n");
    assert!(
        seen.contains("JOB-R review") && seen.contains("call a verdict tool now"),
        "{seen}"
    );
}
