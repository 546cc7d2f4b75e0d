//! The effect ledger: a side effect's start is recorded before it acts, its outcome after.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::effect::{EffectOutcome, UnknownCall};
use troupe_core::{EffectId, RunId, ThreadId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EffectBegin {
    /// Recorded as started: go ahead.
    Started(EffectId),
    /// This exact call was started before: do not run it again.
    Repeated(EffectOutcome),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EffectRecord {
    pub id: EffectId,
    pub thread_id: ThreadId,
    pub run_id: RunId,
    pub effect_key: String,
    pub tool: String,
    pub summary: String,
    pub outcome: EffectOutcome,
    pub pgid: Option<i32>,
    pub detail: Option<String>,
    pub started_at: i64,
    pub settled_at: Option<i64>,
}

impl EffectRecord {
    pub fn unknown_call(&self) -> UnknownCall {
        UnknownCall {
            effect_id: self.id,
            tool: self.tool.clone(),
            summary: self.summary.clone(),
            started_at: self.started_at,
            cut_at: self.settled_at.unwrap_or(self.started_at),
        }
    }
}

impl Tx<'_> {
    pub fn begin_effect(
        &mut self,
        thread: ThreadId,
        run: RunId,
        key: &str,
        tool: &str,
        summary: &str,
    ) -> Result<EffectBegin> {
        let existing: Option<String> = self.query_opt(
            "SELECT outcome FROM effects WHERE thread_id = ?1 AND effect_key = ?2",
            args![thread.0, key],
            |r| r.get(0),
        )?;
        if let Some(outcome) = existing {
            return Ok(EffectBegin::Repeated(
                outcome.parse().map_err(StoreError::Corrupt)?,
            ));
        }
        let id = EffectId(self.insert(
            "INSERT INTO effects (thread_id, run_id, effect_key, tool, summary, outcome, started_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 'started', ?6)",
            args![thread.0, run.0, key, tool, summary, self.now],
        )?);
        self.event(
            "effect_started",
            Some(thread),
            Some(run),
            json!({"effect_id": id, "tool": tool, "summary": summary}),
        )?;
        Ok(EffectBegin::Started(id))
    }

    /// Remember the process group a shell effect runs in, so recovery can end it.
    pub fn set_effect_pgid(&mut self, id: EffectId, pgid: i32) -> Result<()> {
        self.exec(
            "UPDATE effects SET pgid = ?2 WHERE id = ?1",
            args![id.0, pgid],
        )?;
        Ok(())
    }

    /// Settle a started effect. An effect already settled (e.g. marked unknown by an abort)
    /// keeps its outcome; returns whether this call changed it.
    pub fn settle_effect(
        &mut self,
        id: EffectId,
        outcome: EffectOutcome,
        detail: Option<&str>,
    ) -> Result<bool> {
        if outcome == EffectOutcome::Started {
            return Err(StoreError::Invalid(
                "an effect cannot be settled as started".into(),
            ));
        }
        let n = self.exec(
            "UPDATE effects SET outcome = ?2, detail = ?3, settled_at = ?4 WHERE id = ?1 AND outcome = 'started'",
            args![id.0, outcome.as_str(), detail, self.now],
        )?;
        if n > 0 {
            let (thread, run): (i64, i64) = self.query_one(
                "SELECT thread_id, run_id FROM effects WHERE id = ?1",
                args![id.0],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            self.event(
                "effect_settled",
                Some(ThreadId(thread)),
                Some(RunId(run)),
                json!({"effect_id": id, "outcome": outcome}),
            )?;
        }
        Ok(n > 0)
    }

    /// Every effect of the run still marked started becomes unknown (abort, crash).
    pub fn mark_run_effects_unknown(&mut self, run: RunId, why: &str) -> Result<Vec<EffectRecord>> {
        let cut = self.effects_where("run_id = ?1 AND outcome = 'started'", args![run.0])?;
        for e in &cut {
            self.settle_effect(e.id, EffectOutcome::Unknown, Some(why))?;
        }
        Ok(cut)
    }

    /// The thread's most recent effect: its outcome and the run it belongs to.
    pub fn latest_effect(&self, thread: ThreadId) -> Result<Option<(EffectOutcome, RunId)>> {
        let o: Option<(String, i64)> = self.query_opt(
            "SELECT outcome, run_id FROM effects WHERE thread_id = ?1 ORDER BY id DESC LIMIT 1",
            args![thread.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        o.map(|(s, run)| Ok((s.parse().map_err(StoreError::Corrupt)?, RunId(run))))
            .transpose()
    }

    /// The call that keeps the thread from resuming by itself: its latest effect, when that is
    /// unknown and no run has started since (a person's line or Continue acknowledges it).
    pub fn blocking_unknown_effect(&self, thread: ThreadId) -> Result<Option<UnknownCall>> {
        let latest = self.effects_where(
            "id = (SELECT MAX(id) FROM effects WHERE thread_id = ?1)",
            args![thread.0],
        )?;
        let Some(e) = latest.into_iter().next() else {
            return Ok(None);
        };
        if e.outcome != EffectOutcome::Unknown {
            return Ok(None);
        }
        // A later run, or a model that already read the call's unknown result in its own run
        // (named when it was settled), knows about it: nothing holds the drive back.
        let known: bool = self.query_one(
            "SELECT EXISTS (SELECT 1 FROM runs WHERE thread_id = ?1 AND id > ?2)
                 OR EXISTS (SELECT 1 FROM effects WHERE id = ?3 AND named_at IS NOT NULL)",
            args![thread.0, e.run_id.0, e.id.0],
            |r| r.get(0),
        )?;
        Ok((!known).then(|| e.unknown_call()))
    }

    /// Unknown effects no turn's context has named yet, oldest first.
    pub fn unnamed_unknown_effects(&self, thread: ThreadId) -> Result<Vec<UnknownCall>> {
        Ok(self
            .effects_where(
                "thread_id = ?1 AND outcome = 'unknown' AND named_at IS NULL",
                args![thread.0],
            )?
            .iter()
            .map(EffectRecord::unknown_call)
            .collect())
    }

    /// Record that a turn's context named these effects, so no later turn names them again.
    pub fn mark_effects_named(&mut self, effects: &[EffectId]) -> Result<()> {
        for e in effects {
            self.exec(
                "UPDATE effects SET named_at = ?2 WHERE id = ?1 AND named_at IS NULL",
                args![e.0, self.now],
            )?;
        }
        Ok(())
    }

    pub fn effects_for_run(&self, run: RunId) -> Result<Vec<EffectRecord>> {
        self.effects_where("run_id = ?1", args![run.0])
    }

    pub fn effects_for_thread(&self, thread: ThreadId) -> Result<Vec<EffectRecord>> {
        self.effects_where("thread_id = ?1", args![thread.0])
    }

    fn effects_where(&self, clause: &str, args: &[crate::Value]) -> Result<Vec<EffectRecord>> {
        let sql = format!(
            "SELECT id, thread_id, run_id, effect_key, tool, summary, outcome, pgid, detail, started_at, settled_at FROM effects WHERE {clause} ORDER BY id"
        );
        let rows = self.query_all(&sql, args, |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<i64>(1)?,
                r.get::<i64>(2)?,
                r.get::<String>(3)?,
                r.get::<String>(4)?,
                r.get::<String>(5)?,
                r.get::<String>(6)?,
                r.get::<Option<i32>>(7)?,
                r.get::<Option<String>>(8)?,
                r.get::<i64>(9)?,
                r.get::<Option<i64>>(10)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (
                id,
                thread,
                run,
                key,
                tool,
                summary,
                outcome,
                pgid,
                detail,
                started_at,
                settled_at,
            ) = row;
            out.push(EffectRecord {
                id: EffectId(id),
                thread_id: ThreadId(thread),
                run_id: RunId(run),
                effect_key: key,
                tool,
                summary,
                outcome: outcome.parse().map_err(StoreError::Corrupt)?,
                pgid,
                detail,
                started_at,
                settled_at,
            });
        }
        Ok(out)
    }
}
