//! User quotes (C §5): the person's own words kept apart from the transcript. Pure rules:
//! how long a quote may be and how a longer one is cut (UQ body ≤ 2000 code points), which
//! clauses an edit changed (UQ-9), and the situation section "What the user said in this
//! job" (UQ-4, UQ-5, UQ-15).

use crate::time::iso_utc;

/// A quote keeps at most this many code points.
pub const QUOTE_MAX_CHARS: usize = 2000;
/// Each quote shown in the situation is cut to this many code points.
pub const SHOWN_MAX_CHARS: usize = 400;
/// The situation shows the first this-many quotes…
pub const SHOWN_FIRST: usize = 4;
/// …and the latest this-many (all of them when there are no more than the two together).
pub const SHOWN_LATEST: usize = 6;

/// Where a quote's words came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum QuoteSource {
    Line,
    Answer,
    AnnotationBatchLine,
    Annotation,
    BoardGoalClause,
    BoardTicketDescriptionClause,
    BoardDoneWhenLine,
    BoardRule,
}

impl QuoteSource {
    pub fn as_str(self) -> &'static str {
        match self {
            QuoteSource::Line => "line",
            QuoteSource::Answer => "answer",
            QuoteSource::AnnotationBatchLine => "annotation_batch_line",
            QuoteSource::Annotation => "annotation",
            QuoteSource::BoardGoalClause => "board_goal_clause",
            QuoteSource::BoardTicketDescriptionClause => "board_ticket_description_clause",
            QuoteSource::BoardDoneWhenLine => "board_done_when_line",
            QuoteSource::BoardRule => "board_rule",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "line" => QuoteSource::Line,
            "answer" => QuoteSource::Answer,
            "annotation_batch_line" => QuoteSource::AnnotationBatchLine,
            "annotation" => QuoteSource::Annotation,
            "board_goal_clause" => QuoteSource::BoardGoalClause,
            "board_ticket_description_clause" => QuoteSource::BoardTicketDescriptionClause,
            "board_done_when_line" => QuoteSource::BoardDoneWhenLine,
            "board_rule" => QuoteSource::BoardRule,
            other => return Err(format!("unknown quote source '{other}'")),
        })
    }

    /// Written on the flow board: no conversation, untouched by erasing a conversation's words.
    pub fn is_board(self) -> bool {
        matches!(
            self,
            QuoteSource::BoardGoalClause
                | QuoteSource::BoardTicketDescriptionClause
                | QuoteSource::BoardDoneWhenLine
                | QuoteSource::BoardRule
        )
    }
}

fn elision(cut: usize) -> String {
    format!("\n…[{cut} characters cut]…\n")
}

