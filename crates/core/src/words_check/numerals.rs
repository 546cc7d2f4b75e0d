//! Numbers and their units in a user's line, before any rule decides whether they count:
//! arabic (90, 1.5), Chinese (九十, 一百二, 两, 半, 一分半) and English words (two, forty-five,
//! "a minute", "half an hour", "and a half"); running-time units (秒, 分钟, 小时, s, sec, min,
//! minutes, hours, 1:30, 1分30秒, 2m30s; a bare 分 or m only before seconds or after a
//! running-time word), picture sizes (1080p, 4K, 1920×1080), ratios (16:9), frame rates
//! (30 fps, 每秒 30 帧) and frame counts (24 帧).

use super::Orientation;
use crate::reading::fold::{is_cjk, narrow};
use std::ops::Range;

/// The line as the rules read it (full-width narrowed, ASCII lower-cased, ’ as '), with a map
/// back to the caller's byte offsets so a reading can point into the words as written.
pub(super) struct Norm {
    pub text: String,
    map: Vec<usize>,
}

impl Norm {
    pub fn new(s: &str) -> Norm {
        let mut text = String::with_capacity(s.len());
        let mut map = Vec::with_capacity(s.len() + 1);
        for (at, c) in s.char_indices() {
            let c = match narrow(c) {
                '\u{3000}' => ' ',
                '’' | '‘' | '′' => '\'',
                '〜' => '~',
                '–' => '-',
                c => c.to_ascii_lowercase(),
            };
            let before = text.len();
            text.push(c);
            map.resize(map.len() + (text.len() - before), at);
        }
        map.push(s.len());
        Norm { text, map }
    }

    pub fn original(&self, r: Range<usize>) -> Range<usize> {
        self.map[r.start]..self.map[r.end]
    }
}

/// Where `sub`, a slice of `t`, starts in `t`.
pub(super) fn offset_in(t: &str, sub: &str) -> usize {
    let at = sub.as_ptr() as usize - t.as_ptr() as usize;
    debug_assert!(at <= t.len() && t.is_char_boundary(at));
    at
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric())
}

fn char_before(t: &str, at: usize) -> Option<char> {
    t[..at].chars().next_back()
}

fn char_at(t: &str, at: usize) -> Option<char> {
    t[at..].chars().next()
}

/// Whether `phrase` stands at `at` as a whole word where its own ends are ASCII letters or
/// digits (Chinese has no spaces, so a Chinese phrase matches anywhere).
fn stands_at(t: &str, at: usize, phrase: &str) -> bool {
    if !t[at..].starts_with(phrase) {
        return false;
    }
    let first = phrase.chars().next();
    let last = phrase.chars().next_back();
    (!is_word(first) || !is_word(char_before(t, at)))
        && (!is_word(last) || !is_word(char_at(t, at + phrase.len())))
}

/// Every place `phrase` stands in `t`.
pub(super) fn find_all<'a>(t: &'a str, phrase: &'a str) -> impl Iterator<Item = usize> + 'a {
    t.match_indices(phrase)
        .map(|(at, _)| at)
        .filter(move |&at| stands_at(t, at, phrase))
}

pub(super) fn has_any(t: &str, phrases: &[&str]) -> bool {
    phrases.iter().any(|p| find_all(t, p).next().is_some())
}

/// The longest of `phrases` that `t` (already trimmed) ends with, as its start.
pub(super) fn ends_with_any(t: &str, phrases: &[&str]) -> Option<usize> {
    phrases
        .iter()
        .filter(|p| t.len() >= p.len() && t.is_char_boundary(t.len() - p.len()))
        .filter(|p| stands_at(t, t.len() - p.len(), p))
        .map(|p| t.len() - p.len())
        .min()
}

