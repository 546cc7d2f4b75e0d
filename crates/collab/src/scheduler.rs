//! The daemon's scheduler tick (issue 16 item 1): one pass over everything that falls due by
//! the store's clock — the supervisor first, then due routines and check-backs, then
//! external-job polls, then the retrospectives of delivered jobs gone quiet.
//! `troupe serve` runs it every 15 s; with `--manual-clock` only `POST /v1/debug/tick` does, so
//! tests move the clock and tick instead of sleeping.
//!
//! Every deadline a part reads is a stored timestamp, so a tick holds no schedule of its own
//! and the first one after a start catches up, once, on whatever fell due meanwhile. A part
//! writes records and asks for drives; it never runs a loop itself.

use crate::check_backs::FireReport;
use crate::{Collab, CollabError};
use serde::Serialize;

/// What one tick did: the body of `POST /v1/debug/tick`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TickReport {
    /// The store's clock when the tick began, in ms since the epoch.
    pub at: i64,
    /// The supervisor's pass; `None` when it did not run.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub supervisor: Option<serde_json::Value>,
    /// Check-backs that fell due: fired, cleared or set aside.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub check_backs: FireReport,
    /// Routines that came due: run, owed, or paused.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub routines: crate::routines::tick::RoutineReport,
    /// External jobs polled; `None` when no poll ran.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub external_jobs: Option<serde_json::Value>,
    /// Parts that failed. The later parts ran anyway: a broken pass must not keep due
    /// check-backs from firing, tick after tick.
    pub failed: Vec<TickFailure>,
}

/// One part of a tick that failed, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TickFailure {
    /// `supervisor`, `routines`, `check_backs`, `external_jobs`, `retrospectives` or
    /// `reflections`.
    pub part: &'static str,
    pub error: String,
}

impl TickReport {
    /// A part's outcome: its value, or `None` with the failure recorded.
    pub fn take<T>(&mut self, part: &'static str, outcome: Result<T, CollabError>) -> Option<T> {
        match outcome {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(part, error = %e, "scheduler tick part failed");
                self.failed.push(TickFailure {
                    part,
                    error: e.to_string(),
                });
                None
            }
        }
    }

    /// Whether the tick changed nothing (the timer logs only ticks that did something).
    pub fn is_quiet(&self) -> bool {
        let cb = &self.check_backs;
        self.failed.is_empty()
            && self.routines.is_empty()
            && cb.fired.is_empty()
            && cb.cleared.is_empty()
            && cb.set_aside.is_empty()
            && cb.voided.is_empty()
            && quiet_value(self.supervisor.as_ref())
            && quiet_value(self.external_jobs.as_ref())
    }
}

/// A part's report counts as quiet when absent or when every list in it is empty or lists
/// only entries whose action is "nothing" (the supervisor names each work item it looked at).
fn quiet_value(v: Option<&serde_json::Value>) -> bool {
    match v {
        None | Some(serde_json::Value::Null) => true,
        Some(serde_json::Value::Array(a)) => a.iter().all(|e| e["action"]["kind"] == "nothing"),
        Some(serde_json::Value::Object(o)) => o.values().all(|v| quiet_value(Some(v))),
        Some(_) => true,
    }
}

impl Collab {
    /// One scheduler tick. The order is the spec's: the supervisor repairs work before due
    /// check-backs fire (it may void or book them), and external jobs are polled last.
    pub async fn scheduler_tick(&self) -> TickReport {
        let mut report = TickReport {
            at: self.store().now(),
            ..TickReport::default()
        };
        let supervised = self.supervise();
        if let Some(r) = report.take("supervisor", supervised) {
            report.supervisor = serde_json::to_value(r).ok();
        }
        // SV-20, after the records pass: hand-overs nobody moved for 15 s.
        let handed = self.supervise_submissions().await;
        if let Some(moved) = report.take("supervisor", handed)
            && let Some(serde_json::Value::Object(m)) = report.supervisor.as_mut()
        {
            m.insert("submissions".into(), serde_json::Value::Array(moved));
        }
        // LJ3: unread jobs that ran three segments with nothing approved are read again.
        let reread = self.reread_large_jobs().await;
        if let Some(jobs) = report.take("supervisor", reread)
            && !jobs.is_empty()
            && let Some(serde_json::Value::Object(m)) = report.supervisor.as_mut()
        {
            m.insert("large_jobs".into(), serde_json::Value::Array(jobs));
        }
        // PLAN-D5: delivered jobs quiet for 72 h go dormant on the clock.
        let dormant = self.sweep_delivered_dormancy();
        if let Some(jobs) = report.take("supervisor", dormant)
            && !jobs.is_empty()
            && let Some(serde_json::Value::Object(m)) = report.supervisor.as_mut()
        {
            m.insert("dormant".into(), serde_json::json!(jobs));
        }
        // Routines come due after the supervisor's pass and before check-backs (PLAN-D11).
        let routines = self.run_due_routines();
        if let Some(r) = report.take("routines", routines) {
            report.routines = r;
        }
        let fired = self.fire_due_check_backs();
        if let Some(r) = report.take("check_backs", fired) {
            report.check_backs = r;
        }
        let polled = self.poll_external_jobs(report.at).await;
        if let Some(r) = report.take("external_jobs", polled) {
            report.external_jobs = serde_json::to_value(r).ok();
        }
        // RS1–RS5, last: delivered jobs quiet for 30 min get their Bots' look back.
        let looked = self.run_due_retrospectives().await;
        if let Some(runs) = report.take("retrospectives", looked)
            && !runs.is_empty()
        {
            let m = report
                .supervisor
                .get_or_insert_with(|| serde_json::Value::Object(Default::default()));
            if let serde_json::Value::Object(m) = m {
                m.insert("retrospectives".into(), serde_json::json!(runs));
            }
        }
        // §10.2: overturned approvals and ceilings get the Bot's reflection.
        let reflected = self.run_due_reflections().await;
        if let Some(runs) = report.take("reflections", reflected)
            && !runs.is_empty()
        {
            let m = report
                .supervisor
                .get_or_insert_with(|| serde_json::Value::Object(Default::default()));
            if let serde_json::Value::Object(m) = m {
                m.insert("reflections".into(), serde_json::json!(runs));
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_report_with_only_empty_lists_is_quiet() {
        let mut r = TickReport {
            supervisor: Some(json!({"picked_up": [], "called_back": []})),
            external_jobs: Some(json!([])),
            ..TickReport::default()
        };
        assert!(r.is_quiet());
        r.supervisor = Some(json!({"work": [{"action": {"kind": "nothing"}, "work_item_id": 2}]}));
        assert!(r.is_quiet(), "a look that did nothing");
        r.supervisor = Some(json!({"work": [{"action": {"kind": "pick_up"}, "work_item_id": 2}]}));
        assert!(!r.is_quiet());
        r.supervisor = Some(json!({"picked_up": [1]}));
        assert!(!r.is_quiet());
    }

    #[test]
    fn a_failed_part_is_kept_and_makes_the_tick_loud() {
        let mut r = TickReport::default();
        let out: Option<()> = r.take("supervisor", Err(CollabError::invalid("broken")));
        assert_eq!(out, None);
        assert_eq!(r.failed[0].part, "supervisor");
        assert_eq!(r.failed[0].error, "broken");
        assert!(!r.is_quiet());
        assert_eq!(r.take("check_backs", Ok(3)), Some(3));
        assert_eq!(r.failed.len(), 1);
    }
}
