//! Child tasks (the seeds' Cortex): the record of a prompt a thread handed to a named agent,
//! and of the child thread doing it. The store keeps rows and appends a `task_updated` event
//! with every change; which status may follow which, and when a queued task may start, are
//! the workflow layer's rules.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fmt;
use std::str::FromStr;
use troupe_core::{MessageId, ThreadId};

/// A task's id (`task_N` in display form; the bare number is accepted too).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = i64))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskId(pub i64);

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task_{}", self.0)
    }
}

impl FromStr for TaskId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let digits = s.trim().strip_prefix("task_").unwrap_or(s.trim());
        digits
            .parse::<i64>()
            .map(TaskId)
            .map_err(|_| format!("'{s}' is not a valid task id (expected task_N)"))
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Waiting for a slot under the concurrency caps.
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
    /// Its process stopped while it was queued or running; it can be resumed.
    Interrupted,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Queued => "queued",
            TaskStatus::Running => "running",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Interrupted => "interrupted",
        }
    }
    /// Queued and running tasks are a continuation wait of their parent.
    pub fn is_active(self) -> bool {
        matches!(self, TaskStatus::Queued | TaskStatus::Running)
    }
}

impl FromStr for TaskStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "queued" => TaskStatus::Queued,
            "running" => TaskStatus::Running,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            "interrupted" => TaskStatus::Interrupted,
            other => {
                return Err(format!(
                    "unknown task status '{other}' (expected queued, running, completed, failed, cancelled or interrupted)"
                ));
            }
        })
    }
}

/// Whether a task counts against the concurrency caps.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskRole {
    /// Asked for with the `task` tool; capped.
    Task,
    /// A workflow's reviewer; exempt from the caps so review is never starved.
    Reviewer,
}

impl TaskRole {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskRole::Task => "task",
            TaskRole::Reviewer => "reviewer",
        }
    }
}

impl FromStr for TaskRole {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "task" => Ok(TaskRole::Task),
            "reviewer" => Ok(TaskRole::Reviewer),
            other => Err(format!("unknown task role '{other}'")),
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub id: TaskId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub parent_thread_id: ThreadId,
    /// The message whose tool call asked for it (none when a workflow prepared it).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub parent_message_id: Option<MessageId>,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub child_thread_id: ThreadId,
    /// The agent (Bot name) doing it.
    pub agent: String,
    pub prompt: String,
    pub description: String,
    /// `{"kind": "summary" | "final" | "structured", "schema"?: {...}}`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub output_contract: Value,
    pub role: TaskRole,
    pub notify_parent: bool,
    pub status: TaskStatus,
    /// The result text: a summary, the final reply, or the structured reply as written.
    pub output_text: Option<String>,
    /// The structured result, for a `structured` contract.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub output_json: Option<Value>,
    pub error: Option<String>,
    pub repair_attempts: u32,
    pub resumes: u32,
    pub delivery_key: String,
    /// The process (boot id) that started it last.
    pub started_boot: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct NewTask {
    pub parent_thread_id: ThreadId,
    pub parent_message_id: Option<MessageId>,
    pub child_thread_id: ThreadId,
    pub agent: String,
    pub prompt: String,
    pub description: String,
    pub output_contract: Value,
    pub role: TaskRole,
    pub notify_parent: bool,
    pub delivery_key: String,
}

/// A change to a task; absent fields stay as they are.
#[derive(Clone, Debug, Default)]
pub struct TaskEdit {
    pub status: Option<TaskStatus>,
    pub output_text: Option<Option<String>>,
    pub output_json: Option<Option<Value>>,
    pub error: Option<Option<String>>,
    pub repair_attempts: Option<u32>,
    pub resumes: Option<u32>,
    /// Mark it started by this process (sets `started_at` too).
    pub started_boot: Option<String>,
}

const COLUMNS: &str = "id, parent_thread_id, parent_message_id, child_thread_id, agent, prompt, \
     description, output_contract, role, notify_parent, status, output_text, output_json, error, \
     repair_attempts, resumes, delivery_key, started_boot, created_at, updated_at, started_at, ended_at";

fn corrupt(what: &str, e: impl fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("task {what}: {e}"))
}

