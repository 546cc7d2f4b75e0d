//! Reading numbers out of one user line by fixed rules (RL-5, CW-1…CW-11), shared by checks
//! from the user's words and the requirements ledger. No model: a line that asks, supposes,
//! complains, reports on a cut, describes a file on hand, asks for another version or is about
//! a still picture reads nothing (CW-2); a number about one part (CW-3), in a clause about the
//! footage unless set (CW-4), after a no, being replaced or offered as a choice (CW-5), or a
//! moment, decade, range or how long something else takes (CW-6) reads nothing; a line giving
//! one dimension two different numbers counts for neither (CW-8).
//!
//! Numbers understood: arabic digits and decimals, Chinese numerals (九十, 一百二, 两, 半,
//! 一分半, 一个半小时) and English words up to ninety-nine ("two", "forty-five", "a minute",
//! "half a minute", "one and a half minutes"); see `numerals`.

use super::numbers_words::*;
use super::numerals::{
    Form, Kind, Norm, Token, ends_with_any, find_all, has_any, is_pixel_short_side, offset_in,
    starts_with_any, tokens,
};
use super::{Bound, Dimension, LinePlace, Number, Reading, Value};
use std::ops::Range;

/// Every number one line gives, at most one per dimension.
pub fn read_numbers(text: &str, place: LinePlace) -> Vec<Reading> {
    if place != LinePlace::Job {
        return Vec::new();
    }
    let norm = Norm::new(text);
    let t = norm.text.as_str();
    let clauses = clauses(t);
    if says_no_number(t, &clauses) {
        return Vec::new();
    }
    let line = Line {
        t,
        shape: has_any(t, SHAPE_WORD),
    };
    let mut found: Vec<Reading> = Vec::new();
    let mut part_before = false;
    let mut footage_before = false;
    for clause in clauses {
        let c = &t[clause.clone()];
        let whole = has_any(c, WHOLE_FILM);
        let part_here = has_any(c, PART) || has_shot_code(c);
        let footage_here = has_any(c, FOOTAGE);
        let scope = Scope {
            // CW-3: a part named here, or earlier when this clause does not name the whole film.
            part: part_here || (part_before && !whole),
            // CW-4: the same for the footage, a reference, music or a song.
            footage: footage_here || (footage_before && !whole),
        };
        part_before |= part_here;
        footage_before |= footage_here;
        let toks = tokens(t, clause.clone());
        for (i, tok) in toks.iter().enumerate() {
            let region = Region {
                clause: clause.clone(),
                from: if i == 0 {
                    clause.start
                } else {
                    toks[i - 1].end
                },
                to: toks.get(i + 1).map_or(clause.end, |n| n.start),
            };
            match line.judge(tok, &region, scope) {
                Verdict::Read(value, bound, target) => found.push(Reading {
                    dimension: value.dimension(),
                    number: Number::new(value, bound),
                    target,
                    span: norm.original(tok.start..tok.end),
                }),
                Verdict::Drop => {}
                Verdict::WholeLine => return Vec::new(),
            }
        }
    }
    settle_line(found)
}

/// Portrait or landscape counts only when no ratio is given; then one number per dimension,
/// none where the line gives two different ones (CW-8).
fn settle_line(found: Vec<Reading>) -> Vec<Reading> {
    let has_ratio = found
        .iter()
        .any(|r| matches!(r.number.value, Value::Ratio { .. }));
    let found: Vec<Reading> = found
        .into_iter()
        .filter(|r| !(has_ratio && matches!(r.number.value, Value::Orientation { .. })))
        .collect();
    let mut out: Vec<Reading> = Vec::new();
    for d in Dimension::ALL {
        let mut of: Vec<&Reading> = found.iter().filter(|r| r.dimension == d).collect();
        let Some(first) = of.first().copied() else {
            continue;
        };
        if of.iter().any(|r| !r.number.same_as(&first.number)) {
            continue;
        }
        let target = of.iter().any(|r| r.target);
        of.sort_by_key(|r| !r.target);
        out.push(Reading {
            target,
            ..of[0].clone()
        });
    }
    out.sort_by_key(|r| r.span.start);
    out
}

