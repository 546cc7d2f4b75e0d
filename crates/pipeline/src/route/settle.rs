//! Settling: what happens when a branch waits, and when the last open branch of a step
//! settles — follow the routes of its blocked branches, come back from detours, or advance
//! the workflow.

use super::open::{Plan, open_step, resolve_inputs};
use super::{Effect, RouteError, Router, Transition, lease, release_where};
use crate::defs::{Route, Scope};
use crate::session::{
    BranchKey, BranchStatus, Cause, Lease, Origin, REQUEST_SCHEMA_VERSION, Request, Response,
    SessionState, SessionStatus, StoppedAt,
};

/// `waiting`: record it, then run the nested exchange and resume the same agent.
pub(crate) fn wait(
    router: &Router<'_>,
    t: &mut Transition,
    key: BranchKey,
    response: &Response,
) -> Result<(), RouteError> {
    let awaiting = response
        .awaiting
        .clone()
        .ok_or(RouteError::NotCurrent(key))?;
    let op = router
        .defs
        .operator(&response.operator_id)
        .ok_or_else(|| RouteError::UnknownOperator(response.operator_id.clone()))?;
    let answerer_id = op
        .def
        .exchanges
        .get(&awaiting.kind)
        .ok_or_else(|| RouteError::UnknownOperator(awaiting.kind.clone()))?;
    let answerer = router
        .defs
        .operator(answerer_id)
        .ok_or_else(|| RouteError::UnknownOperator(answerer_id.clone()))?;
    let max = t.state.budget.max_same_operator;
    let rec = t.state.branches.get_mut(&key).expect("checked by route");
    rec.status = BranchStatus::Waiting;
    rec.fields = response.fields.clone();
    rec.exchanges += 1;
    if rec.exchanges > max {
        let why = format!("{key} asked for more than {max} nested exchanges");
        let op_id = response.operator_id.clone();
        block(
            t,
            session_stop(router, "BUDGET_EXHAUSTED", Some(key), Some(&op_id), why),
        );
        return Ok(());
    }
    let agent = key.exchange_key(&awaiting.exchange);
    let request = Request {
        schema_version: REQUEST_SCHEMA_VERSION,
        session_id: t.state.id.clone(),
        operator_id: answerer_id.clone(),
        step: key.step,
        parallel: key.parallel,
        exchange: Some(awaiting.exchange.clone()),
        requirements: t.state.requirements.clone(),
        inputs: resolve_inputs(&t.state, answerer, key.step, Some(key)),
        resume: None,
        cause: None,
        head: t.state.source.as_ref().map(|s| s.head.clone()),
    };
    t.state.leases.insert(
        agent.clone(),
        Lease {
            agent: answerer_id.clone(),
            holds: lease::lease_holds(answerer, &agent),
        },
    );
    t.effects.push(Effect::RunExchange {
        branch: key,
        exchange: awaiting.exchange.clone(),
        request,
    });
    t.effects.push(Effect::ResumeAgent {
        branch: key,
        exchange: awaiting.exchange,
    });
    Ok(())
}

/// The last open branch of `step` settled: route its blocked branches, come back from
/// detours that are done, or advance the workflow.
pub(crate) fn settle_step(
    router: &Router<'_>,
    t: &mut Transition,
    step: u32,
) -> Result<(), RouteError> {
    let mut plans = Vec::new();
    let mut last = None;
    for key in t.state.step_branches(step) {
        last = Some(key);
        let rec = t.state.branches[&key].clone();
        match rec.status {
            BranchStatus::Blocked => {
                let code = rec.stop.clone().unwrap_or_default();
                let Some(sc) = router.defs.stop_code(&rec.operator, &code) else {
                    let why = format!("`{code}` is known to no registry");
                    block(
                        t,
                        session_stop(router, "UNKNOWN_STOP", Some(key), Some(&rec.operator), why),
                    );
                    return Ok(());
                };
                if sc.scope == Scope::Session {
                    let why = format!("{key} stopped with session code `{code}`");
                    block(
                        t,
                        session_stop(router, &code, Some(key), Some(&rec.operator), why),
                    );
                    return Ok(());
                }
                if let Some(why) = no_progress(&t.state, key, &code) {
                    block(
                        t,
                        session_stop(router, "NO_PROGRESS", Some(key), Some(&rec.operator), why),
                    );
                    return Ok(());
                }
                let route = router
                    .defs
                    .routing
                    .lookup(&rec.operator, &sc.domain)
                    .cloned();
                let stopped = |route: &str, why: String| StoppedAt {
                    at: None,
                    branch: Some(key),
                    operator: Some(rec.operator.clone()),
                    stop: Some(code.clone()),
                    domain: Some(sc.domain.clone()),
                    route: route.to_string(),
                    why,
                };
                match route {
                    None => {
                        let why =
                            format!("no route for `{}` in domain `{}`", rec.operator, sc.domain);
                        block(t, stopped("user", why));
                        return Ok(());
                    }
                    Some(r @ (Route::User | Route::External)) => {
                        let why = format!(
                            "`{code}` routes `{}` to `{}`: {}",
                            rec.operator,
                            r.kind(),
                            sc.meaning
                        );
                        block(t, stopped(r.kind(), why));
                        return Ok(());
                    }
                    Some(Route::Resume) => plans.push(resume_plan(&t.state, key)),
                    Some(Route::Operator { target }) => plans.push(Plan {
                        operator: target,
                        origin: None,
                        return_to: Some(key),
                        resume: None,
                        cause: Some(Cause {
                            branch: key,
                            stop: code.clone(),
                        }),
                    }),
                }
            }
            BranchStatus::Done => {
                if let Some(r) = rec.return_to {
                    plans.push(resume_plan(&t.state, r));
                }
            }
            BranchStatus::Open | BranchStatus::Waiting => {}
        }
    }
    if plans.is_empty() {
        advance(router, t, last)
    } else {
        open_step(router, t, plans, last)
    }
}

