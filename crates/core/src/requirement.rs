//! The requirements ledger's rules (digest 003-C §6): an entry's states, which of the user's
//! buttons each offers from a job's point of view (RL-19), what a press makes of it, the board's
//! groups, and the folding the database uses to find a quote in its line (RL-2). Only the user
//! takes an entry out of force; a model's change is a replacement waiting for the user.

pub mod situation;

use crate::PlanId;
use serde::{Deserialize, Serialize};

macro_rules! str_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub enum $name { $($variant),* }

        impl $name {
            pub const ALL: &[$name] = &[$($name::$variant),*];
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),* }
            }
            pub fn parse(s: &str) -> Result<$name, String> {
                match s {
                    $($text => Ok($name::$variant),)*
                    other => Err(format!(
                        "'{other}' is not one of {}",
                        [$($text),*].join(", ")
                    )),
                }
            }
        }
    };
}

str_enum!(
    /// Where an entry stands.
    State {
        InForce = "in_force",
        ToConfirm = "to_confirm",
        Replaced = "replaced",
        NoLongerApplies = "no_longer_applies",
        NotARequirement = "not_a_requirement",
        OldRuleUnverified = "old_rule_unverified",
    }
);

str_enum!(
    /// What an entry holds for: one ticket, its job, every job of its conversation, or every
    /// video job.
    Scope {
        Ticket = "ticket",
        Job = "job",
        Session = "session",
        Standing = "standing",
    }
);

str_enum!(
    /// Whose words and how they came (RL-19's "source").
    SourceKind {
        YouSaid = "you_said",
        YourAnswer = "your_answer",
        YourAnnotation = "your_annotation",
        Board = "board",
        OldRule = "old_rule",
        ComplaintWhole = "complaint_whole",
    }
);

str_enum!(
    /// What kind of wish it is (set by the scribe; older entries have none).
    Nature {
        Craft = "craft",
        ChoiceOfLook = "choice_of_look",
        SeriesConstant = "series_constant",
        Other = "other",
    }
);

str_enum!(
    /// Whether the user wants it or wants it not.
    Polarity {
        Must = "must",
        MustNot = "must_not",
    }
);

str_enum!(
    /// The user's buttons (RL-19, UQ-12).
    Action {
        Confirm = "confirm",
        NotARequirement = "not_a_requirement",
        NotForThisJob = "not_for_this_job",
        Restore = "restore",
        NoLongerHolds = "no_longer_holds",
        WholeConversation = "whole_conversation",
        KeepIt = "keep_it",
    }
);

/// What the rules read of an entry, seen from one job.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    pub state: State,
    pub scope: Scope,
    /// The job that recorded it.
    pub plan: PlanId,
    pub source: SourceKind,
    /// "Not for this job" was pressed for the job looking at it.
    pub excluded_here: bool,
    /// Among "Words you took out" (UQ-12), not yet pressed.
    pub taken_out: bool,
}

impl Facts {
    /// A session or standing entry another job recorded: this job inherits it (RL-13).
    pub fn inherited(&self, here: PlanId) -> bool {
        self.plan != here && matches!(self.scope, Scope::Session | Scope::Standing)
    }

    fn pending(&self) -> bool {
        matches!(self.state, State::ToConfirm | State::OldRuleUnverified)
    }
}

/// RL-19's groups of "What you asked for", in the board's order ("Words you took out" first).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Group {
    TakenOut,
    Own,
    Inherited,
    Waiting,
    OldRules,
    SetAside,
}

/// Where the board shows the entry for `here`; none once it left force for good.
pub fn group(f: &Facts, here: PlanId) -> Option<Group> {
    if f.taken_out && matches!(f.state, State::InForce | State::ToConfirm) {
        return Some(Group::TakenOut);
    }
    match f.state {
        State::ToConfirm => Some(Group::Waiting),
        State::OldRuleUnverified => Some(Group::OldRules),
        State::InForce if f.inherited(here) && f.excluded_here => Some(Group::SetAside),
        State::InForce if f.inherited(here) => Some(Group::Inherited),
        State::InForce => Some(Group::Own),
        State::Replaced | State::NoLongerApplies | State::NotARequirement => None,
    }
}

/// The buttons an entry offers on `here`'s board (RL-19, UQ-12).
pub fn offered(f: &Facts, here: PlanId) -> Vec<Action> {
    match group(f, here) {
        Some(Group::TakenOut) if f.pending() => vec![Action::NotARequirement, Action::KeepIt],
        Some(Group::TakenOut) => vec![Action::NoLongerHolds, Action::KeepIt],
        Some(Group::Waiting | Group::OldRules) => {
            vec![Action::Confirm, Action::NotARequirement]
        }
        Some(Group::Inherited) => vec![Action::NotForThisJob],
        Some(Group::SetAside) => vec![Action::Restore],
        Some(Group::Own) => {
            // A line written on the board is taken back by removing it there.
            let mut out = Vec::new();
            if f.source != SourceKind::Board {
                out.push(Action::NoLongerHolds);
            }
            if matches!(f.scope, Scope::Job | Scope::Ticket) {
                out.push(Action::WholeConversation);
            }
            out
        }
        None => Vec::new(),
    }
}

