//! Work items: one Bot's work on a job (a thread per Bot × job) or its desk in a conversation
//! (the Bot's thread there), their states, and the segments (runs) that execute them.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::work_item::{WaitingOn, WorkMode, WorkState};
use troupe_core::{
    BotId, PlanId, RunId, SessionId, SessionMessageId, ThreadId, TicketId, WorkItemId,
};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkItemRecord {
    pub id: WorkItemId,
    pub bot_id: BotId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub mode: WorkMode,
    pub plan_id: Option<PlanId>,
    pub ticket_id: Option<i64>,
    /// A desk's conversation.
    pub session_id: Option<SessionId>,
    pub thread_id: ThreadId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub state: WorkState,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub waiting_on: Option<WaitingOn>,
    pub no_progress_endings: u32,
    /// Where its next segment speaks.
    pub speaks_in: Option<SessionId>,
    pub priority: u8,
    pub queued_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The line its next segment starts on, when a desk handed it over (no delivery to the
    /// work's thread says so).
    pub trigger_line_id: Option<SessionMessageId>,
}

pub struct NewWorkItem {
    pub bot_id: BotId,
    pub mode: WorkMode,
    pub plan_id: Option<PlanId>,
    pub session_id: Option<SessionId>,
    pub thread_id: ThreadId,
    pub speaks_in: Option<SessionId>,
}

/// What a segment row records beyond the conversation it speaks in.
pub struct NewSegment {
    pub run_id: RunId,
    pub bot_id: BotId,
    pub session_id: SessionId,
    pub trigger_line_id: Option<SessionMessageId>,
    pub work_item_id: WorkItemId,
    pub mode: WorkMode,
    /// A desk's candidate jobs, frozen now (DS-3).
    pub candidates: Vec<PlanId>,
    /// A read-only turn under a hold (HOLD-R1): stored as mode `readonly`, the one mode the
    /// hold trigger lets through.
    pub readonly: bool,
}

/// A segment's work and its counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentWork {
    pub run_id: RunId,
    pub work_item_id: WorkItemId,
    pub mode: WorkMode,
    pub candidates: Vec<PlanId>,
    pub bounces: u32,
    pub progress_messages: u32,
    /// A read-only turn under a hold: no effect, no ending contract (HOLD-R1..R4).
    pub readonly: bool,
}

const COLUMNS: &str = "id, bot_id, mode, plan_id, ticket_id, session_id, thread_id, state, \
    waiting_on, no_progress_endings, speaks_in, priority, queued_at, created_at, updated_at, \
    trigger_line_id";