/// Opens the first workflow step that is not yet done, or finishes the session.
pub(crate) fn advance(
    router: &Router<'_>,
    t: &mut Transition,
    trigger: Option<BranchKey>,
) -> Result<(), RouteError> {
    for (i, step) in router.workflow.steps.iter().enumerate() {
        let plans: Vec<Plan> = step
            .branches
            .iter()
            .enumerate()
            .filter_map(|(j, b)| {
                let origin = Origin {
                    step: i as u32 + 1,
                    branch: j as u32 + 1,
                };
                let done = latest_with_origin(&t.state, origin)
                    .is_some_and(|k| t.state.branches[&k].status == BranchStatus::Done);
                (!done).then(|| Plan {
                    operator: b.operator.clone(),
                    origin: Some(origin),
                    return_to: None,
                    resume: None,
                    cause: None,
                })
            })
            .collect();
        if !plans.is_empty() {
            return open_step(router, t, plans, trigger);
        }
    }
    release_where(t, |_| true);
    t.state.current.clear();
    t.state.status = SessionStatus::Done;
    t.state.stopped_at = Some(StoppedAt {
        at: None,
        branch: trigger,
        operator: None,
        stop: None,
        domain: None,
        route: "done".into(),
        why: "the workflow finished".into(),
    });
    t.effects.push(Effect::Finish);
    Ok(())
}

fn latest_with_origin(state: &SessionState, origin: Origin) -> Option<BranchKey> {
    state
        .chain
        .iter()
        .rev()
        .copied()
        .find(|k| state.branches.get(k).and_then(|r| r.origin) == Some(origin))
}

/// The plan that re-enters blocked branch `b` with `resume` naming it.
pub(crate) fn resume_plan(state: &SessionState, b: BranchKey) -> Plan {
    let rec = &state.branches[&b];
    Plan {
        operator: rec.operator.clone(),
        origin: rec.origin,
        return_to: rec.return_to,
        resume: Some(b),
        cause: None,
    }
}

/// `Some(why)` when `key` re-entered a branch and blocked with the same stop on the same
/// input hash.
fn no_progress(state: &SessionState, key: BranchKey, code: &str) -> Option<String> {
    let resumed = state.resumes.get(&key)?.resumes;
    let before = state.branches.get(&resumed)?;
    let same_stop = before.stop.as_deref() == Some(code);
    let now_hash = state.input_hashes.get(&key.to_string())?;
    let same_input = state.input_hashes.get(&resumed.to_string()) == Some(now_hash);
    (same_stop && same_input).then(|| {
        format!("{key} re-entered {resumed} and reached the same stop `{code}` on the same input")
    })
}

/// A stop for a person with a shared session code.
pub(crate) fn session_stop(
    router: &Router<'_>,
    code: &str,
    branch: Option<BranchKey>,
    operator: Option<&str>,
    why: String,
) -> StoppedAt {
    let domain = router
        .defs
        .stop_codes
        .shared(code)
        .map(|c| c.domain.clone())
        .unwrap_or_else(|| "session".into());
    StoppedAt {
        at: None,
        branch,
        operator: operator.map(str::to_string),
        stop: Some(code.to_string()),
        domain: Some(domain),
        route: "user".into(),
        why,
    }
}

/// Re-enters the step of `failed` (blocked by the runner's own failure) in place: `failed`
/// and every branch of its step not yet settled are open and current again, with their
/// leases, each picked up from its folder ([`Effect::Retry`]).
pub(crate) fn retry_step(
    router: &Router<'_>,
    t: &mut Transition,
    failed: BranchKey,
) -> Result<(), RouteError> {
    for key in t.state.step_branches(failed.step) {
        let rec = t
            .state
            .branches
            .get_mut(&key)
            .expect("chain keys have records");
        let unsettled = matches!(rec.status, BranchStatus::Open | BranchStatus::Waiting);
        if key != failed && !unsettled {
            continue;
        }
        // A waiting branch's routed `waiting` answer is routed again, which reruns its exchange.
        rec.status = BranchStatus::Open;
        rec.stop = None;
        let op = router
            .defs
            .operator(&rec.operator)
            .ok_or_else(|| RouteError::UnknownOperator(rec.operator.clone()))?;
        let agent = key.to_string();
        t.state.leases.insert(
            agent.clone(),
            Lease {
                agent: rec.operator.clone(),
                holds: lease::lease_holds(op, &agent),
            },
        );
        t.state.current.push(key);
        t.effects.push(Effect::Retry { branch: key });
    }
    Ok(())
}

/// Blocks the session: every lease released, nothing in flight, the stop recorded.
pub(crate) fn block(t: &mut Transition, stopped: StoppedAt) {
    release_where(t, |_| true);
    t.state.current.clear();
    t.state.status = SessionStatus::Blocked;
    t.state.stopped_at = Some(stopped.clone());
    t.effects.push(Effect::Block { stopped });
}
