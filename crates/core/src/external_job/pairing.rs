//! Which tools pair (`submit_<x>` with `check_<x>`, from any tool source, an MCP server's
//! `<server>__` prefix included), what makes two submits the same (EJ2), which part a prompt
//! names (EJ3), and how the poller asks a check tool about one job.

use regex::Regex;
use serde_json::{Map, Value};
use std::sync::LazyLock;

use super::RESUBMIT_REASON;
use super::answer::SubmitAnswer;

/// A tool that belongs to a submit/check pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Paired {
    /// `submit_<x>`; `check` is its partner's name.
    Submit { check: String },
    /// `check_<x>`; `submit` is its partner's name.
    Check { submit: String },
}

/// The pair `name` belongs to: its last `__`-separated part starts `submit_` or `check_` with
/// something after it.
pub fn pair(name: &str) -> Option<Paired> {
    let (prefix, base) = match name.rfind("__") {
        Some(at) => name.split_at(at + 2),
        None => ("", name),
    };
    if let Some(x) = base.strip_prefix("submit_").filter(|x| !x.is_empty()) {
        return Some(Paired::Submit {
            check: format!("{prefix}check_{x}"),
        });
    }
    base.strip_prefix("check_")
        .filter(|x| !x.is_empty())
        .map(|x| Paired::Check {
            submit: format!("{prefix}submit_{x}"),
        })
}

/// The arguments without `resubmit_reason` (EJ3: never sent to the server), and the reason.
pub fn payload_without_reason(args: &Value) -> (Value, Option<String>) {
    let mut args = args.clone();
    let reason = match &mut args {
        Value::Object(m) => m
            .remove(RESUBMIT_REASON)
            .and_then(|v| v.as_str().map(|s| s.trim().to_string()))
            .filter(|s| !s.is_empty()),
        _ => None,
    };
    (args, reason)
}

/// One text for equal arguments whatever their key order (EJ2's "same arguments").
pub fn canonical_arguments(args: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sorted(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(args).to_string()
}

static PART: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\b(?:part|shot|scene|clip|segment|chapter|panel)\s*#?\s*|#|第\s*)0*(\d{1,4})(?:[^0-9A-Za-z]|$)")
        .expect("valid regex")
});

/// EJ3: the distinct part numbers the arguments' text names ("shot 3", "part #03", "第3").
pub fn part_numbers_named(args: &Value) -> Vec<i64> {
    let mut out: Vec<i64> = Vec::new();
    let mut texts = Vec::new();
    collect_text(args, &mut texts);
    for t in texts {
        for c in PART.captures_iter(t) {
            if let Ok(n) = c[1].parse::<i64>()
                && !out.contains(&n)
            {
                out.push(n);
            }
        }
    }
    out
}

fn collect_text<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| collect_text(x, out)),
        Value::Object(m) => m.values().for_each(|x| collect_text(x, out)),
        _ => {}
    }
}

/// Every string or number value of a check's arguments: what may name a registered job.
pub fn job_ids_named(args: &Value) -> Vec<String> {
    let mut texts = Vec::new();
    collect_text(args, &mut texts);
    let mut out: Vec<String> = texts.into_iter().map(|s| s.trim().to_string()).collect();
    if let Value::Object(m) = args {
        out.extend(m.values().filter_map(|v| v.as_i64()).map(|n| n.to_string()));
    }
    out
}

/// The arguments the poller sends `check_<x>` about one job: the id under the parameter the
/// check's schema names — the submit answer's key when the schema has it, else its only
/// required parameter, else a usual id name — or under the answer's key when the schema says
/// nothing.
pub fn check_arguments(schema: &Value, submitted: &SubmitAnswer) -> Value {
    let props: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let key = if props.contains(&submitted.key.as_str()) {
        submitted.key.clone()
    } else if let [only] = required.as_slice() {
        only.to_string()
    } else {
        ["request_id", "job_id", "task_id", "id"]
            .iter()
            .find(|k| props.contains(k))
            .map(|k| k.to_string())
            .unwrap_or_else(|| submitted.key.clone())
    };
    let mut m = Map::new();
    m.insert(key, Value::String(submitted.remote_id.clone()));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn submit_and_check_pair_by_name_with_or_without_a_server_prefix() {
        assert_eq!(
            pair("submit_video"),
            Some(Paired::Submit {
                check: "check_video".into()
            })
        );
        assert_eq!(
            pair("media__check_render"),
            Some(Paired::Check {
                submit: "media__submit_render".into()
            })
        );
        assert_eq!(pair("submit_"), None);
        assert_eq!(pair("resubmit_video"), None);
        assert_eq!(pair("read_file"), None);
        assert_eq!(
            pair("west__lake__submit_x").unwrap(),
            Paired::Submit {
                check: "west__lake__check_x".into()
            }
        );
    }

    #[test]
    fn the_reason_is_taken_out_of_what_is_sent() {
        let (payload, reason) = payload_without_reason(
            &json!({"prompt": "p", "resubmit_reason": " first was blurry "}),
        );
        assert_eq!(payload, json!({"prompt": "p"}));
        assert_eq!(reason.as_deref(), Some("first was blurry"));
        let (_, none) = payload_without_reason(&json!({"prompt": "p", "resubmit_reason": ""}));
        assert_eq!(none, None);
    }

    #[test]
    fn key_order_does_not_make_arguments_different() {
        assert_eq!(
            canonical_arguments(&json!({"b": 1, "a": {"y": 2, "x": [3, {"k": 1, "j": 2}]}})),
            canonical_arguments(&json!({"a": {"x": [3, {"j": 2, "k": 1}], "y": 2}, "b": 1}))
        );
        assert_ne!(
            canonical_arguments(&json!({"prompt": "a"})),
            canonical_arguments(&json!({"prompt": "b"}))
        );
    }

    #[test]
    fn part_numbers_are_read_from_the_prompt() {
        assert_eq!(
            part_numbers_named(&json!({"prompt": "Shot 3: the hero walks in"})),
            vec![3]
        );
        assert_eq!(
            part_numbers_named(&json!({"prompt": "part #03 again, like part 3"})),
            vec![3]
        );
        assert_eq!(
            part_numbers_named(&json!({"prompt": "shots: shot 2 and shot 4"})),
            vec![2, 4]
        );
        assert_eq!(part_numbers_named(&json!({"prompt": "第5个镜头"})), vec![5]);
        assert!(part_numbers_named(&json!({"prompt": "a sunset, 16:9, 8 seconds"})).is_empty());
    }

    #[test]
    fn the_check_is_asked_under_the_parameter_its_schema_names() {
        let submitted = SubmitAnswer {
            remote_id: "abc".into(),
            key: "request_id".into(),
        };
        let with_key = json!({"properties": {"request_id": {"type": "string"}}});
        assert_eq!(
            check_arguments(&with_key, &submitted),
            json!({"request_id": "abc"})
        );
        let only = json!({"properties": {"job": {}, "verbose": {}}, "required": ["job"]});
        assert_eq!(check_arguments(&only, &submitted), json!({"job": "abc"}));
        let usual = json!({"properties": {"id": {}, "verbose": {}}});
        assert_eq!(check_arguments(&usual, &submitted), json!({"id": "abc"}));
        assert_eq!(
            check_arguments(&json!({}), &submitted),
            json!({"request_id": "abc"})
        );
    }

    #[test]
    fn a_check_names_jobs_by_its_values() {
        assert_eq!(
            job_ids_named(&json!({"request_id": "abc", "n": 7})),
            vec!["abc".to_string(), "7".to_string()]
        );
    }
}