fn bad(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

fn from_row(r: &crate::Row) -> Result<WorkItemRecord> {
    let waiting: Option<String> = r.get(8)?;
    Ok(WorkItemRecord {
        id: WorkItemId(r.get(0)?),
        bot_id: BotId(r.get(1)?),
        mode: WorkMode::parse(&r.get::<String>(2)?).map_err(|e| bad("work item mode", e))?,
        plan_id: r.get::<Option<i64>>(3)?.map(PlanId),
        ticket_id: r.get(4)?,
        session_id: r.get::<Option<i64>>(5)?.map(SessionId),
        thread_id: ThreadId(r.get(6)?),
        state: WorkState::parse(&r.get::<String>(7)?).map_err(|e| bad("work item state", e))?,
        waiting_on: waiting
            .map(|w| serde_json::from_str(&w).map_err(|e| bad("work item wait", e)))
            .transpose()?,
        no_progress_endings: r.get::<i64>(9)? as u32,
        speaks_in: r.get::<Option<i64>>(10)?.map(SessionId),
        priority: r.get::<i64>(11)? as u8,
        queued_at: r.get(12)?,
        created_at: r.get(13)?,
        updated_at: r.get(14)?,
        trigger_line_id: r.get::<Option<i64>>(15)?.map(SessionMessageId),
    })
}

impl Tx<'_> {
    pub fn create_work_item(&mut self, w: &NewWorkItem) -> Result<WorkItemRecord> {
        let id = self.insert(
            "INSERT INTO work_items (bot_id, mode, plan_id, session_id, thread_id, speaks_in,
                                     created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
            args![
                w.bot_id.0,
                w.mode.as_str(),
                w.plan_id.map(|p| p.0),
                w.session_id.map(|s| s.0),
                w.thread_id.0,
                w.speaks_in.map(|s| s.0),
                self.now
            ],
        )?;
        let item = self.work_item(WorkItemId(id))?;
        self.work_item_event(&item)?;
        Ok(item)
    }

    pub fn work_item(&self, id: WorkItemId) -> Result<WorkItemRecord> {
        let sql = format!("SELECT {COLUMNS} FROM work_items WHERE id = ?1");
        self.query_opt(&sql, args![id.0], from_row)?
            .ok_or_else(|| StoreError::not_found("work item", id))
    }

    /// The work item a thread runs: a desk's, or the job-level item of a Bot × job thread.
    pub fn work_item_of_thread(&self, thread: ThreadId) -> Result<Option<WorkItemRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM work_items WHERE thread_id = ?1
             ORDER BY ticket_id IS NOT NULL, id LIMIT 1"
        );
        self.query_opt(&sql, args![thread.0], from_row)
    }

    pub fn desk_item(&self, bot: BotId, session: SessionId) -> Result<Option<WorkItemRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM work_items WHERE mode = 'desk' AND bot_id = ?1 AND session_id = ?2"
        );
        self.query_opt(&sql, args![bot.0, session.0], from_row)
    }

    /// A Bot's job-level work item on a job.
    pub fn job_item(&self, bot: BotId, plan: PlanId) -> Result<Option<WorkItemRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM work_items
             WHERE mode = 'work' AND bot_id = ?1 AND plan_id = ?2 AND ticket_id IS NULL"
        );
        self.query_opt(&sql, args![bot.0, plan.0], from_row)
    }

    pub fn work_items_of_bot(&self, bot: BotId) -> Result<Vec<WorkItemRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM work_items WHERE bot_id = ?1 ORDER BY id");
        self.query_all(&sql, args![bot.0], from_row)
    }

    /// Note the line the item's next segment starts on (a desk handing its line over).
    pub fn set_work_trigger_line(&mut self, id: WorkItemId, line: SessionMessageId) -> Result<()> {
        self.exec(
            "UPDATE work_items SET trigger_line_id = ?2 WHERE id = ?1",
            args![id.0, line.0],
        )?;
        Ok(())
    }

    /// The segment starting now took the line noted for it.
    pub fn clear_work_trigger_line(&mut self, id: WorkItemId) -> Result<()> {
        self.exec(
            "UPDATE work_items SET trigger_line_id = NULL WHERE id = ?1",
            args![id.0],
        )?;
        Ok(())
    }

    /// The jobs these Bots work on (C §3's candidate rule), in one query: those of their open
    /// work items and those their segments worked on since `since`, as (Bot, job) pairs, by
    /// Bot in the order given, each Bot's jobs oldest first.
    pub fn jobs_of_bots_work(&self, bots: &[BotId], since: i64) -> Result<Vec<(BotId, PlanId)>> {
        if bots.is_empty() {
            return Ok(Vec::new());
        }
        // The Bots travel as one JSON array, unpacked by each dialect's own function.
        let list = crate::db::id_list(bots.iter().map(|b| b.0))?;
        let each = self.dialect().in_list(1);
        let pairs: Vec<(BotId, PlanId)> = self.query_all(
            &format!(
                "SELECT DISTINCT bot_id, plan_id FROM (
                     SELECT bot_id, plan_id FROM work_items
                     WHERE bot_id IN {each} AND mode = 'work' AND state <> 'closed'
                     UNION
                     SELECT s.bot_id, w.plan_id FROM segments s JOIN work_items w ON w.id = s.work_item_id
                     WHERE s.bot_id IN {each} AND s.work_item_id IS NOT NULL
                       AND s.created_at >= ?2 AND w.mode = 'work'
                 ) AS touched WHERE plan_id IS NOT NULL ORDER BY plan_id"
            ),
            args![list, since],
            |r| Ok((BotId(r.get(0)?), PlanId(r.get(1)?))),
        )?;
        Ok(bots
            .iter()
            .flat_map(|b| pairs.iter().filter(move |(o, _)| o == b).copied())
            .collect())
    }

    /// Work items on a job, every Bot's.
    pub fn work_items_of_plan(&self, plan: PlanId) -> Result<Vec<WorkItemRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM work_items WHERE plan_id = ?1 ORDER BY id");
        self.query_all(&sql, args![plan.0], from_row)
    }

    /// Move a work item to `state`; a queued one keeps the time it first queued (its place).
    pub fn set_work_state(
        &mut self,
        id: WorkItemId,
        state: WorkState,
        waiting_on: Option<&WaitingOn>,
    ) -> Result<WorkItemRecord> {
        let waiting = waiting_on
            .map(|w| serde_json::to_string(w).map_err(|e| bad("work item wait", e)))
            .transpose()?;
        let before = self.work_item(id)?;
        let queued_at = match (state, before.queued_at) {
            (WorkState::Queued, Some(at)) => Some(at),
            (WorkState::Queued, None) => Some(self.now),
            _ => None,
        };
        self.exec(
            "UPDATE work_items SET state = ?2, waiting_on = ?3, queued_at = ?4, updated_at = ?5
             WHERE id = ?1",
            args![id.0, state.as_str(), waiting, queued_at, self.now],
        )?;
        let after = self.work_item(id)?;
        if after.state != before.state || after.waiting_on != before.waiting_on {
            self.work_item_event(&after)?;
            self.close_notifications_moved_past(&before, &after)?;
        }
        Ok(after)
    }

    /// The person's notifications about a work item close with what they were about: closed
    /// work voids them all; work that runs again resolves "stopped"; work no longer waiting on
    /// the person resolves "blocked", and voids a question it went on without (WQ-8).
    fn close_notifications_moved_past(
        &mut self,
        before: &WorkItemRecord,
        after: &WorkItemRecord,
    ) -> Result<()> {
        use troupe_core::notification::{NotificationKind as K, NotificationStatus as S};
        if after.state == WorkState::Closed {
            self.close_work_notifications(
                after.id,
                &[K::Stopped, K::Blocked, K::WaitingForAnswer],
                S::Voided,
                "closed",
            )?;
            self.close_work_questions(after.id, None, "closed")?;
            return Ok(());
        }
        let runs_again = |s: WorkState| matches!(s, WorkState::Running | WorkState::Queued);
        if before.state == WorkState::NeedsAttention && runs_again(after.state) {
            self.close_work_notifications(after.id, &[K::Stopped], S::Resolved, "resumed")?;
        }
        let on_user = |w: &WorkItemRecord| w.waiting_on == Some(WaitingOn::User);
        if on_user(before) && !on_user(after) {
            self.close_work_notifications(after.id, &[K::Blocked], S::Resolved, "resumed")?;
            self.close_work_notifications(
                after.id,
                &[K::WaitingForAnswer],
                S::Voided,
                "superseded",
            )?;
        }
        Ok(())
    }

    /// Where the item's next segment speaks, and at what priority its waiting work is.
    pub fn set_work_mail(
        &mut self,
        id: WorkItemId,
        speaks_in: SessionId,
        priority: u8,
    ) -> Result<()> {
        // The most urgent waiting mail decides the item's place in its Bot's queue.
        self.exec(
            "UPDATE work_items SET speaks_in = ?2,
                 priority = CASE WHEN state = 'queued' AND priority < ?3 THEN priority ELSE ?3 END,
                 updated_at = ?4
             WHERE id = ?1",
            args![id.0, speaks_in.0, priority as i64, self.now],
        )?;
        Ok(())
    }

    pub fn set_no_progress_endings(&mut self, id: WorkItemId, n: u32) -> Result<()> {
        self.exec(
            "UPDATE work_items SET no_progress_endings = ?2 WHERE id = ?1",
            args![id.0, n as i64],
        )?;
        Ok(())
    }

    /// Work segments of the Bot that are live now (desks and read-only answers do not count).
    pub fn live_work_segments(&self, bot: BotId) -> Result<usize> {
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM segments s JOIN runs r ON r.id = s.run_id
             WHERE s.bot_id = ?1 AND s.mode = 'work' AND r.status = 'running'",
            args![bot.0],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// The Bot's queued work items, with priority and since when (in no particular order).
    pub fn queued_work(&self, bot: BotId) -> Result<Vec<(WorkItemId, u8, i64)>> {
        self.query_all(
            "SELECT id, priority, COALESCE(queued_at, updated_at) FROM work_items
             WHERE bot_id = ?1 AND mode = 'work' AND state = 'queued'",
            args![bot.0],
            |r| {
                Ok((
                    WorkItemId(r.get(0)?),
                    r.get::<i64>(1)? as u8,
                    r.get::<i64>(2)?,
                ))
            },
        )
    }

    /// `bots.parallel_limit` as stored (no API sets it).
    pub fn bot_parallel_limit(&self, bot: BotId) -> Result<Option<i64>> {
        self.query_opt(
            "SELECT parallel_limit FROM bots WHERE id = ?1",
            args![bot.0],
            |r| r.get::<Option<i64>>(0),
        )
        .map(Option::flatten)
    }

    /// The run a work item is executing now, if any.
    pub fn live_segment_of(&self, item: WorkItemId) -> Result<Option<RunId>> {
        self.query_opt(
            "SELECT s.run_id FROM segments s JOIN runs r ON r.id = s.run_id
             WHERE s.work_item_id = ?1 AND r.status = 'running' ORDER BY s.run_id DESC LIMIT 1",
            args![item.0],
            |r| Ok(RunId(r.get(0)?)),
        )
    }

    /// Record the segment a run executes (a row the projection may already have written with
    /// the conversation alone is completed).
    pub fn open_segment(&mut self, s: &NewSegment) -> Result<()> {
        let candidates =
            serde_json::to_string(&s.candidates.iter().map(|p| p.0).collect::<Vec<_>>())
                .map_err(|e| bad("segment candidates", e))?;
        self.exec(
            "INSERT INTO segments (run_id, bot_id, session_id, trigger_line_id, work_item_id, mode,
                                   candidates, binding, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (run_id) DO UPDATE SET work_item_id = excluded.work_item_id,
                 mode = excluded.mode, candidates = excluded.candidates, binding = excluded.binding",
            args![
                s.run_id.0,
                s.bot_id.0,
                s.session_id.0,
                s.trigger_line_id.map(|l| l.0),
                s.work_item_id.0,
                if s.readonly { "readonly" } else { s.mode.as_str() },
                candidates,
                json!({"kind": s.mode.as_str(), "work_item_id": s.work_item_id}).to_string(),
                self.now
            ],
        )?;
        Ok(())
    }

    pub fn segment_work(&self, run: RunId) -> Result<Option<SegmentWork>> {
        type Row = (
            Option<i64>,
            Option<String>,
            Option<String>,
            i64,
            i64,
            Option<String>,
        );
        let row: Option<Row> = self.query_opt(
            "SELECT s.work_item_id, s.mode, s.candidates, s.bounces, s.progress_messages, w.mode
             FROM segments s LEFT JOIN work_items w ON w.id = s.work_item_id
             WHERE s.run_id = ?1",
            args![run.0],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )?;
        let Some((Some(item), Some(mode), candidates, bounces, progress, item_mode)) = row else {
            return Ok(None);
        };
        // A read-only turn works as its item does, with every effect closed.
        let readonly = mode == "readonly";
        let mode = if readonly {
            item_mode.unwrap_or_else(|| "desk".into())
        } else {
            mode
        };
        let candidates: Vec<i64> = match candidates {
            Some(c) => serde_json::from_str(&c).map_err(|e| bad("segment candidates", e))?,
            None => Vec::new(),
        };
        Ok(Some(SegmentWork {
            run_id: run,
            work_item_id: WorkItemId(item),
            mode: WorkMode::parse(&mode).map_err(|e| bad("segment mode", e))?,
            candidates: candidates.into_iter().map(PlanId).collect(),
            bounces: bounces as u32,
            progress_messages: progress as u32,
            readonly,
        }))
    }

    /// Count one more bounce or desk refusal against the segment's shared budget; answers the
    /// count now.
    pub fn bump_segment_bounces(&mut self, run: RunId) -> Result<u32> {
        let n: i64 = self.query_one(
            "UPDATE segments SET bounces = bounces + 1 WHERE run_id = ?1 RETURNING bounces",
            args![run.0],
            |r| r.get(0),
        )?;
        Ok(n as u32)
    }

    fn work_item_event(&mut self, w: &WorkItemRecord) -> Result<()> {
        let payload = json!({
            "work_item_id": w.id, "bot_id": w.bot_id, "mode": w.mode.as_str(),
            "plan_id": w.plan_id, "state": w.state.as_str(), "waiting_on": w.waiting_on,
        });
        match w.session_id.or(w.speaks_in) {
            Some(s) => self.session_event("work_item_changed", s, None, payload),
            None => {
                self.event("work_item_changed", Some(w.thread_id), None, payload)?;
                Ok(())
            }
        }
    }
}

