//! Turns (kernel runs) as a conversation shows them.

use crate::{Collab, CollabError};
use serde::Serialize;
use std::collections::HashMap;
use troupe_core::{HoldId, PlanId, RunId, SessionId, TicketId};
use troupe_store::{CommandRecord, ModelCallRecord, RunRecord, StoreError, Tx};

/// A turn: one run of a Bot's thread, with its model calls.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct TurnView {
    pub id: RunId,
    pub session_id: Option<SessionId>,
    /// The Bot whose turn it is.
    pub bot_id: Option<troupe_core::BotId>,
    pub thread_id: troupe_core::ThreadId,
    /// running, waiting_ask (it ended on a question the person has not answered), or how it
    /// ended: completed, failed, stopped, interrupted.
    pub state: String,
    /// running, completed, failed, stopped or interrupted.
    pub status: String,
    pub end_reason: Option<String>,
    pub end_detail: Option<String>,
    pub trigger: String,
    pub started_at: i64,
    pub ended_at: Option<i64>,
    /// How long the turn took to its end, for the reply's time card (TURN-16).
    pub reply_ms: Option<i64>,
    pub hops: u32,
    pub tool_calls: u32,
    pub failure_notes: Vec<String>,
    pub model_calls: Vec<ModelCallRecord>,
    /// The work item this turn ran for, and as what (desk, work).
    pub work_item_id: Option<troupe_core::WorkItemId>,
    pub mode: Option<String>,
    /// Endings sent back and desk refusals, against the segment's budget of two.
    pub bounces: u32,
}

/// A turn on a job, as the job's view lists it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct JobTurnView {
    #[serde(flatten)]
    pub turn: TurnView,
    /// The ticket the work is on; none for work on the whole job.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub ticket_id: Option<TicketId>,
    /// The person's stop that ended it (STOP-13), when a stop did.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub stopped_by: Option<HoldId>,
    /// What it was doing when it stopped, as recorded on that stop: its last step's words or
    /// call.
    pub stopped_while: Option<String>,
}

/// A file a turn wrote, edited or deleted, from the effect ledger: what the page shows under the reply
/// beside the commands the turn ran.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct FileChange {
    /// write_file, edit_file or delete_file.
    pub tool: String,
    /// The call as recorded before it acted (`write_file hello.txt (2 bytes)`).
    pub summary: String,
    /// started, succeeded, refused, failed, or unknown (cut off: whether it happened is not known).
    pub outcome: String,
    /// What came of it (`wrote 2 bytes to hello.txt`, or why it failed).
    pub detail: Option<String>,
    pub started_at: i64,
    pub settled_at: Option<i64>,
}

/// The tools whose effects are files in the workspace (shell and MCP calls have their own views).
const FILE_TOOLS: [&str; 3] = ["write_file", "edit_file", "delete_file"];

impl TurnView {
    fn new(
        run: RunRecord,
        at: Option<(SessionId, troupe_core::BotId)>,
        waiting_ask: bool,
        model_calls: Vec<ModelCallRecord>,
        work: Option<troupe_store::SegmentWork>,
    ) -> Self {
        let state = if waiting_ask {
            "waiting_ask".to_string()
        } else {
            run.status.as_str().to_string()
        };
        TurnView {
            id: run.id,
            session_id: at.map(|(s, _)| s),
            bot_id: at.map(|(_, b)| b),
            thread_id: run.thread_id,
            state,
            status: run.status.as_str().to_string(),
            end_reason: run.end_reason.as_ref().map(|r| r.code().to_string()),
            end_detail: run.end_reason.as_ref().and_then(|r| r.detail()),
            trigger: run.trigger,
            started_at: run.started_at,
            ended_at: run.ended_at,
            reply_ms: run.ended_at.map(|e| e - run.started_at),
            hops: run.hops,
            tool_calls: run.tool_calls,
            failure_notes: run.failure_notes,
            model_calls,
            work_item_id: work.as_ref().map(|w| w.work_item_id),
            mode: work.as_ref().map(|w| w.mode.as_str().to_string()),
            bounces: work.map_or(0, |w| w.bounces),
        }
    }
}

