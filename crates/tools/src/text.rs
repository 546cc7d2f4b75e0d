//! Small text helpers shared by the tools and by the engine's records.

/// Longest folded command kept in records and summaries.
pub const MAX_FOLDED_CHARS: usize = 300;

/// Fold a command to one line for records: every whitespace run (newlines,
/// tabs, spaces) becomes one space, the ends are trimmed, and the result is
/// capped at [`MAX_FOLDED_CHARS`] chars (the last one becomes `…` when cut, so
/// a reader can tell it was shortened).
pub fn fold_command(cmd: &str) -> String {
    let folded = cmd.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= MAX_FOLDED_CHARS {
        return folded;
    }
    let mut cut: String = folded.chars().take(MAX_FOLDED_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// The last `n` chars of `s` (chars, not bytes, so a UTF-8 sequence is never
/// split).
pub fn tail_chars(s: &str, n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    match s.char_indices().rev().nth(n - 1) {
        Some((start, _)) => s[start..].to_string(),
        None => s.to_string(),
    }
}

/// Make a model-given value safe for a one-line summary: control characters
/// become `?` and the length is capped like a folded command.
pub(crate) fn one_line(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if cleaned.chars().count() <= MAX_FOLDED_CHARS {
        return cleaned;
    }
    let mut cut: String = cleaned.chars().take(MAX_FOLDED_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_collapses_whitespace_runs() {
        assert_eq!(
            fold_command("  ls   -la\n\tcat  x \r\n echo\u{a0}hi "),
            "ls -la cat x echo hi"
        );
        assert_eq!(fold_command("\n\t "), "");
    }

    #[test]
    fn fold_caps_at_300_chars() {
        let long = format!("echo {}", "é\n".repeat(400));
        let folded = fold_command(&long);
        assert_eq!(folded.chars().count(), MAX_FOLDED_CHARS);
        assert!(folded.ends_with('…'));
        assert!(!folded.contains('\n'));
        let exact = "x".repeat(MAX_FOLDED_CHARS);
        assert_eq!(fold_command(&exact), exact);
    }

    #[test]
    fn tail_counts_chars_not_bytes() {
        assert_eq!(tail_chars("héllo wörld", 5), "wörld");
        assert_eq!(tail_chars("ab", 5), "ab");
        assert_eq!(tail_chars("abc", 0), "");
        let s = "€".repeat(10);
        assert_eq!(tail_chars(&s, 3), "€€€");
    }

    #[test]
    fn one_line_strips_controls() {
        assert_eq!(one_line("a\nb\tc"), "a?b?c");
    }
}
