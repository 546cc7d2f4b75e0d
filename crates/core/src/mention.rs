//! Who a line names (MEN-1…6). A name in a path, e-mail, URL, link target or inline code is
//! not a recipient, so those places are shielded before any `@` is looked at.

use crate::ids::BotId;
use crate::reading::fold::{is_cjk, is_punct};
use serde::{Deserialize, Serialize};

/// A live, non-archived Bot that may be named; `present` = member of this group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterBot {
    pub id: BotId,
    pub name: String,
    pub present: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mentions {
    /// Named Bots in order of first appearance, no duplicates; may include absent ones.
    pub named: Vec<BotId>,
    pub everyone: bool,
    /// Tokens after `@` that named nobody, as written.
    pub unknown: Vec<String>,
}

impl Mentions {
    /// The line carries no `@` mention of any kind.
    pub fn is_empty(&self) -> bool {
        self.named.is_empty() && !self.everyone && self.unknown.is_empty()
    }
}

enum Target {
    Bot(BotId),
    Everyone,
    Unknown(String),
}

/// One counted `@`: chars `start..end` (a pair's `/` belongs to the second mention).
struct Hit {
    start: usize,
    end: usize,
    target: Target,
}

pub fn parse_mentions(text: &str, roster: &[RosterBot]) -> Mentions {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Mentions::default();
    for hit in scan(&chars, roster) {
        match hit.target {
            Target::Bot(id) if !out.named.contains(&id) => out.named.push(id),
            Target::Everyone => out.everyone = true,
            Target::Unknown(t) if !out.unknown.contains(&t) => out.unknown.push(t),
            _ => {}
        }
    }
    out
}