fn task_from_row(r: &crate::Row) -> Result<TaskRecord> {
    let contract: String = r.get(7)?;
    let role: String = r.get(8)?;
    let status: String = r.get(10)?;
    let json_out: Option<String> = r.get(12)?;
    let parsed = (|| -> Result<(Value, TaskRole, TaskStatus, Option<Value>)> {
        Ok((
            serde_json::from_str(&contract).map_err(|e| corrupt("output contract", e))?,
            role.parse().map_err(|e| corrupt("role", e))?,
            status.parse().map_err(|e| corrupt("status", e))?,
            json_out
                .map(|j| serde_json::from_str(&j))
                .transpose()
                .map_err(|e| corrupt("output json", e))?,
        ))
    })();
    let (output_contract, role, status, output_json) = parsed?;
    Ok(TaskRecord {
        id: TaskId(r.get(0)?),
        parent_thread_id: ThreadId(r.get(1)?),
        parent_message_id: r.get::<Option<i64>>(2)?.map(MessageId),
        child_thread_id: ThreadId(r.get(3)?),
        agent: r.get(4)?,
        prompt: r.get(5)?,
        description: r.get(6)?,
        output_contract,
        role,
        notify_parent: r.get(9)?,
        status,
        output_text: r.get(11)?,
        output_json,
        error: r.get(13)?,
        repair_attempts: r.get(14)?,
        resumes: r.get(15)?,
        delivery_key: r.get(16)?,
        started_boot: r.get(17)?,
        created_at: r.get(18)?,
        updated_at: r.get(19)?,
        started_at: r.get(20)?,
        ended_at: r.get(21)?,
    })
}

