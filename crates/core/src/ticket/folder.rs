//! A ticket's folder name (T24, B §1.1): `NN-<title cut to 20 code points>`, fixed when the
//! ticket opens, and the shape the `write_file` guard (S-T4) recognises as a ticket folder.

/// Code points of the title kept in the folder name.
pub const TITLE_CODE_POINTS: usize = 20;

/// The folder name for ticket `number` titled `title`: the number with at least two digits,
/// a dash, and the trimmed title cut to 20 code points, with path separators and characters
/// unsafe in a file name replaced by `_`. Never empty after the dash (`NN-ticket`), and never
/// ending in a dot or space, which some file systems drop.
pub fn ticket_folder_name(number: u32, title: &str) -> String {
    let safe: String = title
        .trim()
        .chars()
        .map(|c| if unsafe_in_file_name(c) { '_' } else { c })
        .take(TITLE_CODE_POINTS)
        .collect();
    let safe = safe.trim_end_matches(['.', ' ']).trim();
    // A title of only dots or separators says nothing; "NN-…" names the ticket well enough.
    let meaningful = safe.chars().any(|c| c != '_' && c != '.');
    let title = if meaningful { safe } else { "ticket" };
    format!("{number:02}-{title}")
}

fn unsafe_in_file_name(c: char) -> bool {
    matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|') || c.is_control()
}

/// S-T4: the ticket number if a path segment is shaped like a ticket folder — two or more
/// ASCII digits, a dash, and anything after. The guard refuses a write into such a folder
/// that belongs to no ticket and does not exist yet.
pub fn looks_like_ticket_folder(segment: &str) -> Option<u32> {
    let (digits, _) = segment.split_once('-')?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t24_folder_name() {
        assert_eq!(ticket_folder_name(1, "Poster"), "01-Poster");
        assert_eq!(ticket_folder_name(123, "  Slogan  "), "123-Slogan");
        // Cut to 20 code points, not bytes.
        assert_eq!(
            ticket_folder_name(1, "每天一个主题的短视频脚本与分镜以及配乐说明文档"),
            "01-每天一个主题的短视频脚本与分镜以及配乐说"
        );
        assert_eq!(
            ticket_folder_name(2, "abcdefghijklmnopqrstuvwxyz"),
            "02-abcdefghijklmnopqrst"
        );
        // Separators and unsafe characters are replaced; a cut never ends in space or dot.
        assert_eq!(ticket_folder_name(3, "a/b\\c:d*e?f"), "03-a_b_c_d_e_f");
        assert_eq!(ticket_folder_name(4, "line\nbreak"), "04-line_break");
        assert_eq!(
            ticket_folder_name(5, "nineteen characters x"),
            "05-nineteen characters"
        );
        assert_eq!(ticket_folder_name(6, "v1."), "06-v1");
        // Never empty.
        assert_eq!(ticket_folder_name(7, ""), "07-ticket");
        assert_eq!(ticket_folder_name(8, "   "), "08-ticket");
        assert_eq!(ticket_folder_name(9, ".."), "09-ticket");
        assert_eq!(ticket_folder_name(10, "///"), "10-ticket");
    }

    #[test]
    fn s_t4_ticket_folder_shape() {
        assert_eq!(looks_like_ticket_folder("01-每天一个主题"), Some(1));
        assert_eq!(looks_like_ticket_folder("12-"), Some(12));
        assert_eq!(looks_like_ticket_folder("123-x"), Some(123));
        assert_eq!(looks_like_ticket_folder("1-x"), None);
        assert_eq!(looks_like_ticket_folder("ab-x"), None);
        assert_eq!(looks_like_ticket_folder("deliverables"), None);
        assert_eq!(looks_like_ticket_folder("2024-01-01.md"), Some(2024));
        assert_eq!(looks_like_ticket_folder("99999999999-x"), None);
        // Every name we make is recognised with its number.
        for (n, title) in [(1, "Poster"), (42, "…"), (7, "")] {
            assert_eq!(
                looks_like_ticket_folder(&ticket_folder_name(n, title)),
                Some(n)
            );
        }
    }
}
