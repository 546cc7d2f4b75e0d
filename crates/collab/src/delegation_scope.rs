//! What a request covers (A §3): the ticket, parts and requirement entries `delegate` names,
//! checked to be the job's (DEL-3); a deliverable asked on the caller's own ticket with no part
//! refused (DEL-5); when an approval answers it (DEL-14); and when its recipient, having handed
//! in, no longer owes it (DEL-16) or a review is still on its way (DEL-17).

use crate::tickets::work::ticket_list;
use troupe_core::delegation::{DelegateArgs, Expects};
use troupe_core::requirement::State;
use troupe_core::submission::SubmissionState;
use troupe_core::ticket::{PartStage, TicketStage};
use troupe_core::{PlanId, TicketId};
use troupe_store::{
    DelegationRecord, PartRecord, StoreError, SubmissionRecord, TicketRecord, Tx, WorkItemRecord,
};

/// A request's reach, as stored.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    pub(crate) ticket: Option<TicketId>,
    pub(crate) part_ids: Vec<i64>,
    pub(crate) requirement_ids: Vec<i64>,
}

/// The reach of `args` on `plan` from `sender`'s work, or the refusal the caller reads.
pub(crate) fn scope_of(
    tx: &Tx<'_>,
    plan: PlanId,
    sender: &WorkItemRecord,
    args: &DelegateArgs,
) -> Result<Result<Scope, String>, StoreError> {
    let tickets = tx.tickets_of_plan(plan)?;
    let live: Vec<TicketRecord> = tickets
        .iter()
        .filter(|t| t.stage != TicketStage::Dropped)
        .cloned()
        .collect();
    let named = match args.ticket {
        None => None,
        Some(n) => match live.iter().find(|t| t.number == n) {
            Some(t) => Some(t.clone()),
            None => {
                let name = tx.plan(plan)?.name;
                return Ok(Err(format!(
                    "not_on_plan: #{n:02} is not a live ticket of the job \"{name}\" ({}). Name \
                     one of its tickets in `ticket`, or leave `ticket` out.",
                    ticket_list(&live)
                )));
            }
        },
    };
    // With none named, the request is about the ticket the sender works on, else the job's
    // only ticket: parts and DEL-5 read that one.
    let implied = named.clone().or_else(|| {
        sender
            .ticket_id
            .and_then(|id| live.iter().find(|t| t.id.0 == id).cloned())
            .or_else(|| match live.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            })
    });
    let mut part_ids = Vec::new();
    if !args.parts.is_empty() {
        let Some(t) = &implied else {
            return Ok(Err(format!(
                "not_on_plan: `parts` are parts of one ticket; name that ticket in `ticket` \
                 (this job's tickets: {})",
                ticket_list(&live)
            )));
        };
        let parts = tx.parts_of_ticket(t.id)?;
        for asked in &args.parts {
            let Some(p) = find_part(&parts, asked) else {
                return Ok(Err(format!(
                    "not_on_plan: ticket #{:02} \"{}\" has no part \"{}\"; {}",
                    t.number,
                    t.title,
                    asked.trim(),
                    part_list(&parts)
                )));
            };
            if !part_ids.contains(&p.id.0) {
                part_ids.push(p.id.0);
            }
        }
    }
    if args.expects == Expects::Deliverable
        && part_ids.is_empty()
        && let Some(t) = &implied
        && t.owner_bot_id == Some(sender.bot_id)
    {
        return Ok(Err(format!(
            "own_ticket: ticket #{n:02} \"{title}\" is yours, so a deliverable asked for on it \
             with no `parts` would be handed over as the whole ticket. Two ways on: (a) give \
             the piece its own ticket with plan_items (the Bot you ask as its owner, you as its \
             reviewer) and delegate on that ticket; or (b) delegate with expects \"answer\" for \
             what you need, and hand #{n:02} over yourself.",
            n = t.number,
            title = t.title
        )));
    }
    let ticket = named
        .as_ref()
        .or(implied.as_ref().filter(|_| !part_ids.is_empty()));
    let mut requirement_ids = Vec::new();
    if !args.requirement_ids.is_empty() {
        let excluded = tx.requirements_excluded_in(plan)?;
        let applying: Vec<_> = tx
            .requirements_of_plan(plan)?
            .into_iter()
            .filter(|r| {
                matches!(r.state, State::InForce | State::ToConfirm)
                    && !excluded.contains(&r.id)
                    && r.ticket_id
                        .is_none_or(|t| ticket.is_none_or(|named| named.id == t))
            })
            .collect();
        for id in &args.requirement_ids {
            if !applying.iter().any(|r| r.id.0 == *id) {
                let list: Vec<String> = applying.iter().map(|r| r.id.to_string()).collect();
                return Ok(Err(format!(
                    "not_on_plan: requirement {id} does not apply to this work (it is not an \
                     entry in force for this job{}); the ones that do: {}",
                    if ticket.is_some() { " and ticket" } else { "" },
                    if list.is_empty() {
                        "none".into()
                    } else {
                        list.join(", ")
                    }
                )));
            }
            if !requirement_ids.contains(id) {
                requirement_ids.push(*id);
            }
        }
    }
    Ok(Ok(Scope {
        ticket: ticket.map(|t| t.id),
        part_ids,
        requirement_ids,
    }))
}

