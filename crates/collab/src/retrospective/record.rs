//! What a Bot looking back reads (§11.2): the job's record — the person's words, its own
//! hand-overs and what became of them, the requirements ledger, what went wrong for it, its
//! memories, skills and checklist, the project skills, and its earlier retrospectives — and
//! never the transcript.

use std::collections::BTreeMap;
use troupe_core::retrospective::prompt::{Earlier, HandOver, Input, Requirement};
use troupe_core::retrospective::skill_changes;
use troupe_core::submission::SubmissionState;
use troupe_core::{BotId, PlanId};
use troupe_store::{BotSkill, PlanRecord, RunOutcome, StoreError, SubmissionRecord, Tx};

/// The Bots' hand-overs on the job, each Bot's in order (the checks' own failed hand-overs
/// count: they were handed over).
pub(crate) fn handovers_by_bot(
    tx: &Tx<'_>,
    plan: PlanId,
) -> Result<BTreeMap<BotId, Vec<SubmissionRecord>>, StoreError> {
    let mut by: BTreeMap<BotId, Vec<SubmissionRecord>> = BTreeMap::new();
    for s in tx.submissions_of_plan(plan, None)? {
        if let Some(b) = s.producer_bot_id {
            by.entry(b).or_default().push(s);
        }
    }
    for v in by.values_mut() {
        v.sort_by_key(|s| s.id.0);
    }
    Ok(by)
}

/// `(ticket label, times handed over)` for the tickets a Bot handed over since `since`.
pub(crate) fn times_per_ticket(
    tx: &Tx<'_>,
    subs: &[SubmissionRecord],
    since: i64,
) -> Result<Vec<(String, u32)>, StoreError> {
    let mut per: BTreeMap<i64, u32> = BTreeMap::new();
    for s in subs.iter().filter(|s| s.created_at >= since) {
        *per.entry(s.ticket_id.0).or_default() += 1;
    }
    let mut out = Vec::new();
    for (t, n) in per {
        let ticket = tx.ticket(troupe_core::TicketId(t))?;
        out.push((format!("{:02}", ticket.number), n));
    }
    Ok(out)
}

fn outcome(s: &SubmissionRecord) -> &'static str {
    match s.state {
        SubmissionState::Approved => "approved",
        SubmissionState::Rework => "sent back for rework",
        SubmissionState::FailedChecks => "stopped by its checks",
        SubmissionState::Superseded => "replaced by a newer hand-over",
        SubmissionState::AwaitingUser => "waiting on the person's word",
        SubmissionState::Checking | SubmissionState::Submitted | SubmissionState::InReview => {
            "not yet decided"
        }
    }
}

/// The Bot's skills, each with whether its text fits in the prompt (the same answer when the
/// prompt is written and when its edits are checked).
pub(crate) fn skills_as_shown(
    tx: &Tx<'_>,
    bot: BotId,
) -> Result<Vec<(BotSkill, bool)>, StoreError> {
    let skills = tx.bot_skills(bot)?;
    let lengths: Vec<usize> = skills.iter().map(|s| s.body.chars().count()).collect();
    Ok(skills
        .into_iter()
        .zip(skill_changes::texts_shown(&lengths))
        .collect())
}

/// The prompt's input for `bot` looking back on `plan`.
pub(crate) fn input(
    tx: &Tx<'_>,
    plan: &PlanRecord,
    bot: BotId,
    subs: &[SubmissionRecord],
    went_wrong: Vec<String>,
    since: Option<i64>,
) -> Result<Input, StoreError> {
    let mut handovers = Vec::new();
    for s in subs.iter().filter(|s| s.created_at >= since.unwrap_or(0)) {
        let ticket = tx.ticket(s.ticket_id)?;
        handovers.push(HandOver {
            ticket: format!("ticket {:02} \"{}\"", ticket.number, ticket.title),
            note: s.note.clone(),
            outcome: outcome(s).into(),
            reviews: s
                .reviews
                .iter()
                .map(|r| format!("{}: {}", r.outcome.as_str(), r.note.trim()))
                .collect(),
            failed_checks: s
                .check_runs
                .iter()
                .filter(|c| c.outcome == RunOutcome::Failed && !c.for_reference)
                .map(|c| format!("{}: {}", c.check_id, c.detail))
                .collect(),
        });
    }
    let first_handover = subs.iter().map(|s| s.created_at).min();
    let requirements = tx
        .requirements_of_plan(plan.id)?
        .into_iter()
        .map(|r| Requirement {
            text: if r.restatement.trim().is_empty() {
                r.quote
            } else {
                r.restatement
            },
            said: r.said_count,
            first_after_handover: first_handover.is_some_and(|h| r.said_at > h),
        })
        .collect();
    let person_words = tx
        .user_lines_filed_under(plan.id)?
        .into_iter()
        .filter(|l| Some(l.line_id) != plan.opening_line_id)
        .map(|l| l.body)
        .collect();
    let memories = tx
        .bot_memories(bot)?
        .into_iter()
        .map(|m| (m.subject, m.body, m.enabled))
        .collect();
    let skills = skills_as_shown(tx, bot)?
        .into_iter()
        .map(|(s, shown)| (s.name, s.description, shown.then_some(s.body)))
        .collect();
    let project_skills = tx
        .project_skills()?
        .into_iter()
        .filter(|p| p.enabled)
        .map(|p| (p.name, p.description))
        .collect();
    let checklist = tx
        .checklist_items(Some(bot))?
        .into_iter()
        .filter(|i| i.enabled)
        .map(|i| format!("{}: {}", i.when, i.text))
        .collect();
    let earlier = tx
        .retrospectives_of_bot(bot)?
        .into_iter()
        .filter(|r| r.state == "done")
        .take(5)
        .map(|r| Earlier {
            summary: r.summary.unwrap_or_default(),
            conclusions: r
                .tripped_up
                .iter()
                .chain(&r.sent_back_because)
                .chain(&r.do_again)
                .cloned()
                .collect(),
            undone: r
                .changes
                .iter()
                .filter(|c| c.undone_at.is_some())
                .map(|c| match (c.target.as_str(), &c.after) {
                    ("skill", _) => format!("your change to the skill {}", c.subject),
                    (_, Some(a)) => format!("{}: {a}", c.subject),
                    (_, None) => format!("forgetting {}", c.subject),
                })
                .collect(),
        })
        .collect();
    Ok(Input {
        bot_name: tx.bot(bot)?.name,
        job_name: plan.name.clone(),
        request: plan.original_request.clone(),
        person_words,
        handovers,
        requirements,
        went_wrong,
        memories,
        skills,
        project_skills,
        checklist,
        earlier,
        since_last: since.is_some(),
    })
}
