//! Routing as a pure state machine: `(manifest, validated response) → (next manifest,
//! effects)`. Nothing here touches the disk or the clock; [`crate::session::Session::commit`]
//! writes what a transition opens and saves the manifest, and the runner carries out the
//! remaining effects.
//!
//! The rules, each with a scenario test named after it (`tests/routing.rs`):
//! - `done` advances: when every branch of the step has settled, the next workflow step opens,
//!   its requests naming inputs by path (the nearest earlier branch that recorded each kind).
//! - `waiting` runs the nested exchange, then resumes the same agent; siblings go on.
//! - `blocked` looks the stop code up: a `fallback` code never blocks (it is recorded under
//!   `fallbacks` and the branch counts as done); a `terminate` code follows its domain's route:
//!   `operator` runs the target in the next step and then re-enters the blocked operator with
//!   `resume`; `resume` re-enters it at once; `user` and `external` block the session.
//! - Session codes (`NO_PROGRESS`, `BUDGET_EXHAUSTED`, …) always stop for a person.
//! - Budgets: at most `maxSteps` steps, at most `maxSameOperator` runs of one operator, and at
//!   most `maxSameOperator` nested exchanges per branch, else `BUDGET_EXHAUSTED`.
//! - A re-entry that blocks with the same stop on the same input hash as the branch it
//!   resumed is `NO_PROGRESS`.
//! - A failure of the runner's own work for a branch (a git command, `GIT_FAILED`) blocks the
//!   session at once with the failure as its reason; siblings still running are stopped.
//!   Re-entering such a session retries that step in place: its branches are picked up from
//!   their folders as after a restart (an answer on disk is kept), with no new step.

mod lease;
mod open;
mod settle;

use serde::Serialize;

use crate::defs::{Definitions, Disposition, Workflow};
use crate::session::{
    BranchKey, BranchStatus, Budget, Fallback, Request, Response, ResponseStatus, SessionState,
    SessionStatus, StoppedAt,
};

pub use lease::{holds_conflict, lease_holds};

/// What the runner must do after a transition, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "effect", rename_all = "camelCase")]
pub enum Effect {
    /// Write and hash this request (done by `Session::commit`), pass it through the request
    /// gate, and run its operator's agent, which writes only the branch's `response/`.
    OpenBranch { request: Request },
    /// Write and hash this exchange request (done by `Session::commit`), gate it, and run a
    /// fresh agent of the answering operator, which writes only `<exchange>/response/`.
    RunExchange {
        branch: BranchKey,
        exchange: String,
        request: Request,
    },
    /// After the exchange's response passes its gate, resume the waiting branch's agent.
    ResumeAgent { branch: BranchKey, exchange: String },
    /// The agent no longer holds its lease.
    ReleaseLease { agent: String },
    /// The session blocked (for a person, something outside, or a session code).
    Block { stopped: StoppedAt },
    /// The workflow finished.
    Finish,
    /// Pick the branch up from its folder, as after a restart: a response on disk is gated
    /// and routed; without one, its agent runs again from its request.
    Retry { branch: BranchKey },
}

/// The session code of a failed git command the runner ran; a session blocked with it is
/// retried in place when re-entered.
pub const GIT_FAILED: &str = "GIT_FAILED";

/// The next manifest and the effects that lead to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    pub state: SessionState,
    pub effects: Vec<Effect>,
}

/// A response or call that routing cannot accept; nothing routes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("the session is {0:?}, not running")]
    NotRunning(SessionStatus),
    #[error("{0} is not a branch awaiting routing")]
    NotCurrent(BranchKey),
    #[error("{branch} runs `{expected}`, but the response is from `{got}`")]
    OperatorMismatch {
        branch: BranchKey,
        expected: String,
        got: String,
    },
    #[error("a response from a nested exchange does not route; resume the branch's agent")]
    ExchangeResponse,
    #[error("unknown operator `{0}`")]
    UnknownOperator(String),
    #[error("{0} would share a write lease with a running agent")]
    LeaseConflict(BranchKey),
    #[error("the session is not blocked")]
    NotBlocked,
}

