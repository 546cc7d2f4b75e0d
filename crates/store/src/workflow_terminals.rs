//! Terminal records of session workflows: written before a workflow's slot is cleared, so what
//! ended, how and why stays readable once the slot is free for another workflow.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::{Deserialize, Serialize};
use serde_json::json;
use troupe_core::ThreadId;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkflowTerminal {
    pub id: i64,
    pub thread_id: ThreadId,
    /// The workflow kind that ended (`lightloop`).
    pub kind: String,
    /// `completed`, `failed`, `cancelled`, `timed_out` or `iteration_exhausted`.
    pub status: String,
    pub instructions: String,
    pub error: Option<String>,
    pub created_at: i64,
}

#[derive(Clone, Debug)]
pub struct NewWorkflowTerminal {
    pub thread_id: ThreadId,
    pub kind: String,
    pub status: String,
    pub instructions: String,
    pub error: Option<String>,
}

const COLUMNS: &str = "id, thread_id, kind, status, instructions, error, created_at";

fn from_row(r: &crate::Row) -> Result<WorkflowTerminal> {
    Ok(WorkflowTerminal {
        id: r.get(0)?,
        thread_id: ThreadId(r.get(1)?),
        kind: r.get(2)?,
        status: r.get(3)?,
        instructions: r.get(4)?,
        error: r.get(5)?,
        created_at: r.get(6)?,
    })
}

impl Tx<'_> {
    /// Record how a thread's workflow ended (a CHECK constraint keeps the status honest).
    pub fn record_workflow_terminal(
        &mut self,
        t: &NewWorkflowTerminal,
    ) -> Result<WorkflowTerminal> {
        self.thread(t.thread_id)?;
        let id = self.insert(
            "INSERT INTO workflow_terminals (thread_id, kind, status, instructions, error, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            args![t.thread_id.0, t.kind, t.status, t.instructions, t.error, self.now],
        )
        .map_err(|e| match e {
            StoreError::Sql(f) if f.kind == crate::SqlErrorKind::Constraint => {
                StoreError::Invalid(format!("unknown workflow terminal status '{}'", t.status))
            }
            other => other,
        })?;
        self.event(
            "workflow_ended",
            Some(t.thread_id),
            None,
            json!({"kind": t.kind, "status": t.status, "error": t.error}),
        )?;
        self.query_one(
            &format!("SELECT {COLUMNS} FROM workflow_terminals WHERE id = ?1"),
            args![id],
            from_row,
        )
    }

    /// The latest terminal record of a thread's workflows.
    pub fn latest_workflow_terminal(&self, thread: ThreadId) -> Result<Option<WorkflowTerminal>> {
        self.query_opt(
            &format!(
                "SELECT {COLUMNS} FROM workflow_terminals WHERE thread_id = ?1 ORDER BY id DESC LIMIT 1"
            ),
            args![thread.0],
            from_row,
        )
    }
}
