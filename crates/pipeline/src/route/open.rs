//! Opening a step: the budget checks, the branch records and leases, and each branch's
//! request with its inputs named by path.

use std::collections::BTreeMap;

use super::settle::{block, session_stop};
use super::{Effect, RouteError, Router, Transition, lease};
use crate::defs::Operator;
use crate::session::{
    BranchKey, BranchRecord, BranchStatus, Cause, InputPath, Lease, Origin, REQUEST_SCHEMA_VERSION,
    Request, ResumeRecord, SessionState,
};

/// One branch to open.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub operator: String,
    pub origin: Option<Origin>,
    pub return_to: Option<BranchKey>,
    pub resume: Option<BranchKey>,
    pub cause: Option<Cause>,
}

/// Opens the next step with `plans` as its parallel branches, or blocks the session with
/// `BUDGET_EXHAUSTED` when the step or an operator's runs would exceed the budget. `trigger`
/// is the branch whose settling led here (named when the session blocks).
pub(crate) fn open_step(
    router: &Router<'_>,
    t: &mut Transition,
    plans: Vec<Plan>,
    trigger: Option<BranchKey>,
) -> Result<(), RouteError> {
    let step = t.state.last_step() + 1;
    let budget = t.state.budget;
    if step > budget.max_steps {
        let why = format!(
            "step {step} would exceed the budget of {} steps",
            budget.max_steps
        );
        block(
            t,
            session_stop(router, "BUDGET_EXHAUSTED", trigger, None, why),
        );
        return Ok(());
    }
    let mut batch_runs: BTreeMap<&str, u32> = BTreeMap::new();
    for plan in &plans {
        let n = batch_runs.entry(plan.operator.as_str()).or_insert(0);
        *n += 1;
        if t.state.runs_of(&plan.operator) + *n > budget.max_same_operator {
            let why = format!(
                "`{}` would run more than {} times in this session",
                plan.operator, budget.max_same_operator
            );
            block(
                t,
                session_stop(
                    router,
                    "BUDGET_EXHAUSTED",
                    trigger,
                    Some(&plan.operator),
                    why,
                ),
            );
            return Ok(());
        }
    }

    let mut batch_holds: Vec<Vec<String>> = Vec::new();
    for (i, plan) in plans.into_iter().enumerate() {
        let key = BranchKey::new(step, i as u32 + 1);
        let op = router
            .defs
            .operator(&plan.operator)
            .ok_or_else(|| RouteError::UnknownOperator(plan.operator.clone()))?;
        let agent = key.to_string();
        let holds = lease::lease_holds(op, &agent);
        let clash = t
            .state
            .leases
            .values()
            .any(|l| lease::holds_conflict(&l.holds, &holds))
            || batch_holds.iter().any(|h| lease::holds_conflict(h, &holds));
        if clash {
            return Err(RouteError::LeaseConflict(key));
        }
        batch_holds.push(holds.clone());

        let request = build_request(router, &t.state, key, op, &plan);
        t.state.chain.push(key);
        t.state.steps.insert(key, plan.operator.clone());
        t.state.current.push(key);
        t.state.branches.insert(
            key,
            BranchRecord {
                operator: plan.operator.clone(),
                status: BranchStatus::Open,
                origin: plan.origin,
                return_to: plan.return_to,
                stop: None,
                fields: BTreeMap::new(),
                exchanges: 0,
            },
        );
        if let Some(r) = plan.resume {
            let stop = t
                .state
                .branches
                .get(&r)
                .and_then(|b| b.stop.clone())
                .unwrap_or_default();
            t.state
                .resumes
                .insert(key, ResumeRecord { resumes: r, stop });
        }
        t.state.leases.insert(
            agent,
            Lease {
                agent: plan.operator.clone(),
                holds,
            },
        );
        t.effects.push(Effect::OpenBranch { request });
    }
    Ok(())
}

fn build_request(
    router: &Router<'_>,
    state: &SessionState,
    key: BranchKey,
    op: &Operator,
    plan: &Plan,
) -> Request {
    let mut requirements = plan
        .origin
        .and_then(|o| {
            router
                .workflow
                .steps
                .get(o.step as usize - 1)
                .and_then(|s| s.branches.get(o.branch as usize - 1))
        })
        .map(|b| b.requirements.clone())
        .unwrap_or_default();
    requirements.extend(state.requirements.clone());
    Request {
        schema_version: REQUEST_SCHEMA_VERSION,
        session_id: state.id.clone(),
        operator_id: op.id().to_string(),
        step: key.step,
        parallel: key.parallel,
        exchange: None,
        requirements,
        inputs: resolve_inputs(state, op, key.step, None),
        resume: plan.resume.map(Into::into),
        cause: plan.cause.clone(),
        head: state.source.as_ref().map(|s| s.head.clone()),
    }
}

/// Each kind `op` consumes, from the nearest earlier branch that is done and recorded it;
/// `own` (a waiting branch serving an exchange) is looked at first.
pub(crate) fn resolve_inputs(
    state: &SessionState,
    op: &Operator,
    before_step: u32,
    own: Option<BranchKey>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for kind in op.def.inputs.keys() {
        if let Some(k) = own
            && let Some(path) = state.branches.get(&k).and_then(|r| r.fields.get(kind))
        {
            out.insert(kind.clone(), InputPath::render(k, path));
            continue;
        }
        let found = state
            .chain
            .iter()
            .rev()
            .filter(|k| k.step < before_step)
            .find_map(|k| {
                let rec = state.branches.get(k)?;
                (rec.status == BranchStatus::Done)
                    .then(|| rec.fields.get(kind))
                    .flatten()
                    .map(|p| InputPath::render(*k, p))
            });
        if let Some(path) = found {
            out.insert(kind.clone(), path);
        }
    }
    out
}
