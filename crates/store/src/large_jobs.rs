//! A job's large-job fields (digest 003-B §2.1), its sample and its delivery (T9, T10), kept on
//! the plan row: whether it is large and who said so, the user's sticky "No need", whether it
//! is laid out, and whether it is delivered. Changes append `large_job_changed`,
//! `plan_delivered` or `plan_reopened` to the job's home conversation. Which changes are
//! allowed (LJ1–LJ3) is `troupe_core::large_job`'s.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::large_job::{LargeJob, LargeSource, LargeState};
use troupe_core::{PlanId, TicketId};

/// The plan's size, layout, sample and delivery.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanDeliverables {
    pub plan_id: PlanId,
    pub large_state: LargeState,
    pub large_source: Option<LargeSource>,
    pub large_evidence: Option<String>,
    pub user_said_no_need: bool,
    pub laid_out: bool,
    pub sample_ticket_id: Option<TicketId>,
    pub delivered: bool,
    pub delivered_at: Option<i64>,
}

impl PlanDeliverables {
    /// The size facts as `troupe_core::large_job` reads them.
    pub fn large_job(&self) -> LargeJob {
        LargeJob {
            state: self.large_state,
            source: self.large_source,
            evidence: self.large_evidence.clone(),
            user_said_no_need: self.user_said_no_need,
            laid_out: self.laid_out,
        }
    }
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

impl Tx<'_> {
    /// LJ3's candidates: active jobs still unread, not laid out, never "No need", oldest
    /// first. Whether each has ended enough segments with nothing approved is the caller's.
    pub fn unread_jobs(&self, limit: u32) -> Result<Vec<PlanId>> {
        self.query_all(
            "SELECT id FROM plans
             WHERE large_state = 'unread' AND laid_out = 0 AND user_said_no_need = 0
               AND status = 'active'
             ORDER BY id LIMIT ?1",
            args![i64::from(limit)],
            |r| Ok(PlanId(r.get(0)?)),
        )
    }

    /// The job's segments that have ended (LJ3).
    pub fn ended_job_segments(&self, plan: PlanId) -> Result<u32> {
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM segments g
             JOIN work_items w ON w.id = g.work_item_id
             JOIN runs r ON r.id = g.run_id
             WHERE w.plan_id = ?1 AND r.status <> 'running'",
            args![plan.0],
            |r| r.get(0),
        )?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Whether anything of the job was approved: a hand-over, or a ticket on the board (LJ3).
    pub fn anything_approved(&self, plan: PlanId) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT 1 FROM submissions WHERE plan_id = ?1 AND state = 'approved'
                 UNION ALL SELECT 1 FROM tickets WHERE plan_id = ?1 AND stage = 'approved'
                 LIMIT 1",
                args![plan.0],
                |r| r.get::<i64>(0),
            )?
            .is_some())
    }

    pub fn plan_deliverables(&self, plan: PlanId) -> Result<PlanDeliverables> {
        self.query_opt(
            "SELECT id, large_state, large_source, large_evidence, user_said_no_need, laid_out,
                    sample_ticket_id, delivered, delivered_at
             FROM plans WHERE id = ?1",
            args![plan.0],
            |r| {
                Ok(PlanDeliverables {
                    plan_id: PlanId(r.get(0)?),
                    large_state: LargeState::parse(&r.get::<String>(1)?)
                        .map_err(|e| corrupt("plan", e))?,
                    large_source: r
                        .get::<Option<String>>(2)?
                        .map(|s| LargeSource::parse(&s).map_err(|e| corrupt("plan", e)))
                        .transpose()?,
                    large_evidence: r.get(3)?,
                    user_said_no_need: r.get(4)?,
                    laid_out: r.get(5)?,
                    sample_ticket_id: r.get::<Option<i64>>(6)?.map(TicketId),
                    delivered: r.get(7)?,
                    delivered_at: r.get(8)?,
                })
            },
        )?
        .ok_or_else(|| StoreError::not_found("job", plan))
    }

    /// Write the job's size facts as `troupe_core::large_job` decided them (a reading, the
    /// supervisor, the user's "No need" or "Treat as large"), and append `large_job_changed`
    /// when they changed. `laid_out` is the layout's ([`Tx::lay_out`]).
    pub fn set_large_job(&mut self, plan: PlanId, j: &LargeJob) -> Result<PlanDeliverables> {
        let cur = self.plan_deliverables(plan)?;
        // Only the user takes back their own "No need" (by "Treat as large"); nothing else does.
        let by_user = j.source == Some(LargeSource::User) && j.state == LargeState::Large;
        if cur.user_said_no_need && !j.user_said_no_need && !by_user {
            return Err(StoreError::Invalid(
                "user_said_no_need: the user's \"No need\" is sticky (LJ2)".into(),
            ));
        }
        self.exec(
            "UPDATE plans SET large_state = ?2, large_source = ?3, large_evidence = ?4,
                 user_said_no_need = ?5, laid_out = ?6, updated_at = ?7
             WHERE id = ?1",
            args![
                plan.0,
                j.state.as_str(),
                j.source.map(LargeSource::as_str),
                j.evidence,
                j.user_said_no_need,
                j.laid_out,
                self.now
            ],
        )?;
        let after = self.plan_deliverables(plan)?;
        if after != cur {
            self.deliverables_event(
                "large_job_changed",
                &after,
                json!({"state": after.large_state.as_str(),
                       "source": after.large_source.map(LargeSource::as_str),
                       "evidence": after.large_evidence, "laid_out": after.laid_out,
                       "user_said_no_need": after.user_said_no_need}),
            )?;
        }
        Ok(after)
    }

    /// T9/T10: the job is delivered (every ticket not dropped approved and the plan-wide
    /// gates passed: the caller judged it) or active again. Appends `plan_delivered` or
    /// `plan_reopened` on a change; false when it was so already.
    pub fn set_plan_delivered(&mut self, plan: PlanId, delivered: bool) -> Result<bool> {
        let n = self.exec(
            "UPDATE plans SET delivered = ?2,
                 delivered_at = CASE WHEN ?2 = 1 THEN CAST(?3 AS BIGINT) END, updated_at = ?3
             WHERE id = ?1 AND delivered <> ?2",
            args![plan.0, delivered, self.now],
        )?;
        if n > 0 {
            let after = self.plan_deliverables(plan)?;
            let kind = if delivered {
                "plan_delivered"
            } else {
                "plan_reopened"
            };
            self.deliverables_event(kind, &after, json!({}))?;
        } else {
            self.plan_deliverables(plan)?;
        }
        Ok(n > 0)
    }

    fn deliverables_event(
        &mut self,
        kind: &str,
        d: &PlanDeliverables,
        extra: serde_json::Value,
    ) -> Result<()> {
        let mut payload = json!({"task_id": d.plan_id, "delivered": d.delivered});
        if let (Some(p), serde_json::Value::Object(more)) = (payload.as_object_mut(), extra) {
            p.extend(more);
        }
        match self.plan(d.plan_id)?.home_session_id {
            Some(home) => self.session_event(kind, home, None, payload),
            None => self.event(kind, None, None, payload),
        }
    }
}
