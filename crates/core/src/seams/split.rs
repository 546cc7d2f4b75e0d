//! AC-13/AC-14 for text: one file cut into parts at its level-one and level-two headings
//! (Markdown and plain text by `#`/`##` lines outside code fences, HTML by `h1`/`h2`), the
//! ~700 characters each side of a seam shows, and the whole-set digest: each part's heading,
//! opening, numbers with units and proper names, so the judge sees whether the same thing
//! is named and counted the same way everywhere.

use regex::Regex;
use std::sync::LazyLock;

/// How much of each side of a text seam the judge sees.
pub const EXCERPT_CHARS: usize = 700;
/// A part's opening in the whole-set digest.
const OPENING_CHARS: usize = 200;
/// At most this many numbers and names per part in the digest.
const DIGEST_ITEMS: usize = 12;

/// One part of a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The heading's words; empty for what comes before the first heading.
    pub heading: String,
    /// The part's text, its heading line included.
    pub text: String,
}

/// Cut Markdown or plain text at `#` and `##` headings. What comes before the first heading
/// is a part of its own only when it has words.
pub fn split_markdown(text: &str) -> Vec<Section> {
    let mut out = vec![Section {
        heading: String::new(),
        text: String::new(),
    }];
    let mut fence: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if indent <= 3 && (t.starts_with("```") || t.starts_with("~~~")) {
            let mark = &t[..3];
            fence = match fence {
                Some(m) if m == mark => None,
                Some(m) => Some(m),
                None => Some(mark),
            };
        } else if fence.is_none()
            && indent <= 3
            && let Some(h) = heading_of(t)
        {
            out.push(Section {
                heading: h,
                text: String::new(),
            });
        }
        if let Some(last) = out.last_mut() {
            last.text.push_str(line);
        }
    }
    if out.first().is_some_and(|s| s.text.trim().is_empty()) {
        out.remove(0);
    }
    out
}

/// `# Title` or `## Title` (not `###`), with its closing hashes taken off.
fn heading_of(line: &str) -> Option<String> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if !(1..=2).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    if !(rest.starts_with(' ') || rest.starts_with('\t') || rest.trim().is_empty()) {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim().to_string())
}

static HTML_HEADING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?is)<h([12])\b[^>]*>(.*?)</h[12]\s*>").expect("valid regex"));
static HTML_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?is)<(script|style)\b.*?</(script|style)\s*>|<[^>]*>").expect("valid regex")
});

/// The words of some HTML: tags dropped, the common entities read, blank runs folded.
pub fn html_words(html: &str) -> String {
    let text = HTML_TAG.replace_all(html, " ");
    let text = text
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    let lines: Vec<String> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("\n")
}

/// Cut HTML at its `h1` and `h2`; each part is given as words.
pub fn split_html(html: &str) -> Vec<Section> {
    let mut cuts: Vec<(usize, String)> = HTML_HEADING
        .captures_iter(html)
        .filter_map(|c| Some((c.get(0)?.start(), html_words(c.get(2)?.as_str()))))
        .collect();
    cuts.insert(0, (0, String::new()));
    let mut out = Vec::new();
    for (i, (start, heading)) in cuts.iter().enumerate() {
        let end = cuts.get(i + 1).map_or(html.len(), |(s, _)| *s);
        let text = html_words(&html[*start..end]);
        if i == 0 && text.trim().is_empty() {
            continue;
        }
        out.push(Section {
            heading: heading.clone(),
            text,
        });
    }
    out
}

/// The last `n` characters of `s` (trimmed), starting at a word where one is near.
pub fn end_of(s: &str, n: usize) -> String {
    let s = s.trim();
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    let start = s.char_indices().nth(count - n).map_or(0, |(i, _)| i);
    let cut = &s[start..];
    let starts_word = s[..start].ends_with(char::is_whitespace);
    if starts_word {
        return format!("…{cut}");
    }
    let at_word = cut
        .char_indices()
        .take(40)
        .find(|(_, c)| c.is_whitespace())
        .map_or(cut, |(i, _)| &cut[i..]);
    format!("…{}", at_word.trim_start())
}

/// The first `n` characters of `s` (trimmed), ending at a word where one is near.
pub fn start_of(s: &str, n: usize) -> String {
    let s = s.trim();
    let Some((end, _)) = s.char_indices().nth(n) else {
        return s.to_string();
    };
    let cut = &s[..end];
    if s[end..].starts_with(char::is_whitespace) {
        return format!("{}…", cut.trim_end());
    }
    let at_word = cut
        .char_indices()
        .rev()
        .take(40)
        .find(|(_, c)| c.is_whitespace())
        .map_or(cut, |(i, _)| &cut[..i]);
    format!("{}…", at_word.trim_end())
}

/// One part as the whole-set pass sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartDigest {
    pub name: String,
    pub heading: String,
    pub opening: String,
    /// Numbers said with a unit or currency ("12 million", "30 s", "$4.5", "20%").
    pub numbers: Vec<String>,
    /// Capitalised names not opening a sentence ("Acme Corp", "Lin").
    pub names: Vec<String>,
}

