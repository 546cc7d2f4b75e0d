//! What the model reads of a tool's result: text as text, images, audio and resources named
//! with their type and size (their bytes would only fill the context), structured content when
//! there is no text, and a result past the limit clipped with the clipped length said.

use serde_json::Value;

/// The most of a result the model reads, in characters (the shell's output tail's size, so a
/// tool's answer weighs what a command's does).
pub const RESULT_CHARS: usize = troupe_tools::OUTPUT_TAIL_CHARS;

/// A tool result as the model reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    pub is_error: bool,
}

/// Render a `CallToolResult` (its JSON form, so the wire's shape is what is read).
pub fn render(result: &Value, limit: usize) -> Rendered {
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let mut pieces: Vec<String> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| blocks.iter().map(block).collect())
        .unwrap_or_default();
    if pieces.is_empty()
        && let Some(s) = result.get("structuredContent")
    {
        pieces.push(s.to_string());
    }
    if pieces.is_empty() {
        pieces.push("(the tool returned no content)".into());
    }
    Rendered {
        text: clip(&pieces.join("\n"), limit),
        is_error,
    }
}

fn block(b: &Value) -> String {
    let kind = b.get("type").and_then(Value::as_str).unwrap_or("?");
    let mime = b.get("mimeType").and_then(Value::as_str);
    match kind {
        "text" => b
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        "image" | "audio" => {
            let bytes = b
                .get("data")
                .and_then(Value::as_str)
                .map(base64_len)
                .unwrap_or(0);
            format!(
                "[{kind}: {}, {bytes} bytes]",
                mime.unwrap_or("unknown type")
            )
        }
        "resource" => {
            let r = b.get("resource").unwrap_or(&Value::Null);
            let uri = r.get("uri").and_then(Value::as_str).unwrap_or("?");
            let mime = r
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("unknown type");
            match (
                r.get("text").and_then(Value::as_str),
                r.get("blob").and_then(Value::as_str),
            ) {
                (Some(text), _) => format!(
                    "[resource {uri}, {mime}, {} characters]\n{text}",
                    text.chars().count()
                ),
                (None, Some(blob)) => {
                    format!("[resource {uri}, {mime}, {} bytes]", base64_len(blob))
                }
                (None, None) => format!("[resource {uri}, {mime}]"),
            }
        }
        "resource_link" => {
            let uri = b.get("uri").and_then(Value::as_str).unwrap_or("?");
            let size = b
                .get("size")
                .and_then(Value::as_u64)
                .map(|s| format!(", {s} bytes"))
                .unwrap_or_default();
            format!(
                "[resource link {uri}, {}{size}]",
                mime.unwrap_or("unknown type")
            )
        }
        other => format!("[content of type {other}]"),
    }
}

/// The decoded size of base64 text, without decoding it.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end();
    let pad = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4) * 3
        + match data.len() % 4 {
            2 => 1,
            3 => 2,
            _ => 0,
        }
        - pad.min(2)
}

/// The first `limit` characters, with the clip said.
pub fn clip(text: &str, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text.to_string();
    }
    let head: String = text.chars().take(limit).collect();
    format!("{head}\n[result clipped: showing the first {limit} of {total} characters]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_text_and_is_error_is_kept() {
        let r = render(
            &json!({"content": [{"type": "text", "text": "hi"}], "isError": true}),
            100,
        );
        assert_eq!(
            r,
            Rendered {
                text: "hi".into(),
                is_error: true
            }
        );
    }

    #[test]
    fn images_and_resources_are_summarised_with_type_and_size() {
        let r = render(
            &json!({"content": [
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "mimeType": "text/plain", "text": "abc"}},
                {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAA"}}
            ]}),
            1000,
        );
        assert!(r.text.contains("[image: image/png, 5 bytes]"), "{}", r.text);
        assert!(
            r.text
                .contains("[resource file:///a, text/plain, 3 characters]\nabc"),
            "{}",
            r.text
        );
        assert!(
            r.text
                .contains("[resource file:///b, unknown type, 3 bytes]"),
            "{}",
            r.text
        );
    }

    #[test]
    fn structured_content_stands_in_for_missing_text() {
        let r = render(&json!({"content": [], "structuredContent": {"n": 3}}), 100);
        assert_eq!(r.text, r#"{"n":3}"#);
        assert_eq!(
            render(&json!({}), 100).text,
            "(the tool returned no content)"
        );
    }

    #[test]
    fn a_long_result_is_clipped_and_says_so() {
        let r = render(
            &json!({"content": [{"type": "text", "text": "é".repeat(50)}]}),
            10,
        );
        assert!(r.text.starts_with(&"é".repeat(10)));
        assert!(
            r.text
                .ends_with("[result clipped: showing the first 10 of 50 characters]"),
            "{}",
            r.text
        );
    }
}