/// The words as a quote keeps them: as they are up to [`QUOTE_MAX_CHARS`] code points;
/// longer, the head and the tail around a marker that says how many code points were cut,
/// the whole still within the limit.
pub fn clip_quote(body: &str) -> String {
    let chars: Vec<char> = body.chars().collect();
    if chars.len() <= QUOTE_MAX_CHARS {
        return body.to_string();
    }
    // The marker's length depends on the count it names; settle the two together.
    let mut cut = chars.len() - QUOTE_MAX_CHARS;
    loop {
        let marker = elision(cut).chars().count();
        let next = chars.len() - (QUOTE_MAX_CHARS - marker);
        if next == cut {
            break;
        }
        cut = next;
    }
    let kept = chars.len() - cut;
    let head = kept.div_ceil(2);
    let tail = kept - head;
    let mut out: String = chars[..head].iter().collect();
    out.push_str(&elision(cut));
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// At most `max` code points, cut with "…" when longer.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Whether `c` at `i` in `chars` ends a clause. A full stop or comma between digits (3.5,
/// 1,000) is part of a number, not a clause's end.
fn ends_clause(chars: &[char], i: usize) -> bool {
    match chars[i] {
        '，' | '。' | '；' | ';' | '！' | '!' | '？' | '?' | '、' | '\n' => true,
        '.' | ',' => {
            let before = i > 0 && chars[i - 1].is_ascii_digit();
            let after = chars.get(i + 1).is_some_and(|c| c.is_ascii_digit());
            !(before && after)
        }
        _ => false,
    }
}

/// The clauses of a text as char ranges, trimmed, without their ending punctuation; empty
/// clauses dropped.
fn clauses(chars: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..=chars.len() {
        if i == chars.len() || ends_clause(chars, i) {
            let (mut a, mut b) = (start, i);
            while a < b && chars[a].is_whitespace() {
                a += 1;
            }
            while b > a && chars[b - 1].is_whitespace() {
                b -= 1;
            }
            if a < b {
                out.push((a, b));
            }
            start = i + 1;
        }
    }
    out
}

/// UQ-9: the words an edit added, as a quote keeps them: the clauses of `new` that `old` did
/// not say (each old clause matches one new clause at most). Neighbouring changed clauses
/// stay one verbatim stretch of the new text; stretches apart are joined with " … ". `None`
/// when the edit only took words out (or changed nothing): then no quote is stored.
pub fn changed_clauses(old: &str, new: &str) -> Option<String> {
    let old_chars: Vec<char> = old.chars().collect();
    let new_chars: Vec<char> = new.chars().collect();
    let text = |chars: &[char], (a, b): (usize, usize)| chars[a..b].iter().collect::<String>();
    let mut unmatched: Vec<String> = clauses(&old_chars)
        .into_iter()
        .map(|c| text(&old_chars, c))
        .collect();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut last_changed = false;
    for c in clauses(&new_chars) {
        let words = text(&new_chars, c);
        if let Some(i) = unmatched.iter().position(|o| *o == words) {
            unmatched.remove(i);
            last_changed = false;
            continue;
        }
        match runs.last_mut() {
            Some(run) if last_changed => run.1 = c.1,
            _ => runs.push(c),
        }
        last_changed = true;
    }
    if runs.is_empty() {
        return None;
    }
    let parts: Vec<String> = runs.into_iter().map(|r| text(&new_chars, r)).collect();
    Some(parts.join(" … "))
}

/// The board's Done when lines and rules the person added: each line of `new` (trimmed, not
/// blank) that `old` did not have (each old line matches one new line at most), in order.
pub fn added_lines(old: &str, new: &str) -> Vec<String> {
    let mut unmatched: Vec<&str> = old
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let mut out = Vec::new();
    for line in new.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match unmatched.iter().position(|o| *o == line) {
            Some(i) => {
                unmatched.remove(i);
            }
            None => out.push(line.to_string()),
        }
    }
    out
}

/// Where the person said a quote, as the situation names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaidWhere {
    Group {
        title: String,
    },
    Direct {
        bot: String,
    },
    Answer {
        bot: String,
    },
    Annotation,
    Board,
    /// Said in a group since deleted.
    Gone,
}

impl SaidWhere {
    fn text(&self) -> String {
        match self {
            SaidWhere::Group { title } => format!("in the group \"{title}\""),
            SaidWhere::Direct { bot } => format!("in the direct with {bot}"),
            SaidWhere::Answer { bot } => format!("answering a question from {bot}"),
            SaidWhere::Annotation => "in an annotation".into(),
            SaidWhere::Board => "on the flow board".into(),
            SaidWhere::Gone => "in a conversation since deleted".into(),
        }
    }
}

/// One quote as the situation lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShownQuote {
    pub at: i64,
    pub said: SaidWhere,
    pub body: String,
    /// An edit's quote: the person changed a line they had sent (UQ-15).
    pub edit: bool,
}

/// "MM-DD HH:mm" of an instant, `offset_minutes` east of UTC.
pub fn month_day_minute(epoch_ms: i64, offset_minutes: i32) -> String {
    let iso = iso_utc(epoch_ms + i64::from(offset_minutes) * 60_000);
    // yyyy-mm-ddTHH:MM:SSZ
    format!("{} {}", &iso[5..10], &iso[11..16])
}