impl Tx<'_> {
    /// The lines a run posted, in order (its words in every conversation).
    pub fn lines_of_turn(
        &self,
        run: RunId,
    ) -> Result<Vec<troupe_core::conversation::SessionMessage>> {
        let ids: Vec<i64> = self.query_all(
            "SELECT id FROM session_messages WHERE turn_id = ?1 ORDER BY id",
            args![run.0],
            |r| r.get(0),
        )?;
        ids.into_iter()
            .map(|id| self.line(SessionMessageId(id)))
            .collect()
    }
}

/// A stored "where a line belongs" reading.
#[derive(Clone, Debug, PartialEq)]
pub struct FilingReadingRecord {
    pub candidates: Vec<PlanId>,
    /// `None`: unread (the failure says why).
    pub filing: Option<troupe_core::reading::filing::Filing>,
    pub model: Option<String>,
    pub failure: Option<String>,
}

impl Tx<'_> {
    /// Keep the first reading of a line; a second answers `false` and changes nothing.
    pub fn save_filing_reading(
        &mut self,
        line: SessionMessageId,
        r: &FilingReadingRecord,
        raw: Option<&str>,
    ) -> Result<bool> {
        let candidates = json!(r.candidates.iter().map(|p| p.0).collect::<Vec<_>>()).to_string();
        let filing = r
            .filing
            .as_ref()
            .map(|f| serde_json::to_string(f).map_err(|e| bad("filing reading", e)))
            .transpose()?;
        let n = self.exec(
            "INSERT INTO filing_readings (line_id, candidates, filing, model, failure, raw, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
            args![
                line.0,
                candidates,
                filing,
                r.model.as_deref(),
                r.failure.as_deref(),
                raw,
                self.now
            ],
        )?;
        if n > 0 {
            let session = self.line(line)?.session_id;
            self.session_event(
                "line_filing_read",
                session,
                None,
                json!({"message_id": line, "filing": r.filing, "failure": r.failure}),
            )?;
        }
        Ok(n > 0)
    }

    pub fn filing_reading(&self, line: SessionMessageId) -> Result<Option<FilingReadingRecord>> {
        type Row = (String, Option<String>, Option<String>, Option<String>);
        let row: Option<Row> = self.query_opt(
            "SELECT candidates, filing, model, failure FROM filing_readings WHERE line_id = ?1",
            args![line.0],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        row.map(|(candidates, filing, model, failure)| {
            let ids: Vec<i64> =
                serde_json::from_str(&candidates).map_err(|e| bad("filing candidates", e))?;
            Ok(FilingReadingRecord {
                candidates: ids.into_iter().map(PlanId).collect(),
                filing: filing
                    .map(|f| serde_json::from_str(&f).map_err(|e| bad("filing reading", e)))
                    .transpose()?,
                model,
                failure,
            })
        })
        .transpose()
    }

    /// Record a desk's reading verdict (C §2) on its segment.
    pub fn set_segment_verdict(&mut self, run: RunId, verdict: &str) -> Result<()> {
        self.exec(
            "UPDATE segments SET reading_verdict = ?2 WHERE run_id = ?1",
            args![run.0, verdict],
        )?;
        Ok(())
    }

    pub fn segment_verdict(&self, run: RunId) -> Result<Option<String>> {
        self.query_opt(
            "SELECT reading_verdict FROM segments WHERE run_id = ?1",
            args![run.0],
            |r| r.get::<Option<String>>(0),
        )
        .map(Option::flatten)
    }
}