/// What a press makes of the entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub state: State,
    pub scope: Scope,
    /// Some(true): excluded for the job from now on; Some(false): included again.
    pub excluded_here: Option<bool>,
    /// The "Words you took out" mark goes.
    pub clears_taken_out: bool,
    /// The step's name in the log (RL-9).
    pub step: &'static str,
}

/// Why a press does nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotOffered {
    pub action: Action,
    pub offered: Vec<Action>,
}

impl std::fmt::Display for NotOffered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.offered.iter().map(|a| a.as_str()).collect();
        write!(
            f,
            "action_not_offered: '{}' is not offered on this entry (offered: {})",
            self.action.as_str(),
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )
    }
}

/// Apply a press seen from `here`. A confirmed replacement also makes the entry it replaces
/// `replaced`; the caller does that with [`may_replace`]'s word on the two.
pub fn apply(f: &Facts, action: Action, here: PlanId) -> Result<Outcome, NotOffered> {
    let offer = offered(f, here);
    if !offer.contains(&action) {
        return Err(NotOffered {
            action,
            offered: offer,
        });
    }
    let keep = |state: State, step: &'static str| Outcome {
        state,
        scope: f.scope,
        excluded_here: None,
        clears_taken_out: f.taken_out,
        step,
    };
    Ok(match action {
        Action::Confirm => keep(State::InForce, "confirmed"),
        Action::NotARequirement => keep(State::NotARequirement, "not_a_requirement"),
        Action::NoLongerHolds => keep(State::NoLongerApplies, "no_longer_applies"),
        Action::KeepIt => keep(f.state, "kept"),
        Action::NotForThisJob => Outcome {
            excluded_here: Some(true),
            ..keep(f.state, "not_for_this_job")
        },
        Action::Restore => Outcome {
            excluded_here: Some(false),
            ..keep(f.state, "restored")
        },
        Action::WholeConversation => Outcome {
            scope: Scope::Session,
            ..keep(f.state, "widened")
        },
    })
}

/// RL-3: a replacement takes an entry's place only when its words were said after the old
/// entry's words.
pub fn may_replace(old_said_at: i64, new_said_at: i64) -> bool {
    new_said_at > old_said_at
}

/// RL-6's fault words: what a complaint about delivered work says when no reading's objecting
/// clauses are at hand.
pub const FAULT_WORDS: &[&str] = &[
    "fake",
    "wrong",
    "jumpy",
    "breaks the shot",
    "reversed",
    "too short",
    "too long",
    "redo",
    "no good",
    "broken",
    "doesn't work",
    "not right",
    "不对",
    "错了",
    "太假",
    "很假",
    "跳帧",
    "反了",
    "太短",
    "太长",
    "重做",
    "不行",
    "坏了",
    "穿帮",
];

/// Whether the line says one of the fault words (folded, so width and case do not matter).
pub fn has_fault_word(line: &str) -> bool {
    let text = db_fold(line);
    FAULT_WORDS.iter().any(|w| text.contains(w))
}

/// RL-6: a whole line kept as a complaint is cut at 300 code points (the ledger's limit).
pub fn cut_quote(line: &str) -> String {
    line.trim().chars().take(QUOTE_LIMIT).collect()
}

/// The longest quote an entry keeps, in code points.
pub const QUOTE_LIMIT: usize = 300;

/// The database's `fold()` (registered on every SQLite connection, PL/pgSQL on PostgreSQL):
/// full-width ASCII made ASCII, the ideographic and no-break spaces made spaces, ASCII
/// lowercased, runs of whitespace one space, the ends trimmed. ASCII-only lowercasing keeps
/// the two backends equal whatever PostgreSQL's collation says about other letters.
pub fn db_fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        let c = match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' | '\u{00A0}' => ' ',
            _ => c,
        };
        if matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{0C}' | '\u{0B}') {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Whether `quote` is a folded substring of `line`, as the database's trigger reads it.
pub fn quote_in_line(line: &str, quote: &str) -> bool {
    let q = db_fold(quote);
    !q.is_empty() && db_fold(line).contains(&q)
}

/// RL-7, RL-8: the lines a board field gained and lost in an edit (trimmed, blank lines and
/// list bullets aside), each once, compared folded.
pub fn board_lines_changed(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    fn lines(s: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for l in s.lines() {
            let l = l.trim().trim_start_matches(['-', '*', '•']).trim();
            if !l.is_empty() && !out.iter().any(|o| db_fold(o) == db_fold(l)) {
                out.push(l.to_string());
            }
        }
        out
    }
    let (old, new) = (lines(old), lines(new));
    let missing = |from: &[String], other: &[String]| -> Vec<String> {
        from.iter()
            .filter(|l| !other.iter().any(|o| db_fold(o) == db_fold(l)))
            .cloned()
            .collect()
    };
    (missing(&new, &old), missing(&old, &new))
}

#[cfg(test)]
#[path = "requirement_tests.rs"]
mod tests;