static NUMBER_WITH_UNIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        [$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:million|billion|thousand|bn|[kKmMbB])\b)?
        | \d[\d,]*(?:\.\d+)?\s?(?:%|‰|°[CF]?|[^\W\d_]{1,12}\b)",
    )
    .expect("valid regex")
});
static CAPITALISED_RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\p{Lu}[\p{L}'’-]*(?:\s+\p{Lu}[\p{L}'’-]*)*").expect("valid regex")
});

/// Words that read as units but only count things in passing.
const NOT_UNITS: [&str; 12] = [
    "and", "or", "of", "to", "in", "on", "the", "a", "an", "is", "are", "was",
];

/// The digest of one part: its heading, opening, numbers with units and proper names.
pub fn digest(name: &str, s: &Section) -> PartDigest {
    let body: String = s
        .text
        .lines()
        .filter(|l| heading_of(l.trim_start()).is_none())
        .collect::<Vec<_>>()
        .join(" ");
    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut numbers: Vec<String> = Vec::new();
    for m in NUMBER_WITH_UNIT.find_iter(&body) {
        let n = m.as_str().trim().to_string();
        let unit = n.trim_start_matches(|c: char| !c.is_alphabetic());
        if NOT_UNITS.contains(&unit.to_lowercase().as_str()) {
            continue;
        }
        if !numbers.contains(&n) && numbers.len() < DIGEST_ITEMS {
            numbers.push(n);
        }
    }
    let mut names: Vec<String> = Vec::new();
    for m in CAPITALISED_RUN.find_iter(&body) {
        let before = body[..m.start()].trim_end();
        let opens_sentence = before.is_empty() || before.ends_with(['.', '!', '?', ':', '"']);
        let mut words: Vec<&str> = m.as_str().split_whitespace().collect();
        if opens_sentence {
            words.remove(0);
        }
        let name = words.join(" ");
        // A lone one-letter word ("I", "A") names nobody.
        if name.chars().count() < 2 || names.contains(&name) || names.len() == DIGEST_ITEMS {
            continue;
        }
        names.push(name);
    }
    PartDigest {
        name: name.to_string(),
        heading: s.heading.clone(),
        opening: start_of(&body, OPENING_CHARS),
        numbers,
        names,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_cut_at_level_one_and_two_headings_outside_fences() {
        let text = "Intro words.\n# One\nalpha\n### small\nbeta\n```\n# not a heading\n```\n## Two ##\ngamma\n";
        let parts = split_markdown(text);
        let headings: Vec<&str> = parts.iter().map(|p| p.heading.as_str()).collect();
        assert_eq!(headings, ["", "One", "Two"]);
        assert!(parts[1].text.contains("### small") && parts[1].text.contains("# not a heading"));
        assert_eq!(parts[2].text, "## Two ##\ngamma\n");
        // Nothing before the first heading: no part for it.
        assert_eq!(split_markdown("# A\nx\n# B\ny").len(), 2);
        assert_eq!(split_markdown("#hashtag\n").len(), 1);
    }

    #[test]
    fn html_is_cut_at_h1_and_h2() {
        let html = "<html><body><h1 class='t'>Market</h1><p>Big &amp; growing.</p>\
                    <h3>detail</h3><H2>Channels</H2><p>Shops.</p><script>x()</script></body></html>";
        let parts = split_html(html);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].heading, "Market");
        assert!(parts[0].text.contains("Big & growing.") && parts[0].text.contains("detail"));
        assert_eq!(parts[1].heading, "Channels");
        assert!(!parts[1].text.contains("x()"));
    }

    #[test]
    fn excerpts_keep_whole_words_at_the_cut() {
        let s = "one two three four five";
        assert_eq!(end_of(s, 100), s);
        assert_eq!(end_of(s, 9), "…four five");
        assert_eq!(end_of(s, 8), "…five");
        assert_eq!(start_of(s, 7), "one two…");
        assert_eq!(start_of(s, 9), "one two…");
        let long: String = "word ".repeat(400);
        assert!(end_of(&long, EXCERPT_CHARS).chars().count() <= EXCERPT_CHARS + 1);
    }

    #[test]
    fn the_digest_names_numbers_with_units_and_proper_names() {
        let s = Section {
            heading: "Market".into(),
            text: "## Market\nThe market is worth $4.5 billion and grows 12% a year. \
                   Most of it goes to Acme Corp, which sells to 3 million users in Lisbon. \
                   It has 2 and 3."
                .into(),
        };
        let d = digest("02-market", &s);
        assert_eq!(d.heading, "Market");
        assert!(d.opening.starts_with("The market is worth"));
        assert_eq!(d.numbers, ["$4.5 billion", "12%", "3 million"]);
        assert_eq!(d.names, ["Acme Corp", "Lisbon"]);
    }
}
