//! What a stop line's words and place name (§15.2, CL-S1..S5). Fixed rules only supply the
//! scope; whether the line is a stop at all is the reader's call (ADR 0070).

use super::scope::HoldScope;
use crate::reading::fold::{is_cjk, narrow};
use crate::{BotId, SessionId};

/// Where the line was said.
#[derive(Copy, Clone, Debug)]
pub struct Place<'a> {
    pub session_id: SessionId,
    /// A person↔Bot direct's Bot.
    pub direct_bot: Option<BotId>,
    /// Group members and their names.
    pub members: &'a [(BotId, &'a str)],
    /// `@`-mentions, already resolved.
    pub mentioned: &'a [BotId],
    /// The Bot the line replies to, or the only Bot that spoke to the person in the last
    /// 10 minutes.
    pub answered: Option<BotId>,
}

/// Words naming everything (CL-S5).
const ALL: &[&str] = &[
    "all bots",
    "all the bots",
    "every bot",
    "all of it",
    "everything",
    "所有bot",
    "所有 bot",
    "所有的bot",
    "所有的 bot",
    "全都",
    "全部",
];
/// Words that keep a stop to where it was said (CL-S5: the narrower scope wins).
const NARROW: &[&str] = &[
    "in the group",
    "in the direct",
    "this job",
    "群里",
    "这个群",
    "私聊里",
    "这个任务",
    "这个活",
];
const YOU: &[&str] = &["you", "your", "yours", "yourself", "你", "您"];
/// "you" meaning several: in a group that is the group, not the Bot answered.
const YOU_PLURAL: &[&str] = &[
    "you all",
    "all of you",
    "you guys",
    "y'all",
    "both of you",
    "each of you",
    "yourselves",
    "你们",
];

/// The scopes the stop names, narrowest reading first; never empty.
pub fn scope_from_words(text: &str, place: &Place) -> Vec<HoldScope> {
    let t = loosen(text);
    let named = named_bots(&t, place);
    let plural = YOU_PLURAL.iter().any(|w| !find(&t, w).is_empty());
    let you = plural || YOU.iter().any(|w| !find(&t, w).is_empty());
    let all = ALL.iter().any(|w| !find(&t, w).is_empty());
    let narrow = you || !named.is_empty() || NARROW.iter().any(|w| !find(&t, w).is_empty());
    if all && !narrow {
        return vec![HoldScope::Everything];
    }
    let bots = |ids: Vec<BotId>| ids.into_iter().map(|bot_id| HoldScope::Bot { bot_id });
    // CL-S1: a direct stops the Bot on the other side (its handed-on work comes by cascade),
    // and any other Bot the line names.
    if let Some(b) = place.direct_bot {
        let mut ids = vec![b];
        ids.extend(named.into_iter().filter(|n| *n != b));
        return bots(ids).collect();
    }
    // CL-S4: each Bot named; a "you" beside a name is that Bot.
    if !named.is_empty() {
        return bots(named).collect();
    }
    // CL-S3: singular "you" is the Bot answered (OQ-8: that Bot only, not the group).
    if you
        && !plural
        && let Some(b) = place.answered
    {
        return vec![HoldScope::Bot { bot_id: b }];
    }
    // CL-S2: nobody named, the group.
    vec![HoldScope::Session {
        session_id: place.session_id,
    }]
}

