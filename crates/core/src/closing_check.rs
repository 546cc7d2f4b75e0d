//! The closing check (C §14, ADR 0037): a rule-based reminder, once per segment, on a Bot's
//! outgoing message before it reaches the user. No model judges completeness; the message is
//! read by fixed word lists, and the caller supplies the evidence (failing checks, check-backs,
//! delegations, commands). A reminder, not a gate: the caller sends the note back once.
//!
//! Trigger (all required): the message cites workspace files or says work is still going or
//! about to start; the user is a member of the conversation it goes to; the segment works on
//! a job. Rules: CC-1 failing acceptance checks (only for messages citing files, ≤3 listed),
//! CC-2 "the rest later" backed by no check-back, delegation or named hand-off, CC-3 a run
//! claim with no command run in the segment, unless it says it was not verified.

use crate::reading::fold::{is_cjk, is_punct, narrow};
use serde::Serialize;

/// CC-1 lists at most this many failing checks.
pub const MAX_LISTED: usize = 3;

/// How the message would go out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Via {
    /// The segment's reply: it has gone out already, the note comes back as a loop line.
    Reply,
    /// A `send_message` call: held back, the call returns the note instead (CC-4).
    SendMessage,
}

/// A rule the message broke.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// CC-1.
    FailingChecks,
    /// CC-2.
    RestLater,
    /// CC-3.
    ClaimedRun,
}

impl Rule {
    pub fn code(self) -> &'static str {
        match self {
            Rule::FailingChecks => "failing_checks",
            Rule::RestLater => "rest_later",
            Rule::ClaimedRun => "claimed_run",
        }
    }
}

/// A job's check that is not passing, as the note names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailingCheck {
    /// What it checks, e.g. `file out/report.md contains "Summary"`.
    pub label: String,
    /// Its latest run's one line, or why it has none.
    pub detail: String,
}

/// Everything the rules read, gathered by the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    pub text: String,
    pub via: Via,
    /// Paths the message names that exist in the job's workspace.
    pub cited_files: Vec<String>,
    /// The user is a member of the conversation the message goes to (not a Bot↔Bot direct).
    pub user_in_conversation: bool,
    /// The segment works on a job.
    pub in_job: bool,
    /// CC-4: this segment's message was sent back once already.
    pub sent_back_before: bool,
    /// The job's checks not passing now, those about cited files first.
    pub failing_checks: Vec<FailingCheck>,
    /// The segment booked a check-back.
    pub check_back_booked: bool,
    /// The segment delegated to another Bot.
    pub delegated: bool,
    /// Other Bots' names, any of which named in the message takes the rest over.
    pub other_bots: Vec<String>,
    /// Shell commands the segment ran.
    pub commands_run: usize,
}

/// The note sent back, and which rules it is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClosingNote {
    pub rules: Vec<Rule>,
    pub text: String,
}

/// What the word lists read in a message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// The first sentence saying the work goes on or is about to start.
    pub still_going: Option<String>,
    /// It says something was run, tested or verified.
    pub claims_run: bool,
    /// It says something was not verified (CC-3's exemption).
    pub says_unverified: bool,
}

/// Whether the check applies at all (the trigger and CC-6), before any evidence is gathered.
pub fn applies(f: &Facts) -> bool {
    f.user_in_conversation
        && f.in_job
        && !f.sent_back_before
        && (!f.cited_files.is_empty() || read(&f.text).still_going.is_some())
}

/// The note for a message that breaks a rule; `None` lets it through.
pub fn decide(f: &Facts) -> Option<ClosingNote> {
    if !applies(f) {
        return None;
    }
    let reading = read(&f.text);
    let mut rules = Vec::new();
    let mut points = Vec::new();
    if !f.cited_files.is_empty() && !f.failing_checks.is_empty() {
        rules.push(Rule::FailingChecks);
        points.push(failing_point(&f.failing_checks));
    }
    if let Some(sentence) = &reading.still_going
        && !f.check_back_booked
        && !f.delegated
        && !names_someone(&f.text, &f.other_bots)
    {
        rules.push(Rule::RestLater);
        points.push(format!(
            "You say more is coming (\"{}\"), but this turn booked no check-back, delegated \
             nothing and named nobody to take it over, so nothing will bring it back. Finish it \
             now, book a check_back, or name who takes it.",
            sentence.trim()
        ));
    }
    if reading.claims_run && !reading.says_unverified && f.commands_run == 0 {
        rules.push(Rule::ClaimedRun);
        points.push(
            "You say something was run, tested or verified, but this turn ran no command. Run \
             it now, or say plainly that it was not verified."
                .to_string(),
        );
    }
    if rules.is_empty() {
        return None;
    }
    let head = match f.via {
        Via::Reply => {
            "Closing check (a reminder, once per turn): your reply has gone out as written; do \
             not say it again. Before you end:"
        }
        Via::SendMessage => {
            "Closing check (a reminder, once per turn): this message was not sent. Fix what \
             follows, then send it again; it is not checked a second time."
        }
    };
    let mut text = String::from(head);
    for p in points {
        text.push_str("\n- ");
        text.push_str(&p);
    }
    Some(ClosingNote { rules, text })
}

