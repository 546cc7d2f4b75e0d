//! The checks that span files: routes against the stop domains operators can reach, operators
//! named by routes, exchanges and workflows, inputs with no earlier producer, and parallel
//! branches that would share a write root.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{
    ANY_OPERATOR, Definitions, Disposition, Operator, Problem, Route, Scope, roots_overlap,
};

/// The stop domains `op` can block in, each with the codes that reach it. Fallback codes never
/// block and session codes always stop for a person, so neither reaches a route.
pub(crate) fn reachable_domains(
    defs: &Definitions,
    op: &Operator,
) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let writes = op.def.writes_source || op.def.publishes;
    for (code, sc) in defs.stop_codes.shared_codes() {
        let applies = match sc.scope {
            Scope::Operator => true,
            Scope::Source => writes,
            Scope::Publish => op.def.publishes,
            Scope::Session => false,
        };
        if applies && sc.disposition == Disposition::Terminate {
            out.entry(sc.domain.clone()).or_default().push(code.clone());
        }
    }
    for (code, sc) in defs.stop_codes.own_codes(op.id()) {
        if sc.disposition == Disposition::Terminate {
            out.entry(sc.domain.clone()).or_default().push(code.clone());
        }
    }
    out
}

pub(crate) fn cross_check(defs: &Definitions, problems: &mut Vec<Problem>) {
    check_routes(defs, problems);
    check_exchanges(defs, problems);
    for wf in defs.workflows.values() {
        check_workflow(defs, wf, problems);
    }
}

fn check_routes(defs: &Definitions, problems: &mut Vec<Problem>) {
    let file = Path::new("routing.json");
    let mut reach_any: BTreeSet<String> = BTreeSet::new();
    for op in defs.operators.values() {
        let reach = reachable_domains(defs, op);
        for (domain, codes) in &reach {
            reach_any.insert(domain.clone());
            if defs.routing.lookup(op.id(), domain).is_none() {
                problems.push(Problem::in_file(
                    file,
                    format!(
                        "operator `{}` can stop in domain `{domain}` ({}) but no route covers it",
                        op.id(),
                        codes.join(", ")
                    ),
                ));
            }
        }
    }
    for (key, routes) in &defs.routing.routes {
        let own_reach = if key == ANY_OPERATOR {
            None
        } else if let Some(op) = defs.operators.get(key) {
            Some(reachable_domains(defs, op))
        } else {
            problems.push(Problem::in_file(
                file,
                format!("routes name unknown operator `{key}`"),
            ));
            continue;
        };
        for (domain, route) in routes {
            let reached = match &own_reach {
                Some(reach) => reach.contains_key(domain),
                None => reach_any.contains(domain),
            };
            if !reached {
                problems.push(Problem::in_file(
                    file,
                    format!("route `{key}` / `{domain}` is reached by no stop code"),
                ));
            }
            if let Route::Operator { target } = route
                && !defs.operators.contains_key(target)
            {
                problems.push(Problem::in_file(
                    file,
                    format!("route `{key}` / `{domain}` targets unknown operator `{target}`"),
                ));
            }
        }
    }
}

fn check_exchanges(defs: &Definitions, problems: &mut Vec<Problem>) {
    for op in defs.operators.values() {
        for (kind, answerer) in &op.def.exchanges {
            if !defs.operators.contains_key(answerer) {
                problems.push(Problem::in_file(
                    Path::new("operators")
                        .join(&op.folder)
                        .join("operator.json"),
                    format!("exchange `{kind}` names unknown operator `{answerer}`"),
                ));
            }
        }
    }
}

fn check_workflow(defs: &Definitions, wf: &super::Workflow, problems: &mut Vec<Problem>) {
    let file = Path::new("workflows").join(format!("{}.json", wf.name));
    let mut produced: BTreeSet<String> = BTreeSet::new();
    for (i, step) in wf.steps.iter().enumerate() {
        let n = i + 1;
        let mut writers: Vec<(&str, &Operator)> = Vec::new();
        for b in &step.branches {
            let Some(op) = defs.operators.get(&b.operator) else {
                problems.push(Problem::in_file(
                    file.clone(),
                    format!("step {n} names unknown operator `{}`", b.operator),
                ));
                continue;
            };
            for (kind, input) in &op.def.inputs {
                if input.required && !produced.contains(kind) {
                    problems.push(Problem::in_file(
                        file.clone(),
                        format!(
                            "step {n}: operator `{}` requires `{kind}`, which no earlier step produces",
                            b.operator
                        ),
                    ));
                }
            }
            if op.def.writes_source {
                for (other_id, other) in &writers {
                    let shared = op
                        .def
                        .write_roots
                        .iter()
                        .any(|a| other.def.write_roots.iter().any(|b| roots_overlap(a, b)));
                    if shared {
                        problems.push(Problem::in_file(
                            file.clone(),
                            format!(
                                "step {n}: parallel branches `{other_id}` and `{}` share a write root",
                                b.operator
                            ),
                        ));
                    }
                }
                writers.push((b.operator.as_str(), op));
            }
        }
        for b in &step.branches {
            if let Some(op) = defs.operators.get(&b.operator) {
                produced.extend(op.def.outputs.keys().cloned());
            }
        }
    }
}
