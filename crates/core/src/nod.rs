//! Nod to a nod (MEN-7/8): two Bots thanking each other must not wake each other forever.
//! Only a line that is plainly an acknowledgement is decided here; anything longer goes to the
//! Bot-line reading, whose `bare_status` decides.

use crate::ids::BotId;
use crate::mention::{RosterBot, parse_mentions, strip_mentions};
use crate::reading::fold::{fold, is_cjk, is_emoji, is_punct};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NodVerdict {
    /// It carries a question, a file, a path, a URL, code or an unknown name: it wakes normally.
    NotANod,
    /// Only an acknowledgement once the names are removed.
    Bare,
    /// Words the list does not know; the reader decides.
    AskReader,
}

/// Bare acknowledgements. A line made only of these (in any order, with any separators)
/// is a nod; keep the list short, since a nod can silence a wake.
const ACKS: &[&str] = &[
    "ok",
    "okay",
    "got it",
    "thanks",
    "thank you",
    "thx",
    "noted",
    "roger",
    "roger that",
    "sounds good",
    "will do",
    "understood",
    "acknowledged",
    "great",
    "cool",
    "👍",
    "🙏",
    "收到",
    "收到了",
    "已收到",
    "好的",
    "好",
    "好嘞",
    "明白",
    "明白了",
    "了解",
    "了解了",
    "知道了",
    "已对齐",
    "对齐",
    "谢谢",
    "感谢",
    "多谢",
    "没问题",
];

pub fn nod_verdict(text: &str, roster: &[RosterBot]) -> NodVerdict {
    if !parse_mentions(text, roster).unknown.is_empty() {
        return NodVerdict::NotANod;
    }
    let rest = strip_mentions(text, roster);
    if rest.contains(['?', '？', '`']) || has_url(&rest) || has_path_or_file(&rest) {
        return NodVerdict::NotANod;
    }
    if is_bare_ack(&rest) {
        NodVerdict::Bare
    } else {
        NodVerdict::AskReader
    }
}

/// Whether the text, folded and without emoji, is empty or made only of acknowledgements.
pub fn is_bare_ack(text: &str) -> bool {
    let folded = fold(&text.chars().filter(|c| !is_emoji(*c)).collect::<String>());
    let acks: Vec<String> = ACKS
        .iter()
        .map(|a| fold(a))
        .filter(|a| !a.is_empty())
        .collect();
    // reach[i]: the first i bytes are a run of acknowledgements.
    let mut reach = vec![false; folded.len() + 1];
    reach[0] = true;
    for i in 0..folded.len() {
        if !reach[i] || !folded.is_char_boundary(i) {
            continue;
        }
        for a in &acks {
            if folded[i..].starts_with(a.as_str()) {
                reach[i + a.len()] = true;
            }
        }
    }
    reach[folded.len()]
}

fn has_url(s: &str) -> bool {
    let s = s.to_lowercase();
    s.contains("http://") || s.contains("https://") || s.contains("www.")
}

/// `src/main.rs`, `a\b`, `notes.md`, `笔记.md`: a path with a Latin letter, or a name.ext.
fn has_path_or_file(s: &str) -> bool {
    let separator = |c: char| {
        c.is_whitespace() || (is_punct(c) && !matches!(c, '.' | '/' | '\\' | '_' | '-' | '~'))
    };
    s.split(separator).any(|token| {
        let token = token.trim_end_matches('.');
        if token.contains(['/', '\\']) {
            let parts: Vec<&str> = token.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
            let rooted = parts.len() == 1 && token.starts_with(['/', '\\', '~', '.']);
            return (parts.len() >= 2 || rooted) && token.chars().any(|c| c.is_ascii_alphabetic());
        }
        match token.rsplit_once('.') {
            Some((stem, ext)) => {
                let stem_ok = stem
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || is_cjk(c) || matches!(c, '_' | '-'));
                let ext_ok = (1..=8).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && ext.chars().any(|c| c.is_ascii_alphabetic());
                stem_ok && ext_ok
            }
            None => false,
        }
    })
}

