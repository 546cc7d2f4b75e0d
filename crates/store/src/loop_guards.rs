//! Continuation guards: one active row per thread that a loop continues by itself, holding the
//! state of `troupe_core::continuation_guard`; and the facts it decides on (the model calls the
//! thread made since the loop started, what its latest turn did).

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::continuation_guard::{GuardLimits, GuardPause, GuardState, TurnFacts};
use troupe_core::{RunId, ThreadId};

/// A stored guard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopGuard {
    pub id: i64,
    pub thread_id: ThreadId,
    /// `lightloop` or `blueprint_loop:<id>`.
    pub loop_ref: String,
    pub state: GuardState,
}

const COLUMNS: &str = "id, thread_id, loop_ref, max_model_calls, no_progress_limit, spacing_ms, \
     counted_since, no_progress_streak, last_seen_run, last_continuation_at, due_at, paused";

fn from_row(r: &crate::Row) -> Result<(LoopGuard, Option<String>)> {
    let guard = LoopGuard {
        id: r.get(0)?,
        thread_id: ThreadId(r.get(1)?),
        loop_ref: r.get(2)?,
        state: GuardState {
            limits: GuardLimits {
                max_model_calls: r.get(3)?,
                no_progress_limit: r.get(4)?,
                spacing_ms: r.get(5)?,
            },
            counted_since: r.get(6)?,
            no_progress_streak: r.get(7)?,
            last_seen_run: r.get::<Option<i64>>(8)?.map(RunId),
            last_continuation_at: r.get(9)?,
            due_at: r.get(10)?,
            paused: None,
        },
    };
    Ok((guard, r.get(11)?))
}

fn finish(row: (LoopGuard, Option<String>)) -> Result<LoopGuard> {
    let (mut g, paused) = row;
    g.state.paused = paused
        .map(|p| GuardPause::parse(&p))
        .transpose()
        .map_err(StoreError::Corrupt)?;
    Ok(g)
}

impl Tx<'_> {
    /// Start a guard for the loop now continuing `thread`; any earlier guard of the thread ends.
    pub fn start_loop_guard(
        &mut self,
        thread: ThreadId,
        loop_ref: &str,
        limits: GuardLimits,
    ) -> Result<LoopGuard> {
        self.end_loop_guards(thread)?;
        let state = GuardState::new(limits, self.now);
        let id = self.insert(
            "INSERT INTO loop_guards (thread_id, loop_ref, max_model_calls, no_progress_limit,
                 spacing_ms, counted_since, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
            args![
                thread.0,
                loop_ref,
                limits.max_model_calls,
                limits.no_progress_limit,
                limits.spacing_ms,
                self.now
            ],
        )?;
        Ok(LoopGuard {
            id,
            thread_id: thread,
            loop_ref: loop_ref.to_string(),
            state,
        })
    }

    /// The thread's active guard, if a loop continuing it has one.
    pub fn active_loop_guard(&self, thread: ThreadId) -> Result<Option<LoopGuard>> {
        let sql =
            format!("SELECT {COLUMNS} FROM loop_guards WHERE thread_id = ?1 AND ended_at IS NULL");
        self.query_opt(&sql, args![thread.0], from_row)?
            .map(finish)
            .transpose()
    }

    /// Write a guard's new state; a change of its pause publishes `loop_guard_updated`.
    pub fn save_loop_guard(&mut self, id: i64, state: &GuardState) -> Result<()> {
        let n = self.exec(
            "UPDATE loop_guards SET max_model_calls = ?2, no_progress_streak = ?3,
                 last_seen_run = ?4, last_continuation_at = ?5, due_at = ?6, paused = ?7
             WHERE id = ?1 AND ended_at IS NULL",
            args![
                id,
                state.limits.max_model_calls,
                state.no_progress_streak,
                state.last_seen_run.map(|r| r.0),
                state.last_continuation_at,
                state.due_at,
                state.paused.map(GuardPause::as_str),
            ],
        )?;
        if n == 0 {
            return Err(StoreError::Invalid(format!(
                "loop guard {id} has ended or does not exist"
            )));
        }
        let thread: i64 = self.query_one(
            "SELECT thread_id FROM loop_guards WHERE id = ?1",
            args![id],
            |r| r.get(0),
        )?;
        self.event(
            "loop_guard_updated",
            Some(ThreadId(thread)),
            None,
            json!({"guard_id": id, "paused": state.paused, "no_progress_streak": state.no_progress_streak,
                   "max_model_calls": state.limits.max_model_calls, "due_at": state.due_at}),
        )?;
        Ok(())
    }

    /// End the thread's guard (its loop ended or another starts).
    pub fn end_loop_guards(&mut self, thread: ThreadId) -> Result<()> {
        self.exec(
            "UPDATE loop_guards SET ended_at = ?2, due_at = NULL WHERE thread_id = ?1 AND ended_at IS NULL",
            args![thread.0, self.now],
        )?;
        Ok(())
    }

    /// End the thread's guard if it belongs to `loop_ref`.
    pub fn end_loop_guard(&mut self, thread: ThreadId, loop_ref: &str) -> Result<()> {
        self.exec(
            "UPDATE loop_guards SET ended_at = ?3, due_at = NULL
             WHERE thread_id = ?1 AND loop_ref = ?2 AND ended_at IS NULL",
            args![thread.0, loop_ref, self.now],
        )?;
        Ok(())
    }

    /// Active guards whose held-back continuation is due by `now`.
    pub fn due_loop_guards(&self, now: i64) -> Result<Vec<LoopGuard>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM loop_guards WHERE ended_at IS NULL AND due_at IS NOT NULL AND due_at <= ?1 ORDER BY due_at, id"
        );
        let rows = self.query_all(&sql, args![now], from_row)?;
        rows.into_iter().map(finish).collect()
    }

    /// Model calls the thread's runs made from `since` on (its own: a child's runs are on its
    /// own thread).
    pub fn model_calls_since(&self, thread: ThreadId, since: i64) -> Result<u32> {
        self.query_one(
            "SELECT COUNT(*) FROM model_calls m JOIN runs r ON r.id = m.run_id
             WHERE r.thread_id = ?1 AND m.started_at >= ?2",
            args![thread.0, since],
            |r| r.get(0),
        )
    }

    /// What the thread's latest ended run did: whether it answered a continuation, and how many
    /// tool calls it made.
    pub fn latest_turn_facts(&self, thread: ThreadId) -> Result<Option<TurnFacts>> {
        let run: Option<i64> = self
            .query_opt(
                "SELECT id FROM runs WHERE thread_id = ?1 AND status != 'running' ORDER BY id DESC LIMIT 1",
                args![thread.0],
                |r| r.get(0),
            )?;
        let Some(run) = run else { return Ok(None) };
        let (continuation, tool_calls): (bool, u32) = self.query_one(
            // Through the thread's index: messages have none by run.
            "SELECT EXISTS (SELECT 1 FROM messages
                            WHERE thread_id = ?2 AND run_id = ?1 AND origin = 'continuation'),
                    (SELECT COUNT(*) FROM tool_calls WHERE run_id = ?1)",
            args![run, thread.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(Some(TurnFacts {
            run: RunId(run),
            continuation,
            tool_calls,
        }))
    }
}
