//! Seams (continuity) checks, the pure half (digest 003-C §15, AC-13…AC-17): where a check's
//! parts come from and in which order, what kind each part is, how a text is cut into parts
//! (`split`), and what the judge is asked and how its answer reads (`judge`). Finding files,
//! running the list command, taking frames and calling the model are the caller's.

pub mod judge;
pub mod split;

use crate::acceptance_check::Invalid;
use std::cmp::Ordering;

/// Where the parts come from (AC-13): a command printing them one per line (the most
/// precise), a glob, or one file cut up.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Source<'a> {
    Command(&'a str),
    Glob(&'a str),
    File(&'a str),
}

/// Whether a path is a glob: it has a wildcard or a bracket set.
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// The check's source from its saved fields: a command, else its path (a glob or one file).
pub fn source<'a>(path: Option<&'a str>, command: Option<&'a str>) -> Option<Source<'a>> {
    let path = path.map(str::trim).filter(|p| !p.is_empty());
    let command = command.map(str::trim).filter(|c| !c.is_empty());
    match (command, path) {
        (Some(c), _) => Some(Source::Command(c)),
        (None, Some(p)) if is_glob(p) => Some(Source::Glob(p)),
        (None, Some(p)) => Some(Source::File(p)),
        (None, None) => None,
    }
}

/// What a part is, by its name.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PartKind {
    /// Markdown or plain text: cut at level-one and level-two headings.
    Text,
    /// Cut at `h1` and `h2`.
    Html,
    Picture,
    Video,
    /// AC-17: the seams between modules are checked by a command, not by a model.
    Code,
    Other,
}

impl PartKind {
    /// Pictures and video are seen: their seams go to the judge as one picture each.
    pub fn is_visual(self) -> bool {
        matches!(self, PartKind::Picture | PartKind::Video)
    }

    pub fn is_text(self) -> bool {
        matches!(self, PartKind::Text | PartKind::Html)
    }
}

fn extension(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// A part's kind by its extension.
pub fn part_kind(path: &str) -> PartKind {
    match extension(path).as_str() {
        "md" | "markdown" | "txt" | "text" | "rst" | "srt" | "vtt" | "tex" => PartKind::Text,
        "html" | "htm" | "xhtml" => PartKind::Html,
        "png" | "jpg" | "jpeg" | "webp" | "gif" | "bmp" | "tif" | "tiff" => PartKind::Picture,
        "mp4" | "mov" | "mkv" | "webm" | "avi" | "m4v" => PartKind::Video,
        "rs" | "py" | "js" | "mjs" | "cjs" | "ts" | "tsx" | "jsx" | "go" | "java" | "kt" | "c"
        | "h" | "cc" | "cpp" | "hpp" | "cs" | "rb" | "php" | "swift" | "scala" | "sh" | "bash"
        | "zsh" | "lua" | "pl" | "sql" | "vue" | "svelte" | "css" | "scss" | "toml" | "yaml"
        | "yml" | "json" | "xml" => PartKind::Code,
        _ => PartKind::Other,
    }
}

/// AC-17, at saving: a path naming code (a glob's own extension counts) is refused.
pub fn refuse_code(path: &str) -> Result<(), Invalid> {
    if part_kind(path) == PartKind::Code {
        return Err(not_for_code("path"));
    }
    Ok(())
}

/// AC-17's refusal.
pub fn not_for_code(field: &'static str) -> Invalid {
    Invalid {
        field,
        message: "a seams check is not for code: check the seams between modules with a \
                  command check that runs the integration or start-up"
            .into(),
        outside: false,
    }
}

/// Natural order (AC-13): runs of digits compare as numbers, so C2 comes before C10; ties
/// fall back to the plain text so the order is total.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.chars().peekable(), b.chars().peekable());
    loop {
        match (x.peek().copied(), y.peek().copied()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let n = take_digits(&mut x);
                let m = take_digits(&mut y);
                let (n, m) = (n.trim_start_matches('0'), m.trim_start_matches('0'));
                let by_number = n.len().cmp(&m.len()).then_with(|| n.cmp(m));
                if by_number != Ordering::Equal {
                    return by_number;
                }
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(&d);
                }
                x.next();
                y.next();
            }
        }
    }
}