/// Routing for one workflow under one set of definitions.
#[derive(Debug, Clone, Copy)]
pub struct Router<'a> {
    pub defs: &'a Definitions,
    pub workflow: &'a Workflow,
}

impl<'a> Router<'a> {
    pub fn new(defs: &'a Definitions, workflow: &'a Workflow) -> Self {
        Self { defs, workflow }
    }

    /// Opens the workflow's first step in a fresh manifest.
    pub fn start(&self, state: &SessionState) -> Result<Transition, RouteError> {
        if state.status != SessionStatus::Running {
            return Err(RouteError::NotRunning(state.status));
        }
        let mut t = Transition {
            state: state.clone(),
            effects: Vec::new(),
        };
        settle::advance(self, &mut t, None)?;
        Ok(t)
    }

    /// Routes the validated response of branch `key`.
    pub fn route(
        &self,
        state: &SessionState,
        key: BranchKey,
        response: &Response,
    ) -> Result<Transition, RouteError> {
        if state.status != SessionStatus::Running {
            return Err(RouteError::NotRunning(state.status));
        }
        if response.exchange.is_some() {
            return Err(RouteError::ExchangeResponse);
        }
        let record = state
            .branches
            .get(&key)
            .filter(|r| matches!(r.status, BranchStatus::Open | BranchStatus::Waiting))
            .filter(|_| state.current.contains(&key))
            .ok_or(RouteError::NotCurrent(key))?;
        if record.operator != response.operator_id {
            return Err(RouteError::OperatorMismatch {
                branch: key,
                expected: record.operator.clone(),
                got: response.operator_id.clone(),
            });
        }
        let mut t = Transition {
            state: state.clone(),
            effects: Vec::new(),
        };
        // Exchanges of this branch are over once its agent answers again.
        release_where(&mut t, |agent| agent.starts_with(&format!("{key}/")));

        match response.status {
            ResponseStatus::Waiting => {
                settle::wait(self, &mut t, key, response)?;
                return Ok(t);
            }
            ResponseStatus::Done => self.settle_branch(&mut t, key, response, None),
            ResponseStatus::Blocked => {
                let code = response.stop.clone().unwrap_or_default();
                let fallback = self
                    .defs
                    .stop_code(&response.operator_id, &code)
                    .is_some_and(|sc| sc.disposition == Disposition::Fallback);
                if fallback {
                    let note = response.reason.clone();
                    self.settle_branch(&mut t, key, response, Some(Fallback { code, note }));
                } else {
                    let rec = t.state.branches.get_mut(&key).expect("checked above");
                    rec.status = BranchStatus::Blocked;
                    rec.stop = Some(code);
                    rec.fields = response.fields.clone();
                    release_where(&mut t, |agent| agent == key.to_string());
                }
            }
        }
        t.state.current.retain(|k| *k != key);
        let step_open = t.state.current.iter().any(|k| k.step == key.step);
        if !step_open {
            settle::settle_step(self, &mut t, key.step)?;
        }
        Ok(t)
    }

