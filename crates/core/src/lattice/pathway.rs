//! The Pathway: the Run's ordered Steps, read as history, the current Step and the editable
//! future; `write_future` replaces only the pending suffix and never touches a status or any
//! evidence.

use super::run::{LatticeRun, RunStatus, WorkState};
use super::step::{Step, StepStatus};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// One entry of `pathway_write`: a kept id revises or reorders that pending Step; no id creates
/// a new one.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FutureStep {
    #[serde(default)]
    pub id: Option<String>,
    pub title: String,
    pub objective: String,
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    #[serde(default)]
    pub assumptions: Vec<String>,
    #[serde(default)]
    pub addresses_failed_step_ids: Vec<String>,
}

/// The Pathway split for reading.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathwayView {
    /// Steps neither pending nor current, in order (completed, failed, cancelled).
    pub history: Vec<Step>,
    pub current: Option<Step>,
    /// Pending Steps, in order: the part `pathway_write` may replace.
    pub editable_future: Vec<Step>,
}

pub fn split(run: &LatticeRun) -> PathwayView {
    let current_id = run.current_step_id.as_deref();
    let mut v = PathwayView {
        history: Vec::new(),
        current: None,
        editable_future: Vec::new(),
    };
    for s in &run.pathway {
        if Some(s.id.as_str()) == current_id {
            v.current = Some(s.clone());
        } else if s.status == StepStatus::Pending {
            v.editable_future.push(s.clone());
        } else {
            v.history.push(s.clone());
        }
    }
    v
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathwayError {
    /// The Run is not active, or not in planning or reviewing_pathway.
    #[error(
        "the Pathway can be written only in planning or reviewing_pathway of an active Run (the Run is {status}, {state})"
    )]
    WrongState {
        status: &'static str,
        state: &'static str,
    },
    #[error("{0}")]
    Invalid(String),
}