impl Tx<'_> {
    /// Record a new task, queued.
    pub fn create_task(&mut self, n: &NewTask) -> Result<TaskRecord> {
        self.thread(n.parent_thread_id)?;
        self.thread(n.child_thread_id)?;
        if n.delivery_key.trim().is_empty() {
            return Err(StoreError::Invalid("task delivery key is empty".into()));
        }
        let id = self.insert(
            "INSERT INTO tasks (parent_thread_id, parent_message_id, child_thread_id, agent, prompt,
                 description, output_contract, role, notify_parent, status, delivery_key,
                 created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'queued', ?10, ?11, ?11)",
            args![
                n.parent_thread_id.0,
                n.parent_message_id.map(|m| m.0),
                n.child_thread_id.0,
                n.agent,
                n.prompt,
                n.description,
                n.output_contract.to_string(),
                n.role.as_str(),
                n.notify_parent,
                n.delivery_key,
                self.now
            ],
        )?;
        let task = self.task(TaskId(id))?;
        self.task_event(&task)?;
        Ok(task)
    }

    fn task_event(&mut self, t: &TaskRecord) -> Result<()> {
        self.event(
            "task_updated",
            Some(t.parent_thread_id),
            None,
            json!({
                "task_id": t.id.0,
                "status": t.status.as_str(),
                "child_thread_id": t.child_thread_id,
                "agent": t.agent,
            }),
        )?;
        Ok(())
    }

    pub fn task(&self, id: TaskId) -> Result<TaskRecord> {
        self.find_task(id)?
            .ok_or_else(|| StoreError::not_found("task", id))
    }

    pub fn find_task(&self, id: TaskId) -> Result<Option<TaskRecord>> {
        self.task_where("id = ?1", args![id.0])
    }

    /// The parent's task created under `key`, if any.
    pub fn task_by_key(&self, parent: ThreadId, key: &str) -> Result<Option<TaskRecord>> {
        self.task_where(
            "parent_thread_id = ?1 AND delivery_key = ?2",
            args![parent.0, key],
        )
    }

    /// The task a child thread works on, if it is one.
    pub fn task_of_child(&self, child: ThreadId) -> Result<Option<TaskRecord>> {
        self.task_where("child_thread_id = ?1", args![child.0])
    }

    fn task_where(&self, clause: &str, args: &[crate::Value]) -> Result<Option<TaskRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM tasks WHERE {clause}");
        self.query_opt(&sql, args, task_from_row)
    }

    /// A parent's tasks, oldest first; only those in `statuses` when it is not empty.
    pub fn tasks_of_parent(
        &self,
        parent: ThreadId,
        statuses: &[TaskStatus],
        limit: u32,
    ) -> Result<Vec<TaskRecord>> {
        // The statuses are fixed words, so they can be spelled into the statement.
        let filter = if statuses.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = statuses
                .iter()
                .map(|s| format!("'{}'", s.as_str()))
                .collect();
            format!(" AND status IN ({})", list.join(", "))
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM tasks WHERE parent_thread_id = ?1{filter} ORDER BY id LIMIT ?2"
        );
        self.query_all(&sql, args![parent.0, limit], task_from_row)
    }

    /// Every queued or running task, in creation order.
    pub fn active_tasks(&self) -> Result<Vec<TaskRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM tasks WHERE status IN ('queued', 'running') ORDER BY id"
        );
        self.query_all(&sql, args![], task_from_row)
    }

    /// Apply a change. Leaving `queued` or `running` for another status stamps `ended_at`.
    pub fn edit_task(&mut self, id: TaskId, e: &TaskEdit) -> Result<TaskRecord> {
        let cur = self.task(id)?;
        let status = e.status.unwrap_or(cur.status);
        let ended_at = if status.is_active() {
            None
        } else if cur.status.is_active() || cur.ended_at.is_none() {
            Some(self.now)
        } else {
            cur.ended_at
        };
        let (boot, started_at) = match &e.started_boot {
            Some(b) => (Some(b.clone()), Some(self.now)),
            None => (cur.started_boot.clone(), cur.started_at),
        };
        let text = e.output_text.clone().unwrap_or(cur.output_text.clone());
        let json_out = e.output_json.clone().unwrap_or(cur.output_json.clone());
        let error = e.error.clone().unwrap_or(cur.error.clone());
        self.exec(
            "UPDATE tasks SET status = ?2, output_text = ?3, output_json = ?4, error = ?5,
                 repair_attempts = ?6, resumes = ?7, started_boot = ?8, started_at = ?9,
                 ended_at = ?10, updated_at = ?11
             WHERE id = ?1",
            args![
                id.0,
                status.as_str(),
                text,
                json_out.map(|j| j.to_string()),
                error,
                e.repair_attempts.unwrap_or(cur.repair_attempts),
                e.resumes.unwrap_or(cur.resumes),
                boot,
                started_at,
                ended_at,
                self.now
            ],
        )?;
        let task = self.task(id)?;
        self.task_event(&task)?;
        Ok(task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use troupe_core::thread::{AgentBinding, Interaction};

    #[test]
    fn ids_statuses_and_roles_parse() {
        assert_eq!("task_4".parse::<TaskId>().unwrap(), TaskId(4));
        assert_eq!("4".parse::<TaskId>().unwrap(), TaskId(4));
        assert!("task_x".parse::<TaskId>().is_err());
        assert_eq!(TaskId(7).to_string(), "task_7");
        for s in [
            "queued",
            "running",
            "completed",
            "failed",
            "cancelled",
            "interrupted",
        ] {
            assert_eq!(s.parse::<TaskStatus>().unwrap().as_str(), s);
        }
        assert!("error".parse::<TaskStatus>().is_err());
        assert_eq!("reviewer".parse::<TaskRole>().unwrap(), TaskRole::Reviewer);
    }

    fn thread(tx: &mut Tx<'_>, parent: Option<ThreadId>) -> ThreadId {
        tx.create_thread(&crate::NewThread {
            workspace_root: None,
            parent_id: parent,
            title: "t".into(),
            agent: AgentBinding::new("a", "be brief"),
            workspace: "/tmp".into(),
            interaction: Interaction::Unattended,
        })
        .unwrap()
        .id
    }

    #[test]
    fn tasks_round_trip_one_per_key_and_every_change_is_an_event() {
        let s =
            crate::Store::open_in_memory(std::sync::Arc::new(troupe_core::ManualClock::new(1_000)))
                .unwrap();
        let mut rx = s.subscribe();
        let task = s
            .write(|tx| {
                let p = thread(tx, None);
                let c = thread(tx, Some(p));
                tx.create_task(&NewTask {
                    parent_thread_id: p,
                    parent_message_id: None,
                    child_thread_id: c,
                    agent: "a".into(),
                    prompt: "count".into(),
                    description: "count".into(),
                    output_contract: json!({"kind": "final"}),
                    role: TaskRole::Task,
                    notify_parent: true,
                    delivery_key: "k".into(),
                })
            })
            .unwrap();
        assert_eq!(task.status, TaskStatus::Queued);
        let again = s.write(|tx| {
            let c = thread(tx, Some(task.parent_thread_id));
            tx.create_task(&NewTask {
                parent_thread_id: task.parent_thread_id,
                parent_message_id: None,
                child_thread_id: c,
                agent: "a".into(),
                prompt: "count".into(),
                description: String::new(),
                output_contract: json!({"kind": "final"}),
                role: TaskRole::Task,
                notify_parent: true,
                delivery_key: "k".into(),
            })
        });
        assert!(again.is_err(), "a second task under one key is refused");
        let done = s
            .write(|tx| {
                tx.edit_task(
                    task.id,
                    &TaskEdit {
                        status: Some(TaskStatus::Completed),
                        output_json: Some(Some(json!({"n": 3}))),
                        ..TaskEdit::default()
                    },
                )
            })
            .unwrap();
        assert_eq!(done.output_json, Some(json!({"n": 3})));
        assert_eq!(done.ended_at, Some(1_000));
        let found = s
            .read(|tx| tx.task_by_key(task.parent_thread_id, "k"))
            .unwrap();
        assert_eq!(found.map(|t| t.id), Some(task.id));
        assert!(s.read(|tx| tx.active_tasks()).unwrap().is_empty());
        let mut kinds = Vec::new();
        while let Ok(e) = rx.try_recv() {
            if e.kind == "task_updated" {
                kinds.push(e.payload["status"].as_str().unwrap().to_string());
            }
        }
        assert_eq!(kinds, ["queued", "completed"]);
    }
}