/// The longest of `phrases` that `t` (already trimmed) starts with, as its length.
pub(super) fn starts_with_any(t: &str, phrases: &[&str]) -> Option<usize> {
    phrases
        .iter()
        .filter(|p| stands_at(t, 0, p))
        .map(|p| p.len())
        .max()
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub(super) enum Form {
    Arabic,
    Chinese,
    English,
}

/// A bare number found in the text.
#[derive(Copy, Clone, Debug)]
pub(super) struct Numeral {
    pub value: f64,
    pub end: usize,
    pub form: Form,
    /// 一两, 两三: two numbers at once, a range.
    pub range: bool,
    /// Whole digits with no leading zero (not 1.5, not 09): only such can be 1080p or 4K.
    pub plain_integer: bool,
}

fn cjk_digit(c: char) -> Option<u32> {
    Some(match c {
        '零' | '〇' => 0,
        '一' => 1,
        '二' | '两' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        _ => return None,
    })
}

fn cjk_unit(c: char) -> Option<u32> {
    Some(match c {
        '十' => 10,
        '百' => 100,
        '千' => 1000,
        _ => return None,
    })
}

const ENGLISH_SMALL: &[(&str, u32)] = &[
    ("zero", 0),
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("thirteen", 13),
    ("fourteen", 14),
    ("fifteen", 15),
    ("sixteen", 16),
    ("seventeen", 17),
    ("eighteen", 18),
    ("nineteen", 19),
];

const ENGLISH_TENS: &[(&str, u32)] = &[
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("fifty", 50),
    ("sixty", 60),
    ("seventy", 70),
    ("eighty", 80),
    ("ninety", 90),
];

fn ascii_word_at(t: &str, at: usize) -> &str {
    let len = t[at..]
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(t.len() - at);
    &t[at..at + len]
}

fn english_small(w: &str) -> Option<u32> {
    ENGLISH_SMALL
        .iter()
        .chain(ENGLISH_TENS)
        .find(|(s, _)| *s == w)
        .map(|(_, v)| *v)
}

/// The number starting at `at`, if one does. A digit run glued to a letter (EP01, C09, h264)
/// is a name, not a number.
pub(super) fn numeral_at(t: &str, at: usize) -> Option<Numeral> {
    let c = char_at(t, at)?;
    if c.is_ascii_digit() {
        if is_word(char_before(t, at)) || char_before(t, at) == Some('.') {
            return None;
        }
        let bytes = t.as_bytes();
        let mut end = at;
        while end < t.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        let mut plain = !(bytes[at] == b'0' && end - at > 1);
        if end + 1 < t.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
            end += 1;
            while end < t.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
            plain = false;
        }
        let value = t[at..end].parse::<f64>().ok()?;
        return Some(Numeral {
            value,
            end,
            form: Form::Arabic,
            range: false,
            plain_integer: plain,
        });
    }
    if cjk_digit(c).is_some() || cjk_unit(c).is_some() {
        return chinese_at(t, at);
    }
    if c.is_ascii_alphabetic() && !is_word(char_before(t, at)) {
        return english_at(t, at);
    }
    None
}

fn chinese_at(t: &str, at: usize) -> Option<Numeral> {
    let mut total: u32 = 0;
    let mut pending: Option<u32> = None;
    let mut last_unit: Option<u32> = None;
    let mut range = false;
    let mut end = at;
    for c in t[at..].chars() {
        if let Some(d) = cjk_digit(c) {
            if let Some(p) = pending {
                // 一两, 两三, 三五: two numbers side by side are a rough range.
                range |= p != 0 && d != 0;
            } else {
                pending = Some(d);
            }
        } else if let Some(u) = cjk_unit(c) {
            total += pending.take().unwrap_or(1) * u;
            last_unit = Some(u);
        } else {
            break;
        }
        end += c.len_utf8();
        if end - at > 24 {
            return None;
        }
    }
    if let Some(p) = pending {
        // 一百二 is 120, 两千五 2500: a trailing digit after 百/千 fills the next place.
        total += match last_unit {
            Some(u) if u >= 100 && !range => p * (u / 10),
            _ => p,
        };
    }
    Some(Numeral {
        value: f64::from(total),
        end,
        form: Form::Chinese,
        range,
        plain_integer: true,
    })
}

fn english_at(t: &str, at: usize) -> Option<Numeral> {
    let w = ascii_word_at(t, at);
    let mut end = at + w.len();
    let value = if w == "a" || w == "an" {
        // "a minute", "an hour": one, only before the unit itself.
        let rest = t[end..].trim_start();
        if !["minute", "min", "hour", "second"]
            .iter()
            .any(|u| rest.starts_with(u))
        {
            return None;
        }
        1
    } else {
        let v = english_small(w)?;
        if ENGLISH_TENS.iter().any(|(s, _)| *s == w) {
            // forty-five, forty five
            for sep in ["-", " "] {
                if let Some(rest) = t[end..].strip_prefix(sep) {
                    let next = ascii_word_at(t, end + sep.len());
                    if let Some(u) = english_small(next).filter(|u| (1..10).contains(u))
                        && next == rest.get(..next.len()).unwrap_or_default()
                    {
                        end += sep.len() + next.len();
                        return Some(english(f64::from(v + u), end));
                    }
                }
            }
        }
        v
    };
    Some(english(f64::from(value), end))
}

