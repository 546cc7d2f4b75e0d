//! The request gate: runs before an agent starts. It checks the request against the shipped
//! schema, then against the definitions and the manifest: the operator exists and is the one
//! the manifest records, every input names a file an earlier branch recorded in its `fields`,
//! the bytes still match the recorded sha256, and a resume names a branch the manifest records
//! for the same operator.

use crate::defs::Definitions;
use crate::hash::sha256_bytes;
use crate::session::{BranchKey, InputPath, Request, Session};

use super::refusal::{Refusal, Refusals};
use super::schemas::{Shipped, check_shipped};

/// Checks the request of `key` (or of its nested `exchange`). Returns the request when every
/// check passes, or every refusal found.
pub fn check_request(
    defs: &Definitions,
    session: &Session,
    key: BranchKey,
    exchange: Option<&str>,
) -> Result<Request, Refusals> {
    let path = session.request_path(key, exchange);
    let value = super::read_for_gate(&path, "request.json")?;
    let refusals = check_shipped(Shipped::Request, &value);
    if !refusals.is_empty() {
        return Err(Refusals(refusals));
    }
    let request: Request = serde_json::from_value(value)
        .map_err(|e| Refusals(vec![Refusal::new("request.json", e.to_string())]))?;
    let state = session.state();
    let mut out = Vec::new();

    if request.session_id != state.id {
        out.push(Refusal::new(
            "sessionId",
            format!(
                "`{}` is not this session (`{}`)",
                request.session_id, state.id
            ),
        ));
    }
    if request.branch() != key {
        out.push(Refusal::new(
            "step",
            format!("the request is for {} but sits in {key}", request.branch()),
        ));
    }
    if request.exchange.as_deref() != exchange {
        out.push(Refusal::new(
            "exchange",
            "does not match the folder the request sits in",
        ));
    }

    let operator = defs.operator(&request.operator_id);
    if operator.is_none() {
        out.push(Refusal::new(
            "operatorId",
            format!("unknown operator `{}`", request.operator_id),
        ));
    }
    match state.steps.get(&key) {
        None => out.push(Refusal::new(
            "step",
            format!("the manifest records no branch {key}"),
        )),
        Some(recorded) => match exchange {
            None if *recorded != request.operator_id => out.push(Refusal::new(
                "operatorId",
                format!(
                    "the manifest records `{recorded}` for {key}, not `{}`",
                    request.operator_id
                ),
            )),
            Some(_) => {
                let answers = defs
                    .operator(recorded)
                    .is_some_and(|op| op.def.exchanges.values().any(|a| *a == request.operator_id));
                if !answers {
                    out.push(Refusal::new(
                        "operatorId",
                        format!(
                            "`{}` answers no exchange operator `{recorded}` declares",
                            request.operator_id
                        ),
                    ));
                }
            }
            None => {}
        },
    }

    // The bytes on disk must be the bytes the runner hashed.
    let hash_key = request.hash_key();
    match state.request_hashes.get(&hash_key) {
        None => out.push(Refusal::new(
            "request.json",
            format!("the manifest records no hash for {hash_key}"),
        )),
        Some(recorded) => match std::fs::read(&path) {
            Ok(bytes) if sha256_bytes(&bytes) == *recorded => {}
            Ok(_) => out.push(Refusal::new(
                "request.json",
                "no longer matches the sha256 the manifest records",
            )),
            Err(e) => out.push(Refusal::new("request.json", e.to_string())),
        },
    }

    for (kind, text) in &request.inputs {
        if let Err(reason) = check_input(session, key, exchange.is_some(), kind, text) {
            out.push(Refusal::new(format!("inputs.{kind}"), reason));
        }
    }
    if let Some(op) = operator {
        for (kind, decl) in &op.def.inputs {
            if decl.required && !request.inputs.contains_key(kind) {
                out.push(Refusal::new(
                    format!("inputs.{kind}"),
                    "a required input is missing",
                ));
            }
        }
        for kind in request.inputs.keys() {
            if !op.def.inputs.contains_key(kind) {
                out.push(Refusal::new(
                    format!("inputs.{kind}"),
                    format!("operator `{}` declares no input `{kind}`", op.id()),
                ));
            }
        }
    }

    if let Some(resume) = request.resume {
        let target = resume.key();
        match state.steps.get(&target) {
            None => out.push(Refusal::new(
                "resume",
                format!("the manifest records no branch {target}"),
            )),
            Some(op) if *op != request.operator_id => out.push(Refusal::new(
                "resume",
                format!("{target} ran `{op}`, not `{}`", request.operator_id),
            )),
            Some(_) if target >= key => out.push(Refusal::new(
                "resume",
                format!("{target} is not earlier than {key}"),
            )),
            Some(_) => {}
        }
        if exchange.is_none() && state.resumes.get(&key).map(|r| r.resumes) != Some(target) {
            out.push(Refusal::new(
                "resume",
                format!("the manifest records no re-entry of {target} in {key}"),
            ));
        }
    } else if exchange.is_none() && state.resumes.contains_key(&key) {
        out.push(Refusal::new(
            "resume",
            "the manifest records this branch as a re-entry, but the request names none",
        ));
    }

    if out.is_empty() {
        Ok(request)
    } else {
        Err(Refusals(out))
    }
}

/// One input: a path from the session root into an earlier branch (or, for an exchange, the
/// branch it serves) that the branch recorded under the same kind and that exists.
fn check_input(
    session: &Session,
    key: BranchKey,
    in_exchange: bool,
    kind: &str,
    text: &str,
) -> Result<(), String> {
    let input: InputPath = text.parse()?;
    let state = session.state();
    if !state.chain.contains(&input.branch) {
        return Err(format!("{} is not a branch of this session", input.branch));
    }
    let earlier = input.branch.step < key.step || (in_exchange && input.branch == key);
    if !earlier {
        return Err(format!(
            "{} is not an earlier branch than {key}",
            input.branch
        ));
    }
    if !session.root().join(text).is_file() {
        return Err(format!("`{text}` does not exist"));
    }
    let response = session.response_path(input.branch, None);
    let value = super::read_for_gate(&response, "response.json")
        .map_err(|r| format!("{} has no readable response: {r}", input.branch))?;
    let recorded = value
        .get("fields")
        .and_then(|f| f.get(kind))
        .and_then(|p| p.as_str());
    if recorded != Some(input.path.as_str()) {
        return Err(format!(
            "{} did not record `{}` as its `{kind}` field",
            input.branch, input.path
        ));
    }
    Ok(())
}
