//! A tool's input schema as the providers take it: an object schema at the top. A schema that
//! cannot be made one is refused with the reason (the tool is then left out, never sent broken).

use serde_json::{Map, Value, json};

/// Keys a provider's function parameters reject at the top level.
const TOP_LEVEL_REFUSED: &[&str] = &["oneOf", "anyOf", "allOf", "not", "enum", "const"];

/// The schema to send for a tool, or why it cannot be sent.
pub fn for_provider(schema: &Map<String, Value>) -> Result<Value, String> {
    let mut s = schema.clone();
    // Meta keys tell the provider nothing and some reject them.
    s.remove("$schema");
    s.remove("$id");
    match s.get("type") {
        None => {
            if s.keys().any(|k| TOP_LEVEL_REFUSED.contains(&k.as_str())) {
                return Err(format!(
                    "its input schema combines schemas at the top ({}), which providers refuse",
                    refused_keys(&s)
                ));
            }
            s.insert("type".into(), json!("object"));
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(format!(
                "its input schema is of type {other}, and a tool's input must be an object"
            ));
        }
    }
    if s.keys().any(|k| TOP_LEVEL_REFUSED.contains(&k.as_str())) {
        return Err(format!(
            "its input schema combines schemas at the top ({}), which providers refuse",
            refused_keys(&s)
        ));
    }
    match s.get("properties") {
        None => {
            s.insert("properties".into(), json!({}));
        }
        Some(Value::Object(_)) => {}
        Some(_) => return Err("its input schema's properties are not an object".into()),
    }
    if let Some(req) = s.get("required")
        && !req
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string))
    {
        return Err("its input schema's required is not a list of names".into());
    }
    Ok(Value::Object(s))
}

fn refused_keys(s: &Map<String, Value>) -> String {
    s.keys()
        .filter(|k| TOP_LEVEL_REFUSED.contains(&k.as_str()))
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn an_object_schema_passes_without_meta_keys() {
        let s = for_provider(&obj(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        })))
        .unwrap();
        assert!(s.get("$schema").is_none());
        assert_eq!(s["required"], json!(["path"]));
    }

    #[test]
    fn a_schema_without_type_or_properties_is_completed() {
        let s = for_provider(&obj(json!({}))).unwrap();
        assert_eq!(s, json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn schemas_providers_refuse_are_refused_with_a_reason() {
        let e = for_provider(&obj(json!({"type": "array"}))).unwrap_err();
        assert!(e.contains("array"), "{e}");
        let e = for_provider(&obj(json!({"anyOf": [{"type": "object"}]}))).unwrap_err();
        assert!(e.contains("anyOf"), "{e}");
        let e = for_provider(&obj(json!({"type": "object", "properties": 3}))).unwrap_err();
        assert!(e.contains("properties"), "{e}");
        let e = for_provider(&obj(json!({"type": "object", "required": "x"}))).unwrap_err();
        assert!(e.contains("required"), "{e}");
    }
}