/// UQ-4, UQ-5: the section "What the user said in this job" for a segment working in the
/// job, from its quotes oldest first (erased ones already left out). None for the job's first
/// segment (the request that opened it is its trigger) and when there is nothing to list.
/// More than [`SHOWN_FIRST`] + [`SHOWN_LATEST`]: the first and the latest, and how many were
/// left out between them.
pub fn situation_section(
    quotes: &[ShownQuote],
    first_segment: bool,
    offset_minutes: i32,
) -> Option<String> {
    if first_segment || quotes.is_empty() {
        return None;
    }
    let mut out =
        String::from("What the user said in this job (their own words, verbatim, oldest first):");
    let line = |q: &ShownQuote| {
        let said = if q.edit {
            format!("changed a line {}", q.said.text())
        } else {
            q.said.text()
        };
        format!(
            "\n- {}, {said}: {}",
            month_day_minute(q.at, offset_minutes),
            shorten(&q.body, SHOWN_MAX_CHARS)
        )
    };
    let all = SHOWN_FIRST + SHOWN_LATEST;
    if quotes.len() <= all {
        quotes.iter().for_each(|q| out.push_str(&line(q)));
    } else {
        quotes[..SHOWN_FIRST]
            .iter()
            .for_each(|q| out.push_str(&line(q)));
        let omitted = quotes.len() - all;
        out.push_str(&format!("\n- ({omitted} omitted)"));
        quotes[quotes.len() - SHOWN_LATEST..]
            .iter()
            .for_each(|q| out.push_str(&line(q)));
    }
    Some(out)
}

/// UQ-15: how a Bot's transcript marks a line the person changed after sending it.
pub const EDITED_MARK: &str = "(发出后改过)";

