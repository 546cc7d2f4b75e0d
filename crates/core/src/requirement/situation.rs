//! What a segment working in a job reads of the ledger (RL-17, RL-18): the entries in force
//! for the job in a fixed order, then, apart, those waiting for the user and the old rules,
//! so a Bot never mistakes a pending wish for a requirement.

use super::{Scope, State};

/// One entry as the situation shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub id: i64,
    pub quote: String,
    pub restatement: String,
    pub state: State,
    pub scope: Scope,
    /// The ticket it holds for, as shown ("ticket 01 Shot 01–03").
    pub ticket: Option<String>,
    /// Held for this segment's own ticket.
    pub this_ticket: bool,
    /// The job it was inherited from, when another job recorded it.
    pub inherited_from: Option<String>,
    pub said_count: u32,
    pub job_count: u32,
    /// The check from words on the same number, as shown ("Running time 108–132 s (waiting
    /// for the user to confirm)").
    pub check: Option<String>,
    pub said_at: i64,
}

/// Lines past the count of those said twice, and code points, before "and N more".
pub const MORE_LINES: usize = 20;
pub const MORE_CHARS: usize = 2000;
/// Each of the two other sections.
pub const SIDE_LINES: usize = 10;

pub const IN_FORCE_TITLE: &str = "User requirements";
pub const WAITING_TITLE: &str =
    "Waiting for the user to confirm (not in force; do not act on these as requirements)";
pub const OLD_RULES_TITLE: &str = "Old rules (source unverified; for reference only)";

/// RL-17's order rank: this segment's ticket, the job, other tickets, session, standing.
fn rank(l: &Line) -> u8 {
    match l.scope {
        Scope::Ticket if l.this_ticket => 0,
        Scope::Job => 1,
        Scope::Ticket => 2,
        Scope::Session => 3,
        Scope::Standing => 4,
    }
}

/// One entry's line: `R-31 | "<quote>" (restated: …) | the user said it 7 times (across 3
/// plans) | holds for: … | check: …`.
pub fn line(l: &Line) -> String {
    let mut out = format!("R-{} | \"{}\"", l.id, l.quote);
    if !l.restatement.trim().is_empty() {
        out.push_str(&format!(" (restated: {})", l.restatement.trim()));
    }
    if l.said_count >= 2 {
        out.push_str(&format!(" | the user said it {} times", l.said_count));
        if l.job_count >= 2 {
            out.push_str(&format!(" (across {} plans)", l.job_count));
        }
    }
    let holds = match (l.scope, &l.ticket) {
        (Scope::Ticket, Some(t)) => t.clone(),
        (Scope::Ticket, None) | (Scope::Job, _) => "this job".to_string(),
        (Scope::Session, _) => "every job in this conversation".to_string(),
        (Scope::Standing, _) => "every video job".to_string(),
    };
    out.push_str(&format!(" | holds for: {holds}"));
    if let Some(from) = &l.inherited_from {
        out.push_str(&format!(" (inherited from {from})"));
    }
    if let Some(check) = &l.check {
        out.push_str(&format!(" | check: {check}"));
    }
    out
}

/// The three sections (each only when it has an entry), joined by blank lines; empty when the
/// job has none. `lines` holds the job's entries already minus those set aside for it.
pub fn render(lines: &[Line]) -> String {
    let mut in_force: Vec<&Line> = lines.iter().filter(|l| l.state == State::InForce).collect();
    in_force.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then(b.said_count.cmp(&a.said_count))
            .then(b.said_at.cmp(&a.said_at))
            .then(b.id.cmp(&a.id))
    });
    let mut sections = Vec::new();
    if !in_force.is_empty() {
        let mut body = Vec::new();
        let (mut extra, mut chars, mut left) = (0usize, 0usize, 0usize);
        for l in &in_force {
            let text = line(l);
            if l.said_count >= 2 {
                body.push(text);
                continue;
            }
            let n = text.chars().count();
            if extra < MORE_LINES && chars + n <= MORE_CHARS {
                extra += 1;
                chars += n;
                body.push(text);
            } else {
                left += 1;
            }
        }
        if left > 0 {
            body.push(format!("and {left} more"));
        }
        sections.push(format!("{IN_FORCE_TITLE}:\n{}", body.join("\n")));
    }
    for (state, title) in [
        (State::ToConfirm, WAITING_TITLE),
        (State::OldRuleUnverified, OLD_RULES_TITLE),
    ] {
        let mut mine: Vec<&Line> = lines.iter().filter(|l| l.state == state).collect();
        if mine.is_empty() {
            continue;
        }
        mine.sort_by(|a, b| b.said_at.cmp(&a.said_at).then(b.id.cmp(&a.id)));
        let mut body: Vec<String> = mine.iter().take(SIDE_LINES).map(|l| line(l)).collect();
        if mine.len() > SIDE_LINES {
            body.push(format!("and {} more", mine.len() - SIDE_LINES));
        }
        sections.push(format!("{title}:\n{}", body.join("\n")));
    }
    sections.join("\n\n")
}