/// Clauses end at commas, full stops, semicolons, 、, brackets and line breaks; a '.' between
/// digits is a decimal point.
fn clauses(t: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<char> = None;
    let mut it = t.char_indices().peekable();
    while let Some((at, c)) = it.next() {
        let next = it.peek().map(|(_, n)| *n);
        let ends = matches!(
            c,
            ',' | '。' | ';' | '!' | '?' | '\n' | '\r' | '、' | '…' | '(' | ')' | '【' | '】'
        ) || (c == '.'
            && !(prev.is_some_and(|p| p.is_ascii_digit())
                && next.is_some_and(|n| n.is_ascii_digit())));
        if ends {
            if at > start {
                out.push(start..at);
            }
            start = at + c.len_utf8();
        }
        prev = Some(c);
    }
    if start < t.len() {
        out.push(start..t.len());
    }
    out
}

/// CW-2: the line as a whole reads no number.
fn says_no_number(t: &str, clauses: &[Range<usize>]) -> bool {
    [
        QUESTION,
        SUPPOSITION,
        COMPLAINT,
        REPORT,
        FILE_ON_HAND,
        OTHER_VERSION,
        STILL,
    ]
    .iter()
    .any(|list| has_any(t, list))
        || clauses.iter().any(|c| {
            let words = t[c.clone()].trim().trim_end_matches(['~', '-', ' ']);
            ONLY_FINE.contains(&words)
        })
}

/// A shot code such as C09 (a letter c and one to three digits, standing alone).
fn has_shot_code(c: &str) -> bool {
    let b = c.as_bytes();
    b.iter().enumerate().any(|(i, &ch)| {
        ch == b'c' && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) && {
            let digits = b[i + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
            (1..=3).contains(&digits)
                && b.get(i + 1 + digits)
                    .is_none_or(|n| !n.is_ascii_alphanumeric())
        }
    })
}

struct Line<'a> {
    t: &'a str,
    /// A word for the picture's shape somewhere in the line: a ratio may be read (RL-5).
    shape: bool,
}

#[derive(Copy, Clone)]
struct Scope {
    part: bool,
    footage: bool,
}

/// A token's surroundings: its clause, and the stretch between its neighbours.
struct Region {
    clause: Range<usize>,
    from: usize,
    to: usize,
}

enum Verdict {
    Read(Value, Bound, bool),
    Drop,
    /// 了 right after the number: a report on a cut, the whole line reads nothing (CW-2).
    WholeLine,
}

/// What stands right before a number: `[no] [setting verb] [bound words] N`.
struct Before {
    bound: Option<Bound>,
    setting: bool,
    negated: bool,
    /// After the bound words are taken off: where moment words are looked for.
    bare: String,
}

