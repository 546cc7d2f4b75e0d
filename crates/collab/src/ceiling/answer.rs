//! Answering a ceiling card (B §7.3) through `POST /v1/messages/:id/control`: Another way,
//! Change the plan, Relax (only when stuck on one requirement), Take it as it is, or Ignore and
//! carry on. Each answer unblocks the scope and restarts its count; refused presses write
//! nothing.

use super::card;
use crate::submissions::mail;
use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use serde_json::json;
use troupe_core::ceiling::{CardOption, Effect, offered};
use troupe_core::conversation::{SessionKind, SessionMessage};
use troupe_core::ids::RequirementId;
use troupe_core::submission::ApprovedBy;
use troupe_core::ticket::{PartStage, StageSource, TicketStage};
use troupe_core::{PartId, SessionId, TicketId};
use troupe_store::{CardState, CeilingCard, StoreError, SubmissionRecord, Tx, WorkRef};

/// What answering a ceiling card did.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CeilingAnswer {
    pub card_id: i64,
    /// The button pressed.
    pub action: String,
    pub ticket_id: TicketId,
    /// None: the whole ticket.
    pub part_id: Option<PartId>,
    /// The ledger entry that no longer holds for the job (Relax on a ledger requirement).
    pub relaxed_requirement_id: Option<RequirementId>,
    /// Take it as it is approved the whole ticket (all its parts approved).
    pub ticket_approved: bool,
}

/// A refusal as the control route answers it: `action_not_offered` keeps its own code.
fn not_offered(msg: String) -> CollabError {
    CollabError::Invalid(format!("action_not_offered: {msg}"))
}

fn card_closed(card: &CeilingCard) -> CollabError {
    let why = match (card.state, &card.answer, &card.closed_reason) {
        (CardState::Answered, Some(a), _) => format!("it was answered ({a})"),
        (_, _, Some(r)) => r.clone(),
        _ => "it no longer asks".to_string(),
    };
    CollabError::conflict(
        "card_closed",
        format!("ceiling card {} takes no answer: {why}", card.id),
    )
}

/// Relax is the user's confirmation (CC2): a ledger entry stops holding for the job. A
/// requirement the ledger does not carry (a check's id) is recorded on the card only.
fn relax(tx: &mut Tx<'_>, card: &CeilingCard) -> Result<Option<RequirementId>, StoreError> {
    let Some(name) = card.case.requirement() else {
        return Ok(None);
    };
    if !name.starts_with("R-") {
        return Ok(None);
    }
    let Ok(id) = name.parse::<RequirementId>() else {
        return Ok(None);
    };
    let Ok(entry) = tx.requirement(id) else {
        return Ok(None);
    };
    tx.exclude_requirement(id, entry.version, card.plan_id, true, "relaxed_at_ceiling")?;
    Ok(Some(id))
}

/// Take it as it is: the part is approved; the ticket (with the hand-over that tipped the
/// card) once all its parts are. Answers whether the ticket was approved.
fn take_as_is(tx: &mut Tx<'_>, card: &CeilingCard) -> Result<bool, StoreError> {
    if let Some(p) = card.part_id {
        tx.set_part_stage(p, PartStage::Approved, StageSource::User)?;
        let all = tx.parts_of_ticket(card.ticket_id)?;
        if !all.iter().all(|p| p.stage == PartStage::Approved) {
            return Ok(false);
        }
    }
    let sub = tx.submission(card.submission_id)?;
    tx.approve_submission(sub.id, ApprovedBy::User, None, None)?;
    tx.set_ticket_stage(card.ticket_id, TicketStage::Approved, StageSource::User)?;
    crate::tickets::after_stage_change(tx, card.ticket_id)?;
    mail::answer_deliverables(tx, &sub)?;
    Ok(true)
}

/// B §5.8: a card answered in the person's direct with the maker has the rework run in that
/// direct; anywhere else the work speaks where it spoke last.
fn rework_place(
    tx: &Tx<'_>,
    line: &SessionMessage,
    sub: &SubmissionRecord,
) -> Result<Option<SessionId>, StoreError> {
    let session = tx.session(line.session_id)?;
    let with_maker = sub
        .producer_bot_id
        .is_some_and(|b| session.bot_ids.contains(&b));
    Ok((session.kind == SessionKind::Direct && with_maker).then_some(session.id))
}

/// The producer's words for a rework answer.
fn rework_text(what: &str, direction: Option<&str>, relaxed: bool) -> String {
    match direction {
        Some(d) => format!(
            "The user answered the ceiling card on {what}: {d}{}. Rework it that way and hand \
             it over again.",
            if relaxed {
                "; it no longer has to meet that requirement"
            } else {
                ""
            }
        ),
        None => format!(
            "The user answered the ceiling card on {what}: carry on. Continue the rework from \
             what you were already told and hand it over again."
        ),
    }
}

impl Collab {
    /// Answer the ceiling card on `line` with `action`: `422 action_not_offered` for a button
    /// the card does not show, `409 card_closed` once it was answered or its ticket closed.
    pub(crate) fn answer_ceiling(
        &self,
        line: &SessionMessage,
        action: &str,
    ) -> Result<CeilingAnswer, CollabError> {
        let option = CardOption::parse(action).map_err(not_offered)?;
        self.store().write(|tx| {
            let Some(card) = tx.ceiling_card_on_line(line.id)? else {
                return Ok(Err(CollabError::invalid(format!(
                    "message {} is not a ceiling card",
                    line.id
                ))));
            };
            if !offered(&card.case, option) {
                return Ok(Err(not_offered(format!(
                    "{option} is not on this card (it is offered only when stuck on one \
                     requirement)"
                ))));
            }
            if card.state != CardState::Open {
                return Ok(Err(card_closed(&card)));
            }
            let relaxed = if option == CardOption::Relax {
                relax(tx, &card)?
            } else {
                None
            };
            if !tx.answer_ceiling_card(card.id, option, relaxed)? {
                return Ok(Err(card_closed(&tx.ceiling_card(card.id)?)));
            }
            if let Some(p) = card.part_id {
                tx.set_part_blocked(p, false)?;
            }
            card::answered(tx, &card, option.as_str())?;
            tx.press_line_control(line.id, &json!({"action": option.as_str()}))?;
            let ticket = tx.ticket(card.ticket_id)?;
            let what = card::scope_name(tx, &ticket, card.part_id)?;
            let sub = tx.submission(card.submission_id)?;
            let approved = match option.effect() {
                Effect::Approve => take_as_is(tx, &card)?,
                Effect::Rework { direction, relax } => {
                    let place = rework_place(tx, line, &sub)?;
                    mail::to_producer_in(
                        tx,
                        &sub,
                        "ceiling_answer",
                        rework_text(&what, direction, relax),
                        place,
                    )?;
                    false
                }
            };
            tx.log_work(
                WorkRef {
                    plan: card.plan_id,
                    ticket: Some(card.ticket_id),
                    work_item: sub.work_item_id,
                },
                "ceiling_answered",
                json!({"card_id": card.id, "action": option.as_str(), "part_id": card.part_id,
                       "relaxed_requirement_id": relaxed}),
            )?;
            Ok(Ok(CeilingAnswer {
                card_id: card.id,
                action: option.as_str().to_string(),
                ticket_id: card.ticket_id,
                part_id: card.part_id,
                relaxed_requirement_id: relaxed,
                ticket_approved: approved,
            }))
        })?
    }
}