/// UQ-13: what a Bot that already read a line is told when the person changes it.
pub fn changed_line_note(now: &str, was: &str) -> String {
    format!("You changed this line. It now reads: “{now}” (it was: “{was}”)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_quote_is_kept_whole() {
        assert_eq!(clip_quote("剪一支宣传片"), "剪一支宣传片");
        let exact = "a".repeat(QUOTE_MAX_CHARS);
        assert_eq!(clip_quote(&exact), exact);
    }

    #[test]
    fn a_long_quote_keeps_head_and_tail_and_says_how_much_was_cut() {
        let body: String = "头".repeat(1500) + &"尾".repeat(1000);
        let q = clip_quote(&body);
        let n = q.chars().count();
        assert!(n <= QUOTE_MAX_CHARS, "{n}");
        assert!(q.starts_with("头头头") && q.ends_with("尾尾尾"));
        let kept = q.chars().filter(|c| *c == '头' || *c == '尾').count();
        let cut = 2500 - kept;
        assert!(q.contains(&format!("…[{cut} characters cut]…")), "{q}");
        assert_eq!(n, QUOTE_MAX_CHARS);
    }

    #[test]
    fn the_cut_count_is_right_where_its_digits_change() {
        for len in [2001, 2010, 2099, 2100, 2101, 11_000, 12_345] {
            let q = clip_quote(&"x".repeat(len));
            let kept = q.chars().filter(|c| *c == 'x').count();
            assert!(q.contains(&format!("[{} characters cut]", len - kept)));
            assert!(q.chars().count() <= QUOTE_MAX_CHARS);
        }
    }

    #[test]
    fn shorten_cuts_with_an_ellipsis() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten(&"字".repeat(500), 400).chars().count(), 400);
    }

    #[test]
    fn uq_9_an_added_clause_is_the_only_words_kept() {
        assert_eq!(
            changed_clauses("剪一支约 60 秒的宣传片", "剪一支约 60 秒的宣传片,加字幕"),
            Some("加字幕".into())
        );
        assert_eq!(
            changed_clauses("剪一支约 60 秒的宣传片", "剪一支约 60 秒的宣传片，加字幕。"),
            Some("加字幕".into())
        );
    }

    #[test]
    fn uq_9_pure_deletions_and_no_change_keep_nothing() {
        assert_eq!(
            changed_clauses("cut a teaser, add subtitles", "cut a teaser"),
            None
        );
        assert_eq!(changed_clauses("same words", "same words"), None);
        assert_eq!(changed_clauses("a, b", "b, a"), None);
    }

    #[test]
    fn uq_9_a_changed_clause_replaces_the_old_one() {
        assert_eq!(
            changed_clauses(
                "about 60 seconds, with music",
                "about 90 seconds, with music"
            ),
            Some("about 90 seconds".into())
        );
    }

    #[test]
    fn neighbouring_changes_stay_one_stretch_and_far_ones_are_joined() {
        assert_eq!(
            changed_clauses("a, b, c", "a, x, y, c"),
            Some("x, y".into())
        );
        assert_eq!(changed_clauses("a, b, c", "x, b, y"), Some("x … y".into()));
    }

    #[test]
    fn numbers_are_not_split_at_their_points() {
        assert_eq!(
            changed_clauses("length 1.5 minutes", "length 2.5 minutes"),
            Some("length 2.5 minutes".into())
        );
        assert_eq!(
            changed_clauses("budget 1,000", "budget 1,000, in euros"),
            Some("in euros".into())
        );
    }

    #[test]
    fn only_added_board_lines_are_kept() {
        assert_eq!(
            added_lines(
                "- plays on a phone\n- under 60 s",
                "- under 60 s\n\n- has subtitles\n- plays on a phone"
            ),
            vec!["- has subtitles".to_string()]
        );
        assert!(added_lines("a\nb", "a").is_empty());
        assert_eq!(added_lines("a", "a\na"), vec!["a".to_string()]);
    }

    fn q(i: usize) -> ShownQuote {
        ShownQuote {
            at: 1_700_000_000_000 + i as i64 * 60_000,
            said: SaidWhere::Direct { bot: "Ada".into() },
            body: format!("quote {i}"),
            edit: false,
        }
    }

    #[test]
    fn uq_4_first_four_and_latest_six_with_the_omitted_count() {
        let quotes: Vec<_> = (1..=12).map(q).collect();
        let s = situation_section(&quotes, false, 0).unwrap();
        for i in [1, 2, 3, 4, 7, 8, 9, 10, 11, 12] {
            assert!(s.contains(&format!(": quote {i}\n")) || s.ends_with(&format!(": quote {i}")));
        }
        assert!(!s.contains("quote 5") && !s.contains("quote 6"));
        assert!(s.contains("(2 omitted)"));
        let pos = |t: &str| s.find(t).unwrap();
        assert!(pos("quote 4") < pos("(2 omitted)") && pos("(2 omitted)") < pos("quote 7"));
    }

    #[test]
    fn uq_4_ten_or_fewer_are_all_listed() {
        let quotes: Vec<_> = (1..=10).map(q).collect();
        let s = situation_section(&quotes, false, 0).unwrap();
        assert!(!s.contains("omitted"));
        assert_eq!(s.matches("\n- ").count(), 10);
    }

    #[test]
    fn uq_5_the_first_segment_lists_none() {
        assert_eq!(situation_section(&[q(1)], true, 0), None);
        assert_eq!(situation_section(&[], false, 0), None);
    }

    #[test]
    fn uq_4_time_where_and_a_cut_at_400() {
        let mut long = q(1);
        long.body = "长".repeat(450);
        long.said = SaidWhere::Group {
            title: "Launch".into(),
        };
        // 2023-11-14T22:13:20Z; eight hours east is the next day.
        let s = situation_section(&[long], false, 8 * 60).unwrap();
        assert!(s.contains("11-15 06:14, in the group \"Launch\": "), "{s}");
        assert!(s.contains(&format!("{}…", "长".repeat(399))));
        assert!(!s.contains(&"长".repeat(400)));
    }

    #[test]
    fn uq_15_an_edit_says_it_changed_a_line() {
        let mut e = q(2);
        e.edit = true;
        let s = situation_section(&[q(1), e], false, 0).unwrap();
        assert!(
            s.contains("changed a line in the direct with Ada: quote 2"),
            "{s}"
        );
    }

    #[test]
    fn sources_round_trip() {
        for s in [
            QuoteSource::Line,
            QuoteSource::Answer,
            QuoteSource::AnnotationBatchLine,
            QuoteSource::Annotation,
            QuoteSource::BoardGoalClause,
            QuoteSource::BoardTicketDescriptionClause,
            QuoteSource::BoardDoneWhenLine,
            QuoteSource::BoardRule,
        ] {
            assert_eq!(QuoteSource::parse(s.as_str()), Ok(s));
        }
        assert!(QuoteSource::parse("bot").is_err());
    }
}
