//! Reading a Bot line (LR-9): promises, run claims, bare status, OK-only questions. Used by
//! the closing check and the ending contract, which must not mistake quoted words for a promise.

use super::fallback::bot_by_words;
use super::fold::{fold, folded_contains};
use super::{as_object, extract_json_object, opt_bool, opt_string};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotReading {
    /// It translates, restates, rewrites or summarises what it answers.
    pub restates: bool,
    /// The Bot's own sentence saying work goes on after this message.
    pub still_going: Option<String>,
    /// It claims a run, test or check passed.
    pub claims_run: bool,
    /// It only says there is nothing to do or no reply needed.
    pub nothing_to_do: bool,
    /// Only an acknowledgement, done-claim, wait or "let me look".
    pub bare_status: bool,
    /// Its question to the user only asks for OK to go on.
    pub asks_ok_only: bool,
}

/// A still-going sentence this long (folded) found in the answered text is a repeat, not a
/// promise; shorter shared phrases such as 「结论随后」 are ordinary words (LR-9).
pub const RESTATED_MIN_CHARS: usize = 20;

/// The prompt for one Bot message; `answered` is what its segment answers.
pub fn bot_prompt(message: &str, answered: &str) -> String {
    let mut out = String::from("troupe-reader:bot\n");
    out.push_str(
        "You read one message an AI Bot wrote. You only describe it; you do not answer it.\n\
         Answer with one JSON object and nothing else:\n\
         {\"restates\": true | false, \"still_going\": \"<sentence copied from the message>\" | null, \
         \"claims_run\": true | false, \"nothing_to_do\": true | false, \"bare_status\": true | false, \
         \"asks_ok_only\": true | false}\n\
         - restates: the message translates, restates, rewrites, polishes or summarises what it answers.\n\
         - still_going: the Bot's own sentence saying its work continues or it will report back later, \
         copied word for word; null if none. Words it only repeats from what it answers do not count.\n\
         - claims_run: it says a run, test or check passed.\n\
         - nothing_to_do: it only says there is nothing to do or no reply is needed.\n\
         - bare_status: it is only an acknowledgement, a done-claim, a wait or \"let me look\".\n\
         - asks_ok_only: its question to the user only asks for OK to go on, not for something only \
         the user can give or a choice that is the user's.\n\n",
    );
    out.push_str("What it answers:\n");
    out.push_str(answered.trim());
    out.push_str("\n\nThe message:\n");
    out.push_str(message.trim());
    out.push('\n');
    out
}

/// Checks a reader answer against the message (LR-9). Err means no reading.
pub fn parse_bot_reading(raw: &str, message: &str, answered: &str) -> Result<BotReading, String> {
    let value = extract_json_object(raw)?;
    let obj = as_object(&value)?;
    let quoted = opt_string(obj, "still_going")?;
    // A misquoted promise falls back to what the word lists find, never to the model's words.
    let candidate = quoted.and_then(|q| {
        if folded_contains(message, &q) {
            Some(q)
        } else {
            bot_by_words(message).still_going
        }
    });
    let still_going = candidate.filter(|s| !restated(s, answered));
    Ok(BotReading {
        restates: opt_bool(obj, "restates")?,
        still_going,
        claims_run: opt_bool(obj, "claims_run")?,
        nothing_to_do: opt_bool(obj, "nothing_to_do")?,
        bare_status: opt_bool(obj, "bare_status")?,
        asks_ok_only: opt_bool(obj, "asks_ok_only")?,
    })
}

/// The sentence came from what the Bot answers (e.g. an echoed paragraph it translates).
fn restated(sentence: &str, answered: &str) -> bool {
    fold(sentence).chars().count() >= RESTATED_MIN_CHARS && folded_contains(answered, sentence)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASTED: &str = "The community-site search is still running. Once it's back, \
                          I'll compare the two sources and send the summary.";

    #[test]
    fn reader_contract_restated_still_going_is_no_promise() {
        let answered = format!("请把这段翻译成中文：\n{PASTED}");
        let message =
            format!("{PASTED}\n\n社区网站的搜索仍在运行。结果出来后，我会比较两个来源并发送摘要。");
        let raw =
            r#"{"restates": true, "still_going": "The community-site search is still running."}"#;
        let r = parse_bot_reading(raw, &message, &answered).unwrap();
        assert!(r.restates);
        assert_eq!(r.still_going, None);
        // The same sentence is the Bot's own promise when the request never held it.
        let r = parse_bot_reading(raw, &message, "Please check the two sources.").unwrap();
        assert_eq!(
            r.still_going.as_deref(),
            Some("The community-site search is still running.")
        );
    }

    #[test]
    fn reader_contract_short_shared_phrase_stays_a_promise() {
        let answered = "先给个方向，结论随后";
        let message = "方向是 A。结论随后";
        let raw = r#"{"still_going": "结论随后"}"#;
        let r = parse_bot_reading(raw, message, answered).unwrap();
        assert_eq!(r.still_going.as_deref(), Some("结论随后"));
        assert!(!r.bare_status && !r.claims_run && !r.asks_ok_only);
    }

    #[test]
    fn reader_contract_misquoted_promise_falls_back_to_the_word_lists() {
        let message = "Tests pass. The deploy is still running, I'll report back.";
        let raw = r#"{"still_going": "I will report back soon", "claims_run": true}"#;
        let r = parse_bot_reading(raw, message, "deploy it").unwrap();
        assert_eq!(
            r.still_going.as_deref(),
            Some("The deploy is still running, I'll report back.")
        );
        assert!(r.claims_run);
        let r = parse_bot_reading(r#"{"still_going": "later"}"#, "Done.", "x").unwrap();
        assert_eq!(r.still_going, None);
        assert!(parse_bot_reading("[]", "Done.", "x").is_err());
        assert!(parse_bot_reading(r#"{"bare_status": "yes"}"#, "Done.", "x").is_err());
    }
}