impl Line<'_> {
    fn judge(&self, tok: &Token, r: &Region, scope: Scope) -> Verdict {
        let t = self.t;
        let clause = &t[r.clause.clone()];
        let clause_before = &t[r.clause.start..tok.start];
        let prefix = t[r.from..tok.start].trim_end();
        let after = t[tok.end..r.to].trim_start();

        if tok.range || self.joined(tok, r) {
            return Verdict::Drop;
        }
        // CW-5: in 帧率 24 改成 60 or 从 4K 降到 1080 the old number never reads.
        if starts_with_any(after, SETTING_VERB).is_some()
            || ends_with_any(prefix, &["从", "from"]).is_some()
        {
            return Verdict::Drop;
        }
        let (after_bound, after_rest) = match bound_after(after) {
            Some((b, len)) => (Some(b), after[len..].trim_start()),
            None => (None, after),
        };
        if after_rest.starts_with('了') {
            return Verdict::WholeLine;
        }
        let before = before(prefix);
        if before.negated {
            return Verdict::Drop;
        }
        let bound = after_bound.or(before.bound);
        if scope.part || (scope.footage && !before.setting) {
            return Verdict::Drop;
        }
        let has = |words: &[&str]| has_any(clause, words);
        let target_by = |words: &[&str]| !scope.footage && (before.setting || has(words));
        let plain = |b: Option<Bound>| match b {
            Some(Bound::AtLeast) => Bound::AtLeast,
            Some(Bound::AtMost) => Bound::AtMost,
            Some(Bound::About) => Bound::About,
            _ => Bound::Exact,
        };
        let read = |v: Value, words: &[&str]| Verdict::Read(v, plain(bound), target_by(words));
        match tok.kind {
            Kind::Duration {
                seconds,
                bare_minutes,
                decade_like,
            } => {
                if decade_like && is_decade(seconds, prefix, after) {
                    return Verdict::Drop;
                }
                self.duration(
                    seconds,
                    bare_minutes,
                    clause_before,
                    &before,
                    bound,
                    after_rest,
                    r,
                    scope,
                )
            }
            Kind::Colon { a, b, b_two_digits } => {
                if let Some(v) = ratio(a, b).filter(|_| self.shape) {
                    read(v, ASPECT_WORD)
                } else if b_two_digits && b < 60.0 && tok.form == Form::Arabic {
                    // 1:30 is a running time unless a shape word makes it a likely ratio.
                    self.duration(
                        a * 60.0 + b,
                        false,
                        clause_before,
                        &before,
                        bound,
                        after_rest,
                        r,
                        scope,
                    )
                } else {
                    Verdict::Drop // 比分 2:1 is a score
                }
            }
            Kind::SmallCross { a, b } if self.shape => {
                ratio(a, b).map_or(Verdict::Drop, |v| read(v, ASPECT_WORD))
            }
            Kind::SmallCross { .. } => Verdict::Drop,
            Kind::Pixels { short } => read(Value::ShortSide { pixels: short }, RESOLUTION_WORD),
            Kind::KPixels { short } => {
                // 「预算 2k」, 「报价 4k」, 「码率 8k」, "2k words" are no picture size.
                if has(NOT_PIXELS) {
                    Verdict::Drop
                } else {
                    read(Value::ShortSide { pixels: short }, RESOLUTION_WORD)
                }
            }
            Kind::Fps(fps) if fps > 0.0 => read(Value::FramesPerSecond { fps }, FRAME_RATE_WORD),
            Kind::FrameCount(n) | Kind::Bare(n) if frame_rate_word_before(clause_before) => {
                if n > 0.0 && n <= 1000.0 {
                    read(Value::FramesPerSecond { fps: n }, FRAME_RATE_WORD)
                } else {
                    Verdict::Drop
                }
            }
            Kind::Bare(n) if has(RESOLUTION_WORD) && is_pixel_short_side(n) => {
                read(Value::ShortSide { pixels: n as u32 }, RESOLUTION_WORD)
            }
            Kind::Orientation(o) => read(Value::Orientation { orientation: o }, ASPECT_WORD),
            // 「淡出 24 帧」 counts frames; a bare number says nothing by itself.
            Kind::Fps(_) | Kind::FrameCount(_) | Kind::Bare(_) => Verdict::Drop,
        }
    }

    /// CW-1, CW-6 for a running time.
    #[allow(clippy::too_many_arguments)]
    fn duration(
        &self,
        seconds: f64,
        bare_minutes: bool,
        clause_before: &str,
        before: &Before,
        bound: Option<Bound>,
        after_rest: &str,
        r: &Region,
        scope: Scope,
    ) -> Verdict {
        let clause = &self.t[r.clause.clone()];
        if seconds <= 0.0 || has_any(clause, OTHER_DURATION) {
            return Verdict::Drop;
        }
        // A moment or a place: 第 3 秒, 「1 分钟左右切到产品」, "at 12 s", "3 minutes ago".
        if !before.setting && is_moment_before(&before.bare) {
            return Verdict::Drop;
        }
        if is_moment_after(after_rest) {
            return Verdict::Drop;
        }
        let running_word = has_any(clause_before, RUNNING_TIME_WORD);
        // A bare 分 or m is minutes only after a running-time word (2 分 may be a score).
        if bare_minutes && !running_word {
            return Verdict::Drop;
        }
        if bound.is_none() && !before.setting && !running_word {
            return Verdict::Drop;
        }
        let bound = match bound {
            Some(b) => b,
            None => Bound::Exact,
        };
        let target = !scope.footage && (before.setting || has_any(clause, RUNNING_TIME_WORD));
        Verdict::Read(Value::Seconds { seconds }, bound, target)
    }

    /// 「3-5 分钟」, 「24 或 30」, "a minute or two", "between 3 and 5": a range or a choice.
    fn joined(&self, tok: &Token, r: &Region) -> bool {
        let t = self.t;
        let after = t[tok.end..r.clause.end].trim_start();
        if let Some(len) = starts_with_any(after, JOINER) {
            let rest = after[len..].trim_start();
            let at = offset_in(t, rest);
            if super::numerals::numeral_at(t, at).is_some() {
                return true;
            }
        }
        let before = t[r.clause.start..tok.start].trim_end();
        if let Some(at) = ends_with_any(before, JOINER) {
            return ends_with_quantity(before[..at].trim_end());
        }
        false
    }
}

fn frame_rate_word_before(clause_before: &str) -> bool {
    has_any(clause_before, FRAME_RATE_WORD)
}

