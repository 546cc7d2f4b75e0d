//! Property tests for the request and response gates' document checks: before any
//! session-specific check, a gate takes a document (schema check, then reading it into
//! `Request`/`Response`) exactly when the shipped JSON Schema accepts it, as judged by the
//! `jsonschema` crate compiling the schema file on its own.
//!
//! One known gap, kept visible here rather than generated away: JSON Schema calls `1.0` an
//! integer, the typed read does not, so a document writing a count as `1.0` passes the schema
//! and is then refused by the gate (a refusal naming the file, never a crash). Agents write
//! integers; the property allows exactly that difference and no other.

use proptest::prelude::*;
use serde_json::{Value, json};
use troupe_pipeline::gate::{REQUEST_SCHEMA, RESPONSE_SCHEMA, Shipped, check_shipped};
use troupe_pipeline::session::{Request, Response};

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

/// Whether the document writes some number as an integral float (`1.0`, `1e10`).
fn has_integral_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64() && n.as_f64().is_some_and(|f| f.fract() == 0.0),
        Value::Array(a) => a.iter().any(has_integral_float),
        Value::Object(o) => o.values().any(has_integral_float),
        _ => false,
    }
}

/// The gate takes `doc` iff the schema does, but for the integral-float gap above.
fn agrees(gate: bool, schema: bool, doc: &Value) -> Result<(), TestCaseError> {
    prop_assert!(!gate || schema, "gate took what the schema refuses: {doc}");
    prop_assert!(
        gate || !schema || has_integral_float(doc),
        "gate refused what the schema accepts: {doc}"
    );
    Ok(())
}

fn schema_says(schema: &str, v: &Value) -> bool {
    let schema: Value = serde_json::from_str(schema).unwrap();
    jsonschema::validator_for(&schema).unwrap().is_valid(v)
}

/// The gate's verdict on the document alone: no schema refusal and it reads into the type.
fn request_gate_takes(v: &Value) -> bool {
    check_shipped(Shipped::Request, v).is_empty()
        && serde_json::from_value::<Request>(v.clone()).is_ok()
}

fn response_gate_takes(v: &Value) -> bool {
    check_shipped(Shipped::Response, v).is_empty()
        && serde_json::from_value::<Response>(v.clone()).is_ok()
}

/// Values that sit on the schemas' edges: integers at 0/1 and past u32, integral
/// floats, strings matching or missing the patterns, nulls, arrays, objects.
fn edge_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![0i64, 1, 2, -1, 4_294_967_295, 4_294_967_296, i64::MAX])
            .prop_map(|n| json!(n)),
        prop::sample::select(vec![1.0f64, 2.0, 1.5, -0.0, 1e10]).prop_map(|f| json!(f)),
        prop::sample::select(vec![
            "",
            "a",
            "done",
            "blocked",
            "waiting",
            "STOP_1",
            "stop",
            "x.y-z",
            "-x",
            "step-1/parallel-1/out.md",
            "step-0/parallel-1/x",
            "step-1/parallel-1",
            "0123456789abcdef0123456789abcdef01234567",
            "G123",
        ])
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(2, 6, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "step", "parallel", "code", "note", "exchange", "kind", "branch", "stop", "k"
                ]),
                inner,
                0..3,
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(String, Value),
    Remove(String),
}

fn mutations(fields: &'static [&'static str]) -> impl Strategy<Value = Vec<Mutation>> {
    let field = prop::sample::select(fields.to_vec()).prop_map(str::to_string);
    prop::collection::vec(
        prop_oneof![
            3 => (field.clone(), edge_value()).prop_map(|(f, v)| Mutation::Set(f, v)),
            1 => field.prop_map(Mutation::Remove),
        ],
        0..3,
    )
}

fn apply(mut doc: Value, muts: &[Mutation]) -> Value {
    let obj = doc.as_object_mut().unwrap();
    for m in muts {
        match m {
            Mutation::Set(k, v) => {
                obj.insert(k.clone(), v.clone());
            }
            Mutation::Remove(k) => {
                obj.remove(k);
            }
        }
    }
    doc
}

const REQUEST_FIELDS: &[&str] = &[
    "schemaVersion",
    "sessionId",
    "operatorId",
    "step",
    "parallel",
    "exchange",
    "requirements",
    "inputs",
    "resume",
    "cause",
    "head",
    "extra",
];
const RESPONSE_FIELDS: &[&str] = &[
    "schemaVersion",
    "operatorId",
    "step",
    "parallel",
    "exchange",
    "status",
    "stop",
    "awaiting",
    "fallbacks",
    "fields",
    "writes",
    "commits",
    "next",
    "reason",
    "extra",
];

proptest! {
    #![proptest_config(cases())]

    /// Property: the request gate takes a document exactly when the request schema accepts it
    /// (counts past u32 are refused by the schema itself, naming the field).
    #[test]
    fn request_gate_accepts_exactly_what_the_schema_accepts(muts in mutations(REQUEST_FIELDS)) {
        let base = json!({
            "schemaVersion": 1, "sessionId": "s1", "operatorId": "op", "step": 2, "parallel": 1,
            "requirements": {}, "inputs": {"plan": "step-1/parallel-1/plan.md"}, "resume": null,
        });
        let doc = apply(base, &muts);
        agrees(request_gate_takes(&doc), schema_says(REQUEST_SCHEMA, &doc), &doc)?;
    }

    /// Property: the response gate takes a document exactly when the response schema accepts it.
    #[test]
    fn response_gate_accepts_exactly_what_the_schema_accepts(muts in mutations(RESPONSE_FIELDS)) {
        let base = json!({
            "schemaVersion": 1, "operatorId": "op", "step": 1, "parallel": 1, "status": "done",
            "fields": {"plan": "plan.md"}, "fallbacks": [{"code": "NO_TESTS"}],
        });
        let doc = apply(base, &muts);
        agrees(response_gate_takes(&doc), schema_says(RESPONSE_SCHEMA, &doc), &doc)?;
    }
}
