//! AC-12: a reply that says again what the Bot already said. A Bot called back to a job it
//! cannot move (a check-back, the supervisor, a quiet plan) tends to post the same status each
//! time; the person reads it once. A reply nobody's line asked for is compared with the Bot's
//! last [`WINDOW`] replies in the same conversation and job, and a repeat is not posted.
//!
//! Two tests, both on the words after Markdown is taken away:
//! - the same text (whitespace aside) is a repeat, in any language;
//! - an English reply of at least [`MIN_CONTENT_WORDS`] content words is a repeat when only
//!   articles and light verbs ("run longer" / "be longer") differ and the remaining words come
//!   in the same order. Numbers, negations, question marks, code, link targets, mentions and
//!   paths are words like any other there, so a change in any of them is news.

/// How many of the Bot's newest replies a new one is compared with.
pub const WINDOW: u32 = 40;

/// The looser test needs a reply this long: short replies differ in meaning by one word.
pub const MIN_CONTENT_WORDS: usize = 12;

/// Dropped before the looser comparison: articles, and verbs that carry no news in a status
/// ("it will run longer" / "it will be longer").
const LIGHT_WORDS: &[&str] = &[
    "a", "an", "the", "be", "is", "are", "was", "were", "been", "being", "run", "runs", "ran",
    "running", "get", "gets", "got", "become", "becomes", "became",
];

/// The index in `earlier` of the first reply `reply` repeats, if any.
pub fn find<'a>(reply: &str, earlier: impl IntoIterator<Item = &'a str>) -> Option<usize> {
    let new = Said::of(reply);
    if new.plain.is_empty() {
        return None;
    }
    earlier.into_iter().position(|e| new.repeats(&Said::of(e)))
}

/// Whether `reply` says what `earlier` said.
pub fn repeats(reply: &str, earlier: &str) -> bool {
    find(reply, [earlier]).is_some()
}

/// A reply as compared: its plain text and, for English, its words without the light ones.
struct Said {
    plain: String,
    loose: Option<Vec<String>>,
}

impl Said {
    fn of(text: &str) -> Said {
        let plain = plain_text(text);
        let loose = english(&plain).then(|| {
            words(&plain)
                .into_iter()
                .filter(|w| !LIGHT_WORDS.contains(&w.as_str()))
                .collect::<Vec<_>>()
        });
        Said { plain, loose }
    }

    fn repeats(&self, earlier: &Said) -> bool {
        if self.plain == earlier.plain {
            return true;
        }
        match (&self.loose, &earlier.loose) {
            (Some(new), Some(old)) => {
                let content = new.iter().filter(|w| w.chars().any(char::is_alphabetic));
                content.count() >= MIN_CONTENT_WORDS && new == old
            }
            _ => false,
        }
    }
}

/// The text with its Markdown taken away: fences, headings, quotes, list marks, emphasis and
/// backticks go; a link keeps its text and its target; whitespace collapses to single spaces.
fn plain_text(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            // The fence goes; the code inside stays as words.
            out.push(' ');
            continue;
        }
        out.push_str(&inline(block_marks(t)));
        out.push(' ');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A line without its heading, quote or list mark.
fn block_marks(mut t: &str) -> &str {
    loop {
        let before = t;
        t = t.trim_start_matches('>').trim_start();
        let hashes = t.len() - t.trim_start_matches('#').len();
        if hashes > 0 && t[hashes..].starts_with(' ') {
            t = t[hashes..].trim_start();
        }
        for mark in ["- ", "* ", "+ "] {
            if let Some(rest) = t.strip_prefix(mark) {
                t = rest.trim_start();
            }
        }
        let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") ")) {
            t = t[digits + 2..].trim_start();
        }
        if t == before {
            return t;
        }
    }
}