impl Collab {
    pub fn turns(&self, session: SessionId, limit: u32) -> Result<Vec<TurnView>, CollabError> {
        let threads = self.store().read(|tx| {
            tx.session(session)?;
            tx.session_threads(session)
        })?;
        let mut runs: Vec<RunId> = Vec::new();
        for t in threads {
            runs.extend(
                self.store()
                    .read(|tx| tx.runs_for_thread(t, limit))?
                    .into_iter()
                    .map(|r| r.id),
            );
        }
        // Work on a job speaks here from a thread of its own.
        runs.extend(self.store().read(|tx| tx.segment_runs_in(session, limit))?);
        runs.sort_by_key(|r| std::cmp::Reverse(*r));
        runs.dedup();
        runs.truncate(limit as usize);
        runs.into_iter().map(|r| self.turn(r)).collect()
    }

    pub fn turn(&self, id: RunId) -> Result<TurnView, CollabError> {
        Ok(self.store().read(|tx| turn_in(tx, id))?)
    }

    /// A job's turns for its view, newest first (STOP-13): every Bot's work on the job and
    /// its tickets, a stopped one with the stop that ended it and what it was doing then.
    pub fn job_turns(
        &self,
        plan: PlanId,
        before: Option<RunId>,
        limit: u32,
    ) -> Result<Vec<JobTurnView>, CollabError> {
        if !(1..=200).contains(&limit) {
            return Err(CollabError::invalid("limit must be between 1 and 200"));
        }
        Ok(self.store().read(|tx| {
            tx.plan(plan)?;
            let runs = tx.job_segment_runs(plan, before, limit)?;
            // Where each turn stopped is recorded on the hold that stopped it (HOLD-6).
            let mut stops: HashMap<RunId, (HoldId, String)> = HashMap::new();
            if !runs.is_empty() {
                for hold in tx.holds(true)? {
                    for t in hold.effect.stopped_turns {
                        stops.entry(t.run_id).or_insert((hold.id, t.last_step));
                    }
                }
            }
            runs.into_iter()
                .map(|(run, ticket_id)| {
                    let turn = turn_in(tx, run)?;
                    let stop = (turn.status == "stopped")
                        .then(|| stops.remove(&run))
                        .flatten();
                    Ok(JobTurnView {
                        turn,
                        ticket_id,
                        stopped_by: stop.as_ref().map(|(h, _)| *h),
                        stopped_while: stop.map(|(_, step)| step).filter(|s| !s.is_empty()),
                    })
                })
                .collect()
        })?)
    }

    /// The files the turn wrote or deleted, in the order it did so.
    pub fn file_changes(&self, id: RunId) -> Result<Vec<FileChange>, CollabError> {
        let effects = self.store().read(|tx| {
            tx.run(id)?;
            tx.effects_for_run(id)
        })?;
        Ok(effects
            .into_iter()
            .filter(|e| FILE_TOOLS.contains(&e.tool.as_str()))
            .map(|e| FileChange {
                tool: e.tool,
                summary: e.summary,
                outcome: e.outcome.as_str().to_string(),
                detail: e.detail,
                started_at: e.started_at,
                settled_at: e.settled_at,
            })
            .collect())
    }

    pub fn commands(&self, id: RunId) -> Result<Vec<CommandRecord>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.run(id)?;
            tx.commands(id)
        })?)
    }
}

fn turn_in(tx: &Tx<'_>, id: RunId) -> Result<TurnView, StoreError> {
    let run = tx.run(id)?;
    // Where this turn spoke: its segment's conversation, else its thread's.
    let at = match tx.segment(id)? {
        Some(seg) => Some((seg.session_id, seg.bot_id)),
        None => tx.thread_session(run.thread_id)?,
    };
    let waiting_ask = tx
        .open_ask_of_thread(run.thread_id)?
        .map(|ask| tx.line(ask))
        .transpose()?
        .is_some_and(|ask| ask.turn_id == Some(id));
    let model_calls = tx.model_calls(id)?;
    let work = tx.segment_work(id)?;
    Ok(TurnView::new(run, at, waiting_ask, model_calls, work))
}
