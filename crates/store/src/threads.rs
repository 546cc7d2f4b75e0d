//! Threads, their pause latch, archive flag, workflow slot and lease.

use crate::args;
use crate::rows::thread_from_row;
use crate::{Result, StoreError, Tx};
use serde_json::json;
use troupe_core::pause::{Paused, apply_pause};
use troupe_core::thread::{AgentBinding, Interaction, Thread};
use troupe_core::{RunId, ThreadId};

pub(crate) const THREAD_COLUMNS: &str = "id, parent_id, title, agent, workspace, interaction, workflow, \
     paused_reason, paused_description, paused_since, archived_at, lease_generation, lease_run_id, created_at, \
     workspace_root";

#[derive(Clone, Debug)]
pub struct NewThread {
    pub parent_id: Option<ThreadId>,
    pub title: String,
    pub agent: AgentBinding,
    pub workspace: String,
    /// A folder holding `workspace` that the thread's tools may also reach (a job's thread:
    /// the conversation's folder); `None`: the tools reach `workspace` alone.
    pub workspace_root: Option<String>,
    pub interaction: Interaction,
}

impl Tx<'_> {
    pub fn create_thread(&mut self, t: &NewThread) -> Result<Thread> {
        if t.agent.name.trim().is_empty() {
            return Err(StoreError::Invalid("agent name is empty".into()));
        }
        if t.workspace.trim().is_empty() {
            return Err(StoreError::Invalid("workspace is empty".into()));
        }
        if let Some(root) = &t.workspace_root
            && !std::path::Path::new(&t.workspace).starts_with(root)
        {
            return Err(StoreError::Invalid(format!(
                "workspace {} is not inside workspace_root {root}",
                t.workspace
            )));
        }
        let agent =
            serde_json::to_string(&t.agent).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let id = ThreadId(self.insert(
            "INSERT INTO threads (parent_id, title, agent, workspace, workspace_root, interaction, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
            args![
                t.parent_id.map(|p| p.0),
                t.title,
                agent,
                t.workspace,
                t.workspace_root,
                t.interaction.as_str(),
                self.now
            ],
        )?);
        self.event(
            "thread_created",
            Some(id),
            None,
            json!({"title": t.title, "agent": t.agent.name}),
        )?;
        self.thread(id)
    }

    /// Hold the thread's row until commit (PostgreSQL; SQLite's one writer holds everything):
    /// what this transaction then reads of the thread stays as read.
    pub(crate) fn lock_thread(&self, id: ThreadId) -> Result<()> {
        if self.locks_rows() {
            self.query_opt(
                "SELECT id FROM threads WHERE id = ?1 FOR NO KEY UPDATE",
                args![id.0],
                |r| r.get::<i64>(0),
            )?;
        }
        Ok(())
    }

    pub fn thread(&self, id: ThreadId) -> Result<Thread> {
        self.find_thread(id)?
            .ok_or_else(|| StoreError::not_found("thread", id))
    }

    /// Refuses a thread that does not exist, as `thread` does, without reading its row.
    pub fn require_thread(&self, id: ThreadId) -> Result<()> {
        self.query_opt("SELECT 1 FROM threads WHERE id = ?1", args![id.0], |r| {
            r.get::<i64>(0)
        })?
        .map(drop)
        .ok_or_else(|| StoreError::not_found("thread", id))
    }

    pub fn find_thread(&self, id: ThreadId) -> Result<Option<Thread>> {
        let sql = format!("SELECT {THREAD_COLUMNS} FROM threads WHERE id = ?1");
        self.query_opt(&sql, args![id.0], thread_from_row)
    }

    /// The threads whose parent is `parent`, oldest first.
    pub fn child_threads(&self, parent: ThreadId) -> Result<Vec<Thread>> {
        let sql = format!("SELECT {THREAD_COLUMNS} FROM threads WHERE parent_id = ?1 ORDER BY id");
        self.query_all(&sql, args![parent.0], thread_from_row)
    }

    pub fn threads(&self, limit: u32) -> Result<Vec<Thread>> {
        let sql = format!("SELECT {THREAD_COLUMNS} FROM threads ORDER BY id DESC LIMIT ?1");
        self.query_all(&sql, args![limit], thread_from_row)
    }

    /// Write the pause latch: the first pause wins; unattended and archived threads are never latched.
    /// Returns the latch now in place, if any.
    pub fn pause(
        &mut self,
        id: ThreadId,
        reason: troupe_core::pause::PauseReason,
        description: Option<String>,
    ) -> Result<Option<Paused>> {
        let t = self.thread(id)?;
        let requested = Paused {
            reason,
            description,
            since: self.now,
        };
        let next = apply_pause(t.paused.as_ref(), t.latchable(), requested);
        if next != t.paused
            && let Some(p) = &next
        {
            self.exec(
                "UPDATE threads SET paused_reason = ?2, paused_description = ?3, paused_since = ?4, updated_at = ?5 WHERE id = ?1",
                args![id.0, p.reason.as_str(), p.description, p.since, self.now],
            )?;
            self.event(
                "thread_paused",
                Some(id),
                None,
                json!({"reason": p.reason.as_str(), "description": p.description}),
            )?;
        }
        Ok(next)
    }

    /// Clear the latch. Returns whether there was one.
    pub fn clear_pause(&mut self, id: ThreadId) -> Result<bool> {
        let n = self.exec(
            "UPDATE threads SET paused_reason = NULL, paused_description = NULL, paused_since = NULL, updated_at = ?2
             WHERE id = ?1 AND paused_reason IS NOT NULL",
            args![id.0, self.now],
        )?;
        if n > 0 {
            self.event("thread_resumed", Some(id), None, json!({}))?;
        }
        Ok(n > 0)
    }

    pub fn archive_thread(&mut self, id: ThreadId) -> Result<()> {
        self.thread(id)?;
        self.exec(
            "UPDATE threads SET archived_at = COALESCE(archived_at, ?2), updated_at = ?2 WHERE id = ?1",
            args![id.0, self.now],
        )?;
        self.event("thread_archived", Some(id), None, json!({}))?;
        Ok(())
    }

    /// Rebind a thread to an agent (e.g. its Bot's persona or endpoint changed).
    pub fn set_thread_agent(&mut self, id: ThreadId, agent: &AgentBinding) -> Result<()> {
        let text = serde_json::to_string(agent).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let n = self.exec(
            "UPDATE threads SET agent = ?2, updated_at = ?3 WHERE id = ?1",
            args![id.0, text, self.now],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("thread", id));
        }
        Ok(())
    }

    /// Store the workflow slot; the kernel never reads inside it.
    pub fn set_workflow(&mut self, id: ThreadId, slot: Option<&serde_json::Value>) -> Result<()> {
        self.thread(id)?;
        self.exec(
            "UPDATE threads SET workflow = ?2, updated_at = ?3 WHERE id = ?1",
            args![id.0, slot.map(|s| s.to_string()), self.now],
        )?;
        self.event(
            "workflow_changed",
            Some(id),
            None,
            json!({"workflow": slot}),
        )?;
        Ok(())
    }

    /// Take the lease for `run`, returning the new generation. Busy while another run holds it.
    pub(crate) fn acquire_lease(&mut self, id: ThreadId, run: RunId) -> Result<i64> {
        let t = self.thread(id)?;
        let next = t.lease.acquire(run).map_err(|e| match e {
            troupe_core::thread::LeaseError::Busy(holder) => StoreError::Busy(id, holder),
            other => StoreError::Invalid(other.to_string()),
        })?;
        // Conditional on the lease being as read: two nodes that both read it free cannot both
        // take it (PostgreSQL re-checks the condition on the row the first one committed).
        let n = self.exec(
            "UPDATE threads SET lease_generation = ?2, lease_run_id = ?3
             WHERE id = ?1 AND lease_run_id IS NULL AND lease_generation = ?4",
            args![id.0, next.generation, run.0, t.lease.generation],
        )?;
        if n == 0 {
            let holder = self.thread(id)?.lease.holder.unwrap_or(run);
            return Err(StoreError::Busy(id, holder));
        }
        Ok(next.generation)
    }

    /// Fails with `StaleLease` unless `generation` holds the thread: every write a loop makes checks this first,
    /// so an owner that was stopped can never write after the stop.
    pub fn check_lease(&self, id: ThreadId, generation: i64) -> Result<()> {
        // On PostgreSQL the check holds the thread's row until commit, so a stop committed by
        // another connection (or node) orders entirely before or after this write, as SQLite's
        // single writer orders them.
        let sql = if self.locks_rows() {
            "SELECT 1 FROM threads WHERE id = ?1 AND lease_generation = ?2 AND lease_run_id IS NOT NULL FOR SHARE"
        } else {
            "SELECT 1 FROM threads WHERE id = ?1 AND lease_generation = ?2 AND lease_run_id IS NOT NULL"
        };
        let held: Option<i64> = self.query_opt(sql, args![id.0, generation], |r| r.get(0))?;
        if held.is_none() {
            return Err(StoreError::StaleLease {
                thread: id,
                presented: generation,
            });
        }
        Ok(())
    }
}