fn english(value: f64, end: usize) -> Numeral {
    Numeral {
        value,
        end,
        form: Form::English,
        range: false,
        plain_integer: true,
    }
}

/// What a number with its unit is.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(super) enum Kind {
    /// A running time. `bare_minutes`: written with a bare 分 or m, minutes only after a
    /// running-time word. `decade_like`: "90s" glued, which may be a decade.
    Duration {
        seconds: f64,
        bare_minutes: bool,
        decade_like: bool,
    },
    /// 1080p, 720p, 1920×1080: the short side.
    Pixels {
        short: u32,
    },
    /// 2K, 4K, 8K: a picture size unless money, bitrate or a count.
    KPixels {
        short: u32,
    },
    /// a:b — a ratio with a shape word, else a clock time if b has two digits, else a score.
    Colon {
        a: f64,
        b: f64,
        b_two_digits: bool,
    },
    /// 9x16 (both small): a ratio only with a shape word.
    SmallCross {
        a: f64,
        b: f64,
    },
    Fps(f64),
    /// N 帧 alone: a count of frames, never a rate (unless 帧率 came first: 帧率 30 帧).
    FrameCount(f64),
    /// A number with no unit; 帧率 or 分辨率 in the clause may claim it.
    Bare(f64),
    /// 竖屏/横屏, portrait/landscape (横幅 and 竖幅 are as often a banner, and are not).
    Orientation(Orientation),
}

#[derive(Copy, Clone, Debug)]
pub(super) struct Token {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
    pub range: bool,
    pub form: Form,
}

const PIXEL_SHORT_SIDES: &[u32] = &[240, 360, 480, 540, 720, 1080, 1440, 2160, 4320];

pub(super) fn is_pixel_short_side(v: f64) -> bool {
    v.fract() == 0.0 && PIXEL_SHORT_SIDES.contains(&(v as u32))
}

fn k_short_side(v: f64) -> Option<u32> {
    match v as u32 {
        _ if v.fract() != 0.0 => None,
        2 => Some(1440),
        4 => Some(2160),
        8 => Some(4320),
        _ => None,
    }
}

/// Skip spaces from `at`.
fn skip_spaces(t: &str, at: usize) -> usize {
    at + (t[at..].len() - t[at..].trim_start_matches([' ', '\t']).len())
}

/// A unit word at `at` that is not the start of a longer ASCII word.
fn unit_at(t: &str, at: usize, units: &[&str]) -> Option<usize> {
    units
        .iter()
        .filter(|u| t[at..].starts_with(*u))
        .filter(|u| {
            !u.is_ascii() || !char_at(t, at + u.len()).is_some_and(|c| c.is_ascii_alphabetic())
        })
        .map(|u| u.len())
        .max()
}

const SECONDS: &[&str] = &["秒钟", "秒", "seconds", "second", "secs", "sec", "s"];
const MINUTES: &[&str] = &["分钟", "minutes", "minute", "mins", "min"];
const HOURS: &[&str] = &["个小时", "小时", "钟头", "hours", "hour", "hrs", "hr"];

/// "and a half" or 半 after a number or its unit adds half of that unit.
fn half_at(t: &str, at: usize) -> Option<usize> {
    let a = skip_spaces(t, at);
    if t[a..].starts_with("and a half") {
        return Some(a + "and a half".len());
    }
    if t[a..].starts_with('半') {
        return Some(a + '半'.len_utf8());
    }
    None
}

/// Seconds after a minute ("1分30秒", "2m30s", "1 min 30 s"): the seconds and the end.
fn seconds_after(t: &str, at: usize) -> Option<(f64, usize)> {
    let mut a = skip_spaces(t, at);
    if t[a..].starts_with("and ") {
        a = skip_spaces(t, a + 4);
    }
    let n = numeral_at_any(t, a)?;
    let u = skip_spaces(t, n.end);
    let len = unit_at(t, u, SECONDS)?;
    Some((n.value, u + len))
}

/// Like `numeral_at`, but a digit right after a letter (the "30" of "2m30s") is allowed.
fn numeral_at_any(t: &str, at: usize) -> Option<Numeral> {
    if char_at(t, at)?.is_ascii_digit() && is_word(char_before(t, at)) {
        let shifted = &t[at..];
        let n = numeral_at(shifted, 0)?;
        return Some(Numeral {
            end: n.end + at,
            ..n
        });
    }
    numeral_at(t, at)
}

