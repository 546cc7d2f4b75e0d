//! The reflection lesson (digest 003-B §10.2, ADR 0051): after an approval the person
//! overturned or a capability ceiling, the Bot involved reads the ticket's record and may
//! propose one checklist item or one check on a file — never a command (LS3) — or nothing. The
//! person adopts or declines it on a card; an adopted item is read in that Bot's situation, an
//! adopted check is the ticket's, as an organizer's check (it gates, and backs no approval
//! until the person edits it).

use crate::acceptance_check::{self, Draft, Kind};
use crate::reading::extract_json_object;
use serde::Serialize;
use serde_json::{Value, json};
use std::fmt::Write;

/// §10.2: at most this many reflections with a model call a day…
pub const DAY_LIMIT: usize = 20;
/// …costing at most this much (US dollars).
pub const DAY_BUDGET_USD: f64 = 2.0;
/// Once a day per Bot and ticket.
pub const PER_TICKET_MS: i64 = 24 * 3_600_000;
/// A checklist item is at most this many characters.
pub const ITEM_MAX: usize = 200;
/// The first words of every reflection prompt.
pub const PREFIX: &str = "troupe-reflection";
/// A cause is answered within a day of time not under a stop…
pub const DUE_FOR_MS: i64 = 24 * 3_600_000;
/// …and not looked for further back than this, however long the stops were.
pub const LOOK_BACK_MS: i64 = 30 * 24 * 3_600_000;

/// Whether a cause at `at` is still due at `now`: under a stop it waits for the lift (§10.2), so
/// the time `stops` covered (`(from, until)`, none: still in force) does not count towards its
/// day.
pub fn still_due(at: i64, now: i64, stops: &[(i64, Option<i64>)]) -> bool {
    let mut spans: Vec<(i64, i64)> = stops
        .iter()
        .map(|&(from, until)| (from.max(at), until.unwrap_or(now).min(now)))
        .filter(|(from, until)| from < until)
        .collect();
    spans.sort_unstable();
    let mut stopped = 0;
    let mut reached = at;
    for (from, until) in spans {
        let from = from.max(reached);
        if until > from {
            stopped += until - from;
            reached = until;
        }
    }
    now - at - stopped <= DUE_FOR_MS
}

/// When a checklist item is read.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    BeforeReviewing,
    BeforeHandingOver,
    BeforeGenerating,
}

impl When {
    pub const ALL: [When; 3] = [
        When::BeforeReviewing,
        When::BeforeHandingOver,
        When::BeforeGenerating,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            When::BeforeReviewing => "before_reviewing",
            When::BeforeHandingOver => "before_handing_over",
            When::BeforeGenerating => "before_generating",
        }
    }

    pub fn parse(s: &str) -> Result<When, String> {
        Self::ALL
            .into_iter()
            .find(|w| w.as_str() == s)
            .ok_or_else(|| {
                format!("when '{s}' is not one of before_reviewing, before_handing_over, before_generating")
            })
    }

    /// As the card and the situation say it.
    pub fn words(self) -> &'static str {
        match self {
            When::BeforeReviewing => "before reviewing",
            When::BeforeHandingOver => "before handing over",
            When::BeforeGenerating => "before generating",
        }
    }
}

/// What a reflection proposes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proposal {
    Checklist {
        when: When,
        text: String,
    },
    /// A check on a file: `file_exists`, `file_contains` or `file_matches_regex`.
    Check {
        kind: Kind,
        path: String,
        pattern: Option<String>,
    },
    Nothing,
}

impl Proposal {
    /// As stored (`reflections.proposal`).
    pub fn to_json(&self) -> Value {
        match self {
            Proposal::Checklist { when, text } => {
                json!({"proposal": "checklist", "when": when.as_str(), "text": text})
            }
            Proposal::Check {
                kind,
                path,
                pattern,
            } => {
                json!({"proposal": "check", "kind": kind.as_str(), "path": path, "pattern": pattern})
            }
            Proposal::Nothing => json!({"proposal": "nothing"}),
        }
    }
}

