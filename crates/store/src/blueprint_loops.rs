//! BlueprintLoop records and their session bindings. [`Tx::save_blueprint_loop`] is the single
//! transition point: it checks the status change against the transition table and writes the
//! record, the bindings its status projects (execution and audit roles, phase) and the note's
//! active-loop link in one step, so a phase can never disagree with the loop it mirrors.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::ThreadId;
use troupe_core::blueprint_loop::{
    AuditState, BlueprintLoop, BlueprintLoopId, LoopSource, LoopStatus, RunMode, check_transition,
};

/// A session's binding to a loop, as projected from the loop's status.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopBinding {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub thread_id: ThreadId,
    pub loop_id: BlueprintLoopId,
    /// `execution` or `audit`.
    pub role: String,
    /// `running` or `auditing`.
    pub phase: String,
}

/// What creating a loop needs; the rest starts empty.
#[derive(Clone, Debug)]
pub struct NewBlueprintLoop {
    pub note_id: i64,
    pub note_version: i64,
    pub title: String,
    pub thread_id: ThreadId,
    pub origin_thread_id: ThreadId,
    pub audit_agent: String,
    pub run_mode: RunMode,
    pub user_prompt: Option<String>,
    pub max_iterations: Option<u32>,
    pub worktree: Option<String>,
    /// Who makes it; a Lattice loop carries the digest of the Blueprint content it is for.
    pub source: LoopSource,
    pub source_digest: Option<String>,
}

fn corrupt(e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("blueprint loop record: {e}"))
}

fn binding_from_row(r: &crate::Row) -> Result<LoopBinding> {
    Ok(LoopBinding {
        thread_id: ThreadId(r.get(0)?),
        loop_id: BlueprintLoopId(r.get(1)?),
        role: r.get(2)?,
        phase: r.get(3)?,
    })
}

fn parse(record: String) -> Result<BlueprintLoop> {
    serde_json::from_str(&record).map_err(corrupt)
}