/// A part by its label (case aside) or its number (`2`, `#2`, `#02`).
fn find_part<'a>(parts: &'a [PartRecord], asked: &str) -> Option<&'a PartRecord> {
    let asked = asked.trim();
    let number: Option<i64> = asked.trim_start_matches('#').parse().ok();
    parts
        .iter()
        .find(|p| p.label.trim().eq_ignore_ascii_case(asked))
        .or_else(|| parts.iter().find(|p| Some(p.number) == number))
}

fn part_list(parts: &[PartRecord]) -> String {
    if parts.is_empty() {
        return "it has no parts: leave `parts` out to ask for the whole ticket".into();
    }
    let names: Vec<String> = parts
        .iter()
        .map(|p| format!("{} {}", p.number, p.label))
        .collect();
    format!("its parts: {}", names.join(", "))
}

/// DEL-14: whether the approval of `s` (already applied to its ticket and parts) answers `d`:
/// one naming parts once every one is approved, one naming a ticket once it is through, one
/// naming neither at the first approved hand-over on the job.
pub(crate) fn approval_answers(
    tx: &Tx<'_>,
    d: &DelegationRecord,
    s: &SubmissionRecord,
) -> Result<bool, StoreError> {
    if d.ticket_id.is_some_and(|t| t != s.ticket_id.0) {
        return Ok(false);
    }
    if !d.part_ids.is_empty() {
        // A part the lead has since taken out leaves nothing to wait for.
        let parts = tx.parts_of_ticket(s.ticket_id)?;
        return Ok(d.part_ids.iter().all(|id| {
            parts
                .iter()
                .find(|p| p.id.0 == *id)
                .is_none_or(|p| p.stage == PartStage::Approved)
        }));
    }
    if d.ticket_id.is_some() {
        return Ok(tx.ticket(s.ticket_id)?.stage == TicketStage::Approved);
    }
    Ok(true)
}

/// DEL-16: a deliverable request whose recipient's hand-over for it is being checked, in review
/// or waiting on the user's word is not owed; sent back, it is owed again.
pub(crate) fn handed_in(
    tx: &Tx<'_>,
    d: &DelegationRecord,
    recipient: troupe_core::BotId,
) -> Result<bool, StoreError> {
    if d.expects != Expects::Deliverable {
        return Ok(false);
    }
    // Its reach: its ticket, else the whole job; only hand-overs made since it was asked.
    let subs = tx.submission_states(d.plan_id, d.ticket_id.map(TicketId), d.created_at)?;
    Ok(subs.iter().any(|(maker, state)| {
        *maker == Some(recipient)
            && matches!(
                state,
                SubmissionState::Checking
                    | SubmissionState::Submitted
                    | SubmissionState::InReview
                    | SubmissionState::AwaitingUser
            )
    }))
}

/// DEL-17: a review request is not answered by words while a hand-over in its reach is being
/// checked, handed in or in review: that one goes through the formal review (DEL-18).
pub(crate) fn review_in_flight(tx: &Tx<'_>, d: &DelegationRecord) -> Result<bool, StoreError> {
    if d.expects != Expects::Review {
        return Ok(false);
    }
    Ok(tx
        .submission_states(d.plan_id, d.ticket_id.map(TicketId), 0)?
        .iter()
        .any(|(_, state)| {
            matches!(
                state,
                SubmissionState::Checking | SubmissionState::Submitted | SubmissionState::InReview
            )
        }))
}