fn clean(items: &[String]) -> Vec<String> {
    items
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Replace the pending suffix with `future`. Returns the Run with `pathway_revision` bumped.
pub fn write_future(
    run: &LatticeRun,
    future: &[FutureStep],
    now: i64,
) -> Result<LatticeRun, PathwayError> {
    if run.status != RunStatus::Active
        || !matches!(run.state, WorkState::Planning | WorkState::ReviewingPathway)
    {
        return Err(PathwayError::WrongState {
            status: run.status.as_str(),
            state: run.state.as_str(),
        });
    }
    if future.is_empty() {
        return Err(PathwayError::Invalid(
            "future_steps: at least one Step is required".into(),
        ));
    }
    let pending: HashSet<&str> = run
        .pathway
        .iter()
        .filter(|s| {
            s.status == StepStatus::Pending && Some(s.id.as_str()) != run.current_step_id.as_deref()
        })
        .map(|s| s.id.as_str())
        .collect();
    let failed: HashSet<&str> = run
        .pathway
        .iter()
        .filter(|s| s.status == StepStatus::Failed)
        .map(|s| s.id.as_str())
        .collect();
    let mut seen = HashSet::new();
    for (i, f) in future.iter().enumerate() {
        let at = format!("future_steps[{i}]");
        if f.title.trim().is_empty() {
            return Err(PathwayError::Invalid(format!(
                "{at}.title: must not be empty"
            )));
        }
        if f.objective.trim().is_empty() {
            return Err(PathwayError::Invalid(format!(
                "{at}.objective: must not be empty"
            )));
        }
        if let Some(id) = &f.id {
            if !seen.insert(id.as_str()) {
                return Err(PathwayError::Invalid(format!(
                    "{at}.id: '{id}' appears twice"
                )));
            }
            if !pending.contains(id.as_str()) {
                let known = run.step(id).is_some();
                return Err(PathwayError::Invalid(if known {
                    format!(
                        "{at}.id: '{id}' is a historical or current Step and cannot be rewritten; only pending Steps can"
                    )
                } else {
                    format!(
                        "{at}.id: '{id}' is not a Step of this Pathway (omit the id to add a new Step)"
                    )
                }));
            }
        }
        for failed_id in &f.addresses_failed_step_ids {
            if !failed.contains(failed_id.as_str()) {
                return Err(PathwayError::Invalid(format!(
                    "{at}.addresses_failed_step_ids: '{failed_id}' is not a failed Step"
                )));
            }
        }
    }
    let mut next = run.clone();
    let mut kept: Vec<Step> = next
        .pathway
        .iter()
        .filter(|s| !pending.contains(s.id.as_str()))
        .cloned()
        .collect();
    for f in future {
        let step = match &f.id {
            Some(id) => {
                let mut s = run.step(id).cloned().expect("checked above");
                s.title = f.title.trim().to_string();
                s.objective = f.objective.trim().to_string();
                s.acceptance_criteria = clean(&f.acceptance_criteria);
                s.assumptions = clean(&f.assumptions);
                s.addresses_failed_step_ids = f.addresses_failed_step_ids.clone();
                s.updated_at = now;
                s
            }
            None => {
                let id = format!("step-{}", next.next_step_no);
                next.next_step_no += 1;
                Step {
                    id,
                    title: f.title.trim().to_string(),
                    objective: f.objective.trim().to_string(),
                    status: StepStatus::Pending,
                    acceptance_criteria: clean(&f.acceptance_criteria),
                    assumptions: clean(&f.assumptions),
                    addresses_failed_step_ids: f.addresses_failed_step_ids.clone(),
                    blueprint: None,
                    blueprint_history: Vec::new(),
                    loop_history: Vec::new(),
                    result_summary: None,
                    failure_reason: None,
                    created_at: now,
                    updated_at: now,
                    started_at: None,
                    completed_at: None,
                }
            }
        };
        kept.push(step);
    }
    next.pathway = kept;
    next.pathway_revision += 1;
    next.updated_at = now;
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::run::Mode;
    use crate::{LatticeRunId, ThreadId};

    fn fs(id: Option<&str>, title: &str) -> FutureStep {
        FutureStep {
            id: id.map(str::to_string),
            title: title.into(),
            objective: format!("do {title}"),
            acceptance_criteria: vec![],
            assumptions: vec![],
            addresses_failed_step_ids: vec![],
        }
    }

    fn planning() -> LatticeRun {
        let mut r = LatticeRun::new(LatticeRunId(1), ThreadId(1), Mode::Auto, 0, None, 0);
        r.state = WorkState::Planning;
        r
    }

    #[test]
    fn a_write_creates_revises_reorders_and_deletes_only_pending_steps() {
        let r = write_future(
            &planning(),
            &[fs(None, "a"), fs(None, "b"), fs(None, "c")],
            1,
        )
        .unwrap();
        assert_eq!(r.pathway_revision, 1);
        let ids: Vec<_> = r.pathway.iter().map(|s| s.id.clone()).collect();
        assert_eq!(ids, ["step-1", "step-2", "step-3"]);
        let r2 = write_future(&r, &[fs(Some("step-3"), "c2"), fs(Some("step-1"), "a")], 2).unwrap();
        let got: Vec<_> = r2
            .pathway
            .iter()
            .map(|s| (s.id.as_str(), s.title.as_str()))
            .collect();
        assert_eq!(got, [("step-3", "c2"), ("step-1", "a")]);
        assert_eq!(r2.pathway_revision, 2);
        let r3 = write_future(&r2, &[fs(None, "d")], 3).unwrap();
        assert_eq!(r3.pathway[0].id, "step-4", "ids are never reused");
    }

    #[test]
    fn history_is_never_rewritten_and_bad_entries_are_refused_whole() {
        let mut r = write_future(&planning(), &[fs(None, "a"), fs(None, "b")], 1).unwrap();
        r.pathway[0].status = StepStatus::Failed;
        r.state = WorkState::ReviewingPathway;
        let e = write_future(&r, &[fs(Some("step-1"), "x")], 2).unwrap_err();
        assert!(e.to_string().contains("historical"), "{e}");
        let e = write_future(&r, &[fs(Some("step-9"), "x")], 2).unwrap_err();
        assert!(e.to_string().contains("not a Step"), "{e}");
        let e =
            write_future(&r, &[fs(Some("step-2"), "x"), fs(Some("step-2"), "y")], 2).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let e = write_future(&r, &[fs(None, " ")], 2).unwrap_err();
        assert!(e.to_string().contains("title"), "{e}");
        let mut bad = fs(None, "z");
        bad.addresses_failed_step_ids = vec!["step-2".into()];
        let e = write_future(&r, &[bad], 2).unwrap_err();
        assert!(e.to_string().contains("not a failed Step"), "{e}");
        let mut good = fs(None, "z");
        good.addresses_failed_step_ids = vec!["step-1".into()];
        let w = write_future(&r, &[good], 2).unwrap();
        assert_eq!(
            w.pathway[0], r.pathway[0],
            "the failed Step and its evidence are untouched"
        );
        assert_eq!(w.pathway.len(), 2);
    }

    #[test]
    fn only_planning_and_reviewing_pathway_of_an_active_run_may_write() {
        for state in WorkState::ALL {
            let mut r = planning();
            r.state = state;
            let ok = write_future(&r, &[fs(None, "a")], 1).is_ok();
            assert_eq!(
                ok,
                matches!(state, WorkState::Planning | WorkState::ReviewingPathway),
                "{state:?}"
            );
        }
        let mut r = planning();
        r.status = RunStatus::Paused;
        assert!(matches!(
            write_future(&r, &[fs(None, "a")], 1),
            Err(PathwayError::WrongState { .. })
        ));
    }

    #[test]
    fn the_split_separates_history_current_and_future() {
        let mut r = write_future(
            &planning(),
            &[fs(None, "a"), fs(None, "b"), fs(None, "c")],
            1,
        )
        .unwrap();
        r.pathway[0].status = StepStatus::Completed;
        r.pathway[1].status = StepStatus::Current;
        r.current_step_id = Some("step-2".into());
        let v = split(&r);
        assert_eq!(v.history.len(), 1);
        assert_eq!(v.current.unwrap().id, "step-2");
        assert_eq!(v.editable_future.len(), 1);
    }
}
