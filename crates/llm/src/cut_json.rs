//! A past call's arguments that the model left cut off (`{"command": "awk -F, '{print $1, …`),
//! closed into the object they began, for the history sent back: servers parse a history's
//! arguments again, and a call replayed as `{}` teaches a model to send `{}` (a 1.5B model sent
//! `shell {}` 39 times after one cut-off call). Only text that stopped early is closed: open
//! strings, arrays and objects are ended where the text ends.

use serde_json::{Map, Value};

/// The object `raw` began, closed where it stops; `None` when it does not begin one or cannot
/// be closed into one.
pub(crate) fn closed(raw: &str) -> Option<Map<String, Value>> {
    let text = raw.trim_start();
    if !text.starts_with('{') {
        return None;
    }
    let mut open = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => open.push('}'),
            '[' => open.push(']'),
            '}' | ']' if open.pop() != Some(c) => return None,
            _ => {}
        }
    }
    if open.is_empty() {
        // Whole, so not cut off: malformed some other way, which closing does not mend.
        return None;
    }
    let mut head = text.to_string();
    if in_string {
        if escaped {
            head.pop();
        }
        // A `\u` escape cut inside its four digits is dropped with the rest of it.
        if let Some(at) = head.rfind("\\u")
            && head.len() - at < 6
            && !head[..at].ends_with('\\')
        {
            head.truncate(at);
        }
        head.push('"');
    }
    let closers: String = open.iter().rev().collect();
    let trimmed = head.trim_end().trim_end_matches(',');
    // The text may stop after a key, after its colon, or after a value: try each ending.
    [
        format!("{trimmed}{closers}"),
        format!("{trimmed}:null{closers}"),
        format!("{trimmed}null{closers}"),
    ]
    .iter()
    .find_map(|t| serde_json::from_str::<Map<String, Value>>(t).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn closes(raw: &str) -> Value {
        Value::Object(closed(raw).unwrap_or_else(|| panic!("not closed: {raw}")))
    }

    #[test]
    fn text_cut_off_is_closed_into_the_object_it_began() {
        assert_eq!(
            closes(r#"{"command": "awk -F, '{print $1, $2"#),
            json!({"command": "awk -F, '{print $1, $2"})
        );
        assert_eq!(
            closes(r#"{"path":"a.txt","content":"line\"#),
            json!({"path": "a.txt", "content": "line"})
        );
        assert_eq!(
            closes(r#"{"path":"a.txt","content":"caf\u00"#),
            json!({"path": "a.txt", "content": "caf"})
        );
        assert_eq!(
            closes(r#"{"items": [1, 2, {"a": "b"#),
            json!({"items": [1, 2, {"a": "b"}]})
        );
        assert_eq!(closes(r#"{"path": "a", "#), json!({"path": "a"}));
        assert_eq!(
            closes(r#"{"path": "a", "mode""#),
            json!({"path": "a", "mode": null})
        );
        assert_eq!(
            closes(r#"{"path": "a", "mode": "#),
            json!({"path": "a", "mode": null})
        );
        assert_eq!(closes("{"), json!({}));
    }

    #[test]
    fn what_is_not_a_cut_off_object_is_left_alone() {
        for raw in [
            "",
            "not json",
            r#"["a", "b""#,
            r#"{"a": 1}}"#,
            r#"{"a": 1] "#,
            r#"{"a" 1"#,
            r#"{"a": 1}"#,
        ] {
            assert_eq!(closed(raw), None, "{raw}");
        }
    }
}