/// Emphasis and backticks gone, `[text](target)` read as "text target".
fn inline(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' | '`' | '~' => {}
            '!' if chars.get(i + 1) == Some(&'[') => {}
            '[' | ']' => out.push(' '),
            '(' if i > 0 && chars[i - 1] == ']' => out.push(' '),
            ')' if out_has_open_link(&chars, i) => out.push(' '),
            // An underscore inside a word (snake_case, a file name) is part of it.
            '_' if !inside_word(&chars, i) => {}
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

fn inside_word(chars: &[char], i: usize) -> bool {
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric());
    word(i.checked_sub(1).and_then(|j| chars.get(j))) && word(chars.get(i + 1))
}

/// Whether the `)` at `i` closes a link target opened by `](`.
fn out_has_open_link(chars: &[char], i: usize) -> bool {
    let mut j = i;
    while j > 0 {
        j -= 1;
        match chars[j] {
            '(' => return j > 0 && chars[j - 1] == ']',
            ')' | ' ' => return false,
            _ => {}
        }
    }
    false
}

/// Words nearly every English status has; two of them, in mostly ASCII letters, read as English.
const ENGLISH_MARKS: &[&str] = &[
    "the", "and", "is", "are", "to", "of", "it", "will", "in", "for", "on", "with", "you", "this",
    "that", "i", "we", "not", "have", "has", "was", "be",
];

/// Whether the looser test applies: its word list is English, and an "an" or a "die" means
/// something else in German.
fn english(plain: &str) -> bool {
    let letters = plain.chars().filter(|c| c.is_alphabetic()).count();
    let ascii = plain.chars().filter(|c| c.is_ascii_alphabetic()).count();
    if letters == 0 || ascii * 10 < letters * 9 {
        return false;
    }
    let lower = plain.to_lowercase();
    let mut marks: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| ENGLISH_MARKS.contains(w))
        .collect();
    marks.sort_unstable();
    marks.dedup();
    marks.len() >= 2
}

/// The words in order, lower-cased, sentence punctuation dropped. A question mark is a word of
/// its own; a token carrying a path, link, mention or number keeps its own case.
fn words(plain: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in plain.split_whitespace() {
        let asks = raw.contains('?');
        let t = raw.trim_matches(|c: char| {
            matches!(
                c,
                '.' | ',' | ';' | ':' | '!' | '?' | '"' | '\'' | '(' | ')' | '“' | '”' | '‘' | '’'
            )
        });
        if !t.is_empty() {
            let literal = t.contains(['/', '\\', '@', '=', '<', '>', '{', '}'])
                || t.chars().any(|c| c.is_ascii_digit())
                || t.contains('.')
                || t.contains('_');
            out.push(if literal {
                t.to_string()
            } else {
                t.to_lowercase()
            });
        }
        if asks {
            out.push("?".into());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "The render of the intro is still going and it will run longer than \
                          planned, so I will report back here when the final cut is ready for \
                          your review.";

    #[test]
    fn the_same_words_after_markdown_removal_repeat() {
        assert!(repeats(
            "**Done.** The file is at `out/intro.mp4`.\n\n- nothing else changed",
            "Done. The file is at out/intro.mp4. nothing else changed"
        ));
        assert!(repeats("## 进度\n\n> 还在渲染。", "进度 还在渲染。"));
        assert!(!repeats("还在渲染。", "渲染完了。"));
    }

    #[test]
    fn articles_and_light_verbs_alone_do_not_make_a_long_reply_new() {
        let reworded = STATUS
            .replace("The render", "Render")
            .replace("run longer", "be longer")
            .replace("the final cut", "a final cut");
        assert!(repeats(&reworded, STATUS));
        // A short reply differing so is not judged a repeat: few words, every one counts.
        assert!(!repeats(
            "The render will run longer.",
            "The render will be longer."
        ));
    }

    #[test]
    fn numbers_negations_questions_code_links_mentions_and_paths_stay_news() {
        for (from, to) in [
            ("than planned", "than 2 hours planned"),
            ("it will run longer", "it will not run longer"),
            ("for your review.", "for your review?"),
            ("report back here", "report back to @Beta"),
            ("the intro", "the intro.mp4"),
            ("the final cut", "the `final_cut`"),
            ("your review.", "[your review](https://example.test/a)."),
        ] {
            assert!(STATUS.contains(from), "{from}");
            let changed = STATUS.replace(from, to);
            assert!(!repeats(&changed, STATUS), "{to}");
        }
        let linked = "[the notes](docs/a.md) are ready";
        assert!(!repeats("[the notes](docs/b.md) are ready", linked));
        assert!(repeats("the notes docs/a.md are ready", linked));
    }

    #[test]
    fn new_content_goes_out() {
        let more = format!("{STATUS} The audio is mixed.");
        assert!(!repeats(&more, STATUS));
        assert!(!repeats("", ""));
        assert_eq!(find(STATUS, ["Something else entirely.", STATUS]), Some(1));
        assert_eq!(find("   ", [""]), None);
    }

    #[test]
    fn the_looser_test_is_for_english_only() {
        // German, in ASCII letters nearly all: "an" is a word here, not an article.
        let a = "Ich fange morgen an mit dem Schnitt, die Musik läuft länger als geplant, und \
                 ich melde mich hier wieder sobald alles bereit ist";
        assert!(!repeats(&a.replace(" an mit", " mit"), a));
        assert!(repeats(a, a));
    }
}