fn failing_point(checks: &[FailingCheck]) -> String {
    let mut s = String::from("This job's acceptance checks are not passing:");
    for c in checks.iter().take(MAX_LISTED) {
        s.push_str(&format!("\n  - {}: {}", c.label.trim(), c.detail.trim()));
    }
    if checks.len() > MAX_LISTED {
        s.push_str(&format!("\n  - and {} more", checks.len() - MAX_LISTED));
    }
    s.push_str(
        "\n  Fix the deliverable, not the check, or say in your closing why that is not \
         possible now.",
    );
    s
}

// ---- reading the message by word lists ----

/// Sentences saying the work goes on; whole words for ASCII, anywhere for CJK.
const STILL_GOING: &[&str] = &[
    "i'm now",
    "i am now",
    "i'm currently",
    "i am currently",
    "i'm working on",
    "i am working on",
    "i'm still",
    "i am still",
    "we're now",
    "we're still",
    "i'll",
    "i will",
    "we'll",
    "we will",
    "i'm going to",
    "i am going to",
    "still working",
    "still in progress",
    "to follow",
    "will follow",
    "get back to you",
    "report back",
    "the rest later",
    "more later",
    "later today",
    "starting now",
    "我正在",
    "我们正在",
    "我将",
    "我们将",
    "我会",
    "我们会",
    "我马上",
    "我这就",
    "我开始",
    "现在开始",
    "开始着手",
    "稍后",
    "随后",
    "接下来",
    "待会",
    "等会",
    "晚点",
    "之后再",
];

/// `正在` says the work goes on only with no subject or a first-person one before it in its
/// clause: 「正在编写」 is, 「埼玉正在超市买菜」 is narrative.
const ONGOING: &str = "正在";
const OWN_SUBJECTS: &[&str] = &["", "我", "我们", "现在", "目前", "我这边", "这边"];

/// Offers and conditions are not promises ("if you want, I'll add colours").
const NOT_A_PROMISE: &[&str] = &[
    "if",
    "let me know",
    "happy to",
    "feel free",
    "whenever",
    "如果",
    "要是",
    "需要的话",
    "有需要",
    "随时",
];

const RUN_CLAIMS: &[&str] = &[
    "tests pass",
    "tests passed",
    "tests are passing",
    "test passes",
    "test passed",
    "all tests",
    "checks pass",
    "checks passed",
    "build passes",
    "build passed",
    "build succeeds",
    "build succeeded",
    "it compiles",
    "compiles cleanly",
    "i ran",
    "i've run",
    "i have run",
    "i tested",
    "i've tested",
    "i have tested",
    "tested it",
    "verified",
    "works as expected",
    "测试通过",
    "全部通过",
    "跑通",
    "运行通过",
    "运行成功",
    "验证通过",
    "已验证",
    "验证过",
    "编译通过",
    "测过",
    "已测试",
    "测试过",
    "跑了一遍",
];

const UNVERIFIED: &[&str] = &[
    "not verified",
    "unverified",
    "not been verified",
    "haven't verified",
    "have not verified",
    "didn't verify",
    "did not verify",
    "not tested",
    "untested",
    "haven't tested",
    "have not tested",
    "didn't test",
    "did not test",
    "haven't run",
    "have not run",
    "didn't run",
    "did not run",
    "not run",
    "couldn't run",
    "could not run",
    "without running",
    "without testing",
    "未验证",
    "没验证",
    "没有验证",
    "未经验证",
    "未测试",
    "没测试",
    "没有测试",
    "未运行",
    "没运行",
    "没有运行",
    "没跑",
    "没有跑",
    "无法运行",
    "无法测试",
];

/// The message read by the lists.
pub fn read(text: &str) -> Reading {
    let still_going = sentences(text)
        .into_iter()
        .find(|s| is_still_going(s))
        .map(str::to_string);
    let loose = loosen(text);
    Reading {
        still_going,
        claims_run: RUN_CLAIMS.iter().any(|p| has_phrase(&loose, p)),
        says_unverified: UNVERIFIED.iter().any(|p| has_phrase(&loose, p)),
    }
}