impl Tx<'_> {
    /// Insert an `armed` loop and count a run on its note. A second active loop on the same note
    /// or session is refused by the database's unique indexes; callers check first to say why.
    pub fn create_blueprint_loop(&mut self, n: &NewBlueprintLoop) -> Result<BlueprintLoop> {
        match (n.source, n.source_digest.as_deref()) {
            (LoopSource::Lattice, None) => {
                return Err(StoreError::Invalid(
                    "source_digest: a lattice loop needs the digest of its Blueprint content"
                        .into(),
                ));
            }
            (LoopSource::Lattice, Some(d)) if d.trim().is_empty() => {
                return Err(StoreError::Invalid(
                    "source_digest: a lattice loop's digest is empty".into(),
                ));
            }
            (LoopSource::User, Some(_)) => {
                return Err(StoreError::Invalid(
                    "source_digest: only a lattice loop carries a source digest".into(),
                ));
            }
            _ => {}
        }
        let id = BlueprintLoopId(self.insert(
            "INSERT INTO blueprint_loops
                 (note_id, thread_id, status, record, created_at, updated_at, source, source_digest)
             VALUES (?1, ?2, 'armed', '{}', ?3, ?3, ?4, ?5)",
            args![
                n.note_id,
                n.thread_id.0,
                self.now,
                n.source.as_str(),
                n.source_digest
            ],
        )?);
        let l = BlueprintLoop {
            id,
            note_id: n.note_id,
            note_version: n.note_version,
            title: n.title.clone(),
            thread_id: n.thread_id,
            origin_thread_id: n.origin_thread_id,
            audit_agent: n.audit_agent.clone(),
            audit_thread_id: None,
            stop_request: None,
            status: LoopStatus::Armed,
            run_mode: n.run_mode,
            source: n.source,
            source_digest: n.source_digest.clone(),
            user_prompt: n.user_prompt.clone(),
            max_iterations: n.max_iterations,
            worktree: n.worktree.clone(),
            summary: None,
            error: None,
            audit: AuditState::default(),
            created_at: self.now,
            started_at: None,
            updated_at: self.now,
            completed_at: None,
        };
        self.write_record(&l)?;
        self.exec(
            "UPDATE notes SET run_count = run_count + 1, last_run_at = ?2, active_loop_id = ?3 WHERE id = ?1",
            args![n.note_id, self.now, id.0],
        )?;
        self.event(
            "blueprint_loop_created",
            Some(n.thread_id),
            None,
            json!({"loop_id": id.0, "note_id": n.note_id, "status": "armed", "source": n.source.as_str()}),
        )?;
        Ok(l)
    }

    pub fn blueprint_loop(&self, id: BlueprintLoopId) -> Result<BlueprintLoop> {
        self.find_blueprint_loop(id)?
            .ok_or_else(|| StoreError::not_found("blueprint loop", id))
    }

    pub fn find_blueprint_loop(&self, id: BlueprintLoopId) -> Result<Option<BlueprintLoop>> {
        self.one_loop("SELECT record FROM blueprint_loops WHERE id = ?1", id.0)
    }

    /// The loops a Lattice create effect may already have made (LAT-6's fingerprint): made by
    /// Lattice on `thread` for `note_id` from content with `source_digest`, at or after `since`;
    /// oldest first.
    pub fn lattice_loops_by_fingerprint(
        &self,
        thread: ThreadId,
        note_id: i64,
        source_digest: &str,
        since: i64,
    ) -> Result<Vec<BlueprintLoop>> {
        let rows = self.query_all(
            "SELECT record FROM blueprint_loops
             WHERE source = 'lattice' AND thread_id = ?1 AND note_id = ?2
               AND source_digest = ?3 AND created_at >= ?4
             ORDER BY created_at, id",
            args![thread.0, note_id, source_digest, since],
            |r| r.get::<String>(0),
        )?;
        rows.into_iter().map(parse).collect()
    }

    /// Loops, newest first; only active ones when asked.
    pub fn blueprint_loops(&self, active_only: bool, limit: u32) -> Result<Vec<BlueprintLoop>> {
        let rows = self.query_all(
            "SELECT record FROM blueprint_loops
             WHERE (?1 = 0 OR status IN ('armed', 'running', 'auditing'))
             ORDER BY id DESC LIMIT ?2",
            args![active_only, limit],
            |r| r.get::<String>(0),
        )?;
        rows.into_iter().map(parse).collect()
    }

    /// The active loop executing on `thread`, if any.
    pub fn active_loop_of_thread(&self, thread: ThreadId) -> Result<Option<BlueprintLoop>> {
        self.one_loop(
            "SELECT record FROM blueprint_loops
             WHERE thread_id = ?1 AND status IN ('armed', 'running', 'auditing')",
            thread.0,
        )
    }

    /// The active loop on a note, if any.
    pub fn active_loop_of_note(&self, note_id: i64) -> Result<Option<BlueprintLoop>> {
        self.one_loop(
            "SELECT record FROM blueprint_loops
             WHERE note_id = ?1 AND status IN ('armed', 'running', 'auditing')",
            note_id,
        )
    }

    /// The binding a session's thread carries, if any.
    pub fn loop_binding(&self, thread: ThreadId) -> Result<Option<LoopBinding>> {
        self.query_opt(
            "SELECT thread_id, loop_id, role, phase FROM blueprint_bindings WHERE thread_id = ?1",
            args![thread.0],
            binding_from_row,
        )
    }

    /// Every binding, for recovery's sweep.
    pub fn loop_bindings(&self) -> Result<Vec<LoopBinding>> {
        self.query_all(
            "SELECT thread_id, loop_id, role, phase FROM blueprint_bindings ORDER BY thread_id",
            args![],
            binding_from_row,
        )
    }

    /// Remove one binding (recovery's sweep of bindings pointing at nothing live).
    pub fn remove_loop_binding(&mut self, thread: ThreadId) -> Result<bool> {
        let n = self.exec(
            "DELETE FROM blueprint_bindings WHERE thread_id = ?1",
            args![thread.0],
        )?;
        Ok(n > 0)
    }

    /// Clear a note's active-loop link when it points at no active loop. Returns whether it did.
    pub fn clear_stale_note_link(&mut self, note_id: i64) -> Result<bool> {
        let n = self.exec(
            "UPDATE notes SET active_loop_id = NULL WHERE id = ?1 AND active_loop_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM blueprint_loops b WHERE b.id = notes.active_loop_id
                               AND b.status IN ('armed', 'running', 'auditing'))",
            args![note_id],
        )?;
        Ok(n > 0)
    }

    /// Note ids whose active-loop link is set (for recovery's sweep).
    pub fn notes_with_active_loop(&self) -> Result<Vec<i64>> {
        self.query_all(
            "SELECT id FROM notes WHERE active_loop_id IS NOT NULL ORDER BY id",
            args![],
            |r| r.get::<i64>(0),
        )
    }

    /// The single transition point: write `next` (the loop after a change), checking its status
    /// change against the table, stamping times, and projecting the bindings and the note link.
    pub fn save_blueprint_loop(&mut self, next: &BlueprintLoop) -> Result<BlueprintLoop> {
        let before = self.blueprint_loop(next.id)?;
        if (before.source, &before.source_digest) != (next.source, &next.source_digest) {
            // The columns beside the record are written once, at creation.
            return Err(StoreError::Invalid(format!(
                "blueprint loop {}: its source and source digest never change",
                next.id
            )));
        }
        if before.status != next.status {
            check_transition(before.status, next.status)
                .map_err(|e| StoreError::Invalid(e.to_string()))?;
        }
        let mut l = next.clone();
        l.updated_at = self.now;
        if before.status == LoopStatus::Armed && l.status == LoopStatus::Running {
            l.started_at = Some(self.now);
        }
        if !l.status.is_active() {
            // The loop's continuation guard ends with it.
            self.end_loop_guard(l.thread_id, &l.id.guard_ref())?;
            l.audit_thread_id = None;
            l.stop_request = None;
            if l.completed_at.is_none() {
                l.completed_at = Some(self.now);
            }
        }
        self.write_record(&l)?;
        self.project_bindings(&l)?;
        if before.status != l.status {
            self.event(
                "blueprint_loop_updated",
                Some(l.thread_id),
                None,
                json!({"loop_id": l.id.0, "from": before.status.as_str(), "status": l.status.as_str(), "error": l.error}),
            )?;
        } else if before != l {
            self.event(
                "blueprint_loop_updated",
                Some(l.thread_id),
                None,
                json!({"loop_id": l.id.0, "status": l.status.as_str()}),
            )?;
        }
        Ok(l)
    }

    /// Re-project the bindings of a stored loop without changing it (recovery's restoration).
    pub fn restore_loop_bindings(&mut self, id: BlueprintLoopId) -> Result<()> {
        let l = self.blueprint_loop(id)?;
        self.project_bindings(&l)
    }

    /// The loop a one-parameter query finds, if any.
    fn one_loop(&self, sql: &str, id: i64) -> Result<Option<BlueprintLoop>> {
        self.query_opt(sql, args![id], |r| r.get::<String>(0))?
            .map(parse)
            .transpose()
    }

    fn write_record(&mut self, l: &BlueprintLoop) -> Result<()> {
        let record = serde_json::to_string(l).map_err(corrupt)?;
        self.exec(
            "UPDATE blueprint_loops SET status = ?2, audit_thread_id = ?3, record = ?4, updated_at = ?5
             WHERE id = ?1",
            args![
                l.id.0,
                l.status.as_str(),
                l.audit_thread_id.map(|t| t.0),
                record,
                l.updated_at
            ],
        )?;
        Ok(())
    }

    fn project_bindings(&mut self, l: &BlueprintLoop) -> Result<()> {
        let audit = match (l.status.phase(), l.status) {
            (Some(_), LoopStatus::Auditing) => l.audit_thread_id,
            _ => None,
        };
        // Bindings of this loop on threads it no longer binds go first.
        self.exec(
            "DELETE FROM blueprint_bindings WHERE loop_id = ?1
               AND NOT (CAST(?2 AS TEXT) IS NOT NULL AND thread_id = ?3)
               AND NOT (CAST(?4 AS BIGINT) IS NOT NULL AND thread_id = ?4)",
            args![l.id.0, l.status.phase(), l.thread_id.0, audit.map(|t| t.0)],
        )?;
        if let Some(phase) = l.status.phase() {
            self.upsert_binding(l.thread_id, l.id, "execution", phase)?;
            if let Some(a) = audit {
                self.upsert_binding(a, l.id, "audit", phase)?;
            }
        }
        if !l.status.is_active() {
            self.exec(
                "UPDATE notes SET active_loop_id = NULL WHERE id = ?1 AND active_loop_id = ?2",
                args![l.note_id, l.id.0],
            )?;
        } else {
            self.exec(
                "UPDATE notes SET active_loop_id = ?2 WHERE id = ?1",
                args![l.note_id, l.id.0],
            )?;
        }
        Ok(())
    }

    fn upsert_binding(
        &mut self,
        thread: ThreadId,
        id: BlueprintLoopId,
        role: &str,
        phase: &str,
    ) -> Result<()> {
        self.exec(
            "INSERT INTO blueprint_bindings (thread_id, loop_id, role, phase) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(thread_id) DO UPDATE SET loop_id = excluded.loop_id, role = excluded.role,
                 phase = excluded.phase",
            args![thread.0, id.0, role, phase],
        )?;
        Ok(())
    }
}