/// The unit after numeral `n` starting at `start`, making it a token.
pub(super) fn token_at(t: &str, start: usize, n: Numeral) -> Token {
    let tok = |end, kind| Token {
        start,
        end,
        kind,
        range: n.range,
        form: n.form,
    };
    let v = n.value;
    let after = skip_spaces(t, n.end);
    let rest = &t[after..];

    if n.form == Form::Arabic {
        // 1920x1080, 1080×1920, 9x16
        for sep in ['x', '×', '*'] {
            let Some(r) = t[n.end..].trim_start().strip_prefix(sep) else {
                continue;
            };
            let b_at = offset_in(t, r.trim_start());
            if let Some(m) = numeral_at_any(t, b_at).filter(|m| m.form == Form::Arabic) {
                if v >= 100.0 && m.value >= 100.0 {
                    return tok(
                        m.end,
                        Kind::Pixels {
                            short: v.min(m.value) as u32,
                        },
                    );
                }
                return tok(m.end, Kind::SmallCross { a: v, b: m.value });
            }
        }
        // 16:9, 2.35:1, 1:30
        if let Some(r) = t[n.end..].strip_prefix(':')
            && r.starts_with(|c: char| c.is_ascii_digit())
        {
            let b_at = n.end + 1;
            if let Some(m) = numeral_at_any(t, b_at) {
                let two = m.end - b_at == 2 && !t[b_at..m.end].contains('.');
                return tok(
                    m.end,
                    Kind::Colon {
                        a: v,
                        b: m.value,
                        b_two_digits: two,
                    },
                );
            }
        }
        let glued = &t[n.end..];
        // 1080p, 1080i, 4K; "1080p60" still names the size.
        if n.plain_integer {
            for (mark, is_k) in [('p', false), ('i', false), ('k', true)] {
                if glued.starts_with(mark)
                    && !char_at(t, n.end + 1).is_some_and(|c| c.is_ascii_alphabetic())
                {
                    if is_k {
                        if let Some(short) = k_short_side(v) {
                            return tok(n.end + 1, Kind::KPixels { short });
                        }
                    } else if is_pixel_short_side(v) {
                        return tok(n.end + 1, Kind::Pixels { short: v as u32 });
                    }
                }
            }
        }
        if let Some(len) = unit_at(t, after, &["fps"]) {
            return tok(after + len, Kind::Fps(v));
        }
    }
    // N 帧每秒 / N 帧/秒 are rates; N 帧 alone a count.
    if rest.starts_with('帧') {
        let f = after + '帧'.len_utf8();
        for per in ["每秒", "/秒", "/s"] {
            if t[f..].starts_with(per) {
                return tok(f + per.len(), Kind::Fps(v));
            }
        }
        return tok(f, Kind::FrameCount(v));
    }
    // 一个半小时, 两个半小时
    if let Some(r) = rest.strip_prefix("个半")
        && let Some(len) = unit_at(r, 0, HOURS)
    {
        return tok(
            after + "个半".len() + len,
            duration((v + 0.5) * 3600.0, false),
        );
    }
    if let Some(len) = unit_at(t, after, HOURS) {
        let mut end = after + len;
        let mut h = v;
        if let Some(e) = half_at(t, end) {
            h += 0.5;
            end = e;
        }
        return tok(end, duration(h * 3600.0, false));
    }
    // "two and a half minutes"
    let (v, after) = match half_at(t, after).map(|e| skip_spaces(t, e)) {
        Some(a) if unit_at(t, a, MINUTES).is_some() => (v + 0.5, a),
        _ => (v, after),
    };
    if let Some(len) = unit_at(t, after, MINUTES) {
        let mut end = after + len;
        let mut secs = v * 60.0;
        if let Some((s, e)) = seconds_after(t, end) {
            secs += s;
            end = e;
        } else if let Some(e) = half_at(t, end) {
            secs += 30.0;
            end = e;
        }
        return tok(end, duration(secs, false));
    }
    // A bare 分 or m: 1分30秒, 一分半(钟), 2m30s; otherwise minutes only after a running-time
    // word, which the rules check (bare_minutes). 分辨率, 分镜 are no unit.
    if rest.starts_with('分')
        && !["分辨", "分镜", "分段", "分享"]
            .iter()
            .any(|w| rest.starts_with(w))
    {
        let end = after + '分'.len_utf8();
        if let Some((s, e)) = seconds_after(t, end) {
            return tok(e, duration(v * 60.0 + s, false));
        }
        if t[end..].starts_with('半') {
            let mut e = end + '半'.len_utf8();
            if t[e..].starts_with('钟') {
                e += '钟'.len_utf8();
            }
            return tok(e, duration(v * 60.0 + 30.0, false));
        }
        // 十分重要: 分 running into another word is no unit.
        let next = char_at(t, end);
        if next.is_none_or(|c| !is_cjk(c) || "左以上内之的钟多起打".contains(c)) {
            return tok(end, duration(v * 60.0, true));
        }
        return tok(n.end, Kind::Bare(v));
    }
    if n.form == Form::Arabic
        && t[n.end..].starts_with('m')
        && !char_at(t, n.end + 1).is_some_and(|c| c.is_ascii_alphabetic())
    {
        let end = n.end + 1;
        if let Some((s, e)) = seconds_after(t, end) {
            return tok(e, duration(v * 60.0 + s, false));
        }
        return tok(end, duration(v * 60.0, true));
    }
    if let Some(len) = unit_at(t, after, SECONDS) {
        let glued_s = after == n.end && t[after..].starts_with('s');
        return tok(
            after + len,
            Kind::Duration {
                seconds: v,
                bare_minutes: false,
                decade_like: glued_s,
            },
        );
    }
    tok(n.end, Kind::Bare(v))
}

