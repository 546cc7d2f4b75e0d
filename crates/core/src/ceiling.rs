//! Capability ceiling (digest 003-B §7): when a part (or, for hand-overs naming no part, the
//! whole ticket) keeps failing, it stops and the user is asked how to go on instead of the Bot
//! retrying the same way. This module counts (§7.1), names the card's options (§7.3) and says
//! what each answer does; the records and the card are the collaboration layer's.

use serde::{Deserialize, Serialize};
use std::fmt;

/// (a) the same requirement failing on this many consecutive hand-overs stops it.
pub const SAME_REQUIREMENT_IN_A_ROW: usize = 3;
/// (b) the user sending it back this many times in a row stops it.
pub const SENT_BACK_IN_A_ROW: usize = 3;
/// (c) more failed hand-overs than this stops it.
pub const MAX_FAILED: usize = 6;

/// What made a hand-over fail (§7.1 "what counts").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A gate failed (at hand-over, or rerun later).
    Checks,
    /// Its reviewer rejected it.
    Review,
    /// The user sent it back: a card's send-back or fault found in their words.
    User,
}

impl FailureKind {
    pub const ALL: [FailureKind; 3] = [FailureKind::Checks, FailureKind::Review, FailureKind::User];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Checks => "checks",
            FailureKind::Review => "review",
            FailureKind::User => "user",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        FailureKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("failure kind '{s}' is not one of checks, review, user"))
    }
}

/// One hand-over of the counted scope, as the count reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It failed, by `kind`, on these requirements (ids as the checks and reviews name them;
    /// none when nothing named one, as a user's send-back need not).
    Failed {
        kind: FailureKind,
        requirements: Vec<String>,
    },
    /// It went through (approved, or waits on nothing but the user's word and was let through).
    Passed,
    /// Not decided yet, or replaced by a newer version: it neither counts nor breaks a run.
    NotCounted,
}

/// Why a scope is stuck (§7.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Case {
    /// (a) this requirement failed on the last three hand-overs.
    SameRequirement(String),
    /// (b) the user sent it back three times in a row.
    SentBackInARow,
    /// (c) more than six failed hand-overs.
    TooManyFailures,
}

impl Case {
    /// The stored name of the case.
    pub fn as_str(&self) -> &'static str {
        match self {
            Case::SameRequirement(_) => "same_requirement",
            Case::SentBackInARow => "sent_back",
            Case::TooManyFailures => "too_many",
        }
    }

    /// The case from its stored name and requirement.
    pub fn parse(s: &str, requirement: Option<&str>) -> Result<Self, String> {
        match (s, requirement) {
            ("same_requirement", Some(r)) => Ok(Case::SameRequirement(r.to_string())),
            ("same_requirement", None) => Err("same_requirement needs its requirement".into()),
            ("sent_back", _) => Ok(Case::SentBackInARow),
            ("too_many", _) => Ok(Case::TooManyFailures),
            (other, _) => Err(format!(
                "ceiling case '{other}' is not one of same_requirement, sent_back, too_many"
            )),
        }
    }

    pub fn requirement(&self) -> Option<&str> {
        match self {
            Case::SameRequirement(r) => Some(r),
            _ => None,
        }
    }
}

/// Whether the scope is stuck, from its hand-overs since the user last answered a ceiling card
/// about it, oldest first. (a) is read before (b): a run that names one requirement is stuck
/// on it even when the user sent it back, and only then can the user relax it.
pub fn stuck(history: &[Outcome]) -> Option<Case> {
    let counted: Vec<&Outcome> = history
        .iter()
        .filter(|o| !matches!(o, Outcome::NotCounted))
        .collect();
    // The newest failures with no pass after them, newest first.
    let run: Vec<(&FailureKind, &Vec<String>)> = counted
        .iter()
        .rev()
        .map_while(|o| match o {
            Outcome::Failed { kind, requirements } => Some((kind, requirements)),
            _ => None,
        })
        .collect();
    if run.len() >= SAME_REQUIREMENT_IN_A_ROW {
        let last = &run[..SAME_REQUIREMENT_IN_A_ROW];
        let mut names: Vec<&String> = last[0].1.iter().collect();
        names.sort();
        if let Some(r) = names
            .into_iter()
            .find(|r| last.iter().all(|(_, reqs)| reqs.contains(r)))
        {
            return Some(Case::SameRequirement(r.clone()));
        }
    }
    if run.len() >= SENT_BACK_IN_A_ROW
        && run[..SENT_BACK_IN_A_ROW]
            .iter()
            .all(|(k, _)| **k == FailureKind::User)
    {
        return Some(Case::SentBackInARow);
    }
    let failed = counted
        .iter()
        .filter(|o| matches!(o, Outcome::Failed { .. }))
        .count();
    (failed > MAX_FAILED).then_some(Case::TooManyFailures)
}

