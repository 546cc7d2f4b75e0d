//! Runs and the lease they hold. A run is created and takes the lease in one step, and ends
//! and releases it in one step; only the generation that holds the lease may end it normally.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::run::{EndReason, RunStatus};
use troupe_core::{MessageId, RunId, ThreadId};

#[derive(Clone, Debug)]
pub struct NewRun {
    pub thread_id: ThreadId,
    pub trigger: String,
    pub owner_pid: u32,
    pub owner_boot: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRecord {
    pub id: RunId,
    pub thread_id: ThreadId,
    pub generation: i64,
    pub trigger: String,
    pub root_id: Option<MessageId>,
    pub status: RunStatus,
    pub end_reason: Option<EndReason>,
    pub hops: u32,
    pub tool_calls: u32,
    pub ending_bounces: u32,
    pub failure_notes: Vec<String>,
    pub owner_pid: u32,
    pub owner_boot: String,
    pub started_at: i64,
    pub ended_at: Option<i64>,
}

pub(crate) const RUN_COLUMNS: &str = "id, thread_id, generation, trigger_reason, root_id, status, end_reason, end_detail, hops, \
     tool_calls, ending_bounces, failure_notes, owner_pid, owner_boot, started_at, ended_at";

pub(crate) fn run_from_row(r: &crate::Row) -> Result<RunRecord> {
    let status: String = r.get(5)?;
    let reason: Option<String> = r.get(6)?;
    let detail: Option<String> = r.get(7)?;
    let notes: String = r.get(11)?;
    let id = RunId(r.get(0)?);
    let rec = (
        ThreadId(r.get(1)?),
        r.get::<i64>(2)?,
        r.get::<String>(3)?,
        r.get::<Option<i64>>(4)?,
        r.get::<u32>(8)?,
        r.get::<u32>(9)?,
        r.get::<u32>(10)?,
        r.get::<u32>(12)?,
        r.get::<String>(13)?,
        r.get::<i64>(14)?,
        r.get::<Option<i64>>(15)?,
    );
    (|| {
        let bad = |what: &str, e: String| StoreError::Corrupt(format!("run {id} {what}: {e}"));
        let (
            thread_id,
            generation,
            trigger,
            root,
            hops,
            tool_calls,
            bounces,
            pid,
            boot,
            started,
            ended,
        ) = rec;
        Ok(RunRecord {
            id,
            thread_id,
            generation,
            trigger,
            root_id: root.map(MessageId),
            status: status.parse().map_err(|e| bad("status", e))?,
            end_reason: reason
                .map(|c| EndReason::from_parts(&c, detail))
                .transpose()
                .map_err(|e| bad("end reason", e))?,
            hops,
            tool_calls,
            ending_bounces: bounces,
            failure_notes: serde_json::from_str(&notes)
                .map_err(|e| bad("failure notes", e.to_string()))?,
            owner_pid: pid,
            owner_boot: boot,
            started_at: started,
            ended_at: ended,
        })
    })()
}

impl Tx<'_> {
    /// Create a run and give it the thread's lease. Fails with `Busy` while another run holds it.
    pub fn start_run(&mut self, r: &NewRun) -> Result<RunRecord> {
        // Held to commit, so the lease read here is the lease taken below, whatever another
        // node does meanwhile.
        self.lock_thread(r.thread_id)?;
        let t = self.thread(r.thread_id)?;
        if let Some(holder) = t.lease.holder {
            return Err(StoreError::Busy(r.thread_id, holder));
        }
        let generation = t.lease.generation + 1;
        let id = RunId(self.insert(
            "INSERT INTO runs (thread_id, generation, trigger_reason, status, owner_pid, owner_boot, started_at)
             VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6)",
            args![r.thread_id.0, generation, r.trigger, r.owner_pid, r.owner_boot, self.now],
        )?);
        let taken = self.acquire_lease(r.thread_id, id)?;
        debug_assert_eq!(taken, generation);
        self.event(
            "run_started",
            Some(r.thread_id),
            Some(id),
            json!({"trigger": r.trigger, "generation": generation}),
        )?;
        self.run(id)
    }

    pub fn run(&self, id: RunId) -> Result<RunRecord> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1");
        self.query_opt(&sql, args![id.0], run_from_row)?
            .ok_or_else(|| StoreError::not_found("run", id))
    }

    /// The origin kind (`user`, `delegation`, `timer`, …) of the message that started `run`.
    /// The kind and detail of the origin of the task the run started on.
    pub fn run_root_origin(&self, run: RunId) -> Result<Option<(String, Option<String>)>> {
        self.query_opt(
            "SELECT m.origin, m.origin_detail FROM runs r JOIN messages m ON m.id = r.root_id
             WHERE r.id = ?1",
            args![run.0],
            |r| Ok((r.get::<String>(0)?, r.get::<Option<String>>(1)?)),
        )
    }

    pub fn runs_for_thread(&self, thread: ThreadId, limit: u32) -> Result<Vec<RunRecord>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE thread_id = ?1 ORDER BY id DESC LIMIT ?2"
        );
        self.query_all(&sql, args![thread.0, limit], run_from_row)
    }

    /// Runs whose status says live. A stored "running" is not liveness: recovery checks the owner.
    pub fn live_runs(&self) -> Result<Vec<RunRecord>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE status = 'running' ORDER BY id");
        self.query_all(&sql, args![], run_from_row)
    }

    /// End a run as its owner: only the generation holding the lease may do this.
    pub fn end_run(
        &mut self,
        run: RunId,
        generation: i64,
        reason: &EndReason,
    ) -> Result<RunRecord> {
        let rec = self.run(run)?;
        if rec.status != RunStatus::Running || rec.generation != generation {
            return Err(StoreError::StaleLease {
                thread: rec.thread_id,
                presented: generation,
            });
        }
        self.check_lease(rec.thread_id, generation)?;
        let thread = rec.thread_id;
        self.finish_run(rec, reason)?.ok_or(StoreError::StaleLease {
            thread,
            presented: generation,
        })
    }

    /// End a live run from outside its loop (abort, recovery). A no-op on a run already ended:
    /// the first stop wins. Returns the run as it now stands and whether this call ended it.
    pub fn force_end_run(&mut self, run: RunId, reason: &EndReason) -> Result<(RunRecord, bool)> {
        let rec = self.run(run)?;
        if rec.status != RunStatus::Running {
            return Ok((rec, false));
        }
        match self.finish_run(rec, reason)? {
            Some(ended) => Ok((ended, true)),
            None => Ok((self.run(run)?, false)),
        }
    }

    /// `None` when the run was no longer running: another connection (a stop on another node,
    /// say) ended it first, and that end stands.
    fn finish_run(&mut self, rec: RunRecord, reason: &EndReason) -> Result<Option<RunRecord>> {
        let status = reason.status();
        let n = self.exec(
            "UPDATE runs SET status = ?2, end_reason = ?3, end_detail = ?4, ended_at = ?5
             WHERE id = ?1 AND status = 'running'",
            args![
                rec.id.0,
                status.as_str(),
                reason.code(),
                reason.detail(),
                self.now
            ],
        )?;
        if n == 0 {
            return Ok(None);
        }
        // Release the lease only if this run still holds it; a newer generation is left alone.
        self.exec(
            "UPDATE threads SET lease_run_id = NULL WHERE id = ?1 AND lease_run_id = ?2 AND lease_generation = ?3",
            args![rec.thread_id.0, rec.id.0, rec.generation],
        )?;
        self.event(
            "run_ended",
            Some(rec.thread_id),
            Some(rec.id),
            json!({"status": status, "end_reason": reason.code(), "detail": reason.detail()}),
        )?;
        self.run(rec.id).map(Some)
    }

    pub fn set_run_root(&mut self, run: RunId, root: MessageId) -> Result<()> {
        self.exec(
            "UPDATE runs SET root_id = ?2 WHERE id = ?1",
            args![run.0, root.0],
        )?;
        Ok(())
    }

    pub fn bump_run_hops(&mut self, run: RunId) -> Result<()> {
        self.exec_unawaited(
            "UPDATE runs SET hops = hops + 1 WHERE id = ?1",
            args![run.0],
        )
    }

    pub fn bump_ending_bounces(&mut self, run: RunId) -> Result<()> {
        self.exec(
            "UPDATE runs SET ending_bounces = ending_bounces + 1 WHERE id = ?1",
            args![run.0],
        )?;
        Ok(())
    }

    /// Add a line to the run's record of notable failures (e.g. a tool failing three times in a row).
    pub fn add_failure_note(&mut self, run: RunId, note: &str) -> Result<()> {
        let rec = self.run(run)?;
        let mut notes = rec.failure_notes;
        notes.push(note.to_string());
        let text = serde_json::to_string(&notes).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.exec(
            "UPDATE runs SET failure_notes = ?2 WHERE id = ?1",
            args![run.0, text],
        )?;
        self.event(
            "run_failure_note",
            Some(rec.thread_id),
            Some(run),
            json!({"note": note}),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{NewRun, NewThread, Store};
    use std::sync::Arc;
    use troupe_core::ManualClock;
    use troupe_core::thread::{AgentBinding, Interaction};

    #[test]
    fn the_database_refuses_a_terminal_run_without_an_end_reason() {
        let s = Store::open_in_memory(Arc::new(ManualClock::new(0))).unwrap();
        let run = s
            .write(|tx| {
                let t = tx.create_thread(&NewThread {
                    workspace_root: None,
                    parent_id: None,
                    title: "t".into(),
                    agent: AgentBinding::new("a", ""),
                    workspace: "/tmp".into(),
                    interaction: Interaction::Interactive,
                })?;
                tx.start_run(&NewRun {
                    thread_id: t.id,
                    trigger: "test".into(),
                    owner_pid: 1,
                    owner_boot: "b".into(),
                })
            })
            .unwrap();
        // No code path can end a run silently: the constraint refuses it, whoever writes.
        let err = s.write(|tx| {
            tx.exec(
                "UPDATE runs SET status = 'completed', ended_at = 1 WHERE id = ?1",
                crate::args![run.id.0],
            )?;
            Ok(())
        });
        // The trigger of I5 (END-23) names the rule before the table's CHECK is reached.
        assert!(err.unwrap_err().to_string().contains("blank_end_reason"));
        assert_eq!(
            s.read(|tx| tx.run(run.id)).unwrap().status.as_str(),
            "running"
        );
    }
}
