//! Capability ceiling (digest 003-B §7): every failed hand-over is recorded with why it failed;
//! the part it named (or, for a hand-over of no part, the whole ticket) is counted since the
//! user last answered a ceiling card about it (`troupe_core::ceiling::stuck`). When stuck, the
//! part reads blocked, a card asks the user (`card`), the producer hears only that the user is
//! being asked, and a `pipeline` quality event is recorded; `submit` naming it is refused with
//! `ceiling_reached` (`CountedCeiling`, the default `PartCeiling`) until the card is answered
//! (`answer`).

mod answer;
pub(crate) mod card;

pub use answer::CeilingAnswer;

use crate::submissions::PartCeiling;
use troupe_core::ceiling::{Case, FailureKind, Outcome, stuck};
use troupe_core::review::{ReviewOutcome, ReviewVerdict};
use troupe_core::submission::{CheckResult, SubmissionState};
use troupe_core::ticket::{SendBack, TicketStage};
use troupe_core::{PartId, SubmissionId};
use troupe_store::{CardState, StoreError, SubmissionRecord, TicketRecord, Tx};

/// Which failure a send-back is (§7.1 "what counts").
pub(crate) fn kind_of(why: SendBack) -> FailureKind {
    match why {
        SendBack::GateFailed { .. } | SendBack::Supervisor => FailureKind::Checks,
        SendBack::Rejected => FailureKind::Review,
        SendBack::UserFault => FailureKind::User,
    }
}

/// The requirements a failure names: the gates that failed for it, or the reviewer's failing
/// verdicts. A user's send-back names none (§7.1 (b) needs none).
fn failed_requirements(
    tx: &Tx<'_>,
    s: &SubmissionRecord,
    kind: FailureKind,
) -> Result<Vec<String>, StoreError> {
    let mut out: Vec<String> = match kind {
        FailureKind::Checks => crate::checks::bound::bound_results(tx, s.id)?
            .into_iter()
            .filter(|c| c.gate && c.result == CheckResult::Fail)
            .map(|c| c.check_id.to_string())
            .collect(),
        FailureKind::Review => tx
            .reviews_of_submission(s.id)?
            .into_iter()
            .filter(|r| r.outcome == ReviewOutcome::Reject)
            .max_by_key(|r| r.id.0)
            .map(|r| {
                r.verdicts
                    .into_iter()
                    .filter(|v| v.verdict == ReviewVerdict::Fail)
                    .map(|v| v.requirement_id)
                    .collect()
            })
            .unwrap_or_default(),
        FailureKind::User => Vec::new(),
    };
    out.sort();
    out.dedup();
    Ok(out)
}

/// Call once a hand-over failed (in the same transaction): records why, then counts each part
/// it named (or the whole ticket) and stops those that reached the ceiling.
pub(crate) fn after_failure(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    kind: FailureKind,
) -> Result<(), StoreError> {
    let reqs = failed_requirements(tx, s, kind)?;
    if !tx.record_handover_failure(s.id, kind, &reqs)? {
        return Ok(());
    }
    let scopes: Vec<Option<PartId>> = if s.parts.is_empty() {
        vec![None]
    } else {
        s.parts.iter().copied().map(Some).collect()
    };
    let ticket = tx.ticket(s.ticket_id)?;
    for part in scopes {
        if open_card(tx, &ticket, part)?.is_some() {
            continue;
        }
        if let Some(case) = stuck(&history(tx, &ticket, part)?) {
            card::stop(tx, s, &ticket, part, case)?;
        }
    }
    Ok(())
}

/// Whether the hand-over counts towards `part` (None: the whole ticket, part-less only).
fn in_scope(s: &SubmissionRecord, part: Option<PartId>) -> bool {
    match part {
        Some(p) => s.parts.contains(&p),
        None => s.parts.is_empty(),
    }
}

