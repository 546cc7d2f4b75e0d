//! sha256 in the form the manifest records: `sha256:<64 lowercase hex digits>`.

use sha2::{Digest, Sha256};
use std::path::Path;

/// The `sha256:<hex>` digest of `bytes`.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The `sha256:<hex>` digest of a file's bytes.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    Ok(sha256_bytes(&std::fs::read(path)?))
}

/// JSON text with every object's keys in sorted order, so equal values hash equally whatever
/// order their keys were written in.
pub(crate) fn canonical_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_of_empty_input_is_the_known_value() {
        assert_eq!(
            sha256_bytes(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn canonical_json_sorts_keys() {
        let a: serde_json::Value = serde_json::from_str(r#"{"b":1,"a":{"d":2,"c":[3]}}"#).unwrap();
        assert_eq!(canonical_json(&a), r#"{"a":{"c":[3],"d":2},"b":1}"#);
    }
}