fn field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Read the model's answer: one JSON object, or nothing is proposed. A check must be one a
/// person could save on the ticket: a file inside the workspace, a pattern that compiles.
pub fn parse(raw: &str) -> Result<Proposal, String> {
    let v = extract_json_object(raw)?;
    match field(&v, "proposal") {
        Some("nothing") => Ok(Proposal::Nothing),
        Some("checklist") => {
            let when = When::parse(field(&v, "when").ok_or("a checklist item needs when")?)?;
            let text = field(&v, "text").ok_or("a checklist item needs text")?;
            let n = text.chars().count();
            if n > ITEM_MAX {
                return Err(format!(
                    "the checklist item is {n} characters; at most {ITEM_MAX}"
                ));
            }
            Ok(Proposal::Checklist {
                when,
                text: text.to_string(),
            })
        }
        Some("check") => {
            let kind = match field(&v, "kind") {
                Some("exists") => Kind::FileExists,
                Some("contains") => Kind::FileContains,
                Some("matches") => Kind::FileMatchesRegex,
                // LS3: a model never writes a detector that runs something.
                Some("command") => return Err("a proposed check never runs a command".into()),
                other => {
                    return Err(format!(
                        "check kind {other:?} is not one of exists, contains, matches"
                    ));
                }
            };
            let path = field(&v, "path").ok_or("a check needs the file's path")?;
            // A pattern given for `exists` is dropped: that check reads none.
            let pattern = field(&v, "pattern").filter(|_| kind != Kind::FileExists);
            let draft = Draft {
                path: Some(path),
                pattern,
                ..Draft::default()
            };
            acceptance_check::validate(kind, &draft).map_err(|e| e.to_string())?;
            Ok(Proposal::Check {
                kind,
                path: path.to_string(),
                pattern: pattern.map(String::from),
            })
        }
        other => Err(format!(
            "proposal {other:?} is not one of checklist, check, nothing"
        )),
    }
}

/// The card's words: who proposes what, a check spelled out.
pub fn card_text(bot: &str, ticket: &str, p: &Proposal) -> String {
    match p {
        Proposal::Checklist { when, text } => format!(
            "{bot} proposes a checklist item for itself, read {}: “{text}” (after {ticket}).",
            when.words()
        ),
        Proposal::Check {
            kind,
            path,
            pattern,
        } => {
            let what = match (kind, pattern) {
                (Kind::FileContains, Some(p)) => format!("the file {path} must contain “{p}”"),
                (Kind::FileMatchesRegex, Some(p)) => {
                    format!("the file {path} must match the pattern {p}")
                }
                _ => format!("the file {path} must exist"),
            };
            format!(
                "{bot} proposes a check on {ticket}: {what}. Adopted, it sends work back when it \
                 fails; it backs no approval until you edit it on the board."
            )
        }
        Proposal::Nothing => String::new(),
    }
}

/// What the reflecting Bot reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Input {
    pub bot_name: String,
    /// "an approval you gave was overturned by the person" / "the ticket reached the capability
    /// ceiling".
    pub what_happened: String,
    pub ticket: String,
    pub done_when: String,
    pub requirements: Vec<String>,
    pub verdicts: Vec<String>,
    pub work_log: Vec<String>,
    pub checklist: Vec<String>,
}