fn take_digits(it: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut s = String::new();
    while let Some(c) = it.peek().copied().filter(char::is_ascii_digit) {
        s.push(c);
        it.next();
    }
    s
}

/// A file name without its folder and extension.
pub fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s,
        _ => name,
    }
}

/// A name's numbering pattern: each run of digits as `#`. None when a number is marked as a
/// version (`v2`, `_V3`, `take2`, `rev4`): such files are cuts of one master, not shots.
fn shot_pattern(stem: &str) -> Option<String> {
    let chars: Vec<char> = stem.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let before: String = chars[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_alphabetic())
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<String>()
                .to_lowercase();
            if before.ends_with('v') && before.len() == 1
                || ["take", "rev", "version", "ver"].contains(&before.as_str())
            {
                return None;
            }
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            out.push('#');
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    Some(out)
}

/// AC-13: a glob whose every match is a video is a master that keeps being re-cut (the newest
/// is used, cut at its scenes) — unless the matches are numbered shots of one series (C2,
/// C10: the same name but for its numbers, none marked as a version), which are the parts in
/// natural order.
pub fn videos_are_recuts(paths: &[&str]) -> bool {
    if paths.len() < 2 {
        return true;
    }
    let patterns: Vec<Option<String>> = paths.iter().map(|p| shot_pattern(stem(p))).collect();
    let Some(Some(first)) = patterns.first() else {
        return true;
    };
    !(first.contains('#') && patterns.iter().all(|p| p.as_ref() == Some(first)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_puts_c2_before_c10() {
        let mut v = vec![
            "shots/C10.mp4",
            "shots/C2.mp4",
            "shots/C1.mp4",
            "shots/C02b.mp4",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "shots/C1.mp4",
                "shots/C2.mp4",
                "shots/C02b.mp4",
                "shots/C10.mp4"
            ]
        );
        assert_eq!(natural_cmp("a", "a"), Ordering::Equal);
        assert_eq!(natural_cmp("01-x", "1-x"), Ordering::Less);
    }

    #[test]
    fn the_source_is_a_command_a_glob_or_one_file() {
        assert_eq!(
            source(Some("a/*.md"), Some(" ls ")),
            Some(Source::Command("ls"))
        );
        assert_eq!(source(Some("a/*.md"), None), Some(Source::Glob("a/*.md")));
        assert_eq!(
            source(Some("report.md"), Some("  ")),
            Some(Source::File("report.md"))
        );
        assert_eq!(source(Some(" "), None), None);
    }

    #[test]
    fn ac17_code_is_refused() {
        assert!(refuse_code("src/*.rs").is_err());
        assert!(refuse_code("chapters/*.md").is_ok());
        assert_eq!(part_kind("a/B.MP4"), PartKind::Video);
        assert_eq!(part_kind("deck/03.webp"), PartKind::Picture);
        assert_eq!(part_kind("README"), PartKind::Other);
    }

    #[test]
    fn numbered_shots_are_parts_and_versions_are_recuts() {
        assert!(!videos_are_recuts(&["shots/C2.mp4", "shots/C10.mp4"]));
        assert!(videos_are_recuts(&[
            "out/master_v1.mp4",
            "out/master_v2.mp4"
        ]));
        assert!(videos_are_recuts(&[
            "out/ep1-take2.mp4",
            "out/ep1-take3.mp4"
        ]));
        assert!(videos_are_recuts(&["out/final.mp4", "out/final-recut.mp4"]));
        assert!(videos_are_recuts(&["out/final.mp4"]));
        assert!(!videos_are_recuts(&[
            "s/shot01.mov",
            "s/shot02.mov",
            "s/shot11.mov"
        ]));
    }
}