/// The scope's hand-overs since its last answered (or closed) card, oldest first, as the count
/// reads them.
fn history(
    tx: &Tx<'_>,
    ticket: &TicketRecord,
    part: Option<PartId>,
) -> Result<Vec<Outcome>, StoreError> {
    // The count restarts after the hand-over that tipped the last card of this scope.
    let since: SubmissionId = tx
        .ceiling_cards_of_ticket(ticket.id)?
        .into_iter()
        .filter(|c| c.part_id == part && c.state != CardState::Open)
        .map(|c| c.submission_id)
        .max_by_key(|s| s.0)
        .unwrap_or(SubmissionId(0));
    let failures = tx.handover_failures(ticket.id)?;
    let mut subs: Vec<SubmissionRecord> = tx
        .submissions_of_ticket(ticket.id)?
        .into_iter()
        .filter(|s| s.id.0 > since.0 && in_scope(s, part))
        .collect();
    subs.sort_by_key(|s| s.id.0);
    Ok(subs
        .iter()
        .map(
            |s| match failures.iter().find(|f| f.submission_id == s.id) {
                Some(f) => Outcome::Failed {
                    kind: f.kind,
                    requirements: f.requirements.clone(),
                },
                None if s.state == SubmissionState::Approved => Outcome::Passed,
                // Undecided, or replaced by a newer version: not counted.
                None => Outcome::NotCounted,
            },
        )
        .collect())
}

/// The scope's open card, if it is stuck.
fn open_card(
    tx: &Tx<'_>,
    ticket: &TicketRecord,
    part: Option<PartId>,
) -> Result<Option<troupe_store::CeilingCard>, StoreError> {
    Ok(tx
        .ceiling_cards_of_ticket(ticket.id)?
        .into_iter()
        .find(|c| c.state == CardState::Open && c.part_id == part))
}

/// Call after the ticket's stage moved (in the same transaction): once it is approved or
/// dropped another way, a card still asking says why and loses its buttons (§7.3).
pub(crate) fn after_stage_change(tx: &mut Tx<'_>, ticket: &TicketRecord) -> Result<(), StoreError> {
    let why = match ticket.stage {
        TicketStage::Approved => "the ticket was approved",
        TicketStage::Dropped => "the ticket was dropped",
        _ => return Ok(()),
    };
    for c in tx.close_ceiling_cards(ticket.id, why)? {
        card::closed(tx, &c, why)?;
    }
    Ok(())
}

/// The case of the scope's open card, for the situation and the ball.
pub fn open_case(
    tx: &Tx<'_>,
    ticket: &TicketRecord,
    part: Option<PartId>,
) -> Result<Option<Case>, StoreError> {
    Ok(open_card(tx, ticket, part)?.map(|c| c.case))
}

/// B §7.2, CC1: a hand-over naming a stuck part is refused; one naming no part is refused
/// while anything of the ticket is stuck. The default `PartCeiling`.
pub struct CountedCeiling;

impl PartCeiling for CountedCeiling {
    fn stuck(
        &self,
        tx: &Tx<'_>,
        ticket: &TicketRecord,
        parts: &[PartId],
    ) -> Result<Vec<String>, StoreError> {
        let all = tx.parts_of_ticket(ticket.id)?;
        let label = |p: PartId| {
            all.iter()
                .find(|r| r.id == p)
                .map_or_else(|| p.to_string(), |r| format!("part \"{}\"", r.label))
        };
        let mut out = Vec::new();
        for c in tx.ceiling_cards_of_ticket(ticket.id)? {
            if c.state != CardState::Open {
                continue;
            }
            match c.part_id {
                Some(p) if parts.is_empty() || parts.contains(&p) => out.push(label(p)),
                None if parts.is_empty() => {
                    out.push(format!("#{:02} {}", ticket.number, ticket.title))
                }
                _ => {}
            }
        }
        // A part marked blocked on the board's record is stuck too.
        for p in all.iter().filter(|p| p.blocked) {
            let name = label(p.id);
            if (parts.is_empty() || parts.contains(&p.id)) && !out.contains(&name) {
                out.push(name);
            }
        }
        Ok(out)
    }
}
