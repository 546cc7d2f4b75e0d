//! Lattice Run records and each session's current-Run pointer. [`Tx::save_lattice_run`] is the
//! single transition point (LAT-3): the Run as the machine left it (its state, status, at most
//! one pending action and one effect) and the events that say what happened are written in the
//! one transaction, so a crash leaves the Run either before or after the step, never between.
//!
//! Runs are keyed by id and kept whole (LAT-1): a new Run is a new row, never an overwrite of
//! an old one, and a completed, failed or cancelled Run's status never changes again (the
//! database's `lattice_runs_terminal` trigger, surfaced as [`StoreError::Conflict`]). The
//! pointer alone selects a session's current Run; reads repair it by one rule (the pointed Run
//! if it fits, else the one non-terminal Run, else the newest).

use crate::args;
use crate::{Result, SqlErrorKind, StoreError, Tx};
use serde_json::{Value, json};
use troupe_core::lattice::{LatticeRun, Mode, RunStatus};
use troupe_core::{LatticeRunId, ThreadId};

/// Payload fields every `lattice_` event carries from the Run itself.
const RESERVED_EVENT_FIELDS: [&str; 3] = ["run_id", "state", "status"];

fn corrupt(e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("lattice run record: {e}"))
}

/// A row's Run: the record, which must agree with the columns queries rely on.
fn run_from_row(r: &crate::Row) -> Result<LatticeRun> {
    let id = LatticeRunId(r.get(0)?);
    let status: String = r.get(1)?;
    let record: String = r.get(2)?;
    let run: LatticeRun = serde_json::from_str(&record).map_err(corrupt)?;
    if run.id != id || run.status.as_str() != status {
        return Err(corrupt(format!(
            "row {id} ({status}) holds the record of {} ({})",
            run.id,
            run.status.as_str()
        )));
    }
    Ok(run)
}

const RUN_COLUMNS: &str = "id, status, record";

/// The trigger's refusal of a terminal Run's status change, said plainly.
fn terminal_refusal(e: StoreError, id: LatticeRunId, stored: &str, next: RunStatus) -> StoreError {
    match e {
        StoreError::Sql(f)
            if f.kind == SqlErrorKind::Constraint && f.message.contains("lattice_run_terminal") =>
        {
            StoreError::Conflict(format!(
                "lattice run {id} is {stored}: a completed, failed or cancelled Run keeps its \
                 status (refused: {stored} -> {})",
                next.as_str()
            ))
        }
        other => other,
    }
}

/// The one-non-terminal-Run index's refusal (SQLite names the column, PostgreSQL the index).
fn is_second_live_run(e: &StoreError) -> bool {
    matches!(e, StoreError::Sql(f) if f.kind == SqlErrorKind::Constraint
        && (f.message.contains("lattice_runs_one_live") || f.message.contains("lattice_runs.thread_id")))
}

fn second_live_run() -> StoreError {
    StoreError::Conflict("a non-terminal Lattice Run already exists on this session".into())
}