/// The text without the mentions that named a Bot or everyone, trimmed. Unknown `@tokens`
/// stay: they are words the reader of the rest still has to see.
pub fn strip_mentions(text: &str, roster: &[RosterBot]) -> String {
    let chars: Vec<char> = text.chars().collect();
    let hits = scan(&chars, roster);
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut hits = hits
        .iter()
        .filter(|h| !matches!(h.target, Target::Unknown(_)))
        .peekable();
    while i < chars.len() {
        if let Some(h) = hits.next_if(|h| h.start == i) {
            i = h.end;
            // Don't leave a double space where the name was.
            if out.is_empty() || out.ends_with(char::is_whitespace) {
                while chars.get(i) == Some(&' ') {
                    i += 1;
                }
            }
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out.trim().to_string()
}

fn scan(chars: &[char], roster: &[RosterBot]) -> Vec<Hit> {
    let shield = shielded(chars);
    let mut hits: Vec<Hit> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '@' || shield[i] {
            i += 1;
            continue;
        }
        let mut start = i;
        // `@Beta@Alpha`: an `@` right after a counted mention counts whatever precedes it.
        let follows_hit = hits.last().is_some_and(|h| h.end == i);
        if let Some(&p) = i
            .checked_sub(1)
            .and_then(|j| chars.get(j))
            .filter(|_| !follows_hit)
        {
            if p == '/' {
                // `@A/@B`: the slash counts only right after a counted mention.
                if hits.last().is_some_and(|h| h.end + 1 == i) {
                    start = i - 1;
                } else {
                    i += 1;
                    continue;
                }
            } else if p.is_ascii_alphanumeric() || matches!(p, '_' | '-' | '\\') {
                i += 1;
                continue;
            }
        }
        let from = i + 1;
        if let Some((id, len)) = longest_name(chars, &shield, from, roster) {
            hits.push(Hit {
                start,
                end: from + len,
                target: Target::Bot(id),
            });
            i = from + len;
            continue;
        }
        let end = token_end(chars, &shield, from);
        if end == from {
            i += 1;
            continue;
        }
        let token: String = chars[from..end].iter().collect();
        let target = if token.to_lowercase() == "everyone" {
            Target::Everyone
        } else if let Some(id) = short_name(&token, roster) {
            Target::Bot(id)
        } else {
            Target::Unknown(token)
        };
        hits.push(Hit { start, end, target });
        i = end;
    }
    hits
}

/// Ends a name: text end is checked by the caller; `_` and `-` are part of words.
fn ends_name(c: char) -> bool {
    c.is_whitespace() || c == '@' || is_cjk(c) || (is_punct(c) && c != '_' && c != '-')
}

/// The longest roster name right after `from` that ends at a boundary, as (id, char length).
fn longest_name(
    chars: &[char],
    shield: &[bool],
    from: usize,
    roster: &[RosterBot],
) -> Option<(BotId, usize)> {
    let mut best: Option<(BotId, usize, bool)> = None;
    for bot in roster {
        let name: Vec<char> = bot.name.trim().chars().collect();
        let len = name.len();
        if len == 0 || from + len > chars.len() {
            continue;
        }
        let same = (0..len).all(|k| !shield[from + k] && same_letter(chars[from + k], name[k]));
        let bounded = chars.get(from + len).is_none_or(|&c| ends_name(c));
        // Equal lengths: a present Bot wins over an absent namesake.
        let better = best.is_none_or(|(_, l, p)| len > l || (len == l && bot.present && !p));
        if same && bounded && better {
            best = Some((bot.id, len, bot.present));
        }
    }
    best.map(|(id, len, _)| (id, len))
}

fn same_letter(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// The bare token after `@`. A Latin token also stops where CJK text starts (`@alp看下`).
fn token_end(chars: &[char], shield: &[bool], from: usize) -> usize {
    let latin = chars.get(from).is_some_and(|&c| !is_cjk(c));
    let mut j = from;
    while j < chars.len() {
        let c = chars[j];
        if shield[j] || c == '/' || (ends_name(c) && !is_cjk(c)) || (latin && is_cjk(c)) {
            break;
        }
        j += 1;
    }
    j
}

/// MEN-3: a prefix of exactly one present Bot's name names that Bot.
fn short_name(token: &str, roster: &[RosterBot]) -> Option<BotId> {
    let token = token.to_lowercase();
    let mut found = roster
        .iter()
        .filter(|b| b.present && b.name.trim().to_lowercase().starts_with(&token))
        .map(|b| b.id);
    let first = found.next()?;
    found.all(|id| id == first).then_some(first)
}

/// Chars no `@` in which counts: inline code and fences, URLs, Markdown link targets.
fn shielded(chars: &[char]) -> Vec<bool> {
    let n = chars.len();
    let mut out = vec![false; n];
    let mut i = 0;
    while i < n {
        if chars[i] == '`' {
            let run = run_len(chars, i);
            let end = match closing_run(chars, i + run, run) {
                Some(close) => close + run,
                // A lone backtick is literal text.
                None => i + run,
            };
            if end > i + run {
                out[i..end].fill(true);
            }
            i = end;
        } else if starts_url(chars, i) {
            let mut j = i;
            while j < n && !ends_url(chars[j]) {
                j += 1;
            }
            out[i..j].fill(true);
            i = j;
        } else if chars[i] == ']' && chars.get(i + 1) == Some(&'(') {
            let close = (i + 2..n).find(|&j| chars[j] == ')');
            let end = close
                .map(|c| c + 1)
                .unwrap_or_else(|| (i + 2..n).find(|&j| chars[j].is_whitespace()).unwrap_or(n));
            out[i..end].fill(true);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

fn run_len(chars: &[char], at: usize) -> usize {
    chars[at..].iter().take_while(|&&c| c == '`').count()
}

/// The next run of exactly `run` backticks at or after `from`.
fn closing_run(chars: &[char], from: usize, run: usize) -> Option<usize> {
    let mut k = from;
    while k < chars.len() {
        if chars[k] == '`' {
            let r = run_len(chars, k);
            if r == run {
                return Some(k);
            }
            k += r;
        } else {
            k += 1;
        }
    }
    None
}

fn starts_url(chars: &[char], at: usize) -> bool {
    ["http://", "https://"].iter().any(|scheme| {
        scheme.chars().enumerate().all(|(k, s)| {
            chars
                .get(at + k)
                .is_some_and(|&c| c.to_ascii_lowercase() == s)
        })
    })
}

/// A URL runs to whitespace, CJK text or CJK punctuation (people type 「看https://x，好吗」).
fn ends_url(c: char) -> bool {
    c.is_whitespace() || is_cjk(c) || (is_punct(c) && !c.is_ascii()) || matches!(c, '<' | '>' | '"')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bot(id: i64, name: &str, present: bool) -> RosterBot {
        RosterBot {
            id: BotId(id),
            name: name.into(),
            present,
        }
    }

    fn roster() -> Vec<RosterBot> {
        vec![
            bot(1, "Alpha", true),
            bot(2, "Beta", true),
            bot(3, "A", true),
            bot(4, "B", true),
        ]
    }

    fn named(text: &str, roster: &[RosterBot]) -> Vec<BotId> {
        parse_mentions(text, roster).named
    }

    #[test]
    fn mention_longest_name_wins_with_spaces() {
        let r = vec![bot(1, "Copy", true), bot(2, "Copy Writer", true)];
        assert_eq!(named("@Copy Writer please draft it", &r), vec![BotId(2)]);
        assert_eq!(named("@copy writer，改一下", &r), vec![BotId(2)]);
        assert_eq!(named("@Copy please draft it", &r), vec![BotId(1)]);
        assert_eq!(named("@Copy Writers", &r), vec![BotId(1)]);
        let r = vec![bot(1, "视频导演", true), bot(2, "视频导演助理", true)];
        assert_eq!(named("@视频导演助理看下", &r), vec![BotId(2)]);
        assert_eq!(named("@视频导演，看下", &r), vec![BotId(1)]);
    }

    #[test]
    fn mention_short_name_needs_one_present_match() {
        let r = vec![
            bot(1, "Alpha One", true),
            bot(2, "Alpha Two", true),
            bot(3, "Copy Writer", true),
            bot(4, "Gamma", false),
        ];
        assert_eq!(named("@copy 写一句", &r), vec![BotId(3)]);
        let two = parse_mentions("@alpha look", &r);
        assert!(two.named.is_empty());
        assert_eq!(two.unknown, vec!["alpha".to_string()]);
        // An absent Bot needs its full name (then it is pulled in).
        assert!(named("@gam look", &r).is_empty());
        assert_eq!(named("@Gamma look", &r), vec![BotId(4)]);
    }

    #[test]
    fn mention_in_path_or_email_is_not_a_mention() {
        let r = vec![bot(1, "alpha", true), bot(2, "b", true)];
        assert!(parse_mentions("see docs/@alpha/readme", &r).is_empty());
        assert!(parse_mentions("mail a@b.com", &r).is_empty());
        assert!(parse_mentions("x_@alpha y-@alpha C:\\@alpha 9@alpha", &r).is_empty());
        assert!(parse_mentions("run `git log @alpha` first", &r).is_empty());
        assert!(parse_mentions("```\n@alpha\n```", &r).is_empty());
        assert_eq!(named("(@alpha) and \"@b\"", &r), vec![BotId(1), BotId(2)]);
    }

    #[test]
    fn mention_slash_pair_names_both() {
        let r = roster();
        assert_eq!(named("请@A/@B 看下", &r), vec![BotId(3), BotId(4)]);
        assert_eq!(
            named("@Alpha/@Beta/@A ok", &r),
            vec![BotId(1), BotId(2), BotId(3)]
        );
        assert_eq!(strip_mentions("请@A/@B 看下", &r), "请 看下");
        // A slash after plain text is a path.
        assert!(named("x/@A", &r).is_empty());
    }

    #[test]
    fn mention_after_cjk_counts() {
        let r = roster();
        assert_eq!(named("请@Alpha看下", &r), vec![BotId(1)]);
        assert_eq!(named("@Alpha看下", &r), vec![BotId(1)]);
        assert_eq!(named("好的，@Beta。", &r), vec![BotId(2)]);
        assert_eq!(named("@alp看下", &r), vec![BotId(1)]);
        assert_eq!(named("@Beta@Alpha", &r), vec![BotId(2), BotId(1)]);
    }

    #[test]
    fn mention_unknown_names_nobody() {
        let r = roster();
        let m = parse_mentions("@Zed can you look, @Zed?", &r);
        assert!(m.named.is_empty() && !m.everyone);
        assert_eq!(m.unknown, vec!["Zed".to_string()]);
        assert!(parse_mentions("@ hello @", &r).is_empty());
        assert_eq!(strip_mentions("@Zed hi @Beta", &r), "@Zed hi");
    }

    #[test]
    fn mention_everyone() {
        let r = roster();
        let m = parse_mentions("@Everyone 看下", &r);
        assert!(m.everyone && m.named.is_empty() && m.unknown.is_empty());
        let m = parse_mentions("@everyone，@Alpha first", &r);
        assert!(m.everyone);
        assert_eq!(m.named, vec![BotId(1)]);
        assert_eq!(strip_mentions("@everyone  收到", &r), "收到");
        assert!(!parse_mentions("@everyones", &r).everyone);
    }

    #[test]
    fn mention_in_url_or_link_target_is_not_a_mention() {
        let r = roster();
        assert!(parse_mentions("see https://x.com/@Alpha and http://h/?u=@Beta", &r).is_empty());
        assert!(parse_mentions("[profile](https://x.com/@Alpha)", &r).is_empty());
        assert!(parse_mentions("[me](@Alpha)", &r).is_empty());
        assert_eq!(
            named("看https://x.com/@Alpha，@Beta 看下", &r),
            vec![BotId(2)]
        );
        // Link text is read like any text.
        assert_eq!(named("[@Beta](https://b.example)", &r), vec![BotId(2)]);
    }
}
