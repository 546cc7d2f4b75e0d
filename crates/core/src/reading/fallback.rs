//! Fixed word lists that read a line when the reader cannot (LR-10). The caller marks such a
//! reading as a fallback and never executes a stop, go-on or complaint found here. The lists
//! stay as they are: widening them to fix a miss would turn guesses into actions.

use super::bot::BotReading;
use super::fold::{fold, narrow};
use super::user::{Control, UserReading};
use crate::nod::is_bare_ack;

const STOP_WORDS: &[&str] = &["停下", "停止", "别搞了", "收手", "stop", "halt"];
const GO_ON_WORDS: &[&str] = &["继续", "go on", "continue", "carry on"];
const STATUS_WORDS: &[&str] = &[
    "怎么样了",
    "进展",
    "进度",
    "how's it going",
    "how is it going",
    "status?",
    "where is",
    "where's",
];
const STILL_GOING_WORDS: &[&str] = &[
    "i'll get back",
    "i will get back",
    "will report back",
    "i'll report back",
    "still running",
    "稍后",
    "随后",
    "正在",
];

/// A user line read by the lists: control, status question; never objections or approvals.
pub fn user_by_words(line: &str) -> UserReading {
    let text = loosen(line);
    let stop = STOP_WORDS.iter().any(|w| has_phrase(&text, w));
    let go_on = GO_ON_WORDS.iter().any(|w| has_phrase(&text, w));
    let control = match (stop, go_on) {
        (true, true) => Control::Both,
        (true, false) => Control::Stop,
        (false, true) => Control::GoOn,
        (false, false) => Control::Neither,
    };
    let mut rest = text.clone();
    for w in STOP_WORDS.iter().chain(GO_ON_WORDS) {
        rest = rest.replace(w, " ");
    }
    UserReading {
        control,
        only_control: control != Control::Neither && fold(&rest).is_empty(),
        status_question: STATUS_WORDS.iter().any(|w| has_phrase(&text, w)),
        objections: Vec::new(),
        let_through: Vec::new(),
        objected_to: Vec::new(),
    }
}

/// A Bot message read by the lists: its first still-going sentence and whether it is a bare
/// acknowledgement. "Only asks OK" has no list: unread, the question reaches the user.
pub fn bot_by_words(message: &str) -> BotReading {
    let still_going = sentences(message)
        .into_iter()
        .find(|s| {
            let s = loosen(s);
            STILL_GOING_WORDS.iter().any(|w| has_phrase(&s, w))
        })
        .map(str::to_string);
    BotReading {
        still_going,
        bare_status: !fold(message).is_empty() && is_bare_ack(message),
        ..BotReading::default()
    }
}

/// Lowercase, narrow width, one kind of apostrophe, single spaces.
fn loosen(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| match narrow(c) {
            '\u{2019}' | '\u{2018}' => '\'',
            c => c,
        })
        .collect();
    s.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// CJK phrases match anywhere; ASCII phrases only as whole words ("stop" is not "stopwatch").
fn has_phrase(text: &str, phrase: &str) -> bool {
    if !phrase.is_ascii() {
        return text.contains(phrase);
    }
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !word(before) && !word(after)
    })
}

/// Sentences end at 。！？!? and newlines always, at '.' only before a space (so `main.rs` stays).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|(_, n)| *n);
        let ends = matches!(c, '。' | '！' | '？' | '!' | '?' | '\n')
            || (c == '.' && next.is_none_or(char::is_whitespace));
        if ends {
            let end = at + c.len_utf8();
            out.push(text[start..end].trim());
            start = end;
        }
    }
    out.push(text[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallback_lists_read_control_and_status_without_objections() {
        let r = user_by_words("停下");
        assert_eq!(r.control, Control::Stop);
        assert!(r.only_control);
        let r = user_by_words("先别搞了，然后继续做第二集");
        assert_eq!(r.control, Control::Both);
        assert!(!r.only_control);
        assert_eq!(user_by_words("Please CONTINUE").control, Control::GoOn);
        assert_eq!(
            user_by_words("start the stopwatch").control,
            Control::Neither
        );
        assert!(user_by_words("How’s it going?").status_question);
        assert!(user_by_words("第二集怎么样了").status_question);
        let r = user_by_words("颜色不对，重做");
        assert!(r.objections.is_empty() && r.let_through.is_empty());
    }

    #[test]
    fn fallback_lists_read_bot_promises_and_nods() {
        let r = bot_by_words("Fixed src/main.rs. The build is still running. Done soon");
        assert_eq!(
            r.still_going.as_deref(),
            Some("The build is still running.")
        );
        assert!(!r.bare_status);
        let r = bot_by_words("方向定了。结论随后给你");
        assert_eq!(r.still_going.as_deref(), Some("结论随后给你"));
        assert!(bot_by_words("收到，谢谢！").bare_status);
        assert!(!bot_by_words("").bare_status);
        assert!(!bot_by_words("ok").asks_ok_only);
    }
}
