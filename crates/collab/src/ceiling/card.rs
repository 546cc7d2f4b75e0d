//! The ceiling card (B §7.2–7.3): where it goes (§5.8), the stop it records, and how it reads
//! once answered or closed.

use crate::submissions::mail;
use serde_json::json;
use troupe_core::ceiling::{Case, closed_text, offer, producer_text};
use troupe_core::conversation::{Author, LineKind, SessionKind};
use troupe_core::{BotId, PartId, PlanId, SessionId};
use troupe_store::{
    CeilingCard, NewCeilingCard, NewLine, NewQualityEvent, QualityType, StoreError,
    SubmissionRecord, TicketRecord, Tx, WorkRef, quality_cause,
};

/// How the card names what is stuck.
pub(super) fn scope_name(
    tx: &Tx<'_>,
    ticket: &TicketRecord,
    part: Option<PartId>,
) -> Result<String, StoreError> {
    let whole = format!("#{:02} {}", ticket.number, ticket.title);
    Ok(match part {
        Some(p) => format!("Part \"{}\" of {whole}", tx.part(p)?.label),
        None => whole,
    })
}

/// §5.8: where the user last spoke about the job — a group, or their direct with the Bot whose
/// work it is, never a direct with another Bot; archived conversations skipped; else the job's
/// own conversation.
pub(crate) fn place(
    tx: &Tx<'_>,
    plan: PlanId,
    bot: Option<BotId>,
) -> Result<Option<SessionId>, StoreError> {
    let home = tx.plan(plan)?.home_session_id;
    for s in tx.sessions_user_spoke_about(plan)? {
        let session = tx.session(s)?;
        if session.archived {
            continue;
        }
        let fits = match session.kind {
            SessionKind::Group => true,
            SessionKind::Direct => bot.is_some_and(|b| session.bot_ids.contains(&b)),
            SessionKind::BotDirect => false,
        };
        if fits {
            return Ok(Some(s));
        }
    }
    Ok(home)
}

/// The scope is stuck: it reads blocked, the card is posted, the producer hears that the user
/// is being asked, and a `pipeline` quality event records it.
pub(super) fn stop(
    tx: &mut Tx<'_>,
    s: &SubmissionRecord,
    ticket: &TicketRecord,
    part: Option<PartId>,
    case: Case,
) -> Result<(), StoreError> {
    if let Some(p) = part {
        tx.set_part_blocked(p, true)?;
    }
    let card = tx.create_ceiling_card(&NewCeilingCard {
        plan_id: s.plan_id,
        ticket_id: ticket.id,
        part_id: part,
        case: case.clone(),
        submission_id: s.id,
    })?;
    let what = scope_name(tx, ticket, part)?;
    if let Some(session) = place(tx, s.plan_id, s.producer_bot_id)? {
        let mut line = NewLine::plain(
            session,
            Author::System,
            troupe_core::ceiling::card_text(&case, &what),
        );
        line.kind = LineKind::System;
        line.bot_id = s.producer_bot_id;
        let line = tx.insert_line(&line)?;
        let options: Vec<&str> = offer(&case).iter().map(|o| o.as_str()).collect();
        tx.set_line_control(
            line.id,
            &json!({
                "kind": "ceiling",
                "card_id": card.id,
                "task_id": s.plan_id,
                "ticket_id": ticket.id,
                "part_id": part,
                "case": case.as_str(),
                "requirement": case.requirement(),
                "offer": options,
            }),
        )?;
        tx.set_ceiling_card_line(card.id, line.id)?;
    }
    mail::to_producer(tx, s, "ceiling", producer_text(&what))?;
    tx.log_work(
        WorkRef {
            plan: s.plan_id,
            ticket: Some(ticket.id),
            work_item: s.work_item_id,
        },
        "ceiling_reached",
        json!({"card_id": card.id, "part_id": part, "case": case.as_str(),
               "requirement": case.requirement(), "submission_id": s.id}),
    )?;
    tx.quality_event(
        NewQualityEvent::new(QualityType::Pipeline, quality_cause::CEILING)
            .bot(s.producer_bot_id)
            .plan(s.plan_id)
            .ticket(ticket.id)
            .source("ceiling_card", card.id)
            .detail(
                json!({"case": case.as_str(), "requirement": case.requirement(),
                           "part_id": part, "submission_id": s.id}),
            ),
    )?;
    Ok(())
}

/// The card's line keeps its words and loses its buttons, saying what became of it.
fn settle_line(
    tx: &mut Tx<'_>,
    card: &CeilingCard,
    extra: serde_json::Value,
) -> Result<(), StoreError> {
    let Some(line) = card.message_id else {
        return Ok(());
    };
    let mut control = tx.line(line)?.control.unwrap_or_else(|| json!({}));
    control["offer"] = json!([]);
    if let (Some(obj), Some(add)) = (control.as_object_mut(), extra.as_object()) {
        for (k, v) in add {
            obj.insert(k.clone(), v.clone());
        }
    }
    tx.set_line_control(line, &control)
}

/// A card still asking when its ticket closed another way (§7.3).
pub(super) fn closed(tx: &mut Tx<'_>, card: &CeilingCard, why: &str) -> Result<(), StoreError> {
    if let Some(p) = card.part_id {
        tx.set_part_blocked(p, false)?;
    }
    settle_line(tx, card, json!({"closed": closed_text(why)}))
}

/// An answered card shows its answer and no buttons.
pub(super) fn answered(
    tx: &mut Tx<'_>,
    card: &CeilingCard,
    answer: &str,
) -> Result<(), StoreError> {
    settle_line(tx, card, json!({"answer": answer}))
}
