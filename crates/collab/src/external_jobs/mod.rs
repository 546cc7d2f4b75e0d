//! External jobs end to end (B §8): the interceptor around paired `submit_<x>` / `check_<x>`
//! tools, the poll the scheduler tick runs outside any turn (EJ5), and the wake of the
//! submitter and every waiter when a job settles (EJ6). The rules are
//! `troupe_core::external_job`'s; this binds them to tools, work items and the inbox.

mod interceptor;
mod wake;

pub use interceptor::ExternalJobs;

use crate::{Collab, CollabError};
use serde::Serialize;
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use troupe_core::PlanId;
use troupe_core::external_job::{
    CheckAnswer, JobStatus, PollOutcome, RemoteStatus, Settlement, SubmitAnswer, check_arguments,
    parse_check_answer, settle,
};
use troupe_core::ids::ExternalJobId;
use troupe_engine::extension::ToolCallContext;
use troupe_store::{ExternalJobRecord, JobUpdate};

/// Due jobs one tick polls; the rest wait for the next tick.
const POLL_BATCH: u32 = 50;
/// How long one poll may take before it counts as unanswered.
const POLL_TIMEOUT: Duration = Duration::from_secs(60);
/// A claimed poll is due again this long after, should the poller die before it settles.
const CLAIM_MS: i64 = 120_000;

/// What one pass of the poller did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PollReport {
    /// Polled and still pending.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub pending: Vec<ExternalJobId>,
    /// Settled done, failed or lost; their submitters and waiters were woken.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub finished: Vec<ExternalJobId>,
    /// Due, but another node had taken the poll.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub skipped: Vec<ExternalJobId>,
}

impl Collab {
    /// Poll every pending job due by `now` (EJ5), outside any turn: ask its server through the
    /// real `check_<x>` tool, settle it (done, failed, or lost after three hours) and, when it
    /// settles, wake its submitter and waiters in the same write (EJ6). A repeat delivers
    /// nothing twice: each wake has its own delivery key.
    pub async fn poll_external_jobs(&self, now: i64) -> Result<PollReport, CollabError> {
        let mut report = PollReport::default();
        let due = self
            .store()
            .read(|tx| tx.due_external_jobs(now, POLL_BATCH))?;
        let mut taken = Vec::new();
        for job in due {
            let claimed = self
                .store()
                .write(|tx| tx.claim_external_poll(job.id, job.next_poll_at, now + CLAIM_MS))?;
            if claimed {
                taken.push(job);
            } else {
                report.skipped.push(job.id);
            }
        }
        // Asked together: one slow server must not hold the others' polls past the tick.
        let outcomes = futures::future::join_all(taken.iter().map(|job| self.ask(job))).await;
        for (job, outcome) in taken.iter().zip(outcomes) {
            let settlement = settle(job.created_at, now, job.poll_step, &outcome);
            let result = match &outcome {
                PollOutcome::Answered(a) => Some(stored(a)),
                PollOutcome::Unanswered(_) => None,
            };
            let update = match settlement {
                Settlement::Again {
                    next_poll_at,
                    poll_step,
                } => JobUpdate::Again {
                    next_poll_at,
                    poll_step,
                },
                Settlement::Finished { status } => JobUpdate::Finished { status },
            };
            self.store().write(|tx| {
                let settled = tx.settle_external_job(job.id, result.as_ref(), &update)?;
                if settled.status.is_finished() {
                    wake::wake_all(tx, &settled)?;
                }
                Ok(())
            })?;
            match update {
                JobUpdate::Again { .. } => report.pending.push(job.id),
                JobUpdate::Finished { .. } => report.finished.push(job.id),
            }
        }
        Ok(report)
    }

    /// Ask the job's server how it stands, through its `check_<x>` tool as the submitter's
    /// thread may call it, recorded under the turn that submitted it.
    async fn ask(&self, job: &ExternalJobRecord) -> PollOutcome {
        let thread = match self.store().read(|tx| tx.thread(job.submitter_thread_id)) {
            Ok(t) => t,
            Err(e) => return PollOutcome::Unanswered(format!("its thread is unreadable: {e}")),
        };
        let Some(tool) = self.engine().callable_tool(&thread, &job.check_tool) else {
            return PollOutcome::Unanswered(format!("{} is not available now", job.check_tool));
        };
        let args = check_arguments(
            &tool.spec.parameters,
            &SubmitAnswer {
                remote_id: job.remote_id.clone(),
                key: job.remote_key.clone(),
            },
        );
        let ctx = ToolCallContext {
            thread,
            run_id: job.run_id,
            message_id: job.message_id,
            call_id: format!("external_job:{}:poll:{}", job.id.0, job.polls + 1),
            store: self.store().clone(),
            cancel: CancellationToken::new(),
        };
        let args = args.to_string();
        let call = tool.handler.call(&ctx, &args);
        match tokio::time::timeout(POLL_TIMEOUT, call).await {
            Ok(reply) if reply.is_error => PollOutcome::Unanswered(reply.content),
            Ok(reply) => PollOutcome::Answered(parse_check_answer(&reply.content)),
            Err(_) => {
                ctx.cancel.cancel();
                PollOutcome::Unanswered(format!(
                    "{} did not answer in {} s",
                    job.check_tool,
                    POLL_TIMEOUT.as_secs()
                ))
            }
        }
    }

    /// Jobs newest first, of one job (plan) or all.
    pub fn external_jobs(
        &self,
        plan: Option<PlanId>,
        limit: u32,
    ) -> Result<Vec<ExternalJobRecord>, CollabError> {
        if let Some(p) = plan {
            self.store().read(|tx| tx.plan(p))?;
        }
        Ok(self.store().read(|tx| tx.external_jobs(plan, limit))?)
    }

    pub fn external_job(&self, id: ExternalJobId) -> Result<ExternalJobRecord, CollabError> {
        self.store()
            .read(|tx| tx.external_job_full(id))?
            .ok_or_else(|| troupe_store::StoreError::not_found("external job", id).into())
    }
}

/// The answer as kept on the job.
fn stored(a: &CheckAnswer) -> serde_json::Value {
    let status = match a.status {
        RemoteStatus::Pending => JobStatus::Pending,
        RemoteStatus::Done => JobStatus::Done,
        RemoteStatus::Failed => JobStatus::Failed,
    };
    json!({"status": status.as_str(), "url": a.url, "duration": a.duration, "cost": a.cost,
           "error": a.error, "raw_lines": a.raw_lines})
}
