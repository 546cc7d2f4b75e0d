//! The scribe's answer (digest 003-C §7): a patch `{items:[{op: add|raise|change|take_back,
//! …}]}` read from the model's text and checked item by item (SC-7…SC-14). A failed item is
//! dropped with its reason and the rest lands; nothing in it can take an entry out of force: a
//! take-back (UQ-12, an edited line only) marks an entry for the user to decide on. The JSON
//! contract is in docs/requirements.md.

use crate::reading::fold::{is_punct, narrow};
use crate::requirement::{Nature, Polarity, Scope, State, db_fold};
use crate::words_check::numbers::read_numbers;
use crate::words_check::{LinePlace, Number};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// SC-12: new entries one line may add.
pub const MAX_ADDS: usize = 8;
/// SC-8: matched characters a new entry's quote needs (unless it is the whole line or one number).
pub const MIN_QUOTE_CHARS: usize = 4;

/// An entry the scribe was shown (SC-9), with what the checks compare.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    pub id: i64,
    pub quote: String,
    pub category: Option<String>,
    pub number: Option<Number>,
    pub scope: Scope,
    pub ticket: Option<i64>,
    pub state: State,
}

/// What the line is read against.
#[derive(Clone, Debug, PartialEq)]
pub struct Context<'a> {
    pub line: &'a str,
    pub shown: &'a [Shown],
    /// The job's tickets: (id, shown number).
    pub tickets: &'a [(i64, u32)],
    /// The ticket the line is filed under, if one.
    pub filed_ticket: Option<i64>,
    /// On an edited line's re-read (UQ-12): the entries standing on its earlier words, the
    /// only ones a take-back may name. Empty for every other line.
    pub standing_on_earlier: &'a [i64],
}

/// A new entry as it lands.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NewEntry {
    /// The user's own words, as they stand in the line.
    pub quote: String,
    pub restatement: String,
    pub category: Option<String>,
    pub nature: Option<Nature>,
    pub polarity: Polarity,
    pub scope: Scope,
    pub ticket: Option<i64>,
    pub number: Option<Number>,
}

/// One item that passed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Landed {
    /// A new entry in force.
    Add(NewEntry),
    /// An entry said again (`quote` as the line has it).
    Raise { id: i64, quote: String },
    /// A replacement of `replaces`, waiting for the user (SC-13).
    Replace { replaces: i64, entry: NewEntry },
    /// UQ-12: the edit took back what the entry stands on; it stays in force and is shown
    /// under "Words you took out" until the user presses.
    TakeBack { id: i64 },
}

/// One item that failed, by its place in the answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Dropped {
    pub index: usize,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Checked {
    pub landed: Vec<Landed>,
    pub dropped: Vec<Dropped>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawItem {
    op: String,
    #[serde(default)]
    id: Option<Json>,
    #[serde(default)]
    quote: Option<String>,
    #[serde(default)]
    restatement: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    nature: Option<String>,
    #[serde(default)]
    polarity: Option<String>,
    #[serde(default)]
    tickets: Option<Vec<u32>>,
    #[serde(default)]
    every_job: Option<bool>,
}

/// The items of an answer, each still raw; an answer that is not a patch is an error (then
/// fallback capture alone reads the line).
pub fn parse(raw: &str) -> Result<Vec<Json>, String> {
    let start = raw.find('{').ok_or("no JSON object in the answer")?;
    let end = raw.rfind('}').ok_or("no JSON object in the answer")?;
    if end < start {
        return Err("no JSON object in the answer".into());
    }
    let v: Json = serde_json::from_str(&raw[start..=end])
        .map_err(|e| format!("the answer is not JSON: {e}"))?;
    match v.get("items") {
        Some(Json::Array(items)) => Ok(items.clone()),
        _ => Err("the answer has no items list".into()),
    }
}

/// Check every item against the line and the entries shown (SC-7…SC-14).
pub fn check(items: &[Json], cx: &Context<'_>) -> Checked {
    let mut out = Checked::default();
    let mut adds = 0usize;
    // SC-13: words already given to an old entry of their own category in this answer.
    let mut changed_words: Vec<(String, Option<String>)> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let result = serde_json::from_value::<RawItem>(item.clone())
            .map_err(|e| format!("unreadable item: {e}"))
            .and_then(|raw| one(&raw, cx, &mut adds, &mut changed_words));
        match result {
            Ok(l) => out.landed.push(l),
            Err(reason) => out.dropped.push(Dropped { index, reason }),
        }
    }
    out
}

