//! The JSON Schemas shipped with Troupe for the manifest, requests and responses, compiled
//! once and shared by the gates.

use std::sync::LazyLock;

use jsonschema::Validator;

use super::refusal::Refusal;

pub const STATE_SCHEMA: &str = include_str!("../../schemas/state.schema.json");
pub const REQUEST_SCHEMA: &str = include_str!("../../schemas/request.schema.json");
pub const RESPONSE_SCHEMA: &str = include_str!("../../schemas/response.schema.json");

fn compile(text: &str, name: &str) -> Validator {
    let value: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("shipped {name} parses: {e}"));
    jsonschema::validator_for(&value).unwrap_or_else(|e| panic!("shipped {name} compiles: {e}"))
}

static STATE: LazyLock<Validator> = LazyLock::new(|| compile(STATE_SCHEMA, "state schema"));
static REQUEST: LazyLock<Validator> = LazyLock::new(|| compile(REQUEST_SCHEMA, "request schema"));
static RESPONSE: LazyLock<Validator> =
    LazyLock::new(|| compile(RESPONSE_SCHEMA, "response schema"));

/// Which shipped schema to check against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shipped {
    State,
    Request,
    Response,
}

/// Checks `value` against a shipped schema; each violation is a refusal naming its field.
pub fn check_shipped(which: Shipped, value: &serde_json::Value) -> Vec<Refusal> {
    let v: &Validator = match which {
        Shipped::State => &STATE,
        Shipped::Request => &REQUEST,
        Shipped::Response => &RESPONSE,
    };
    schema_refusals(v, value, "")
}

/// Checks `value` against `validator`; fields are named under `prefix` (dotted).
pub fn schema_refusals(
    validator: &Validator,
    value: &serde_json::Value,
    prefix: &str,
) -> Vec<Refusal> {
    validator
        .iter_errors(value)
        .map(|e| {
            let pointer = e.instance_path().to_string();
            Refusal::new(dotted(prefix, &pointer), e.to_string())
        })
        .collect()
}

/// `prefix` and a JSON pointer (`/a/0/b`) as a dotted field (`prefix.a.0.b`).
fn dotted(prefix: &str, pointer: &str) -> String {
    let tail: Vec<&str> = pointer.split('/').filter(|s| !s.is_empty()).collect();
    match (prefix.is_empty(), tail.is_empty()) {
        (true, true) => "(document)".to_string(),
        (true, false) => tail.join("."),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{}", tail.join(".")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_schemas_compile_and_name_fields() {
        let bad = serde_json::json!({"schemaVersion": 1, "operatorId": "a", "step": 0, "parallel": 1, "status": "finished"});
        let refusals = check_shipped(Shipped::Response, &bad);
        assert!(refusals.iter().any(|r| r.field == "status"), "{refusals:?}");
        assert!(refusals.iter().any(|r| r.field == "step"), "{refusals:?}");
        assert!(
            check_shipped(Shipped::State, &serde_json::json!({}))
                .iter()
                .any(|r| r.field == "(document)")
        );
        let _ = check_shipped(Shipped::Request, &serde_json::json!({}));
    }
}