/// A ceiling card's button (§7.3).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardOption {
    AnotherWay,
    ChangePlan,
    Relax,
    TakeAsIs,
    CarryOn,
}

impl CardOption {
    pub const ALL: [CardOption; 5] = [
        CardOption::AnotherWay,
        CardOption::ChangePlan,
        CardOption::Relax,
        CardOption::TakeAsIs,
        CardOption::CarryOn,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CardOption::AnotherWay => "another_way",
            CardOption::ChangePlan => "change_plan",
            CardOption::Relax => "relax",
            CardOption::TakeAsIs => "take_as_is",
            CardOption::CarryOn => "carry_on",
        }
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        CardOption::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "action: '{s}' is not one of another_way, change_plan, relax, take_as_is, \
                     carry_on"
                )
            })
    }

    /// The button's words.
    pub fn label(self) -> &'static str {
        match self {
            CardOption::AnotherWay => "Another way",
            CardOption::ChangePlan => "Change the plan",
            CardOption::Relax => "Relax this requirement",
            CardOption::TakeAsIs => "Take it as it is",
            CardOption::CarryOn => "Ignore, carry on",
        }
    }

    /// What pressing it does (§7.3).
    pub fn effect(self) -> Effect {
        match self {
            CardOption::TakeAsIs => Effect::Approve,
            CardOption::AnotherWay => Effect::Rework {
                direction: Some("the user asks you to try another way"),
                relax: false,
            },
            CardOption::ChangePlan => Effect::Rework {
                direction: Some("the user asks you to change the plan for it"),
                relax: false,
            },
            CardOption::Relax => Effect::Rework {
                direction: Some("the user relaxed the requirement it kept failing"),
                relax: true,
            },
            // No new direction: the Bot goes on from what it was already told.
            CardOption::CarryOn => Effect::Rework {
                direction: None,
                relax: false,
            },
        }
    }
}

impl fmt::Display for CardOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an answer does to the stuck scope. Every answer restarts the count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Back to rework, the producer told the user's choice (none for "carry on"); with
    /// `relax`, the requirement no longer holds for the plan (the press is the confirmation).
    Rework {
        direction: Option<&'static str>,
        relax: bool,
    },
    /// The part (or whole ticket) is approved as it is.
    Approve,
}

/// The card's buttons: Relax only when stuck on one requirement (never on case (b)).
pub fn offer(case: &Case) -> Vec<CardOption> {
    CardOption::ALL
        .into_iter()
        .filter(|o| *o != CardOption::Relax || matches!(case, Case::SameRequirement(_)))
        .collect()
}

/// Whether `option` is on the card for `case`.
pub fn offered(case: &Case, option: CardOption) -> bool {
    offer(case).contains(&option)
}

/// The card's words; `what` names the scope ("#09 MV", "part \"Chorus\" of #09 MV").
pub fn card_text(case: &Case, what: &str) -> String {
    let why = match case {
        Case::SameRequirement(r) => format!(
            "the same requirement ({r}) failed on {SAME_REQUIREMENT_IN_A_ROW} hand-overs in a row"
        ),
        Case::SentBackInARow => {
            format!("you sent it back {SENT_BACK_IN_A_ROW} times in a row")
        }
        Case::TooManyFailures => format!("more than {MAX_FAILED} hand-overs failed"),
    };
    format!("{what} is stuck: {why}. How should it go on?")
}

/// What the producer hears when its work stops (§7.2: only that the user is being asked).
pub fn producer_text(what: &str) -> String {
    format!(
        "{what} reached its capability ceiling and is blocked: the user is being asked how to go \
         on. Do not hand it over again until they answer."
    )
}

/// Why a card still asking lost its buttons when its ticket closed another way (§7.3).
pub fn closed_text(why: &str) -> String {
    format!("No longer asking: {why}.")
}

#[cfg(test)]
#[path = "ceiling_tests.rs"]
mod tests;
