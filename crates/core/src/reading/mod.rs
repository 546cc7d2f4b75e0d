//! The line reader's contract (LR-1…15, JUD-1): the prompts the app sends, and the checks an
//! answer must pass before anything acts on it. A reading only describes a line; it writes
//! no state (LR-15), so everything here is a pure function of the words.

pub mod bot;
pub mod fallback;
pub mod filing;
pub mod fold;
pub mod judgement;
pub mod large;
pub mod user;

use serde_json::{Map, Value};

/// The answer must be exactly one JSON object, bare or inside one ``` / ```json fence.
/// Anything else is no reading (LR-9), so the reason says what was wrong.
pub fn extract_json_object(raw: &str) -> Result<Value, String> {
    let text = raw.trim();
    if text.is_empty() {
        return Err("the answer is empty".into());
    }
    let body = if let Some(rest) = text.strip_prefix("```") {
        unfence(rest)?
    } else if text.contains("```") {
        return Err("the answer has prose around a fenced block".into());
    } else {
        text
    };
    let body = body.trim();
    if !body.starts_with('{') {
        return Err(if body.contains('{') {
            "the answer has prose before its JSON object".into()
        } else {
            "the answer holds no JSON object".into()
        });
    }
    let mut stream = serde_json::Deserializer::from_str(body).into_iter::<Value>();
    let value = match stream.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) if e.is_eof() => return Err(format!("the JSON object is truncated ({e})")),
        Some(Err(e)) => return Err(format!("the JSON object does not parse ({e})")),
        None => return Err("the answer holds no JSON object".into()),
    };
    let rest = body[stream.byte_offset()..].trim();
    if rest.starts_with('{') {
        return Err("the answer holds more than one JSON object".into());
    }
    if !rest.is_empty() {
        return Err("the answer has text after its JSON object".into());
    }
    Ok(value)
}

/// `rest` follows the opening ```; returns what the one fence holds.
fn unfence(rest: &str) -> Result<&str, String> {
    let tag_len = rest
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    let tag = &rest[..tag_len];
    if !tag.is_empty() && !tag.eq_ignore_ascii_case("json") {
        return Err(format!("the fence is marked '{tag}', not json"));
    }
    let inner = &rest[tag_len..];
    let Some(close) = inner.find("```") else {
        return Err("the fenced block is never closed (truncated answer)".into());
    };
    let after = inner[close + 3..].trim();
    if after.contains("```") {
        return Err("the answer has more than one fenced block".into());
    }
    if !after.is_empty() {
        return Err("the answer has prose after its fenced block".into());
    }
    Ok(&inner[..close])
}

/// The object behind an extracted answer.
pub(crate) fn as_object(value: &Value) -> Result<&Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| "the answer is not a JSON object".to_string())
}

/// A boolean key; absent or null reads as false, any other type is refused.
pub(crate) fn opt_bool(obj: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!("\"{key}\" must be true or false, not {other}")),
    }
}

/// A string key; absent, null or blank reads as None.
pub(crate) fn opt_string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
        Some(other) => Err(format!("\"{key}\" must be a string or null, not {other}")),
    }
}

/// Renders earlier lines as `speaker: text`, one a line, for the prompts.
pub(crate) fn push_lines(out: &mut String, lines: &[(String, String)]) {
    if lines.is_empty() {
        out.push_str("(none)\n");
    }
    for (speaker, text) in lines {
        out.push_str(speaker);
        out.push_str(": ");
        out.push_str(text.trim());
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_contract_one_fence_allowed_two_objects_refused() {
        assert_eq!(
            extract_json_object("{\"a\": 1}").unwrap(),
            serde_json::json!({"a": 1})
        );
        assert_eq!(
            extract_json_object("```json\n{\"a\": 1}\n```").unwrap(),
            serde_json::json!({"a": 1})
        );
        assert_eq!(
            extract_json_object("  ```\n{\"a\": 2}\n```\n").unwrap(),
            serde_json::json!({"a": 2})
        );
        let two = extract_json_object("{\"a\": 1} {\"a\": 2}").unwrap_err();
        assert!(two.contains("more than one JSON object"), "{two}");
        let fences =
            extract_json_object("```json\n{\"a\":1}\n```\n```json\n{\"a\":2}\n```").unwrap_err();
        assert!(fences.contains("more than one fenced block"), "{fences}");
        let prose = extract_json_object("Here it is: {\"a\": 1}").unwrap_err();
        assert!(prose.contains("prose before"), "{prose}");
        let around = extract_json_object("Sure!\n```json\n{\"a\": 1}\n```").unwrap_err();
        assert!(around.contains("prose around"), "{around}");
        let after = extract_json_object("{\"a\": 1}\nHope that helps.").unwrap_err();
        assert!(after.contains("text after"), "{after}");
        let cut = extract_json_object("{\"control\": \"st").unwrap_err();
        assert!(cut.contains("truncated"), "{cut}");
        let open = extract_json_object("```json\n{\"a\": 1}").unwrap_err();
        assert!(open.contains("never closed"), "{open}");
        assert!(extract_json_object("```yaml\na: 1\n```").is_err());
        assert!(extract_json_object("").is_err());
    }

    #[test]
    fn prompts_start_with_their_tags() {
        let user = user::user_prompt("停下", None, &[], &[], &user::SpokenIn::Group);
        assert_eq!(user.lines().next(), Some("troupe-reader:user"));
        assert!(user.contains("\"control\""));
        let bot = bot::bot_prompt("On it.", "Please translate this.");
        assert_eq!(bot.lines().next(), Some("troupe-reader:bot"));
        assert!(bot.contains("\"still_going\""));
        let judge = judgement::judgement_prompt("Alpha", "A careful editor.", &[], "anyone?");
        assert_eq!(judge.lines().next(), Some("troupe-judgement"));
        assert!(judge.contains("{\"join\": true}"));
    }
}