    /// Re-enters a blocked session (a person resumed it): the blocked branch's operator runs
    /// again in a new step with `resume` naming it. `budget` replaces the session's budget
    /// when given; `requirements` are laid over the run's values.
    pub fn reenter(
        &self,
        state: &SessionState,
        budget: Option<Budget>,
        requirements: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Transition, RouteError> {
        if state.status != SessionStatus::Blocked {
            return Err(RouteError::NotBlocked);
        }
        let mut t = Transition {
            state: state.clone(),
            effects: Vec::new(),
        };
        t.state.status = SessionStatus::Running;
        let stopped = t.state.stopped_at.take();
        if let Some(b) = budget {
            t.state.budget = b;
        }
        t.state.requirements.extend(requirements);
        let retried = stopped
            .as_ref()
            .filter(|s| s.stop.as_deref() == Some(GIT_FAILED))
            .and_then(|s| s.branch);
        if let Some(b) = retried
            && t.state
                .branches
                .get(&b)
                .is_some_and(|r| r.stop.as_deref() == Some(GIT_FAILED))
        {
            settle::retry_step(self, &mut t, b)?;
            return Ok(t);
        }
        match stopped.and_then(|s| s.branch) {
            Some(b)
                if t.state
                    .branches
                    .get(&b)
                    .is_some_and(|r| r.status == BranchStatus::Blocked) =>
            {
                let plan = settle::resume_plan(&t.state, b);
                open::open_step(self, &mut t, vec![plan], Some(b))?;
            }
            _ => {
                let last = t.state.last_step();
                settle::settle_step(self, &mut t, last)?;
            }
        }
        Ok(t)
    }

    /// The runner's own work for branch `key` (or for the session, before any branch) failed
    /// with session code `code`: the branch blocks and the session stops for a person at once,
    /// with `why` (what failed, in its own words) as the reason.
    pub fn fail(
        &self,
        state: &SessionState,
        key: Option<BranchKey>,
        code: &str,
        why: &str,
    ) -> Result<Transition, RouteError> {
        if state.status != SessionStatus::Running {
            return Err(RouteError::NotRunning(state.status));
        }
        let mut t = Transition {
            state: state.clone(),
            effects: Vec::new(),
        };
        let mut operator = None;
        if let Some(key) = key {
            let rec = t
                .state
                .branches
                .get_mut(&key)
                .filter(|r| matches!(r.status, BranchStatus::Open | BranchStatus::Waiting))
                .ok_or(RouteError::NotCurrent(key))?;
            rec.status = BranchStatus::Blocked;
            rec.stop = Some(code.to_string());
            operator = Some(rec.operator.clone());
        }
        let stopped = settle::session_stop(self, code, key, operator.as_deref(), why.to_string());
        settle::block(&mut t, stopped);
        Ok(t)
    }

    /// Ends the session for a person: status `stopped`, every lease released.
    pub fn stop(&self, state: &SessionState, why: &str) -> Transition {
        stop_transition(state, why)
    }

    fn settle_branch(
        &self,
        t: &mut Transition,
        key: BranchKey,
        response: &Response,
        fallback: Option<Fallback>,
    ) {
        let rec = t.state.branches.get_mut(&key).expect("checked by route");
        rec.status = BranchStatus::Done;
        rec.stop = None;
        rec.fields = response.fields.clone();
        let mut fallbacks = response.fallbacks.clone();
        fallbacks.extend(fallback);
        if !fallbacks.is_empty() {
            t.state.fallbacks.entry(key).or_default().extend(fallbacks);
        }
        release_where(t, |agent| agent == key.to_string());
    }
}

/// Ends a session for a person: status `stopped`, every lease released, nothing in flight.
/// Needs no definitions (what [`Router::stop`] does).
pub fn stop_transition(state: &SessionState, why: &str) -> Transition {
    let mut t = Transition {
        state: state.clone(),
        effects: Vec::new(),
    };
    release_where(&mut t, |_| true);
    t.state.current.clear();
    t.state.status = SessionStatus::Stopped;
    t.state.stopped_at = Some(StoppedAt {
        at: None,
        branch: None,
        operator: None,
        stop: None,
        domain: None,
        route: "stopped".into(),
        why: why.to_string(),
    });
    t
}

/// Releases every lease whose agent key matches, with an effect for each.
pub(crate) fn release_where(t: &mut Transition, pred: impl Fn(&str) -> bool) {
    let agents: Vec<String> = t.state.leases.keys().filter(|a| pred(a)).cloned().collect();
    for agent in agents {
        t.state.leases.remove(&agent);
        t.effects.push(Effect::ReleaseLease { agent });
    }
}
