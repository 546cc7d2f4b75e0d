//! A new plan's name (PLAN-1, DS-7) and its folder. The name is the first words of the line
//! that opened it, without the Bots it names; the folder is fixed when the plan is made, so a
//! later rename (PLAN-2) never moves files.

use crate::ids::{BotId, PlanId};
use crate::mention::{RosterBot, strip_mentions};
use crate::plan::NAME_MAX_CHARS;
use crate::reading::fold::{is_cjk, is_punct};

/// What a plan opened from nothing at all is called (PLAN-1).
pub const ATTACHMENTS_ONLY: &str = "(attachments only)";

/// Code points of the name that go into a folder's name.
const FOLDER_SLUG_CHARS: usize = 20;

/// The name of a plan opened by `line` (with its attachments' paths), never blank. `@Name`
/// mentions of `bot_names` are left out unless they are all the line says (DS-7).
pub fn plan_name(line: &str, attachments: &[String], bot_names: &[String]) -> String {
    let roster: Vec<RosterBot> = bot_names
        .iter()
        .enumerate()
        .map(|(i, name)| RosterBot {
            id: BotId(i as i64),
            name: name.clone(),
            // Absent: only whole names count, never a prefix of one.
            present: false,
        })
        .collect();
    let stripped = strip_mentions(line, &roster);
    let words = if has_words(&stripped) {
        stripped
    } else if attachments.is_empty() && !line.trim().is_empty() {
        // The names (or marks) are the whole line: they are its words.
        line.to_string()
    } else {
        String::new()
    };
    let words = collapse_whitespace(&words);
    if !words.is_empty() {
        return first_words(&words, NAME_MAX_CHARS);
    }
    match attachments.first() {
        Some(first) => attachment_name(first, attachments.len() - 1),
        None => ATTACHMENTS_ONLY.to_string(),
    }
}

/// A folder name fixed at creation: `<id>-<slug>`, the slug the name's first 20 code points
/// with path separators, control characters and spaces made `-` (letters of any script kept),
/// ending at the last whole word when the cut falls inside one of a spaced script.
pub fn folder_name(id: PlanId, name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars().take(FOLDER_SLUG_CHARS) {
        let c = if unsafe_in_folder(c) { '-' } else { c };
        if c == '-' && slug.ends_with('-') {
            continue;
        }
        slug.push(c);
    }
    // Cut inside a word of a spaced script ("hello.p" of "hello.py"): end at the word before.
    let next = name.chars().nth(FOLDER_SLUG_CHARS);
    let last = slug.chars().last();
    if let (Some(n), Some(l)) = (next, last)
        && !unsafe_in_folder(n)
        && l != '-'
        && !is_cjk(l)
        && let Some(cut) = slug.rfind('-')
    {
        slug.truncate(cut);
    }
    // Leading dots would hide the folder; trailing ones and dashes read as debris.
    let slug = slug.trim_matches(|c| c == '-' || c == '.');
    if slug.is_empty() {
        id.to_string()
    } else {
        format!("{id}-{slug}")
    }
}

fn unsafe_in_folder(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|')
}

