//! Turns (kernel runs) as a conversation shows them.

use crate::{Collab, CollabError};
use serde::Serialize;
use troupe_core::{RunId, SessionId};
use troupe_store::{CommandRecord, ModelCallRecord, RunRecord};

/// A turn: one run of a Bot's thread, with its model calls.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct TurnView {
    pub id: RunId,
    pub session_id: Option<SessionId>,
    pub thread_id: troupe_core::ThreadId,
    /// running, completed, failed, stopped or interrupted.
    pub status: String,
    pub end_reason: Option<String>,
    pub end_detail: Option<String>,
    pub trigger: String,
    pub started_at: i64,
    pub ended_at: Option<i64>,
    pub hops: u32,
    pub tool_calls: u32,
    pub failure_notes: Vec<String>,
    pub model_calls: Vec<ModelCallRecord>,
}

impl TurnView {
    fn new(
        run: RunRecord,
        session_id: Option<SessionId>,
        model_calls: Vec<ModelCallRecord>,
    ) -> Self {
        TurnView {
            id: run.id,
            session_id,
            thread_id: run.thread_id,
            status: run.status.as_str().to_string(),
            end_reason: run.end_reason.as_ref().map(|r| r.code().to_string()),
            end_detail: run.end_reason.as_ref().and_then(|r| r.detail()),
            trigger: run.trigger,
            started_at: run.started_at,
            ended_at: run.ended_at,
            hops: run.hops,
            tool_calls: run.tool_calls,
            failure_notes: run.failure_notes,
            model_calls,
        }
    }
}

impl Collab {
    pub fn turns(&self, session: SessionId, limit: u32) -> Result<Vec<TurnView>, CollabError> {
        let threads = self.store().read(|tx| {
            tx.session(session)?;
            tx.session_threads(session)
        })?;
        let mut runs = Vec::new();
        for t in threads {
            runs.extend(self.store().read(|tx| tx.runs_for_thread(t, limit))?);
        }
        runs.sort_by_key(|r| std::cmp::Reverse(r.id));
        runs.truncate(limit as usize);
        runs.into_iter().map(|r| self.turn(r.id)).collect()
    }

    pub fn turn(&self, id: RunId) -> Result<TurnView, CollabError> {
        Ok(self.store().read(|tx| {
            let run = tx.run(id)?;
            let session_id = tx.thread_session(run.thread_id)?.map(|(s, _)| s);
            let model_calls = tx.model_calls(id)?;
            Ok(TurnView::new(run, session_id, model_calls))
        })?)
    }

    pub fn commands(&self, id: RunId) -> Result<Vec<CommandRecord>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.run(id)?;
            tx.commands(id)
        })?)
    }
}