impl Tx<'_> {
    /// Runs whose segment speaks in a conversation, newest first (a Bot's work on a job
    /// speaks where its work came from, from a thread of its own).
    pub fn segment_runs_in(&self, session: SessionId, limit: u32) -> Result<Vec<RunId>> {
        self.query_all(
            "SELECT run_id FROM segments WHERE session_id = ?1 ORDER BY run_id DESC LIMIT ?2",
            args![session.0, limit],
            |r| Ok(RunId(r.get(0)?)),
        )
    }

    /// The turns of a job's work (segments bound to its work items), newest first, before
    /// `before` when given, each with the ticket its work is on.
    pub fn job_segment_runs(
        &self,
        plan: PlanId,
        before: Option<RunId>,
        limit: u32,
    ) -> Result<Vec<(RunId, Option<TicketId>)>> {
        self.query_all(
            "SELECT s.run_id, w.ticket_id FROM work_items w
             JOIN segments s ON s.work_item_id = w.id
             WHERE w.plan_id = ?1 AND s.run_id < ?2
             ORDER BY s.run_id DESC LIMIT ?3",
            args![plan.0, before.map_or(i64::MAX, |b| b.0), limit],
            |r| Ok((RunId(r.get(0)?), r.get::<Option<i64>>(1)?.map(TicketId))),
        )
    }

    /// A job's tickets (all of them) and its turns (every segment of its work items), for the
    /// Jobs panel's "One question" fold (PLAN-U1).
    pub fn job_sizes(&self, plan: PlanId) -> Result<(u32, u32)> {
        self.query_one(
            "SELECT (SELECT COUNT(*) FROM tickets WHERE plan_id = ?1),
                    (SELECT COUNT(*) FROM work_items w JOIN segments s ON s.work_item_id = w.id
                     WHERE w.plan_id = ?1)",
            args![plan.0],
            |r| {
                let n = |v: i64| u32::try_from(v).unwrap_or(u32::MAX);
                Ok((n(r.get(0)?), n(r.get(1)?)))
            },
        )
    }

    /// How many turns each Bot ran on each ticket of a job (ticket none: its work under no
    /// ticket): one row per ticket and Bot, from the segments of the job's work items.
    pub fn job_turn_counts(&self, plan: PlanId) -> Result<Vec<troupe_core::ticket::TurnCount>> {
        self.query_all(
            "SELECT w.ticket_id, s.bot_id, COUNT(*) FROM work_items w
             JOIN segments s ON s.work_item_id = w.id
             WHERE w.plan_id = ?1 GROUP BY w.ticket_id, s.bot_id",
            args![plan.0],
            |r| {
                Ok(troupe_core::ticket::TurnCount {
                    ticket: r.get::<Option<i64>>(0)?.map(TicketId),
                    bot: BotId(r.get(1)?),
                    turns: u32::try_from(r.get::<i64>(2)?).unwrap_or(u32::MAX),
                })
            },
        )
    }

    /// Every thread whose events belong to a conversation's stream: its Bots' threads there,
    /// and the threads of work that speaks there (a job's work, from a thread of its own).
    pub fn threads_heard_in(&self, session: SessionId) -> Result<Vec<ThreadId>> {
        self.query_all(
            "SELECT thread_id FROM session_threads WHERE session_id = ?1
             UNION SELECT thread_id FROM work_items WHERE speaks_in = ?1
             ORDER BY 1",
            args![session.0],
            |r| Ok(ThreadId(r.get(0)?)),
        )
    }

    /// The threads of live segments speaking in a conversation.
    pub fn live_segment_threads_in(&self, session: SessionId) -> Result<Vec<ThreadId>> {
        self.query_all(
            "SELECT r.thread_id FROM segments s JOIN runs r ON r.id = s.run_id
             WHERE s.session_id = ?1 AND r.status = 'running' ORDER BY r.id",
            args![session.0],
            |r| Ok(ThreadId(r.get(0)?)),
        )
    }

    /// Count one more progress message of the segment (MSG-2); answers the count before it.
    pub fn bump_progress_messages(&mut self, run: RunId) -> Result<u32> {
        let n: i64 = self.query_one(
            "UPDATE segments SET progress_messages = progress_messages + 1 WHERE run_id = ?1
             RETURNING progress_messages",
            args![run.0],
            |r| r.get(0),
        )?;
        Ok((n - 1) as u32)
    }
}

