//! Folding text so a model's quote can be found in a line however it spaced, punctuated or
//! widened it (LR-9), plus the character classes the mention and nod rules share.

/// Lowercase, full-width ASCII made ASCII, every whitespace and punctuation removed.
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().map(narrow) {
        if c.is_whitespace() || is_punct(c) {
            continue;
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Whether `needle` occurs in `haystack` once both are folded. An empty fold never counts:
/// a quote of only punctuation quotes nothing.
pub fn folded_contains(haystack: &str, needle: &str) -> bool {
    let needle = fold(needle);
    !needle.is_empty() && fold(haystack).contains(&needle)
}

/// Full-width forms U+FF01–U+FF5E map onto ASCII 0x21–0x7E; U+3000 is whitespace anyway.
pub fn narrow(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        _ => c,
    }
}

/// ASCII punctuation and symbols, and the CJK and general punctuation people type.
pub fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c,
            '¡' | '§' | '«' | '¶' | '·' | '»' | '¿' | '・'
            | '\u{2010}'..='\u{205E}'   // general punctuation: dashes, quotes, …
            | '\u{3001}'..='\u{303F}'   // CJK punctuation: 、。「」『』【】〜
            | '\u{FE10}'..='\u{FE6B}'   // vertical and small forms
            | '\u{FF01}'..='\u{FF0F}'
            | '\u{FF1A}'..='\u{FF20}'
            | '\u{FF3B}'..='\u{FF40}'
            | '\u{FF5B}'..='\u{FF65}')
}

/// Han, kana and Hangul: scripts written without spaces, so a name may run straight into them.
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FA}'
        | '\u{30FC}'..='\u{30FF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{AC00}'..='\u{D7AF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{2FFFF}')
}

/// Pictographs and their joiners; a nod may end in 👍 or 🙏.
pub fn is_emoji(c: char) -> bool {
    matches!(c,
        '\u{1F000}'..='\u{1FAFF}'
        | '\u{2600}'..='\u{27BF}'
        | '\u{2B00}'..='\u{2BFF}'
        | '\u{FE0E}' | '\u{FE0F}' | '\u{200D}' | '\u{20E3}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_ignores_width_spaces_and_punctuation() {
        assert_eq!(fold("Ｈｅｌｌｏ， World！"), "helloworld");
        assert_eq!(fold("「先别搞了，收手吧」……"), "先别搞了收手吧");
        assert_eq!(fold("（颜色）不对—重做。"), "颜色不对重做");
        assert_eq!(fold("a\u{3000}b\tc\n"), "abc");
        assert!(folded_contains("1 可以, 2 的颜色不对", "2的颜色不对！"));
        assert!(folded_contains("The Colour is OFF.", "colour is off"));
        assert!(!folded_contains("abc", "abd"));
        assert!(!folded_contains("abc", "，。"));
    }
}