fn is_still_going(sentence: &str) -> bool {
    let s = loosen(sentence);
    if s.ends_with('?') || s.ends_with('？') || NOT_A_PROMISE.iter().any(|p| has_phrase(&s, p)) {
        return false;
    }
    if STILL_GOING.iter().any(|p| has_phrase(&s, p)) {
        return true;
    }
    clauses(&s).iter().any(|c| {
        c.match_indices(ONGOING)
            .any(|(at, _)| OWN_SUBJECTS.contains(&c[..at].trim()))
    })
}

/// Whether the message names one of `names` (a Bot that takes the rest over), with or
/// without `@`: whole words for ASCII names, anywhere for others.
pub fn names_someone(text: &str, names: &[String]) -> bool {
    let loose = loosen(text);
    names
        .iter()
        .map(|n| loosen(n.trim()))
        .filter(|n| !n.is_empty())
        .any(|n| has_phrase(&loose, &n))
}

/// Lowercase, narrow width, one kind of apostrophe, single spaces.
fn loosen(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| match narrow(c) {
            '\u{2019}' | '\u{2018}' => '\'',
            c => c,
        })
        .collect();
    s.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// ASCII phrases match as whole words ("if" is not "gift"); others anywhere.
fn has_phrase(text: &str, phrase: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let ascii = phrase.is_ascii();
    text.match_indices(phrase).any(|(at, _)| {
        !ascii
            || (!word(text[..at].chars().next_back())
                && !word(text[at + phrase.len()..].chars().next()))
    })
}

/// Sentences end at 。！？!? and newlines, at '.' only before a space or the end (so
/// `report.md` stays whole).
fn sentences(text: &str) -> Vec<&str> {
    split_keeping(text, |c, next| {
        matches!(c, '。' | '！' | '？' | '!' | '?' | '\n')
            || (c == '.' && next.is_none_or(char::is_whitespace))
    })
}

fn clauses(sentence: &str) -> Vec<&str> {
    split_keeping(sentence, |c, _| {
        matches!(c, '，' | ',' | '；' | ';' | '：' | ':' | '、')
    })
    .into_iter()
    .map(|c| c.trim_end_matches([',', '，', ';', '；', ':', '：', '、']))
    .collect()
}

fn split_keeping(text: &str, ends: impl Fn(char, Option<char>) -> bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if ends(c, chars.peek().map(|(_, n)| *n)) {
            let end = at + c.len_utf8();
            out.push(text[start..end].trim());
            start = end;
        }
    }
    out.push(text[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

// ---- paths a message cites ----

/// Wrapping characters a path is quoted or bracketed in.
fn is_wrapper(c: char) -> bool {
    matches!(
        c,
        '`' | '\'' | '"' | '(' | ')' | '[' | ']' | '<' | '>' | '{' | '}' | '*'
    ) || (is_punct(c) && !c.is_ascii())
}

/// Words of the message that may be workspace paths: with a `/`, or a `name.ext`. The caller
/// keeps those that exist. A word run straight on from CJK text (「已写入out/report.md」) is
/// offered both whole and from its first ASCII character after the CJK.
pub fn path_candidates(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |w: &str| {
        let w = w
            .trim_matches(is_wrapper)
            .trim_end_matches(['.', ',', ';', ':', '!', '?']);
        let w = w.trim_matches(is_wrapper);
        if looks_like_path(w) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    };
    for word in text.split(|c: char| c.is_whitespace() || is_wrapper(c)) {
        push(word);
        if let Some(at) = word
            .char_indices()
            .rfind(|(_, c)| is_cjk(*c))
            .map(|(i, c)| i + c.len_utf8())
            && at < word.len()
        {
            push(&word[at..]);
        }
    }
    out
}

fn looks_like_path(w: &str) -> bool {
    if w.is_empty() || w.contains("://") || w.starts_with('@') || w.chars().count() > 300 {
        return false;
    }
    if w.contains('/') {
        return w.chars().any(|c| c.is_alphanumeric()) && !w.contains("//");
    }
    let Some((stem, ext)) = w.rsplit_once('.') else {
        return false;
    };
    let stem = stem.trim_start_matches('.');
    !stem.is_empty()
        && !stem.chars().all(|c| c.is_ascii_digit() || c == '.')
        && (1..=8).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
#[path = "closing_check_tests.rs"]
mod tests;
