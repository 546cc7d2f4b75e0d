//! Participation judgement (JUD-1): in a group with no lead, each present Bot decides whether
//! to join an unaddressed user line. A failed judgement is simply no reply.

use super::{as_object, extract_json_object, push_lines};
use serde_json::Value;

/// How many recent lines a judgement sees.
pub const JUDGEMENT_LINES: usize = 6;

/// The prompt for one Bot's judgement. `last_lines` is oldest first; only the last six show.
pub fn judgement_prompt(
    bot_name: &str,
    persona: &str,
    last_lines: &[(String, String)],
    line: &str,
) -> String {
    let mut out = String::from("troupe-judgement\n");
    out.push_str(&format!(
        "You are {}, an AI Bot in a group.",
        bot_name.trim()
    ));
    if !persona.trim().is_empty() {
        out.push(' ');
        out.push_str(persona.trim());
    }
    out.push_str(
        "\nThe group has no lead and the user's latest line names nobody. Decide whether you \
         should take part: join when the line is for you or your part of the work clearly helps; \
         otherwise sit out and leave it to the others.\n\
         Answer with one JSON object and nothing else: {\"join\": true} or {\"join\": false}\n\n\
         Recent lines:\n",
    );
    let skip = last_lines.len().saturating_sub(JUDGEMENT_LINES);
    push_lines(&mut out, &last_lines[skip..]);
    out.push_str("\nThe user's line:\n");
    out.push_str(line.trim());
    out.push('\n');
    out
}

/// `{"join": bool}`; anything else is a failed judgement.
pub fn parse_judgement(raw: &str) -> Result<bool, String> {
    let value = extract_json_object(raw)?;
    match as_object(&value)?.get("join") {
        Some(Value::Bool(join)) => Ok(*join),
        None => Err("the answer has no \"join\"".into()),
        Some(other) => Err(format!("\"join\" must be true or false, not {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judgement_junk_is_an_error() {
        assert!(parse_judgement(r#"{"join": true}"#).unwrap());
        assert!(!parse_judgement("```json\n{\"join\": false}\n```").unwrap());
        assert!(parse_judgement("I think I should join.").is_err());
        assert!(parse_judgement(r#"{"join": "yes"}"#).is_err());
        assert!(parse_judgement(r#"{"skip": true}"#).is_err());
        assert!(parse_judgement(r#"{"join": tru"#).is_err());
    }

    #[test]
    fn judgement_prompt_shows_the_last_six_lines() {
        let lines: Vec<(String, String)> = (1..=8)
            .map(|i| ("user".to_string(), format!("line {i}")))
            .collect();
        let p = judgement_prompt("Alpha", "", &lines, "anyone?");
        assert!(!p.contains("line 2\n") && p.contains("line 3\n") && p.contains("line 8\n"));
        assert!(p.contains("You are Alpha"));
    }
}