/// What the app knows about the two turns when a Bot's nod is about to wake another.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct NodContext {
    /// The Bot whose bare nod woke this turn, if a nod did.
    pub woken_by_nod_from: Option<BotId>,
    /// This turn ran a shell command or MCP tool.
    pub this_turn_ran_command: bool,
    /// The waking turn ran one.
    pub that_turn_ran_command: bool,
}

/// MEN-7: a bare nod back to the Bot whose nod woke us, with no work on either side, wakes
/// nobody.
pub fn suppresses_wake(verdict_is_bare: bool, target: BotId, ctx: &NodContext) -> bool {
    verdict_is_bare
        && ctx.woken_by_nod_from == Some(target)
        && !ctx.this_turn_ran_command
        && !ctx.that_turn_ran_command
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster() -> Vec<RosterBot> {
        ["A", "B"]
            .iter()
            .enumerate()
            .map(|(i, n)| RosterBot {
                id: BotId(i as i64 + 1),
                name: (*n).into(),
                present: true,
            })
            .collect()
    }

    fn nodded_by_b() -> NodContext {
        NodContext {
            woken_by_nod_from: Some(BotId(2)),
            ..NodContext::default()
        }
    }

    #[test]
    fn nod_to_a_nod_wakes_nobody() {
        let r = roster();
        // S-MEN-1: A was woken by B's "@A got it"; A answers with a bare nod.
        assert_eq!(nod_verdict("@A got it", &r), NodVerdict::Bare);
        let v = nod_verdict("@B 收到,已对齐", &r);
        assert_eq!(v, NodVerdict::Bare);
        assert!(suppresses_wake(
            v == NodVerdict::Bare,
            BotId(2),
            &nodded_by_b()
        ));
        assert_eq!(
            nod_verdict("@B Thanks, sounds good! 👍", &r),
            NodVerdict::Bare
        );
        assert_eq!(nod_verdict("@B 好的，谢谢。", &r), NodVerdict::Bare);
        assert_eq!(nod_verdict("@B", &r), NodVerdict::Bare);
        // A nod back to someone else is not the nod-to-a-nod.
        assert!(!suppresses_wake(true, BotId(1), &nodded_by_b()));
    }

    #[test]
    fn nod_with_a_question_or_path_is_more_than_a_nod() {
        let r = roster();
        for text in [
            "@B 收到？",
            "@B ok?",
            "@B ok, see src/main.rs",
            "@B noted notes.md",
            "@B 收到 笔记.md",
            "@B 收到 @Zed",
            "@B thanks https://x.example/y",
            "@B 好的 `cargo test`",
        ] {
            assert_eq!(nod_verdict(text, &r), NodVerdict::NotANod, "{text}");
        }
        // A sentence-ending dot or a version number is not a file.
        assert_eq!(nod_verdict("@B ok. v1.2 noted.", &r), NodVerdict::AskReader);
    }

    #[test]
    fn nod_not_suppressed_when_a_command_ran() {
        let this_ran = NodContext {
            this_turn_ran_command: true,
            ..nodded_by_b()
        };
        let that_ran = NodContext {
            that_turn_ran_command: true,
            ..nodded_by_b()
        };
        assert!(!suppresses_wake(true, BotId(2), &this_ran));
        assert!(!suppresses_wake(true, BotId(2), &that_ran));
        assert!(!suppresses_wake(true, BotId(2), &NodContext::default()));
        assert!(!suppresses_wake(false, BotId(2), &nodded_by_b()));
        assert!(suppresses_wake(true, BotId(2), &nodded_by_b()));
    }

    #[test]
    fn nod_longer_text_asks_the_reader() {
        let r = roster();
        assert_eq!(
            nod_verdict("@B 收到,我今晚把第二集的分镜改完", &r),
            NodVerdict::AskReader
        );
        assert_eq!(
            nod_verdict("@B sounds good, I'll start on the poster", &r),
            NodVerdict::AskReader
        );
        assert_eq!(nod_verdict("@B okay now", &r), NodVerdict::AskReader);
    }
}