/// Whether `s` ends in a number, with or without its unit (the 3 of 「3 分钟到 5 分钟」).
fn ends_with_quantity(s: &str) -> bool {
    const UNITS: &[&str] = &[
        "秒钟", "秒", "分钟", "分", "小时", "帧", "fps", "seconds", "second", "secs", "sec", "s",
        "minutes", "minute", "mins", "min", "m", "p", "k",
    ];
    let is_num = |c: char| c.is_ascii_digit() || "零〇一二两三四五六七八九十百千半".contains(c);
    let last = |s: &str| s.chars().next_back();
    if last(s).is_some_and(is_num) {
        return true;
    }
    if english_number_word(s) {
        return true;
    }
    UNITS.iter().any(|u| {
        s.strip_suffix(u)
            .map(str::trim_end)
            .is_some_and(|rest| last(rest).is_some_and(is_num) || english_number_word(rest))
    })
}

fn english_number_word(s: &str) -> bool {
    let word = s
        .rsplit(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or_default();
    !word.is_empty() && {
        let at = s.len() - word.len();
        super::numerals::numeral_at(s, at).is_some_and(|n| n.form == Form::English)
    }
}

/// The bound word right after the number and its unit.
fn bound_after(after: &str) -> Option<(Bound, usize)> {
    BOUND_AFTER
        .iter()
        .filter(|(w, _)| starts_with_any(after, &[w]).is_some())
        .max_by_key(|(w, _)| w.len())
        .map(|(w, b)| (*b, w.len()))
}

/// The nearest bound word before the number in its stretch, the longest where two end at
/// one place (不要超过 over 超过, "don't go over" over "over").
fn nearest_bound(prefix: &str) -> Option<Bound> {
    BOUND_BEFORE
        .iter()
        .flat_map(|(w, b)| find_all(prefix, w).map(move |at| (at + w.len(), w.len(), *b)))
        .max_by_key(|(end, len, _)| (*end, *len))
        .map(|(_, _, b)| b)
}

fn before(prefix: &str) -> Before {
    let bound = nearest_bound(prefix);
    let words: Vec<&str> = BOUND_BEFORE.iter().map(|(w, _)| *w).collect();
    let mut bare = prefix;
    while let Some(at) = ends_with_any(bare, &words) {
        bare = bare[..at].trim_end();
    }
    // "cut the footage to 90 seconds": an English verb, its object, then "to".
    let setting_at = ends_with_any(bare, SETTING_VERB).or_else(|| {
        ends_with_any(bare, &["to"])?;
        ["cut", "trim", "shorten", "edit", "bring", "make"]
            .iter()
            .filter_map(|v| find_all(bare, v).last())
            .max()
    });
    let rest = setting_at.map_or(bare, |at| bare[..at].trim_end());
    Before {
        bound,
        setting: setting_at.is_some(),
        negated: ends_with_any(rest, NEGATION).is_some(),
        bare: bare.to_string(),
    }
}

/// 在 is a place in the picture, except after a running-time word (片长在 2 分钟左右).
fn is_moment_before(bare: &str) -> bool {
    match ends_with_any(bare, MOMENT_BEFORE) {
        None => false,
        Some(at) if &bare[at..] == "在" => {
            ends_with_any(bare[..at].trim_end(), RUNNING_TIME_WORD).is_none()
        }
        Some(_) => true,
    }
}

/// 「1 分钟左右切到产品」, "3 minutes ago", "a minute in"; not 时长, "after all", "in total".
fn is_moment_after(after_rest: &str) -> bool {
    if after_rest.starts_with("时长") || after_rest.starts_with("after all") {
        return false;
    }
    match starts_with_any(after_rest, MOMENT_AFTER) {
        Some(len) if &after_rest[..len] == "in" => after_rest[len..].trim().is_empty(),
        Some(_) => true,
        None => false,
    }
}

/// "90s 港风", 「90s 那种感觉」, "the 80s": a decade, not ninety seconds.
fn is_decade(n: f64, prefix: &str, after: &str) -> bool {
    let decade = n.fract() == 0.0
        && ((10.0..=90.0).contains(&n) || (1900.0..=2090.0).contains(&n))
        && n % 10.0 == 0.0;
    decade
        && (starts_with_any(after, DECADE_AFTER).is_some()
            || ends_with_any(prefix, &["the", "late", "early", "mid"]).is_some())
}

fn ratio(a: f64, b: f64) -> Option<Value> {
    (a > 0.0 && b > 0.0 && (0.2..=5.0).contains(&(a / b))).then_some(Value::Ratio {
        width: a,
        height: b,
    })
}

#[cfg(test)]
#[path = "numbers_tests.rs"]
mod tests;
