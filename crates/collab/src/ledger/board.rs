//! Rules and Done when lines the user writes on the board (RL-7, RL-8): an added line is an
//! entry in force on the board's words, or the same words said again, or a pending entry
//! taken up as the user's; a removed line releases what holds for this job — for this job
//! only while another job still holds the words. A ticket's own Done when lines are entries of
//! that ticket alone.

use crate::{Collab, CollabError};
use troupe_core::PlanId;
use troupe_core::requirement::{Polarity, Scope, SourceKind, State, board_lines_changed, db_fold};
use troupe_store::{NewRequirement, RequirementRecord, StoreError, Tx};

/// The board fields that hold requirements.
const FIELDS: &[&str] = &["rules", "done_when"];

fn same_words(r: &RequirementRecord, line: &str) -> bool {
    !r.quote.is_empty() && db_fold(&r.quote) == db_fold(line)
}

/// RL-7: one line added on `plan`'s board.
pub fn board_line_added(tx: &mut Tx<'_>, plan: PlanId, line: &str) -> Result<(), StoreError> {
    let all = tx.requirements_of_plan(plan)?;
    let job_wide = |r: &&RequirementRecord| r.scope != Scope::Ticket && same_words(r, line);
    if let Some(r) = all
        .iter()
        .filter(job_wide)
        .find(|r| r.state == State::InForce)
    {
        // Said again; set aside here, it applies again (raising lifts the exclusion).
        tx.raise_requirement(r.id, plan, None, tx.now())?;
        return Ok(());
    }
    if let Some(r) = all
        .iter()
        .filter(job_wide)
        .find(|r| matches!(r.state, State::ToConfirm | State::OldRuleUnverified))
    {
        tx.set_requirement_state(r.id, plan, State::InForce, "taken_up")?;
        return Ok(());
    }
    new_board_entry(tx, plan, None, line)
}

/// A new entry in force on a board line: the job's, or (`ticket`) that ticket's alone.
fn new_board_entry(
    tx: &mut Tx<'_>,
    plan: PlanId,
    ticket: Option<troupe_core::TicketId>,
    line: &str,
) -> Result<(), StoreError> {
    let home = tx.plan(plan)?.home_session_id;
    tx.add_requirement(&NewRequirement {
        plan_id: plan,
        ticket_id: ticket,
        session_id: home,
        scope: if ticket.is_some() {
            Scope::Ticket
        } else {
            Scope::Job
        },
        quote: line
            .chars()
            .take(troupe_core::requirement::QUOTE_LIMIT)
            .collect(),
        source_kind: SourceKind::Board,
        source_message_id: None,
        source_quote_id: None,
        restatement: String::new(),
        category: None,
        nature: None,
        polarity: Polarity::Must,
        number: None,
        state: State::InForce,
        replaces_id: None,
        said_at: tx.now(),
    })?;
    Ok(())
}

/// RL-8: one line removed from `plan`'s board.
pub fn board_line_removed(tx: &mut Tx<'_>, plan: PlanId, line: &str) -> Result<(), StoreError> {
    let excluded = tx.requirements_excluded_in(plan)?;
    for r in tx.requirements_of_plan(plan)? {
        if !same_words(&r, line)
            || excluded.contains(&r.id)
            || !matches!(r.state, State::InForce | State::OldRuleUnverified)
        {
            continue;
        }
        let shared = matches!(r.scope, Scope::Session | Scope::Standing);
        if shared && held_elsewhere(tx, &r, plan)? {
            tx.exclude_requirement(r.id, r.version, plan, true, "not_for_this_job")?;
            continue;
        }
        let (state, step) = match r.state {
            State::OldRuleUnverified => (State::NotARequirement, "not_a_requirement"),
            _ => (State::NoLongerApplies, "no_longer_applies"),
        };
        tx.set_requirement_state(r.id, plan, state, step)?;
    }
    Ok(())
}

/// RL-7 and RL-8 for one ticket's own Done when (the board's ticket edit, `old` as it stood):
/// an added line is a ticket-scoped entry in force on the board's words — or the same words
/// said again, or a pending entry of the ticket taken up as the user's; a removed line no
/// longer applies to the ticket.
pub fn ticket_done_when_edited(
    tx: &mut Tx<'_>,
    old: &troupe_store::TicketRecord,
    done_when: Option<&str>,
) -> Result<(), StoreError> {
    let Some(new) = done_when else {
        return Ok(());
    };
    let (added, removed) = board_lines_changed(&old.done_when, new);
    let (plan, ticket) = (old.plan_id, old.id);
    let of_ticket = |r: &RequirementRecord, line: &str| {
        r.scope == Scope::Ticket && r.ticket_id == Some(ticket) && same_words(r, line)
    };
    for line in &removed {
        for r in tx.requirements_of_plan(plan)? {
            if of_ticket(&r, line) && r.state == State::InForce {
                tx.set_requirement_state(r.id, plan, State::NoLongerApplies, "no_longer_applies")?;
            }
        }
    }
    for line in &added {
        let all = tx.requirements_of_plan(plan)?;
        if let Some(r) = all
            .iter()
            .find(|r| of_ticket(r, line) && r.state == State::InForce)
        {
            tx.raise_requirement(r.id, plan, None, tx.now())?;
            continue;
        }
        if let Some(r) = all
            .iter()
            .find(|r| of_ticket(r, line) && r.state == State::ToConfirm)
        {
            tx.set_requirement_state(r.id, plan, State::InForce, "taken_up")?;
            continue;
        }
        new_board_entry(tx, plan, Some(ticket), line)?;
    }
    Ok(())
}

/// Whether a job other than `plan` still holds the entry: it recorded it, or the user said it
/// there (a board line counts), and that job has not set it aside.
fn held_elsewhere(tx: &Tx<'_>, r: &RequirementRecord, plan: PlanId) -> Result<bool, StoreError> {
    let aside = tx.requirement_excluded_plans(r.id)?;
    let mut holders = tx.requirement_saying_plans(r.id)?;
    holders.push(r.plan_id);
    Ok(holders.iter().any(|p| *p != plan && !aside.contains(p)))
}

impl Collab {
    /// Read one board edit of a job (the revision `version`): every Rules and Done when line
    /// it added or removed. Only the user's edits are the user's words.
    pub fn ledger_board_edited(&self, plan: PlanId, version: i64) -> Result<(), CollabError> {
        Ok(self.store().write(|tx| {
            let Some(rev) = tx
                .plan_revisions(plan)?
                .into_iter()
                .find(|r| r.version == version)
            else {
                return Ok(());
            };
            if !rev.cause.is_user() {
                return Ok(());
            }
            for field in FIELDS {
                let Some(ch) = rev.changes.get(*field) else {
                    continue;
                };
                let old = ch["old"].as_str().unwrap_or_default();
                let new = ch["new"].as_str().unwrap_or_default();
                let (added, removed) = board_lines_changed(old, new);
                for l in &removed {
                    board_line_removed(tx, plan, l)?;
                }
                for l in &added {
                    board_line_added(tx, plan, l)?;
                }
            }
            Ok(())
        })?)
    }
}
