//! The response gate: runs after an agent ends. It checks the response against the shipped
//! schema, then against the operator: the status carries what it needs (`stop` when blocked,
//! `awaiting` when waiting), every stop and fallback code is known with the right disposition,
//! every field is a declared output naming an existing file inside the branch's response
//! folder that satisfies the output's schema, and a `done` response records every required
//! output. `response.md` must exist but is never read: prose does not route.

use crate::defs::{Definitions, Disposition, Operator, is_plain_relative};
use crate::session::{BranchKey, Response, ResponseStatus, Session};

use super::refusal::{Refusal, Refusals};
use super::schemas::{Shipped, check_shipped, schema_refusals};

/// Checks the response of `key` (or of its nested `exchange`).
pub fn check_response(
    defs: &Definitions,
    session: &Session,
    key: BranchKey,
    exchange: Option<&str>,
) -> Result<Response, Refusals> {
    let value = super::read_for_gate(&session.response_path(key, exchange), "response.json")?;
    let refusals = check_shipped(Shipped::Response, &value);
    if !refusals.is_empty() {
        return Err(Refusals(refusals));
    }
    let response: Response = serde_json::from_value(value)
        .map_err(|e| Refusals(vec![Refusal::new("response.json", e.to_string())]))?;
    let mut out = Vec::new();

    if response.branch() != key {
        out.push(Refusal::new(
            "step",
            format!(
                "the response is for {} but sits in {key}",
                response.branch()
            ),
        ));
    }
    if response.exchange.as_deref() != exchange {
        out.push(Refusal::new(
            "exchange",
            "does not match the folder the response sits in",
        ));
    }
    let expected = match exchange {
        None => session.state().steps.get(&key).cloned(),
        Some(_) => session
            .read_request(key, exchange)
            .ok()
            .map(|r| r.operator_id),
    };
    match &expected {
        None => out.push(Refusal::new("step", format!("nothing was asked of {key}"))),
        Some(op) if *op != response.operator_id => out.push(Refusal::new(
            "operatorId",
            format!("{key} runs `{op}`, not `{}`", response.operator_id),
        )),
        Some(_) => {}
    }
    let Some(operator) = defs.operator(&response.operator_id) else {
        out.push(Refusal::new(
            "operatorId",
            format!("unknown operator `{}`", response.operator_id),
        ));
        return Err(Refusals(out));
    };

    check_status(defs, operator, &response, &mut out);
    check_fallbacks(defs, operator, &response, &mut out);
    check_fields(session, operator, key, exchange, &response, &mut out);
    if !response.writes.is_empty() && !operator.def.writes_source {
        out.push(Refusal::new(
            "writes",
            format!("operator `{}` does not write source", operator.id()),
        ));
    }
    if !session
        .response_dir(key, exchange)
        .join("response.md")
        .is_file()
    {
        out.push(Refusal::new("response.md", "is missing"));
    }

    if out.is_empty() {
        Ok(response)
    } else {
        Err(Refusals(out))
    }
}

fn check_status(defs: &Definitions, op: &Operator, r: &Response, out: &mut Vec<Refusal>) {
    match r.status {
        ResponseStatus::Blocked => match r.stop.as_deref() {
            None => out.push(Refusal::new("stop", "a blocked response needs a stop code")),
            Some(code) if defs.stop_code(op.id(), code).is_none() => out.push(Refusal::new(
                "stop",
                format!(
                    "`{code}` is neither a code of `{}` nor a shared code",
                    op.id()
                ),
            )),
            Some(_) => {}
        },
        _ if r.stop.is_some() => out.push(Refusal::new(
            "stop",
            "only a blocked response carries a stop",
        )),
        _ => {}
    }
    match (&r.awaiting, r.status) {
        (None, ResponseStatus::Waiting) => out.push(Refusal::new(
            "awaiting",
            "a waiting response needs `awaiting`",
        )),
        (Some(_), s) if s != ResponseStatus::Waiting => out.push(Refusal::new(
            "awaiting",
            "only a waiting response carries `awaiting`",
        )),
        (Some(a), _) if !op.def.exchanges.contains_key(&a.kind) => out.push(Refusal::new(
            "awaiting.kind",
            format!("operator `{}` declares no exchange `{}`", op.id(), a.kind),
        )),
        (Some(a), _) if matches!(a.exchange.as_str(), "request" | "response") => {
            out.push(Refusal::new(
                "awaiting.exchange",
                "`request` and `response` are reserved names",
            ))
        }
        _ => {}
    }
    if r.exchange.is_some() && r.status == ResponseStatus::Waiting {
        out.push(Refusal::new(
            "status",
            "a nested exchange cannot itself wait",
        ));
    }
}

fn check_fallbacks(defs: &Definitions, op: &Operator, r: &Response, out: &mut Vec<Refusal>) {
    for (i, fb) in r.fallbacks.iter().enumerate() {
        match defs.stop_code(op.id(), &fb.code) {
            None => out.push(Refusal::new(
                format!("fallbacks.{i}.code"),
                format!("unknown stop code `{}`", fb.code),
            )),
            Some(sc) if sc.disposition != Disposition::Fallback => out.push(Refusal::new(
                format!("fallbacks.{i}.code"),
                format!(
                    "`{}` terminates; it cannot be recorded as a fallback",
                    fb.code
                ),
            )),
            Some(_) => {}
        }
    }
}

fn check_fields(
    session: &Session,
    op: &Operator,
    key: BranchKey,
    exchange: Option<&str>,
    r: &Response,
    out: &mut Vec<Refusal>,
) {
    let prefix = match exchange {
        Some(x) => format!("{x}/response/"),
        None => "response/".to_string(),
    };
    let branch_dir = session.branch_dir(key);
    for (kind, path) in &r.fields {
        let field = format!("fields.{kind}");
        let Some(decl) = op.def.outputs.get(kind) else {
            out.push(Refusal::new(
                field,
                format!("operator `{}` declares no output `{kind}`", op.id()),
            ));
            continue;
        };
        if !is_plain_relative(path) || !path.starts_with(&prefix) {
            out.push(Refusal::new(
                field,
                format!("`{path}` must be a relative path under `{prefix}`"),
            ));
            continue;
        }
        if let Some(declared) = &decl.path
            && exchange.is_none()
            && declared != path
        {
            out.push(Refusal::new(
                field,
                format!("must be `{declared}`, not `{path}`"),
            ));
            continue;
        }
        let file = branch_dir.join(path);
        if !file.is_file() {
            out.push(Refusal::new(field, format!("`{path}` does not exist")));
            continue;
        }
        if let Some(schema) = op.output_schema(kind) {
            match crate::fsutil::read_json_value(&file) {
                Ok(doc) => out.extend(schema_refusals(schema, &doc, &field)),
                Err(_) => out.push(Refusal::new(field, format!("`{path}` is not JSON"))),
            }
        }
    }
    if r.status == ResponseStatus::Done {
        for (kind, decl) in &op.def.outputs {
            if decl.required && !r.fields.contains_key(kind) {
                out.push(Refusal::new(
                    format!("fields.{kind}"),
                    "a required output is missing",
                ));
            }
        }
    }
}
