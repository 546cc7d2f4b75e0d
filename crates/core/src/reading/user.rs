//! Reading a user line (LR-5…9): control intent, status question, objections, let-through.

use super::fold::{fold, folded_contains};
use super::{as_object, extract_json_object, opt_bool, push_lines};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the line asks of stopped or running work.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    Stop,
    GoOn,
    Both,
    Neither,
}

impl Control {
    pub fn as_str(self) -> &'static str {
        match self {
            Control::Stop => "stop",
            Control::GoOn => "go_on",
            Control::Both => "both",
            Control::Neither => "neither",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "stop" => Ok(Control::Stop),
            "go_on" => Ok(Control::GoOn),
            "both" => Ok(Control::Both),
            "neither" => Ok(Control::Neither),
            other => Err(format!(
                "control '{other}' is not one of stop, go_on, both, neither"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserReading {
    pub control: Control,
    /// The line says nothing beyond its stop / go-on.
    pub only_control: bool,
    pub status_question: bool,
    /// Objecting clauses, each found in the line (LR-7, LR-9).
    pub objections: Vec<String>,
    /// Shown hand-over numbers the line lets through (LR-8).
    pub let_through: Vec<u32>,
}

/// How many earlier lines the reader sees besides the answered one.
pub const LINES_BEFORE: usize = 3;

/// The prompt for one user line. `before` is oldest first; only its last three are shown.
pub fn user_prompt(
    line: &str,
    answers: Option<&str>,
    before: &[(String, String)],
    shown_handovers: &[u32],
) -> String {
    let mut out = String::from("troupe-reader:user\n");
    out.push_str(
        "You read one line the user wrote to AI Bots. You only describe it; you do not answer it.\n\
         Answer with one JSON object and nothing else:\n\
         {\"control\": \"stop\" | \"go_on\" | \"both\" | \"neither\", \"only_control\": true | false, \
         \"status_question\": true | false, \"objections\": [\"<clause copied from the line>\"], \
         \"let_through\": [<hand-over number>]}\n\
         - control: \"stop\" when the line tells the Bots to stop or halt; \"go_on\" when it tells \
         stopped work to carry on; \"both\" when it does both; otherwise \"neither\". Asking whether \
         something has stopped is \"neither\".\n\
         - only_control: true when the line says nothing beyond that stop or go-on.\n\
         - status_question: true when the line asks how the work is going.\n\
         - objections: the clauses that object to work handed over, copied word for word; [] if none.\n\
         - let_through: numbers of the hand-overs listed below that the line approves; [] if none.\n\n",
    );
    out.push_str("Hand-overs waiting on the user: ");
    if shown_handovers.is_empty() {
        out.push_str("none\n");
    } else {
        let numbers: Vec<String> = shown_handovers.iter().map(|n| format!("#{n}")).collect();
        out.push_str(&numbers.join(", "));
        out.push('\n');
    }
    out.push_str("\nLines before it:\n");
    let skip = before.len().saturating_sub(LINES_BEFORE);
    push_lines(&mut out, &before[skip..]);
    if let Some(answers) = answers {
        out.push_str("\nThe line it answers:\n");
        out.push_str(answers.trim());
        out.push('\n');
    }
    out.push_str("\nThe line:\n");
    out.push_str(line.trim());
    out.push('\n');
    out
}

/// Checks a reader answer against the line it read (LR-9). Err means no reading.
pub fn parse_user_reading(
    raw: &str,
    line: &str,
    shown_handovers: &[u32],
) -> Result<UserReading, String> {
    let value = extract_json_object(raw)?;
    let obj = as_object(&value)?;
    let control = match obj.get("control") {
        None | Some(Value::Null) => return Err("the answer has no \"control\"".into()),
        Some(Value::String(s)) => Control::parse(s.trim())?,
        Some(other) => return Err(format!("control {other} is not a string")),
    };
    let only_control = opt_bool(obj, "only_control")?;
    let status_question = opt_bool(obj, "status_question")?;

    let quoted: Vec<String> = match obj.get("objections") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .filter(|s| !fold(s).is_empty())
            .map(str::to_string)
            .collect(),
        Some(other) => return Err(format!("\"objections\" must be a list, not {other}")),
    };
    // A quote the line does not hold is the model's words, not the user's.
    let mut objections: Vec<String> = quoted
        .iter()
        .filter(|q| folded_contains(line, q))
        .cloned()
        .collect();
    if !quoted.is_empty() && objections.is_empty() {
        objections.push(line.trim().to_string());
    }

    let mut let_through = Vec::new();
    match obj.get("let_through") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for n in items.iter().filter_map(handover_number) {
                // Only numbers the user was shown can be approvals.
                if shown_handovers.contains(&n) && !let_through.contains(&n) {
                    let_through.push(n);
                }
            }
        }
        Some(other) => return Err(format!("\"let_through\" must be a list, not {other}")),
    }

    Ok(UserReading {
        control,
        only_control,
        status_question,
        objections,
        let_through,
    })
}

/// 2, "2" or "#2"; anything else names no hand-over.
fn handover_number(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().trim_start_matches('#').parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_contract_quote_not_in_line_is_dropped() {
        let line = "1 可以, 2 的颜色不对，背景也太暗了";
        let raw = r#"{"control":"neither","objections":["2的颜色不对","the colours are wrong"]}"#;
        let r = parse_user_reading(raw, line, &[1, 2]).unwrap();
        assert_eq!(r.objections, vec!["2的颜色不对".to_string()]);
        assert_eq!(r.control, Control::Neither);
        assert!(!r.only_control && !r.status_question);
    }

    #[test]
    fn reader_contract_no_quote_left_means_whole_line() {
        let line = "  这版海报不行，重做  ";
        let raw = r#"{"control":"neither","objections":["the poster is bad"]}"#;
        let r = parse_user_reading(raw, line, &[]).unwrap();
        assert_eq!(r.objections, vec!["这版海报不行，重做".to_string()]);
        // No objections given at all stays empty.
        let r = parse_user_reading(r#"{"control":"neither"}"#, line, &[]).unwrap();
        assert!(r.objections.is_empty());
    }

    #[test]
    fn reader_contract_bad_control_is_refused() {
        let err = parse_user_reading(r#"{"control":"pause"}"#, "停一下", &[]).unwrap_err();
        assert!(err.contains("'pause'"), "{err}");
        assert!(parse_user_reading(r#"{"control":true}"#, "停一下", &[]).is_err());
        let ok =
            parse_user_reading(r#"{"control":"go_on","only_control":true}"#, "继续", &[]).unwrap();
        assert_eq!(ok.control, Control::GoOn);
        assert!(ok.only_control);
    }

    #[test]
    fn reader_contract_missing_control_is_refused() {
        let err = parse_user_reading(r#"{"status_question":true}"#, "怎么样了", &[]).unwrap_err();
        assert!(err.contains("control"), "{err}");
        assert!(parse_user_reading(r#"{"control":null}"#, "x", &[]).is_err());
    }

    #[test]
    fn reader_contract_unshown_handover_numbers_dropped() {
        let line = "1 可以, 2 的颜色不对, 3 也行";
        let raw = r##"```json
{"control":"neither","objections":["2 的颜色不对"],"let_through":[1, 3, "#1", -2]}
```"##;
        let r = parse_user_reading(raw, line, &[1, 2]).unwrap();
        assert_eq!(r.let_through, vec![1]);
        assert_eq!(r.objections, vec!["2 的颜色不对".to_string()]);
    }
}
