//! How a retrospective may change a skill (digest 003-B §11.4): it only gains a sentence after
//! a passage, a passage at its end, or one wrong sentence corrected, and it keeps every name
//! in backticks, file name, link and environment variable it had. A passage rewritten whole is
//! not written at all. The change is made here from the answer's edit, then checked again on
//! the texts themselves, so no edit can slip past by its shape.

use regex::Regex;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// An edit the retrospective asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// A passage added at the skill's end.
    Append(String),
    /// A sentence added after passage `passage` (numbered from 1, as the prompt shows them).
    AddSentence { passage: usize, sentence: String },
    /// One wrong sentence, quoted as the skill has it, corrected.
    Correct { wrong: String, right: String },
    /// The whole new text: written only if it differs from the skill as one of the edits above.
    Whole(String),
}

impl Edit {
    /// The edit as the record shows one that was not made.
    pub fn describe(&self) -> String {
        match self {
            Edit::Append(t) => format!("add at the end: {}", t.trim()),
            Edit::AddSentence { passage, sentence } => {
                format!("add after passage {passage}: {}", sentence.trim())
            }
            Edit::Correct { wrong, right } => {
                format!("correct \"{}\" to \"{}\"", wrong.trim(), right.trim())
            }
            Edit::Whole(t) => t.trim().to_string(),
        }
    }
}

/// What an accepted change did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    PassageAppended,
    SentenceAdded { passage: usize },
    SentenceCorrected { passage: usize },
}

const WHOLE: &str = "a passage rewritten whole is not written: a skill only gains a sentence \
    after a passage, a passage at its end, or one wrong sentence corrected";

/// The byte ranges of a text's passages: runs of lines that are not blank.
fn passage_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start: Option<usize> = None;
    let mut end = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if content.trim().is_empty() {
            if let Some(s) = start.take() {
                spans.push((s, end));
            }
        } else {
            start.get_or_insert(at);
            end = at + content.len();
        }
        at += line.len();
    }
    if let Some(s) = start {
        spans.push((s, end));
    }
    spans
}

/// A text's passages, trimmed.
pub fn passages(text: &str) -> Vec<&str> {
    passage_spans(text)
        .into_iter()
        .map(|(s, e)| text[s..e].trim())
        .collect()
}

/// A passage's sentences: each line (a list item is one) cut after `.`, `!` or `?` followed by
/// a space, or after `。`, `！`, `？`.
pub fn sentences(passage: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in passage.lines() {
        let mut cur = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            cur.push(c);
            let ends = match c {
                '。' | '！' | '？' => true,
                '.' | '!' | '?' => chars.peek().is_none_or(|n| n.is_whitespace()),
                _ => false,
            };
            if ends {
                let s = cur.trim();
                if !s.is_empty() {
                    out.push(s.to_string());
                }
                cur.clear();
            }
        }
        let s = cur.trim();
        if !s.is_empty() {
            out.push(s.to_string());
        }
    }
    out
}

static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]+)`").unwrap());
static LINK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"https?://[^\s)>\]"'`]+"#).unwrap());
static FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:[A-Za-z0-9_.-]+/)*([A-Za-z0-9_-]+)\.[A-Za-z][A-Za-z0-9]{0,6}\b").unwrap()
});
static ENV: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b").unwrap()
});

/// The names a skill must keep: in backticks, links, file names, environment variables.
pub fn kept_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for c in BACKTICKED.captures_iter(text) {
        out.insert(c[1].to_string());
    }
    for m in LINK.find_iter(text) {
        out.insert(
            m.as_str()
                .trim_end_matches(['.', ',', ';', ':'])
                .to_string(),
        );
    }
    for c in FILE.captures_iter(text) {
        let whole = c.get(0).unwrap().as_str();
        // "e.g" and "i.e" are not files: a one-letter stem outside a folder is left out.
        if c[1].chars().count() >= 2 || whole.contains('/') {
            out.insert(whole.to_string());
        }
    }
    for m in ENV.find_iter(text) {
        out.insert(m.as_str().to_string());
    }
    out
}

