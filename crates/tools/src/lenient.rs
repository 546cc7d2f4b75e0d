//! Numbers a model sent as strings, read as the numbers they are where the tool's schema asks
//! for one: `"quote_message_id": "1"` is 1. Small models do this often; refusing it costs a
//! refusal and another model call while the meaning is not in doubt. Only a whole number in a
//! string is read so, and only where the schema does not take a string there too.

use serde_json::{Number, Value};

/// The arguments with every such string made a number, or `None` when nothing changed (or the
/// text is not a JSON object, which the tool's own parse then refuses).
pub fn numbers_as_schema_says(raw: &str, schema: &Value) -> Option<String> {
    let mut args: Value = serde_json::from_str(raw).ok()?;
    if !args.is_object() || !mend(&mut args, schema) {
        return None;
    }
    Some(args.to_string())
}

/// Mend `v` in place by `schema`; whether anything changed.
fn mend(v: &mut Value, schema: &Value) -> bool {
    match v {
        Value::String(s) => match number_for(s, schema) {
            Some(n) => {
                *v = Value::Number(n);
                true
            }
            None => false,
        },
        Value::Object(fields) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return false;
            };
            let mut changed = false;
            for (k, field) in fields.iter_mut() {
                if let Some(sub) = props.get(k) {
                    changed |= mend(field, sub);
                }
            }
            changed
        }
        Value::Array(items) => {
            let Some(sub) = schema.get("items") else {
                return false;
            };
            let mut changed = false;
            for item in items {
                changed |= mend(item, sub);
            }
            changed
        }
        _ => false,
    }
}

fn number_for(s: &str, schema: &Value) -> Option<Number> {
    if takes(schema, "string") {
        return None;
    }
    let s = s.trim();
    if (takes(schema, "integer") || takes(schema, "number"))
        && let Ok(n) = s.parse::<i64>()
    {
        return Some(n.into());
    }
    if takes(schema, "number") {
        return s
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .and_then(Number::from_f64);
    }
    None
}

/// Whether the schema's `type` (a name or a list of names) includes `name`.
fn takes(schema: &Value, name: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(name)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "quote_message_id": {"type": "integer"},
            "ticket": {"type": ["integer", "string"]},
            "title": {"type": "string"},
            "weight": {"type": "number"},
            "options": {"type": "array", "items": {"type": "integer"}},
            "new": {"type": "object", "properties": {"after": {"type": "integer"}}}
        }})
    }

    #[test]
    fn a_whole_number_in_a_string_becomes_a_number_where_only_a_number_is_taken() {
        let raw = r#"{"quote_message_id":" 12 ","ticket":"3","title":"7","weight":"0.5","options":["1",2],"new":{"after":"-4"}}"#;
        let mended: Value =
            serde_json::from_str(&numbers_as_schema_says(raw, &schema()).unwrap()).unwrap();
        assert_eq!(
            mended,
            json!({"quote_message_id": 12, "ticket": "3", "title": "7", "weight": 0.5,
                   "options": [1, 2], "new": {"after": -4}})
        );
    }

    #[test]
    fn nothing_else_is_read_as_a_number() {
        for raw in [
            r##"{"quote_message_id":"#1"}"##,
            r#"{"quote_message_id":"1.5"}"#,
            r#"{"quote_message_id":""}"#,
            r#"{"weight":"NaN"}"#,
            r#"{"quote_message_id":1}"#,
            r#"{"unknown":"1"}"#,
            r#"["1"]"#,
            r#"{"quote_message_id":"1""#,
        ] {
            assert_eq!(numbers_as_schema_says(raw, &schema()), None, "{raw}");
        }
    }
}