fn duration(seconds: f64, bare_minutes: bool) -> Kind {
    Kind::Duration {
        seconds,
        bare_minutes,
        decade_like: false,
    }
}

fn orientation_at(t: &str, at: usize) -> Option<(usize, Orientation)> {
    [
        ("竖屏", Orientation::Portrait),
        ("横屏", Orientation::Landscape),
        ("portrait", Orientation::Portrait),
        ("landscape", Orientation::Landscape),
    ]
    .into_iter()
    .find(|(w, _)| stands_at(t, at, w))
    .map(|(w, o)| (w.len(), o))
}

/// 半 in 半分钟/半小时, "half a minute", "half an hour": a half, its unit right after.
fn half_at_start(t: &str, at: usize) -> Option<Numeral> {
    let (end, form) = if t[at..].starts_with('半') {
        (at + '半'.len_utf8(), Form::Chinese)
    } else if is_word(char_before(t, at)) {
        return None;
    } else if t[at..].starts_with("half an ") {
        (at + "half an".len(), Form::English)
    } else if t[at..].starts_with("half a ") {
        (at + "half a".len(), Form::English)
    } else {
        return None;
    };
    let rest = t[end..].trim_start();
    ["分钟", "小时", "minute", "hour"]
        .iter()
        .any(|u| rest.starts_with(u))
        .then_some(Numeral {
            value: 0.5,
            end,
            form,
            range: false,
            plain_integer: false,
        })
}

/// Every number with its unit in `t[range]`, in order; 半 alone counts as a half
/// (半分钟, 半小时), and 每秒 N 帧 as a rate.
pub(super) fn tokens(t: &str, range: Range<usize>) -> Vec<Token> {
    let mut out = Vec::new();
    let mut at = range.start;
    while at < range.end {
        let Some(c) = char_at(t, at) else { break };
        if let Some((len, o)) = orientation_at(t, at) {
            out.push(Token {
                start: at,
                end: at + len,
                kind: Kind::Orientation(o),
                range: false,
                form: Form::Chinese,
            });
            at += len;
            continue;
        }
        if let Some(r) = t[at..range.end].strip_prefix("每秒") {
            let n_at = offset_in(t, r.trim_start());
            if let Some(n) = numeral_at(t, n_at) {
                let f = skip_spaces(t, n.end);
                if t[f..].starts_with('帧') {
                    let end = f + '帧'.len_utf8();
                    out.push(Token {
                        start: at,
                        end,
                        kind: Kind::Fps(n.value),
                        range: n.range,
                        form: n.form,
                    });
                    at = end;
                    continue;
                }
            }
        }
        let numeral = numeral_at(t, at).or_else(|| half_at_start(t, at));
        match numeral {
            Some(n) => {
                let tok = token_at(t, at, n);
                let end = tok.end.min(range.end).max(at + c.len_utf8());
                if tok.end <= range.end {
                    out.push(tok);
                }
                at = end;
            }
            None => at += c.len_utf8(),
        }
    }
    out
}
