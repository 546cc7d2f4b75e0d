//! The task rules as pure functions: which status may follow which, which queued tasks may
//! start under the concurrency caps, and what a child that went idle means for its task.

use crate::cortex::contract::{MAX_REPAIRS, OutputContract, Verdict};
use std::collections::HashMap;
use troupe_core::run::EndReason;
use troupe_store::{TaskId, TaskRole, TaskStatus};

/// Capped tasks running at once for one agent, and overall (in one process).
pub const MAX_RUNNING_PER_AGENT: usize = 8;
pub const MAX_RUNNING_OVERALL: usize = 8;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskEvent {
    /// Admitted under the caps.
    Start,
    /// The child's reply met the contract.
    Complete,
    Fail,
    Cancel,
    /// Found queued or running at startup.
    Interrupt,
    /// A later `task` call takes an interrupted task up again.
    Resume,
    /// A workflow gives an ended child another turn on the same thread (a reviewer's
    /// recovery turn keeps the evidence of its first one).
    FollowUp,
}

/// The status after `event`, or why the event does not apply. `Ok(None)`: nothing changes
/// (cancelling a cancelled task).
pub fn step(from: TaskStatus, event: &TaskEvent) -> Result<Option<TaskStatus>, String> {
    use TaskStatus::*;
    let to = match (from, event) {
        (Queued, TaskEvent::Start) => Running,
        (Running, TaskEvent::Complete) => Completed,
        (Queued | Running, TaskEvent::Fail) => Failed,
        (Queued | Running | Interrupted, TaskEvent::Cancel) => Cancelled,
        (Cancelled, TaskEvent::Cancel) => return Ok(None),
        (Queued | Running, TaskEvent::Interrupt) => Interrupted,
        (Interrupted, TaskEvent::Resume) => Queued,
        (Completed | Failed | Cancelled | Interrupted, TaskEvent::FollowUp) => Queued,
        (from, event) => {
            return Err(format!(
                "a {} task cannot take {}",
                from.as_str(),
                match event {
                    TaskEvent::Start => "a start",
                    TaskEvent::Complete => "a completion",
                    TaskEvent::Fail => "a failure",
                    TaskEvent::Cancel => "a cancel",
                    TaskEvent::Interrupt => "an interruption",
                    TaskEvent::Resume => "a resume (only interrupted tasks resume)",
                    TaskEvent::FollowUp => "a follow-up turn (it has not ended)",
                }
            ));
        }
    };
    Ok(Some(to))
}

/// An active task as admission sees it.
#[derive(Clone, Debug)]
pub struct Slot<'a> {
    pub id: TaskId,
    pub agent: &'a str,
    pub role: TaskRole,
    pub status: TaskStatus,
}