pub fn prompt(i: &Input) -> String {
    let mut out = format!(
        "{PREFIX}\nYou are {}. On {}, {}. Read its record and propose at most one lesson the app \
         will hold you to, or nothing.\n\n## Done when\n{}\n",
        i.bot_name, i.ticket, i.what_happened, i.done_when
    );
    for (title, items) in [
        ("What the person asked for", &i.requirements),
        ("Review verdicts", &i.verdicts),
        ("Work log", &i.work_log),
        ("Your checklist already", &i.checklist),
    ] {
        let _ = writeln!(out, "\n## {title}");
        if items.is_empty() {
            out.push_str("(none)\n");
        }
        for x in items {
            let _ = writeln!(out, "- {x}");
        }
    }
    out.push_str(
        "\nAnswer with one JSON object and nothing else, one of:\n\
         {\"proposal\": \"checklist\", \"when\": \"before_reviewing\" | \"before_handing_over\" | \
         \"before_generating\", \"text\": one sentence you will check yourself on}\n\
         {\"proposal\": \"check\", \"kind\": \"exists\" | \"contains\" | \"matches\", \"path\": a \
         file in the workspace, \"pattern\": the text or regex (not for exists)}\n\
         {\"proposal\": \"nothing\"}\n\
         A check looks at a file only; it never runs a command.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_waits_out_a_stop_and_the_day_counts_only_time_not_stopped() {
        let h = 3_600_000;
        assert!(still_due(0, 24 * h, &[]));
        assert!(!still_due(0, 25 * h, &[]));
        // Stopped from hour 2 to hour 50: at hour 60, 12 h of unstopped time have passed.
        assert!(still_due(0, 60 * h, &[(2 * h, Some(50 * h))]));
        assert!(!still_due(0, 75 * h, &[(2 * h, Some(50 * h))]));
        // Overlapping stops count once; a stop from before the cause counts from the cause.
        let overlapping = [(-5 * h, Some(10 * h)), (5 * h, Some(30 * h))];
        assert!(still_due(0, 54 * h, &overlapping));
        assert!(!still_due(0, 55 * h, &overlapping));
        // Still in force: it waits however long.
        assert!(still_due(0, 500 * h, &[(h, None)]));
    }

    #[test]
    fn a_checklist_item_a_file_check_or_nothing() {
        assert_eq!(
            parse(r#"{"proposal": "checklist", "when": "before_reviewing", "text": "Open every file."}"#)
                .unwrap(),
            Proposal::Checklist { when: When::BeforeReviewing, text: "Open every file.".into() }
        );
        assert_eq!(
            parse(r#"{"proposal": "check", "kind": "contains", "path": "out/report.md", "pattern": "Sources"}"#)
                .unwrap(),
            Proposal::Check {
                kind: Kind::FileContains,
                path: "out/report.md".into(),
                pattern: Some("Sources".into())
            }
        );
        assert_eq!(
            parse(r#"{"proposal": "nothing"}"#).unwrap(),
            Proposal::Nothing
        );
    }

    #[test]
    fn ls3_never_a_command_and_never_outside_the_workspace() {
        let cmd = parse(r#"{"proposal": "check", "kind": "command", "path": "x"}"#);
        assert!(cmd.unwrap_err().contains("never runs a command"));
        assert!(
            parse(r#"{"proposal": "check", "kind": "exists", "path": "/etc/passwd"}"#).is_err()
        );
        assert!(
            parse(r#"{"proposal": "check", "kind": "matches", "path": "a", "pattern": "("}"#)
                .is_err()
        );
        assert!(parse(r#"{"proposal": "checklist", "when": "later", "text": "x"}"#).is_err());
        assert!(
            parse(&format!(
                r#"{{"proposal": "checklist", "when": "before_generating", "text": "{}"}}"#,
                "x".repeat(201)
            ))
            .is_err()
        );
        assert!(parse("I would add a check.").is_err());
    }

    #[test]
    fn a_check_proposal_spells_out_what_it_checks() {
        let p = Proposal::Check {
            kind: Kind::FileContains,
            path: "out/report.md".into(),
            pattern: Some("Sources".into()),
        };
        let t = card_text("Ada", "#02 Report", &p);
        assert!(
            t.contains("the file out/report.md must contain “Sources”"),
            "{t}"
        );
        assert!(t.contains("backs no approval until you edit it"));
    }
}
