//! Finding a large job (digest 003-B §2.2, LJ1–LJ3): when a person's line is filed under a job
//! still unread, the reader reads the job with all of the person's words about it; and the
//! supervisor's tick has a job read again once it is unread, not laid out, with nothing
//! approved and three segments ended (`LargeJobReread`), marking it large itself when no model
//! can read. Which readings may change the job is `troupe_core::large_job::next_large`'s: never
//! over the person's own choice, never a job already read.

use crate::{Collab, CollabError};
use serde_json::{Value, json};
use troupe_core::large_job::{LargeEvent, LargeState, Reading, next_large, reread_eligible};
use troupe_core::reading::large::{
    RereadFacts, WORDS_AT_MOST, large_job_prompt, parse_large_reading,
};
use troupe_core::{PlanId, SessionMessageId};
use troupe_store::PlanDeliverables;

/// Unread jobs one tick looks at.
const REREAD_BATCH: u32 = 50;

impl Collab {
    /// LJ1, after a person's line is routed: each unread job it is filed under is read. A
    /// failure is logged; the job stays unread and the next line (or the tick) reads it.
    pub(crate) async fn read_jobs_of_line(&self, line: SessionMessageId) {
        let unread = self.store().read(|tx| {
            let mut plans: Vec<PlanId> = tx
                .filings_of_line(line)?
                .into_iter()
                .map(|f| f.plan_id)
                .collect();
            plans.sort_by_key(|p| p.0);
            plans.dedup();
            let mut out = Vec::new();
            for p in plans {
                if tx.plan_deliverables(p)?.large_state == LargeState::Unread {
                    out.push(p);
                }
            }
            Ok(out)
        });
        match unread {
            Ok(plans) => {
                for plan in plans {
                    if let Err(e) = self.read_large_job(plan, None).await {
                        tracing::warn!(%plan, %line, error = %e, "reading the job's size failed");
                    }
                }
            }
            Err(e) => tracing::warn!(%line, error = %e, "finding the line's unread jobs failed"),
        }
    }

    /// One reading of whether the job is large, applied by core's rules; `reread` is the
    /// supervisor's (LJ3). Answers the job's size facts after it.
    pub async fn read_large_job(
        &self,
        plan: PlanId,
        reread: Option<RereadFacts>,
    ) -> Result<PlanDeliverables, CollabError> {
        let prompt = self.store().read(|tx| {
            let p = tx.plan(plan)?;
            let words = tx.user_words_about(plan, WORDS_AT_MOST as u32)?;
            Ok(large_job_prompt(
                &p.name,
                &p.original_request,
                &words,
                reread.as_ref(),
            ))
        })?;
        let answer = self.reader().ask(self.roles(), prompt).await;
        let reading = match (&answer.raw, &answer.failure) {
            (Some(raw), None) => parse_large_reading(raw).unwrap_or_else(|why| {
                tracing::info!(%plan, reason = %why, "the job's size reading is unreadable");
                Reading::Failed
            }),
            (_, Some(why)) => {
                tracing::info!(%plan, reason = %why, "no reading of the job's size");
                Reading::Failed
            }
            (None, None) => Reading::Failed,
        };
        let event = match reread {
            None => LargeEvent::Reader(reading),
            // No model to ask at all: the supervisor decides itself (LJ3).
            Some(_) if answer.model.is_none() => LargeEvent::SupervisorReread(None),
            Some(_) => LargeEvent::SupervisorReread(Some(reading)),
        };
        Ok(self.store().write(|tx| {
            let d = tx.plan_deliverables(plan)?;
            let next = next_large(&d.large_job(), event);
            if next == d.large_job() {
                Ok(d)
            } else {
                tx.set_large_job(plan, &next)
            }
        })?)
    }

    /// LJ3 (`LargeJobReread`), on the scheduler's tick: each active job still unread, not laid
    /// out, never "No need", with nothing approved and at least three ended segments is read
    /// again with those facts. Answers what each became.
    pub async fn reread_large_jobs(&self) -> Result<Vec<Value>, CollabError> {
        let due = self.store().read(|tx| {
            let mut out = Vec::new();
            for plan in tx.unread_jobs(REREAD_BATCH)? {
                let d = tx.plan_deliverables(plan)?;
                let record = tx.plan(plan)?;
                if record.is_dormant() {
                    continue;
                }
                let ended = tx.ended_job_segments(plan)?;
                if reread_eligible(&d.large_job(), tx.anything_approved(plan)?, ended) {
                    out.push((plan, ended));
                }
            }
            Ok(out)
        })?;
        let mut out = Vec::with_capacity(due.len());
        for (plan, ended) in due {
            let facts = RereadFacts {
                ended_segments: ended,
            };
            let d = self.read_large_job(plan, Some(facts)).await?;
            out.push(json!({"plan_id": plan, "large_state": d.large_state.as_str()}));
        }
        Ok(out)
    }
}