/// Whether `after` is an edit of `before` a retrospective may write, and which: its shape
/// first (a rewrite is refused as one), then the names it must keep.
pub fn check(before: &str, after: &str) -> Result<Shape, String> {
    let shape = shape(before, after)?;
    let lost: Vec<String> = kept_names(before)
        .into_iter()
        .filter(|n| !after.contains(n.as_str()))
        .collect();
    if !lost.is_empty() {
        return Err(format!(
            "it drops {}, which the skill had",
            lost.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(shape)
}

fn shape(before: &str, after: &str) -> Result<Shape, String> {
    let bp = passages(before);
    let ap = passages(after);
    if bp == ap {
        return Err("the skill already says this".into());
    }
    if ap.len() == bp.len() + 1 && ap[..bp.len()] == bp[..] {
        return Ok(Shape::PassageAppended);
    }
    if ap.len() != bp.len() {
        return Err(WHOLE.into());
    }
    let differ: Vec<usize> = (0..bp.len()).filter(|&i| bp[i] != ap[i]).collect();
    let [i] = differ[..] else {
        return Err(WHOLE.into());
    };
    let bs = sentences(bp[i]);
    let asn = sentences(ap[i]);
    if asn.len() == bs.len() + 1 && asn[..bs.len()] == bs[..] {
        return Ok(Shape::SentenceAdded { passage: i + 1 });
    }
    if asn.len() == bs.len() && (0..bs.len()).filter(|&k| bs[k] != asn[k]).count() == 1 {
        return Ok(Shape::SentenceCorrected { passage: i + 1 });
    }
    Err(WHOLE.into())
}

/// Make `edit` on `body` and check the result; answers the new text.
pub fn apply(body: &str, edit: &Edit) -> Result<String, String> {
    let after = match edit {
        Edit::Whole(text) => text.trim().to_string(),
        Edit::Append(text) => {
            let text = text.trim();
            if text.is_empty() {
                return Err("the passage to add is empty".into());
            }
            if passages(text).len() > 1 {
                return Err("only one passage is added at a time".into());
            }
            format!("{}\n\n{text}", body.trim_end())
        }
        Edit::AddSentence { passage, sentence } => {
            let sentence = sentence.trim();
            if sentence.is_empty() || sentence.contains('\n') {
                return Err("the sentence to add must be one line".into());
            }
            let spans = passage_spans(body);
            let Some(&(_, end)) = passage.checked_sub(1).and_then(|i| spans.get(i)) else {
                return Err(format!(
                    "the skill has no passage {passage} (it has {})",
                    spans.len()
                ));
            };
            format!("{} {sentence}{}", &body[..end], &body[end..])
        }
        Edit::Correct { wrong, right } => {
            let (wrong, right) = (wrong.trim(), right.trim());
            if wrong.is_empty() || right.is_empty() {
                return Err(
                    "a correction quotes the wrong sentence and gives the right one".into(),
                );
            }
            match body.matches(wrong).count() {
                0 => return Err("the sentence to correct is not in the skill as quoted".into()),
                1 => body.replacen(wrong, right, 1),
                _ => {
                    return Err("the sentence to correct is in the skill more than once".into());
                }
            }
        }
    };
    check(body, &after).map(|_| after)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str = "Render with `ffmpeg -y`. Keep the output in out/video.mp4.\n\
        Check RENDER_PRESET before you start.\n\n\
        Read the brief at https://example.test/brief first. Ask when it is unclear.";

    #[test]
    fn s_rs2_a_passage_rewritten_whole_is_refused() {
        let rewritten = "Render however you like and keep `ffmpeg -y`, out/video.mp4, \
            RENDER_PRESET in mind.\n\n\
            Read the brief at https://example.test/brief first. Ask when it is unclear.";
        assert!(
            check(SKILL, rewritten)
                .unwrap_err()
                .contains("rewritten whole")
        );
        let two_changed = SKILL
            .replace("Keep the output", "Put the output")
            .replace("Ask when", "Ask if");
        assert!(
            check(SKILL, &two_changed)
                .unwrap_err()
                .contains("rewritten whole")
        );
    }

    #[test]
    fn the_three_allowed_edits_are_written() {
        let appended = apply(
            SKILL,
            &Edit::Append("Count the frames after a render.".into()),
        )
        .unwrap();
        assert!(
            appended
                .ends_with("first. Ask when it is unclear.\n\nCount the frames after a render.")
        );
        assert_eq!(check(SKILL, &appended), Ok(Shape::PassageAppended));

        let added = apply(
            SKILL,
            &Edit::AddSentence {
                passage: 1,
                sentence: "Never upscale.".into(),
            },
        )
        .unwrap();
        assert!(added.contains("before you start. Never upscale.\n\nRead"));
        assert_eq!(
            check(SKILL, &added),
            Ok(Shape::SentenceAdded { passage: 1 })
        );

        let corrected = apply(
            SKILL,
            &Edit::Correct {
                wrong: "Ask when it is unclear.".into(),
                right: "Ask the person when it is unclear.".into(),
            },
        )
        .unwrap();
        assert_eq!(
            check(SKILL, &corrected),
            Ok(Shape::SentenceCorrected { passage: 2 })
        );
    }

    #[test]
    fn every_name_link_file_and_variable_is_kept() {
        let names = kept_names(SKILL);
        for n in [
            "ffmpeg -y",
            "out/video.mp4",
            "RENDER_PRESET",
            "https://example.test/brief",
        ] {
            assert!(names.contains(n), "{n} in {names:?}");
        }
        assert!(
            !kept_names("Use short names, e.g. a or b.")
                .iter()
                .any(|n| n == "e.g")
        );
        let lost = SKILL.replace(
            "Check RENDER_PRESET before you start.",
            "Check the preset first.",
        );
        assert!(check(SKILL, &lost).unwrap_err().contains("`RENDER_PRESET`"));
        let moved_link = apply(
            SKILL,
            &Edit::Correct {
                wrong: "Read the brief at https://example.test/brief first.".into(),
                right: "Read the brief first.".into(),
            },
        );
        assert!(
            moved_link
                .unwrap_err()
                .contains("https://example.test/brief")
        );
    }

    #[test]
    fn an_edit_that_does_not_fit_the_skill_says_why() {
        assert!(
            apply(
                SKILL,
                &Edit::AddSentence {
                    passage: 3,
                    sentence: "x.".into()
                }
            )
            .unwrap_err()
            .contains("no passage 3 (it has 2)")
        );
        assert!(
            apply(
                SKILL,
                &Edit::Correct {
                    wrong: "Nope.".into(),
                    right: "Yes.".into()
                }
            )
            .unwrap_err()
            .contains("not in the skill")
        );
        assert!(
            apply(SKILL, &Edit::Append("One.\n\nTwo.".into()))
                .unwrap_err()
                .contains("one passage")
        );
        assert!(
            check(SKILL, &format!("{SKILL}\n"))
                .unwrap_err()
                .contains("already says")
        );
        // A correction that swallows a whole passage is a rewrite, whatever it is called.
        let swallowed = apply(
            SKILL,
            &Edit::Correct {
                wrong:
                    "Read the brief at https://example.test/brief first. Ask when it is unclear."
                        .into(),
                right: "Read https://example.test/brief.".into(),
            },
        );
        assert!(swallowed.unwrap_err().contains("rewritten whole"));
    }

    #[test]
    fn a_whole_new_text_is_written_only_as_one_of_the_edits() {
        let one_more = format!("{SKILL} Say which brief you read.");
        assert_eq!(
            apply(SKILL, &Edit::Whole(one_more.clone())).unwrap(),
            one_more
        );
        let rewritten = Edit::Whole("Render however you like.".into());
        assert!(apply(SKILL, &rewritten).is_err());
        assert_eq!(rewritten.describe(), "Render however you like.");
    }

    #[test]
    fn sentences_are_cut_at_their_ends_and_list_items() {
        assert_eq!(
            sentences("One. Two? v1.2 stays whole.\n- item\n先做这个。再做那个"),
            [
                "One.",
                "Two?",
                "v1.2 stays whole.",
                "- item",
                "先做这个。",
                "再做那个"
            ]
        );
    }
}