/// Anything but spaces and punctuation counts as a word (letters, digits, emoji).
fn has_words(s: &str) -> bool {
    s.chars().any(|c| !c.is_whitespace() && !is_punct(c))
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` code points, cut where a word ends when one ends in the second half (CJK
/// text ends a word at every character), without trailing punctuation or space.
fn first_words(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let cut = if chars.len() <= max {
        chars.len()
    } else {
        (max / 2..=max)
            .rev()
            .find(|&i| boundary(&chars, i))
            .unwrap_or(max)
    };
    let mut out: Vec<char> = chars[..cut].to_vec();
    while out.last().is_some_and(|&c| trailing_junk(c)) {
        out.pop();
    }
    if out.is_empty() {
        // All punctuation: keep it rather than say nothing.
        return chars[..cut].iter().collect::<String>().trim().to_string();
    }
    out.into_iter().collect()
}

/// Whether a cut before `chars[i]` falls between words.
fn boundary(chars: &[char], i: usize) -> bool {
    let (before, after) = (chars[i - 1], chars[i]);
    after.is_whitespace()
        || before.is_whitespace()
        || is_cjk(before)
        || is_cjk(after)
        || (is_punct(before) && !matches!(before, '\'' | '-' | '_' | '.' | '/'))
}

/// Punctuation that ends a clause or opens one: nothing a name should end with.
fn trailing_junk(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            ',' | '.'
                | ';'
                | ':'
                | '!'
                | '?'
                | '-'
                | '–'
                | '—'
                | '~'
                | '…'
                | '·'
                | '、'
                | '。'
                | '，'
                | '；'
                | '：'
                | '！'
                | '？'
                | '～'
                | '('
                | '['
                | '{'
                | '（'
                | '【'
                | '《'
                | '「'
                | '『'
                | '“'
                | '‘'
        )
}

/// `screenshot.png`, or `screenshot.png and 2 more`, within the name's length.
fn attachment_name(path: &str, more: usize) -> String {
    let file = path
        .trim()
        .rsplit(['/', '\\'])
        .find(|p| !p.trim().is_empty())
        .unwrap_or("")
        .trim();
    if file.is_empty() {
        return ATTACHMENTS_ONLY.to_string();
    }
    let suffix = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let room = NAME_MAX_CHARS.saturating_sub(suffix.chars().count());
    let file: String = file
        .chars()
        .filter(|c| !c.is_control())
        .take(room)
        .collect();
    format!("{file}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bots() -> Vec<String> {
        vec!["Alpha".into(), "Beta Max".into()]
    }

    fn name(line: &str) -> String {
        plan_name(line, &[], &bots())
    }

    #[test]
    fn ds_7_the_bots_named_are_left_out_of_the_name() {
        assert_eq!(name("@Alpha 做一个 logo"), "做一个 logo");
        assert_eq!(name("@Beta Max draw the poster, @Alpha"), "draw the poster");
        assert_eq!(name("@everyone 开会"), "开会");
    }

    #[test]
    fn ds_7_names_that_are_the_whole_line_stay() {
        assert_eq!(name("@Alpha"), "@Alpha");
        assert_eq!(name("@Alpha @Beta Max"), "@Alpha @Beta Max");
    }

    #[test]
    fn plan_1_a_long_line_is_cut_at_a_word_within_forty_code_points() {
        let n =
            name("@Alpha please write the release notes for version 2.4 of the app and mail them");
        assert_eq!(n, "please write the release notes for");
        assert!(n.chars().count() <= 40);
        let zh = "让审片员回复视频导演关于第三集的修改意见并整理成表格发给制片人确认后再安排下一轮审片工作";
        let n = name(zh);
        assert_eq!(n.chars().count(), 40);
        assert!(zh.starts_with(&n));
        // One word longer than the limit is cut inside it.
        let n = name(&"x".repeat(60));
        assert_eq!(n, "x".repeat(40));
    }

    #[test]
    fn plan_1_no_trailing_punctuation_or_space() {
        assert_eq!(name("做《一拳超人》动画。"), "做《一拳超人》动画");
        assert_eq!(name("  fix the login page!!  "), "fix the login page");
        assert_eq!(name("line one\n\nline two"), "line one line two");
        assert_eq!(name("???"), "???");
        let zh = "请把这份报告整理一下，然后发给团队里的每一个人看看，顺便问问他们有没有意见，好吗";
        let n = name(zh);
        assert!(!n.ends_with('，') && n.chars().count() <= 40, "{n}");
    }

    #[test]
    fn plan_1_no_words_names_the_first_file() {
        let one = vec!["/tmp/up/screenshot.png".to_string()];
        assert_eq!(plan_name("", &one, &bots()), "screenshot.png");
        let two = vec!["C:\\up\\screenshot.png".to_string(), "b.png".into()];
        assert_eq!(
            plan_name("  @Alpha ", &two, &bots()),
            "screenshot.png and 1 more"
        );
        let long = vec![format!("{}.png", "n".repeat(60)), "b".into(), "c".into()];
        let n = plan_name("", &long, &bots());
        assert!(n.ends_with(" and 2 more") && n.chars().count() == 40, "{n}");
    }

    #[test]
    fn plan_1_nothing_at_all_is_attachments_only() {
        assert_eq!(plan_name("", &[], &bots()), ATTACHMENTS_ONLY);
        assert_eq!(plan_name(" \n ", &[], &[]), ATTACHMENTS_ONLY);
    }

    #[test]
    fn plan_2_a_folder_name_is_safe_and_keeps_letters() {
        assert_eq!(folder_name(PlanId(3), "做一个 logo"), "plan_3-做一个-logo");
        assert_eq!(folder_name(PlanId(4), "../etc/passwd"), "plan_4-etc-passwd");
        assert_eq!(folder_name(PlanId(5), "a\\b\u{7}c:d"), "plan_5-a-b-c-d");
        assert_eq!(folder_name(PlanId(6), "..."), "plan_6");
        let long = folder_name(PlanId(7), "让审片员回复视频导演关于第三集的修改意见并整理");
        assert_eq!(long, "plan_7-让审片员回复视频导演关于第三集的修改意见");
        assert_eq!(
            folder_name(PlanId(8), "Écrire le rapport"),
            "plan_8-Écrire-le-rapport"
        );
    }

    #[test]
    fn plan_2_a_folder_name_cut_inside_a_word_ends_at_the_word_before() {
        let name = "Please write hello.py that prints hello";
        assert_eq!(folder_name(PlanId(1), name), "plan_1-Please-write");
        // Cut where a word ends anyway: kept whole.
        assert_eq!(
            folder_name(PlanId(2), "Write the report now please"),
            "plan_2-Write-the-report-now"
        );
        // One long word has no word before it: cut where it falls.
        assert_eq!(
            folder_name(PlanId(3), "Supercalifragilisticexpialidocious"),
            "plan_3-Supercalifragilistic"
        );
    }
}
