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
    /// Shown hand-over numbers the line lets through (LR-8, UW2).
    pub let_through: Vec<u32>,
    /// Shown hand-over numbers the objections are about (UW3): those go back, even if the
    /// line also let them through (LR-8).
    #[serde(default)]
    pub objected_to: Vec<u32>,
}

/// A hand-over waiting on the user's word, as the reader is shown it (UW1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShownHandOver {
    pub number: u32,
    /// The Bot that made it.
    pub maker: String,
    /// `#02 Poster`.
    pub ticket: String,
    /// Its files, or the start of its words.
    pub what: String,
}

/// Where the user speaks, as the reader needs it for UW2–UW4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpokenIn {
    /// The user's direct with this Bot: moving on to something else lets its hand-overs through.
    Direct(String),
    /// A group: a line to another Bot lets nothing through.
    Group,
}

impl UserReading {
    /// The shown hand-overs the line lets through and does not object to (LR-8).
    pub fn passes(&self) -> Vec<u32> {
        self.let_through
            .iter()
            .copied()
            .filter(|n| !self.objected_to.contains(n))
            .collect()
    }
}

/// How many earlier lines the reader sees besides the answered one.
pub const LINES_BEFORE: usize = 3;

/// The prompt for one user line. `before` is oldest first; only its last three are shown.
pub fn user_prompt(
    line: &str,
    answers: Option<&str>,
    before: &[(String, String)],
    shown: &[ShownHandOver],
    spoken_in: &SpokenIn,
) -> String {
    let mut out = String::from("troupe-reader:user\n");
    out.push_str(
        "You read one line the user wrote to AI Bots. You only describe it; you do not answer it.\n\
         Answer with one JSON object and nothing else:\n\
         {\"control\": \"stop\" | \"go_on\" | \"both\" | \"neither\", \"only_control\": true | false, \
         \"status_question\": true | false, \"objections\": [\"<clause copied from the line>\"], \
         \"let_through\": [<hand-over number>], \"objected_to\": [<hand-over number>]}\n\
         - control: \"stop\" when the line tells the Bots to stop or halt; \"go_on\" when it tells \
         stopped work to carry on; \"both\" when it does both; otherwise \"neither\". Asking whether \
         something has stopped is \"neither\".\n\
         - only_control: true when the line says nothing beyond that stop or go-on.\n\
         - status_question: true when the line asks how the work is going.\n\
         - objections: the clauses that object to work handed over, copied word for word; [] if none.\n\
         - let_through: numbers of the hand-overs listed below that the line lets through: a nod \
         (\"fine\", \"looks good\"), using it, or asking for the next step; [] if none. A question \
         about it, a status question, a stop, \"go on\", a bare \"ok\" or \"let me look\" let \
         nothing through.\n\
         - objected_to: numbers of the hand-overs listed below that the objections are about; [] if \
         none.\n",
    );
    match spoken_in {
        SpokenIn::Direct(bot) => {
            out.push_str(&format!(
                "- The user speaks in their direct conversation with {bot}: moving on to something \
                 else without mentioning {bot}'s hand-overs lets them through.\n\n"
            ));
        }
        SpokenIn::Group => out.push_str(
            "- The user speaks in a group: a line said to another Bot lets nothing through.\n\n",
        ),
    }
    out.push_str("Hand-overs waiting on the user:");
    if shown.is_empty() {
        out.push_str(" none\n");
    } else {
        out.push('\n');
        for h in shown {
            out.push_str(&format!(
                "#{} — {} handed over {}: {}\n",
                h.number,
                h.maker,
                h.ticket,
                h.what.trim()
            ));
        }
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

    // Only numbers the user was shown can name a hand-over.
    let let_through = shown_numbers(obj, "let_through", shown_handovers)?;
    // An objection the line does not hold names nothing either.
    let objected_to = if objections.is_empty() {
        Vec::new()
    } else {
        shown_numbers(obj, "objected_to", shown_handovers)?
    };

    Ok(UserReading {
        control,
        only_control,
        status_question,
        objections,
        let_through,
        objected_to,
    })
}

/// The field's hand-over numbers among those shown, once each, in the answer's order.
fn shown_numbers(
    obj: &serde_json::Map<String, Value>,
    key: &str,
    shown: &[u32],
) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    match obj.get(key) {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for n in items.iter().filter_map(handover_number) {
                if shown.contains(&n) && !out.contains(&n) {
                    out.push(n);
                }
            }
        }
        Some(other) => return Err(format!("\"{key}\" must be a list, not {other}")),
    }
    Ok(out)
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

    /// S-LR-4, LR-8: one both objected to and let through goes back, not through.
    #[test]
    fn reader_contract_objected_and_let_through_is_sent_back() {
        let line = "1 可以, 2 的颜色不对";
        let raw = r#"{"control":"neither","objections":["2 的颜色不对"],
                      "let_through":[1,2],"objected_to":[2, 5]}"#;
        let r = parse_user_reading(raw, line, &[1, 2]).unwrap();
        assert_eq!(r.objected_to, vec![2]);
        assert_eq!(r.passes(), vec![1]);
        // Numbers objected to with no objection the line holds name nothing.
        let raw = r#"{"control":"neither","objections":[],"objected_to":[2]}"#;
        assert!(
            parse_user_reading(raw, line, &[1, 2])
                .unwrap()
                .objected_to
                .is_empty()
        );
        let bad = r#"{"control":"neither","objections":["2 的颜色不对"],"objected_to":"2"}"#;
        assert!(
            parse_user_reading(bad, line, &[1, 2])
                .unwrap_err()
                .contains("objected_to")
        );
    }

    #[test]
    fn prompt_lists_each_shown_hand_over_and_where_the_user_speaks() {
        let shown = [ShownHandOver {
            number: 1,
            maker: "Maker".into(),
            ticket: "#02 Poster".into(),
            what: "02-Poster/poster.png".into(),
        }];
        let p = user_prompt("可以", None, &[], &shown, &SpokenIn::Direct("Maker".into()));
        assert!(
            p.contains("#1 — Maker handed over #02 Poster: 02-Poster/poster.png"),
            "{p}"
        );
        assert!(p.contains("direct conversation with Maker"), "{p}");
        let p = user_prompt("可以", None, &[], &[], &SpokenIn::Group);
        assert!(p.contains("Hand-overs waiting on the user: none"), "{p}");
        assert!(p.contains("another Bot lets nothing through"), "{p}");
    }
}