/// The queued tasks to start now, in creation order. Reviewers always start and never count.
/// A task blocked by its agent's cap does not hold back a later task of another agent.
pub fn admit(active: &[Slot<'_>]) -> Vec<TaskId> {
    let capped = |s: &&Slot<'_>| s.role == TaskRole::Task;
    let mut overall = active
        .iter()
        .filter(capped)
        .filter(|s| s.status == TaskStatus::Running)
        .count();
    let mut per_agent: HashMap<&str, usize> = HashMap::new();
    for s in active
        .iter()
        .filter(capped)
        .filter(|s| s.status == TaskStatus::Running)
    {
        *per_agent.entry(s.agent).or_default() += 1;
    }
    let mut queued: Vec<&Slot<'_>> = active
        .iter()
        .filter(|s| s.status == TaskStatus::Queued)
        .collect();
    queued.sort_by_key(|s| s.id);
    let mut out = Vec::new();
    for s in queued {
        if s.role == TaskRole::Reviewer {
            out.push(s.id);
            continue;
        }
        let mine = per_agent.entry(s.agent).or_default();
        if overall < MAX_RUNNING_OVERALL && *mine < MAX_RUNNING_PER_AGENT {
            *mine += 1;
            overall += 1;
            out.push(s.id);
        }
    }
    out
}

/// What the child's latest run and reply mean for a running task.
#[derive(Clone, Debug, PartialEq)]
pub enum Settlement {
    /// Nothing to decide (still running, or stopped by shutdown: startup reconciles it).
    Nothing,
    Complete {
        text: String,
        json: Option<serde_json::Value>,
    },
    /// Another turn for the child, saying what failed; `attempt` counts from 1.
    Repair {
        problem: String,
        attempt: u32,
    },
    Fail(String),
    Cancel(String),
}

/// Decide a running task whose child went idle. `last_end` is the end of the child's latest
/// run; `reply` its latest terminal reply under the latest root, if the root has one. A
/// reviewer's reply is taken as it is (even empty): its verdict tools, not its prose, carry the
/// result, and a verdict call may end the turn without any text.
pub fn settle(
    role: TaskRole,
    contract: &OutputContract,
    repairs: u32,
    last_end: Option<&EndReason>,
    reply: Option<&str>,
) -> Settlement {
    match last_end {
        None => Settlement::Fail("the child never started".into()),
        Some(EndReason::Interrupted) => Settlement::Nothing,
        Some(EndReason::ModelError(e)) => {
            Settlement::Fail(format!("the child's model failed: {e}"))
        }
        Some(EndReason::Internal(e)) => Settlement::Fail(format!("the child's run failed: {e}")),
        Some(EndReason::HopLimit(n)) => Settlement::Fail(format!(
            "the child hit its limit of {n} model calls before a final reply"
        )),
        Some(EndReason::Stopped) => Settlement::Cancel("the child's run was stopped".into()),
        Some(EndReason::Completed | EndReason::NoWork | EndReason::Consumer { .. }) => {
            let Some(reply) = reply else {
                return Settlement::Fail("the child ended without a final reply".into());
            };
            if role == TaskRole::Reviewer {
                return Settlement::Complete {
                    text: reply.trim().to_string(),
                    json: None,
                };
            }
            match contract.evaluate(reply) {
                Verdict::Accept { text, json } => Settlement::Complete { text, json },
                Verdict::Invalid(problem) if repairs < MAX_REPAIRS => Settlement::Repair {
                    problem,
                    attempt: repairs + 1,
                },
                Verdict::Invalid(problem) => Settlement::Fail(format!(
                    "the output did not meet the {} contract after {MAX_REPAIRS} repair turns: {problem}",
                    contract.kind()
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn slot(id: i64, agent: &str, status: TaskStatus) -> Slot<'_> {
        Slot {
            id: TaskId(id),
            agent,
            role: TaskRole::Task,
            status,
        }
    }

    #[test]
    fn statuses_follow_the_lifecycle_only() {
        use TaskStatus::*;
        assert_eq!(step(Queued, &TaskEvent::Start), Ok(Some(Running)));
        assert_eq!(step(Running, &TaskEvent::Complete), Ok(Some(Completed)));
        assert_eq!(step(Running, &TaskEvent::Interrupt), Ok(Some(Interrupted)));
        assert_eq!(step(Interrupted, &TaskEvent::Resume), Ok(Some(Queued)));
        assert_eq!(step(Interrupted, &TaskEvent::Cancel), Ok(Some(Cancelled)));
        assert_eq!(step(Cancelled, &TaskEvent::Cancel), Ok(None));
        assert!(step(Completed, &TaskEvent::Cancel).is_err());
        assert!(step(Failed, &TaskEvent::Resume).is_err());
        assert!(step(Queued, &TaskEvent::Complete).is_err());
        assert!(step(Completed, &TaskEvent::Start).is_err());
        assert_eq!(step(Completed, &TaskEvent::FollowUp), Ok(Some(Queued)));
        assert_eq!(step(Cancelled, &TaskEvent::FollowUp), Ok(Some(Queued)));
        assert!(step(Running, &TaskEvent::FollowUp).is_err());
    }

    #[test]
    fn the_ninth_task_of_one_agent_waits_and_the_oldest_queued_goes_first() {
        let mut active: Vec<Slot<'_>> = (1..=8)
            .map(|i| slot(i, "ann", TaskStatus::Running))
            .collect();
        active.push(slot(10, "ann", TaskStatus::Queued));
        active.push(slot(9, "ann", TaskStatus::Queued));
        assert!(admit(&active).is_empty());
        active[0].status = TaskStatus::Completed;
        active.remove(0);
        assert_eq!(admit(&active), vec![TaskId(9)]);
    }

    #[test]
    fn the_overall_cap_counts_every_agent() {
        let mut active: Vec<Slot<'_>> = (1..=4)
            .map(|i| slot(i, "ann", TaskStatus::Running))
            .chain((5..=8).map(|i| slot(i, "bob", TaskStatus::Running)))
            .collect();
        active.push(slot(9, "cy", TaskStatus::Queued));
        assert!(admit(&active).is_empty());
        active.truncate(7);
        active.push(slot(9, "cy", TaskStatus::Queued));
        active.push(slot(10, "cy", TaskStatus::Queued));
        assert_eq!(admit(&active), vec![TaskId(9)]);
    }

    #[test]
    fn reviewers_are_never_starved_by_the_caps() {
        let mut active: Vec<Slot<'_>> = (1..=8)
            .map(|i| slot(i, "ann", TaskStatus::Running))
            .collect();
        active.push(slot(9, "ann", TaskStatus::Queued));
        active.push(Slot {
            id: TaskId(10),
            agent: "lightloop-reviewer",
            role: TaskRole::Reviewer,
            status: TaskStatus::Queued,
        });
        assert_eq!(admit(&active), vec![TaskId(10)]);
    }

    #[test]
    fn an_idle_child_settles_by_its_last_run_and_reply() {
        let c = OutputContract::Final;
        assert_eq!(
            settle(
                TaskRole::Task,
                &c,
                0,
                Some(&EndReason::Completed),
                Some("done")
            ),
            Settlement::Complete {
                text: "done".into(),
                json: None
            }
        );
        assert!(matches!(
            settle(TaskRole::Task, &c, 0, Some(&EndReason::ModelError("503".into())), None),
            Settlement::Fail(e) if e.contains("503")
        ));
        assert_eq!(
            settle(TaskRole::Task, &c, 0, Some(&EndReason::Interrupted), None),
            Settlement::Nothing
        );
        assert!(matches!(
            settle(TaskRole::Task, &c, 0, Some(&EndReason::Completed), None),
            Settlement::Fail(_)
        ));
        // An empty reply is repaired for a task, taken as it is for a reviewer.
        assert!(matches!(
            settle(TaskRole::Task, &c, 0, Some(&EndReason::Completed), Some("")),
            Settlement::Repair { .. }
        ));
        assert_eq!(
            settle(
                TaskRole::Reviewer,
                &c,
                0,
                Some(&EndReason::Completed),
                Some("")
            ),
            Settlement::Complete {
                text: String::new(),
                json: None
            }
        );
    }

    #[test]
    fn a_structured_reply_gets_three_repairs_then_fails() {
        let c = OutputContract::parse(Some(&json!({
            "kind": "structured",
            "schema": {"type": "object", "required": ["n"]}
        })))
        .unwrap();
        for n in 0..3 {
            assert!(matches!(
                settle(TaskRole::Task, &c, n, Some(&EndReason::Completed), Some("{}")),
                Settlement::Repair { attempt, .. } if attempt == n + 1
            ));
        }
        assert!(matches!(
            settle(TaskRole::Task, &c, 3, Some(&EndReason::Completed), Some("{}")),
            Settlement::Fail(e) if e.contains("after 3 repair turns") && e.contains("\"n\"")
        ));
    }
}
