//! Property tests for the script format parser (`Script::from_json_str`):
//! every document either parses or is refused with a message that names the
//! place — the step and field, or the JSON line — so a person can fix it.

use proptest::prelude::*;
use serde_json::{Value, json};
use troupe_llm::Script;

fn cases() -> ProptestConfig {
    // with_cases respects nothing by itself; PROPTEST_CASES overrides the default.
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(n)
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (0u64..5).prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "[a-z ]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,5}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn valid_step() -> impl Strategy<Value = Value> {
    ("[a-z é]{0,12}", 1u64..4, prop::option::of("[a-z_]{1,8}")).prop_map(|(text, chunks, tool)| {
        let mut step = json!({"text": text, "chunks": chunks});
        if let Some(name) = tool {
            step["tool_calls"] = json!([{"name": name, "arguments": "{\"a\":1}"}]);
        }
        step
    })
}

const STEP_FIELDS: &[&str] = &["text", "tool_calls", "chunks", "chunk_delay_ms", "delay_ms"];

proptest! {
    #![proptest_config(cases())]

    /// Property: a script built only from valid steps always parses, keeps
    /// every step in order with its text, chunk count and tool call names.
    #[test]
    fn valid_scripts_parse_and_keep_their_steps(steps in prop::collection::vec(valid_step(), 1..6)) {
        let doc = json!({"name": "s", "steps": steps}).to_string();
        let script = Script::from_json_str(&doc).expect("valid script parses");
        prop_assert_eq!(script.steps.len(), steps.len());
        for (got, want) in script.steps.iter().zip(&steps) {
            prop_assert_eq!(&got.text, want["text"].as_str().unwrap());
            prop_assert_eq!(u64::from(got.chunks), want["chunks"].as_u64().unwrap());
            let names: Vec<&str> = got.tool_calls.iter().map(|c| c.name.as_str()).collect();
            let want_names: Vec<&str> = want["tool_calls"].as_array().map(|a| {
                a.iter().map(|c| c["name"].as_str().unwrap()).collect()
            }).unwrap_or_default();
            prop_assert_eq!(names, want_names);
        }
    }

    /// Property: replacing one field of step `i` with any JSON value either
    /// still parses, or the error names both `step i` and that field.
    #[test]
    fn a_bad_field_is_named_with_its_step(
        steps in prop::collection::vec(valid_step(), 1..5),
        pick in any::<prop::sample::Index>(),
        field in prop::sample::select(STEP_FIELDS),
        value in json_value(),
    ) {
        let mut steps = steps;
        let i = pick.index(steps.len());
        steps[i][field] = value;
        let doc = json!({"steps": steps}).to_string();
        if let Err(e) = Script::from_json_str(&doc) {
            let msg = e.to_string();
            prop_assert!(msg.contains(&format!("step {i}")), "{msg}");
            prop_assert!(msg.contains(field), "{msg}");
        }
    }

    /// Property: an unknown key in a step is refused, naming the step and the key.
    #[test]
    fn an_unknown_step_key_is_named(
        steps in prop::collection::vec(valid_step(), 1..5),
        pick in any::<prop::sample::Index>(),
        key in "[a-z]{1,8}".prop_filter("unknown", |k| !STEP_FIELDS.contains(&k.as_str()) && k != "error"),
    ) {
        let mut steps = steps;
        let i = pick.index(steps.len());
        steps[i][key.as_str()] = json!(1);
        let msg = Script::from_json_str(&json!({"steps": steps}).to_string())
            .expect_err("unknown key refused")
            .to_string();
        prop_assert!(msg.contains(&format!("step {i}")) && msg.contains(&key), "{msg}");
    }

    /// Property: a document cut short anywhere is refused as invalid JSON with
    /// the line and column where reading stopped.
    #[test]
    fn truncated_json_names_the_line(
        steps in prop::collection::vec(valid_step(), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let doc = serde_json::to_string_pretty(&json!({"steps": steps})).unwrap();
        let bounds: Vec<usize> = doc.char_indices().map(|(i, _)| i).collect();
        let short = &doc[..bounds[cut.index(bounds.len())]];
        let msg = Script::from_json_str(short).expect_err("truncated refused").to_string();
        prop_assert!(msg.contains("invalid JSON") && msg.contains("line"), "{msg}");
    }
}