impl Tx<'_> {
    /// When a Bot last ran a segment on the job, if ever.
    pub fn last_segment_on(&self, plan: PlanId) -> Result<Option<i64>> {
        self.query_opt(
            "SELECT MAX(s.created_at) FROM segments s JOIN work_items w ON w.id = s.work_item_id
             WHERE w.plan_id = ?1",
            args![plan.0],
            |r| r.get::<Option<i64>>(0),
        )
        .map(Option::flatten)
    }
}

/// A work question card: what a blocked segment needs from the person, and their answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkQuestion {
    pub message_id: SessionMessageId,
    pub work_item_id: WorkItemId,
    pub needs: String,
    pub request_id: Option<String>,
    pub answer: Option<String>,
    pub answered_at: Option<i64>,
}

impl Tx<'_> {
    pub fn create_work_question(
        &mut self,
        message: SessionMessageId,
        item: WorkItemId,
        needs: &str,
    ) -> Result<()> {
        self.exec(
            "INSERT INTO work_questions (message_id, work_item_id, needs, created_at)
             VALUES (?1, ?2, ?3, ?4)",
            args![message.0, item.0, needs, self.now],
        )?;
        Ok(())
    }

    pub fn work_question(&self, message: SessionMessageId) -> Result<Option<WorkQuestion>> {
        type Row = (i64, String, Option<String>, Option<String>, Option<i64>);
        let row: Option<Row> = self.query_opt(
            "SELECT work_item_id, needs, request_id, answer, answered_at FROM work_questions
             WHERE message_id = ?1",
            args![message.0],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
        Ok(row.map(
            |(item, needs, request_id, answer, answered_at)| WorkQuestion {
                message_id: message,
                work_item_id: WorkItemId(item),
                needs,
                request_id,
                answer,
                answered_at,
            },
        ))
    }

    /// WQ-8: the item's work question cards still open — unanswered, not closed — stop taking
    /// an answer, for `why` (`superseded`, `closed`); a card run `keep` posted stays open. Each
    /// closed card is an `ask_closed` event, as a stop's is.
    pub fn close_work_questions(
        &mut self,
        item: WorkItemId,
        keep: Option<RunId>,
        why: &str,
    ) -> Result<usize> {
        let open: Vec<i64> = self.query_all(
            "SELECT q.message_id FROM work_questions q
             JOIN session_messages m ON m.id = q.message_id
             WHERE q.work_item_id = ?1 AND q.answer IS NULL AND m.ask_closed_at IS NULL AND COALESCE(m.turn_id, 0) <> ?2",
            args![item.0, keep.map_or(0, |r| r.0)],
            |r| r.get(0),
        )?;
        for id in &open {
            self.exec(
                "UPDATE session_messages SET ask_closed_at = ?2, ask_closed_why = ?3 WHERE id = ?1",
                args![id, self.now, why],
            )?;
            let l = self.line(SessionMessageId(*id))?;
            self.session_event("ask_closed", l.session_id, l.turn_id, json!({"message": l}))?;
        }
        Ok(open.len())
    }

    /// Store the answer once; `false` when the card was answered already.
    pub fn answer_work_question(
        &mut self,
        message: SessionMessageId,
        request_id: &str,
        answer: &str,
    ) -> Result<bool> {
        let n = self.exec(
            "UPDATE work_questions SET request_id = ?2, answer = ?3, answered_at = ?4
             WHERE message_id = ?1 AND answer IS NULL",
            args![message.0, request_id, answer, self.now],
        )?;
        Ok(n == 1)
    }
}