fn one(
    raw: &RawItem,
    cx: &Context<'_>,
    adds: &mut usize,
    changed_words: &mut Vec<(String, Option<String>)>,
) -> Result<Landed, String> {
    // The words a take-back is about are gone from the line: it names the entry alone.
    if raw.op == "take_back" {
        return take_back(raw, cx);
    }
    let said = raw.quote.as_deref().ok_or("no quote")?;
    let quote =
        find_in_line(cx.line, said).ok_or("quote_not_in_line: the quote is not in the line")?;
    match raw.op.as_str() {
        "add" => {
            let entry = new_entry(raw, cx, &quote, None)?;
            // SC-11: the same words as an entry in force at least as wide are said again.
            if let Some(same) = cx.shown.iter().find(|s| {
                s.state == State::InForce
                    && db_fold(&s.quote) == db_fold(&entry.quote)
                    && covers(s, &entry)
            }) {
                return Ok(Landed::Raise { id: same.id, quote });
            }
            // RL-4, UQ-21: a number for a dimension an entry in force already sets is that
            // entry's replacement, to confirm — never a second number in force beside it.
            if let Some(n) = &entry.number
                && let Some(old) = cx.shown.iter().find(|s| {
                    s.state == State::InForce
                        && covers(s, &entry)
                        && s.number
                            .as_ref()
                            .is_some_and(|o| o.dimension() == n.dimension())
                })
            {
                if old.number.as_ref().is_some_and(|o| n.same_as(o)) {
                    return Ok(Landed::Raise { id: old.id, quote });
                }
                let entry = new_entry(raw, cx, &quote, Some(old))?;
                return Ok(Landed::Replace {
                    replaces: old.id,
                    entry,
                });
            }
            if *adds >= MAX_ADDS {
                return Err(format!("more than {MAX_ADDS} new entries for one line"));
            }
            *adds += 1;
            Ok(Landed::Add(entry))
        }
        "raise" => {
            let old = shown_in_force(raw, cx)?;
            Ok(Landed::Raise { id: old.id, quote })
        }
        "change" => {
            let old = shown_in_force(raw, cx)?;
            let entry = new_entry(raw, cx, &quote, Some(old))?;
            // SC-13: the old entry's own number again is said again.
            if let (Some(n), Some(o)) = (&entry.number, &old.number)
                && n.same_as(o)
            {
                return Ok(Landed::Raise { id: old.id, quote });
            }
            let words = db_fold(&entry.quote);
            let cross = old.category.is_some()
                && entry.category.is_some()
                && entry.category != old.category
                && entry.number.is_none();
            if cross
                && changed_words
                    .iter()
                    .any(|(w, c)| *w == words && c.is_some() && *c == entry.category)
            {
                return Err("the same words already changed an entry of their own category".into());
            }
            if !cross {
                changed_words.push((words, old.category.clone()));
            }
            Ok(Landed::Replace {
                replaces: old.id,
                entry,
            })
        }
        other => Err(format!(
            "unknown op '{other}' (add, raise, change or take_back)"
        )),
    }
}

/// UQ-12: only an entry standing on the edited line's earlier words may be named.
fn take_back(raw: &RawItem, cx: &Context<'_>) -> Result<Landed, String> {
    let id = entry_id(raw)?;
    if cx.standing_on_earlier.is_empty() {
        return Err("take_back is only for a line the user edited".into());
    }
    if !cx.standing_on_earlier.contains(&id) {
        return Err(format!(
            "R-{id} does not stand on this line's earlier words"
        ));
    }
    Ok(Landed::TakeBack { id })
}

fn entry_id(raw: &RawItem) -> Result<i64, String> {
    match &raw.id {
        Some(Json::Number(n)) => n.as_i64(),
        Some(Json::String(s)) => s.trim_start_matches("R-").parse::<i64>().ok(),
        _ => None,
    }
    .ok_or_else(|| "no entry id".to_string())
}

/// A ticket entry covers only its own ticket; a job or session entry covers the job's.
fn covers(old: &Shown, new: &NewEntry) -> bool {
    let width = |s: Scope| match s {
        Scope::Ticket => 0,
        Scope::Job => 1,
        Scope::Session => 2,
        Scope::Standing => 3,
    };
    if old.scope == Scope::Ticket {
        return new.scope == Scope::Ticket && new.ticket == old.ticket;
    }
    width(old.scope) >= width(new.scope)
}

fn shown_in_force<'a>(raw: &RawItem, cx: &'a Context<'_>) -> Result<&'a Shown, String> {
    let id = entry_id(raw)?;
    cx.shown
        .iter()
        .find(|s| s.id == id && s.state == State::InForce)
        .ok_or_else(|| format!("R-{id} was not shown in force"))
}