/// Each entry's payload is an object (or null) naming none of the fields the Run fills in.
fn check_events(events: &[(&'static str, Value)]) -> Result<()> {
    for (kind, payload) in events {
        if kind.trim().is_empty() {
            return Err(StoreError::Invalid(
                "lattice event: the kind is empty".into(),
            ));
        }
        if kind.starts_with("lattice_") {
            return Err(StoreError::Invalid(format!(
                "lattice event '{kind}': give the kind without the lattice_ prefix (the store adds it)"
            )));
        }
        match payload {
            Value::Null => {}
            Value::Object(fields) => {
                if let Some(f) = RESERVED_EVENT_FIELDS
                    .iter()
                    .find(|f| fields.contains_key(**f))
                {
                    return Err(StoreError::Invalid(format!(
                        "lattice event '{kind}': field '{f}' is the Run's own and is filled in by the store"
                    )));
                }
            }
            _ => {
                return Err(StoreError::Invalid(format!(
                    "lattice event '{kind}': the payload must be a JSON object"
                )));
            }
        }
    }
    Ok(())
}

impl Tx<'_> {
    /// Insert an active Run in `clarifying`, point the thread's `lattice_current` at it, and
    /// log `lattice_run_created`. A second non-terminal Run on the thread is refused (the
    /// database's unique index) as [`StoreError::Conflict`].
    pub fn create_lattice_run(
        &mut self,
        thread: ThreadId,
        mode: Mode,
        max_model_calls: u32,
        goal_seed: Option<String>,
    ) -> Result<LatticeRun> {
        self.thread(thread)?;
        self.lock_thread(thread)?;
        if self.live_lattice_run(thread)?.is_some() {
            return Err(second_live_run());
        }
        let id = self
            .insert(
                "INSERT INTO lattice_runs (thread_id, status, effect_kind, record, created_at, updated_at)
                 VALUES (?1, 'active', NULL, '{}', ?2, ?2)",
                args![thread.0, self.now],
            )
            .map_err(|e| {
                if is_second_live_run(&e) {
                    second_live_run()
                } else {
                    e
                }
            })?;
        let run = LatticeRun::new(
            LatticeRunId(id),
            thread,
            mode,
            max_model_calls,
            goal_seed,
            self.now,
        );
        let record = serde_json::to_string(&run).map_err(corrupt)?;
        self.exec(
            "UPDATE lattice_runs SET record = ?2 WHERE id = ?1",
            args![id, record],
        )?;
        self.point_at(thread, run.id)?;
        self.event(
            "lattice_run_created",
            Some(thread),
            None,
            json!({
                "run_id": id,
                "state": run.state.as_str(),
                "status": run.status.as_str(),
                "mode": mode.as_str(),
                "max_model_calls": max_model_calls,
            }),
        )?;
        Ok(run)
    }

    /// The single transition point (LAT-3): write `next` (record, status, the effect's name,
    /// `updated_at` stamped now), then one `lattice_<kind>` event per entry of `events`, with
    /// the Run's `run_id`, `state` and `status` and the entry's fields. A completed, failed or
    /// cancelled Run's status cannot change: the database refuses, nothing is written, and the
    /// refusal is a [`StoreError::Conflict`]. Returns the Run as written.
    pub fn save_lattice_run(
        &mut self,
        next: &LatticeRun,
        events: &[(&'static str, Value)],
    ) -> Result<LatticeRun> {
        check_events(events)?;
        let lock = if self.locks_rows() {
            " FOR NO KEY UPDATE"
        } else {
            ""
        };
        let (thread, stored): (i64, String) = self
            .query_opt(
                &format!("SELECT thread_id, status FROM lattice_runs WHERE id = ?1{lock}"),
                args![next.id.0],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .ok_or_else(|| StoreError::not_found("lattice run", next.id))?;
        if ThreadId(thread) != next.thread_id {
            return Err(StoreError::Invalid(format!(
                "lattice run {}: it belongs to thread {}, not {}",
                next.id,
                ThreadId(thread),
                next.thread_id
            )));
        }
        let mut run = next.clone();
        run.updated_at = self.now;
        let record = serde_json::to_string(&run).map_err(corrupt)?;
        self.exec(
            "UPDATE lattice_runs SET status = ?2, effect_kind = ?3, record = ?4, updated_at = ?5
             WHERE id = ?1",
            args![
                run.id.0,
                run.status.as_str(),
                run.effect.as_ref().map(|e| e.name()),
                record,
                self.now
            ],
        )
        .map_err(|e| terminal_refusal(e, run.id, &stored, run.status))?;
        for (kind, fields) in events {
            let mut payload = serde_json::Map::new();
            payload.insert("run_id".into(), json!(run.id.0));
            payload.insert("state".into(), json!(run.state.as_str()));
            payload.insert("status".into(), json!(run.status.as_str()));
            if let Value::Object(fields) = fields {
                payload.extend(fields.clone());
            }
            self.event(
                &format!("lattice_{kind}"),
                Some(run.thread_id),
                None,
                Value::Object(payload),
            )?;
        }
        Ok(run)
    }

    /// The Run with this id; [`StoreError::NotFound`] if there is none.
    pub fn lattice_run(&self, id: LatticeRunId) -> Result<LatticeRun> {
        self.find_lattice_run(id)?
            .ok_or_else(|| StoreError::not_found("lattice run", id))
    }

    pub fn find_lattice_run(&self, id: LatticeRunId) -> Result<Option<LatticeRun>> {
        self.query_opt(
            &format!("SELECT {RUN_COLUMNS} FROM lattice_runs WHERE id = ?1"),
            args![id.0],
            run_from_row,
        )
    }

    /// Runs of a thread, newest first.
    pub fn lattice_runs_of_thread(&self, thread: ThreadId, limit: u32) -> Result<Vec<LatticeRun>> {
        self.query_all(
            &format!(
                "SELECT {RUN_COLUMNS} FROM lattice_runs WHERE thread_id = ?1 ORDER BY id DESC LIMIT ?2"
            ),
            args![thread.0, limit],
            run_from_row,
        )
    }

    /// All Runs, newest first.
    pub fn lattice_runs(&self, limit: u32) -> Result<Vec<LatticeRun>> {
        self.query_all(
            &format!("SELECT {RUN_COLUMNS} FROM lattice_runs ORDER BY id DESC LIMIT ?1"),
            args![limit],
            run_from_row,
        )
    }

    /// The current Run of a thread by the pointer's repair rule, without writing: the pointed
    /// Run if it belongs to the thread and it is non-terminal or no non-terminal Run exists;
    /// else the one non-terminal Run; else the newest; `None` if the thread has no Run.
    pub fn peek_current_lattice_run(&self, thread: ThreadId) -> Result<Option<LatticeRun>> {
        Ok(self.current_by_rule(thread)?.1)
    }

    /// [`Tx::peek_current_lattice_run`], repairing a missing or wrong pointer: it is written
    /// only when it was wrong, with a `lattice_pointer_repaired` event (`from`, `to`). A
    /// pointer on a thread that has no Run at all is removed.
    pub fn current_lattice_run(&mut self, thread: ThreadId) -> Result<Option<LatticeRun>> {
        self.lock_thread(thread)?;
        let (pointer, current) = self.current_by_rule(thread)?;
        let to = current.as_ref().map(|r| r.id);
        if pointer != to {
            match to {
                Some(id) => self.point_at(thread, id)?,
                None => {
                    self.exec(
                        "DELETE FROM lattice_current WHERE thread_id = ?1",
                        args![thread.0],
                    )?;
                }
            }
            self.event(
                "lattice_pointer_repaired",
                Some(thread),
                None,
                json!({"from": pointer.map(|p| p.0), "to": to.map(|t| t.0)}),
            )?;
        }
        Ok(current)
    }

    /// Point the thread at one of its Runs (enable makes a new Run current). While the thread
    /// has a non-terminal Run, only that Run can be current.
    pub fn set_current_lattice_run(&mut self, thread: ThreadId, run: LatticeRunId) -> Result<()> {
        self.lock_thread(thread)?;
        let r = self.lattice_run(run)?;
        if r.thread_id != thread {
            return Err(StoreError::Invalid(format!(
                "lattice run {run} belongs to thread {}, not {thread}",
                r.thread_id
            )));
        }
        if let Some(live) = self.live_lattice_run(thread)?
            && live.id != run
        {
            return Err(StoreError::Conflict(format!(
                "lattice run {} is still {} on this session: it stays current until it ends",
                live.id,
                live.status.as_str()
            )));
        }
        self.point_at(thread, run)
    }

    /// Runs that need the controller at startup: the non-terminal ones, and terminal ones whose
    /// effect is still pending (a completion not yet delivered); oldest first.
    pub fn lattice_runs_needing_reconcile(&self) -> Result<Vec<LatticeRun>> {
        self.query_all(
            &format!(
                "SELECT {RUN_COLUMNS} FROM lattice_runs
                 WHERE status IN ('active', 'paused') OR effect_kind IS NOT NULL
                 ORDER BY id"
            ),
            args![],
            run_from_row,
        )
    }

    /// The pointer as stored, and the Run the repair rule picks.
    fn current_by_rule(
        &self,
        thread: ThreadId,
    ) -> Result<(Option<LatticeRunId>, Option<LatticeRun>)> {
        let pointer = self
            .query_opt(
                "SELECT run_id FROM lattice_current WHERE thread_id = ?1",
                args![thread.0],
                |r| r.get::<i64>(0),
            )?
            .map(LatticeRunId);
        let live = self.live_lattice_run(thread)?;
        // The usual case: the pointer names the live Run, already read.
        if pointer.is_some() && live.as_ref().map(|l| l.id) == pointer {
            return Ok((pointer, live));
        }
        if let Some(p) = pointer
            && let Some(pointed) = self.find_lattice_run(p)?
            && pointed.thread_id == thread
            && (!pointed.status.is_terminal() || live.is_none())
        {
            return Ok((pointer, Some(pointed)));
        }
        if live.is_some() {
            return Ok((pointer, live));
        }
        let newest = self.lattice_runs_of_thread(thread, 1)?.into_iter().next();
        Ok((pointer, newest))
    }

    /// The thread's one non-terminal Run, if any.
    fn live_lattice_run(&self, thread: ThreadId) -> Result<Option<LatticeRun>> {
        let mut live = self.query_all(
            &format!(
                "SELECT {RUN_COLUMNS} FROM lattice_runs
                 WHERE thread_id = ?1 AND status IN ('active', 'paused') ORDER BY id"
            ),
            args![thread.0],
            run_from_row,
        )?;
        if live.len() > 1 {
            // The unique index makes this impossible; say so rather than pick one.
            return Err(StoreError::Corrupt(format!(
                "thread {thread} has {} non-terminal Lattice Runs",
                live.len()
            )));
        }
        Ok(live.pop())
    }

    fn point_at(&mut self, thread: ThreadId, run: LatticeRunId) -> Result<()> {
        self.exec(
            "INSERT INTO lattice_current (thread_id, run_id, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(thread_id) DO UPDATE SET run_id = excluded.run_id,
                 updated_at = excluded.updated_at",
            args![thread.0, run.0, self.now],
        )?;
        Ok(())
    }
}