/// Mentioned Bots, then members named bare, each once. A bare name counts only when followed
/// by a comma, "you" or "too" (CL-S4): "tell Ada the plan" names nobody.
fn named_bots(t: &[char], place: &Place) -> Vec<BotId> {
    let mut out: Vec<BotId> = Vec::new();
    for id in place.mentioned {
        if !out.contains(id) {
            out.push(*id);
        }
    }
    // (start, end, bot) of every bounded name; one inside a longer name is that name.
    let mut hits: Vec<(usize, usize, BotId)> = Vec::new();
    for (id, name) in place.members {
        let name = loosen(name.trim());
        let name: String = name.iter().collect();
        if name.is_empty() {
            continue;
        }
        for start in find(t, &name) {
            hits.push((start, start + name.chars().count(), *id));
        }
    }
    let inside = |a: &(usize, usize, BotId)| {
        hits.iter()
            .any(|b| b.0 <= a.0 && a.1 <= b.1 && (b.1 - b.0) > (a.1 - a.0))
    };
    let mut kept: Vec<_> = hits.iter().filter(|h| !inside(h)).copied().collect();
    kept.sort_by_key(|h| h.0);
    for (_, end, id) in kept {
        if addressed_after(t, end) && !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

fn addressed_after(t: &[char], end: usize) -> bool {
    let mut i = end;
    while t.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    match t.get(i) {
        Some(',' | '、') => true,
        Some('你' | '您') => true,
        Some(_) => ["you", "your", "too"].iter().any(|w| starts_word(t, i, w)),
        None => false,
    }
}

/// Lowercase, full-width narrowed (so `，` is `,`), curly apostrophes straight.
fn loosen(s: &str) -> Vec<char> {
    s.chars()
        .map(narrow)
        .map(|c| {
            if matches!(c, '\u{2018}' | '\u{2019}') {
                '\''
            } else {
                c
            }
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Letters and digits outside CJK join into words; CJK runs without spaces, so a CJK phrase
/// is bounded by anything.
fn is_word(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_cjk(c)
}

/// Starts of `phrase` in `t` on word boundaries; `phrase` is already loosened.
fn find(t: &[char], phrase: &str) -> Vec<usize> {
    let p: Vec<char> = phrase.chars().collect();
    if p.is_empty() || p.len() > t.len() {
        return Vec::new();
    }
    (0..=t.len() - p.len())
        .filter(|&i| t[i..i + p.len()] == p[..])
        .filter(|&i| {
            let left = i == 0 || !(is_word(p[0]) && is_word(t[i - 1]));
            let right = t
                .get(i + p.len())
                .is_none_or(|&c| !(is_word(p[p.len() - 1]) && is_word(c)));
            left && right
        })
        .collect()
}

fn starts_word(t: &[char], i: usize, w: &str) -> bool {
    find(&t[i..], w).first() == Some(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUP: SessionId = SessionId(10);
    const ADA: BotId = BotId(1);
    const BO: BotId = BotId(2);
    const WEN: BotId = BotId(3);
    const MEMBERS: &[(BotId, &str)] = &[(ADA, "Ada"), (BO, "Bo"), (WEN, "文案")];

    fn group<'a>(mentioned: &'a [BotId], answered: Option<BotId>) -> Place<'a> {
        Place {
            session_id: GROUP,
            direct_bot: None,
            members: MEMBERS,
            mentioned,
            answered,
        }
    }

    fn bots(ids: &[BotId]) -> Vec<HoldScope> {
        ids.iter()
            .map(|&bot_id| HoldScope::Bot { bot_id })
            .collect()
    }

    fn session() -> Vec<HoldScope> {
        vec![HoldScope::Session { session_id: GROUP }]
    }

    #[test]
    fn scope_from_words() {
        // CL-S1: in a direct, the Bot on the other side.
        let direct = Place {
            session_id: SessionId(20),
            direct_bot: Some(ADA),
            members: &[(ADA, "Ada")],
            mentioned: &[],
            answered: Some(ADA),
        };
        assert_eq!(super::scope_from_words("stop", &direct), bots(&[ADA]));
        assert_eq!(
            super::scope_from_words("stop all your work", &direct),
            bots(&[ADA])
        );
        assert_eq!(super::scope_from_words("Ada, stop", &direct), bots(&[ADA]));
        // CL-S2: a group, nobody named.
        let none = group(&[], Some(ADA));
        assert_eq!(super::scope_from_words("stop", &none), session());
        assert_eq!(super::scope_from_words("停下", &none), session());
        // CL-S3: singular "you" is the Bot answered.
        assert_eq!(
            super::scope_from_words("stop what you're generating", &none),
            bots(&[ADA])
        );
        assert_eq!(super::scope_from_words("你先停一下", &none), bots(&[ADA]));
        // CL-S4: each named Bot.
        assert_eq!(
            super::scope_from_words("@Bo stop", &group(&[BO], None)),
            bots(&[BO])
        );
        assert_eq!(
            super::scope_from_words("Bo, stop. ada too", &none),
            bots(&[BO, ADA])
        );
        assert_eq!(super::scope_from_words("文案，停一下", &none), bots(&[WEN]));
        // CL-S5: everything, unless narrower words come with it.
        assert_eq!(
            super::scope_from_words("stop, all of it", &none),
            vec![HoldScope::Everything]
        );
        assert_eq!(
            super::scope_from_words("所有 Bot 都停下", &direct),
            vec![HoldScope::Everything]
        );
        assert_eq!(
            super::scope_from_words("全都停", &none),
            vec![HoldScope::Everything]
        );
        assert_eq!(
            super::scope_from_words("stop everything you're doing", &none),
            bots(&[ADA])
        );
        assert_eq!(
            super::scope_from_words("Bo, stop all of it", &none),
            bots(&[BO])
        );
        assert_eq!(
            super::scope_from_words("stop everything in the group", &none),
            session()
        );
        assert_eq!(
            super::scope_from_words("stop all of it on this job", &direct),
            bots(&[ADA])
        );
    }

    #[test]
    fn scope_from_words_bare_names_need_a_comma_you_or_too() {
        let none = group(&[], None);
        // "stop" next to a name that is only talked about names nobody.
        assert_eq!(
            super::scope_from_words("stop, tell Ada the plan", &none),
            session()
        );
        assert_eq!(super::scope_from_words("ADA you stop", &none), bots(&[ADA]));
        // Word boundaries: "Bo" inside "Bob," or "bots" is not Bo.
        assert_eq!(super::scope_from_words("Bob, stop", &none), session());
        // A name inside a longer member's name is that member.
        let members: &[(BotId, &str)] = &[(ADA, "Ada"), (BO, "Ada Lee")];
        let place = Place {
            members,
            ..group(&[], None)
        };
        assert_eq!(
            super::scope_from_words("Ada Lee, stop", &place),
            bots(&[BO])
        );
    }

    #[test]
    fn scope_from_words_plural_you_is_the_group() {
        let none = group(&[], Some(ADA));
        assert_eq!(
            super::scope_from_words("stop, all of you", &none),
            session()
        );
        assert_eq!(super::scope_from_words("你们先停", &none), session());
        // Singular "you" with nobody answered: the group.
        assert_eq!(
            super::scope_from_words("stop what you're doing", &group(&[], None)),
            session()
        );
    }
}
