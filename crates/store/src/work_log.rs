//! A job's work log (issue 16 item 1): what the app did on a job, one row per action, each also
//! an event in the same transaction (streamed on `GET /v1/events` with the job's home
//! conversation), and listed per job by `GET /v1/tasks/:id/work-log`. Writing a row is activity
//! on the job: a trigger moves the job's quiet clock (`plans.supervise_at`).

use crate::args;
use crate::{Result, Tx};
use serde::Serialize;
use serde_json::{Value, json};
use troupe_core::{PlanId, TicketId, WorkItemId};

/// One row of a job's work log.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkLogEntry {
    pub id: i64,
    pub at: i64,
    pub task_id: PlanId,
    pub ticket_id: Option<TicketId>,
    pub work_item_id: Option<WorkItemId>,
    /// The event kind, snake_case (`supervisor_picked_up`, `closing_check_sent_back`, …).
    pub kind: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub payload: Value,
}

/// What a work-log row names besides its kind and payload.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WorkRef {
    pub plan: PlanId,
    pub ticket: Option<TicketId>,
    pub work_item: Option<WorkItemId>,
}

impl WorkRef {
    pub fn plan(plan: PlanId) -> Self {
        WorkRef {
            plan,
            ticket: None,
            work_item: None,
        }
    }
}

impl Tx<'_> {
    /// Append a work-log row and its event. The event's payload is `payload` with `task_id`,
    /// `ticket_id`, `work_item_id` and `log_id` added, and it belongs to the job's home
    /// conversation (if it has one) so the job's page hears it live.
    pub fn log_work(&mut self, at: WorkRef, kind: &str, payload: Value) -> Result<i64> {
        let id = self.insert(
            "INSERT INTO work_log (at, plan_id, ticket_id, work_item_id, kind, payload)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            args![
                self.now,
                at.plan.0,
                at.ticket.map(|t| t.0),
                at.work_item.map(|w| w.0),
                kind,
                payload.to_string()
            ],
        )?;
        let home: Option<i64> = self
            .query_opt(
                "SELECT home_session_id FROM plans WHERE id = ?1",
                args![at.plan.0],
                |r| r.get(0),
            )?
            .flatten();
        let mut event = match payload {
            Value::Object(map) => Value::Object(map),
            other => json!({ "detail": other }),
        };
        if let Value::Object(map) = &mut event {
            map.insert("task_id".into(), json!(at.plan));
            map.insert("ticket_id".into(), json!(at.ticket));
            map.insert("work_item_id".into(), json!(at.work_item));
            map.insert("log_id".into(), json!(id));
        }
        self.append_event(kind, None, None, home.map(troupe_core::SessionId), event)?;
        Ok(id)
    }

    /// A job's work log after `after` (a row id), oldest first.
    pub fn work_log_of_plan(
        &self,
        plan: PlanId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<WorkLogEntry>> {
        self.query_all(
            "SELECT id, at, plan_id, ticket_id, work_item_id, kind, payload FROM work_log
             WHERE plan_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
            args![plan.0, after, i64::from(limit)],
            |r| {
                let payload: String = r.get(6)?;
                Ok(WorkLogEntry {
                    id: r.get(0)?,
                    at: r.get(1)?,
                    task_id: PlanId(r.get(2)?),
                    ticket_id: r.get::<Option<i64>>(3)?.map(TicketId),
                    work_item_id: r.get::<Option<i64>>(4)?.map(WorkItemId),
                    kind: r.get(5)?,
                    payload: serde_json::from_str(&payload).unwrap_or(Value::Null),
                })
            },
        )
    }

    /// Work-log rows of `kinds` for one work item at or after `since` (ms), oldest first.
    pub fn work_log_of_item(
        &self,
        item: WorkItemId,
        kind: &str,
        since: i64,
    ) -> Result<Vec<WorkLogEntry>> {
        self.query_all(
            "SELECT id, at, plan_id, ticket_id, work_item_id, kind, payload FROM work_log
             WHERE work_item_id = ?1 AND kind = ?2 AND at >= ?3 ORDER BY id",
            args![item.0, kind, since],
            |r| {
                let payload: String = r.get(6)?;
                Ok(WorkLogEntry {
                    id: r.get(0)?,
                    at: r.get(1)?,
                    task_id: PlanId(r.get(2)?),
                    ticket_id: r.get::<Option<i64>>(3)?.map(TicketId),
                    work_item_id: r.get::<Option<i64>>(4)?.map(WorkItemId),
                    kind: r.get(5)?,
                    payload: serde_json::from_str(&payload).unwrap_or(Value::Null),
                })
            },
        )
    }

    /// A stored setting (`app_settings`).
    pub fn setting(&self, key: &str) -> Result<Option<String>> {
        self.query_opt(
            "SELECT value FROM app_settings WHERE key = ?1",
            args![key],
            |r| r.get(0),
        )
    }

    /// Store a setting, replacing its value.
    pub fn set_setting(&mut self, key: &str, value: &str) -> Result<()> {
        self.exec(
            "INSERT INTO app_settings (key, value, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            args![key, value, self.now],
        )?;
        Ok(())
    }
}