fn new_entry(
    raw: &RawItem,
    cx: &Context<'_>,
    quote: &str,
    replaces: Option<&Shown>,
) -> Result<NewEntry, String> {
    let number = number_in_line(cx.line, quote).or_else(|| one_number(quote));
    // SC-8: short quotes only when they are the whole line or one number.
    let matched = fold_chars(quote);
    if matched < MIN_QUOTE_CHARS && matched < fold_chars(cx.line) && number.is_none() {
        return Err(format!(
            "quote too short: {matched} characters (at least {MIN_QUOTE_CHARS})"
        ));
    }
    let nature = raw.nature.as_deref().map(Nature::parse).transpose()?;
    let polarity = raw
        .polarity
        .as_deref()
        .map(Polarity::parse)
        .transpose()?
        .unwrap_or(Polarity::Must);
    let (scope, ticket) = match replaces {
        Some(old) => (old.scope, old.ticket),
        None => scope_of(raw, cx)?,
    };
    let category = raw
        .category
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .or_else(|| replaces.and_then(|o| o.category.clone()));
    Ok(NewEntry {
        quote: quote.to_string(),
        restatement: raw
            .restatement
            .clone()
            .unwrap_or_default()
            .trim()
            .to_string(),
        category,
        nature,
        polarity,
        scope,
        ticket,
        number,
    })
}

/// SC-10: the one ticket named, else every-job intent, else the filed ticket, else the job.
fn scope_of(raw: &RawItem, cx: &Context<'_>) -> Result<(Scope, Option<i64>), String> {
    let named = raw.tickets.clone().unwrap_or_default();
    if named.len() == 1 {
        let id = cx
            .tickets
            .iter()
            .find(|(_, n)| *n == named[0])
            .map(|(id, _)| *id)
            .ok_or_else(|| format!("ticket {} is not one of the job's", named[0]))?;
        return Ok((Scope::Ticket, Some(id)));
    }
    if raw.every_job == Some(true) {
        return Ok((Scope::Session, None));
    }
    Ok(match cx.filed_ticket {
        Some(t) => (Scope::Ticket, Some(t)),
        None => (Scope::Job, None),
    })
}

/// RL-5: the number a quote gives, only when it gives exactly one.
pub fn one_number(quote: &str) -> Option<Number> {
    let mut found = read_numbers(quote, LinePlace::Job);
    (found.len() == 1).then(|| found.remove(0).number)
}

/// The one number the line gives inside the quote: a bare 「90 秒」 reads as a running time
/// when the line around it sets it (剪成 90 秒), so the quote is read in its line first.
fn number_in_line(line: &str, quote: &str) -> Option<Number> {
    let at = line.find(quote)?;
    let inside = at..at + quote.len();
    let mut found: Vec<Number> = read_numbers(line, LinePlace::Job)
        .into_iter()
        .filter(|r| r.span.start >= inside.start && r.span.end <= inside.end)
        .map(|r| r.number)
        .collect();
    (found.len() == 1).then(|| found.remove(0))
}

fn skipped(c: char) -> bool {
    c.is_whitespace() || is_punct(c) || is_symbol(c)
}

/// Symbols beyond punctuation: math, currency, arrows, emoji.
fn is_symbol(c: char) -> bool {
    matches!(c, '+' | '<' | '=' | '>' | '|' | '~' | '^' | '`' | '$')
        || matches!(c, '\u{2190}'..='\u{2BFF}' | '\u{1F000}'..='\u{1FAFF}')
}

fn fold_chars(s: &str) -> usize {
    s.chars().map(narrow).filter(|c| !skipped(*c)).count()
}

/// SC-7: find `said` in `line` ignoring spaces, punctuation, symbols, width and case, and
/// give the line's own words from the first matched character to the last.
pub fn find_in_line(line: &str, said: &str) -> Option<String> {
    let key = |c: char| narrow(c).to_lowercase().collect::<String>();
    let hay: Vec<(usize, usize, String)> = line
        .char_indices()
        .filter(|(_, c)| !skipped(narrow(*c)))
        .map(|(i, c)| (i, i + c.len_utf8(), key(c)))
        .collect();
    let needle: Vec<String> = said
        .chars()
        .filter(|c| !skipped(narrow(*c)))
        .map(key)
        .collect();
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    let at = (0..=hay.len() - needle.len())
        .find(|&s| needle.iter().enumerate().all(|(k, n)| hay[s + k].2 == *n))?;
    let (from, to) = (hay[at].0, hay[at + needle.len() - 1].1);
    let quote: String = line[from..to].to_string();
    (quote.chars().count() <= crate::requirement::QUOTE_LIMIT).then_some(quote)
}

#[cfg(test)]
#[path = "scribe_patch_tests.rs"]
mod tests;
