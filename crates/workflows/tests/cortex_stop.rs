//! A person's stop reaches delegated work: Stop on a turn and Abandon on a session cancel the
//! child tasks the Bot handed out that are still queued or running.

mod cortex_support;

use cortex_support::{Step, task_call, text, world};
use serde_json::json;
use troupe_store::TaskStatus;

#[tokio::test]
async fn stopping_a_turn_cancels_its_running_child_tasks() {
    let w = world();
    let (s, parent) = w.lead();
    w.bot("Ann");
    w.model.route(
        "P-STOP",
        vec![
            Step::Tools(vec![task_call(
                "c1",
                json!({"agent": "ann", "prompt": "JOB-S long work"}),
            )]),
            Step::Hold("still here".into()),
        ],
    );
    w.model.route("JOB-S", vec![Step::Hold("never".into())]);
    w.say(s, "P-STOP go").await;
    w.until("the parent and the child both in flight", || {
        let mut h = w.model.holding();
        h.sort();
        h == ["JOB-S", "P-STOP"]
    })
    .await;
    let task = w.tasks(parent).remove(0);
    assert_eq!(task.status, TaskStatus::Running);

    let stop = w.wf.stop_session(s, None).await.unwrap();
    assert_eq!(stop.run.thread_id, parent);
    w.until("the task cancelled", || {
        w.task(task.id).status == TaskStatus::Cancelled
    })
    .await;
    w.idle(task.child_thread_id).await;
    assert!(!w.wf.engine().is_running(task.child_thread_id));
}

#[tokio::test]
async fn abandon_cancels_child_tasks_before_the_latch_is_lifted() {
    let w = world();
    let (s, parent) = w.lead();
    w.bot("Ann");
    w.model.route(
        "P-AB",
        vec![
            Step::Tools(vec![task_call(
                "c1",
                json!({"agent": "ann", "prompt": "JOB-A long work"}),
            )]),
            text("waiting for Ann"),
        ],
    );
    w.model.route("JOB-A", vec![Step::Hold("never".into())]);
    w.say(s, "P-AB go").await;
    w.until("the child in flight", || w.model.holding() == ["JOB-A"])
        .await;
    w.idle(parent).await;
    let task = w.tasks(parent).remove(0);

    let report = w.wf.abandon(s).await.unwrap();
    assert_eq!(report.cancelled_tasks, vec![task.id]);
    assert!(report.changed);
    assert_eq!(w.task(task.id).status, TaskStatus::Cancelled);
    w.idle(task.child_thread_id).await;
    let again = w.wf.abandon(s).await.unwrap();
    assert!(again.cancelled_tasks.is_empty(), "abandon is idempotent");
}
