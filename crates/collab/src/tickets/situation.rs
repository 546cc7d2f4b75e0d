//! T20 and LJ4 in a job segment's situation: the job's tickets with their stages (dropped ones
//! left out but for this turn's own; nobody on a set-aside one; "approved, by X"), this turn's
//! ticket with its folder, parts and waits, and "lay it out first" while a large job is not
//! laid out.

use super::folders::folder_name;
use super::graph::nodes;
use super::view::{counter_of, set_aside};
use troupe_core::large_job::{LAY_IT_OUT_FIRST, LargeState};
use troupe_core::thread::Thread;
use troupe_core::ticket::{TicketStage, waits_for};
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, PlanId, TicketId};
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{Store, StoreError, TicketRecord, Tx};

pub struct TicketSituation;

fn name(tx: &Tx<'_>, bot: Option<BotId>) -> Result<Option<String>, StoreError> {
    bot.map(|b| tx.bot(b).map(|b| b.name)).transpose()
}

/// One ticket's line: its stage, and who is on it as the stage allows (S-T7).
fn line(tx: &Tx<'_>, t: &TicketRecord) -> Result<String, StoreError> {
    let mut out = format!("#{:02} {} — {}", t.number, t.title, t.stage.as_str());
    match t.stage {
        TicketStage::Approved => {
            if let Some(by) = name(tx, t.approved_by_bot_id.or(t.owner_bot_id))? {
                out = format!("#{:02} {} — approved, by {by}", t.number, t.title);
            }
        }
        TicketStage::Dropped if set_aside(t) => {
            out = format!(
                "#{:02} {} — set aside by the user; nobody on it",
                t.number, t.title
            );
        }
        TicketStage::Dropped => {
            out = format!(
                "#{:02} {} — dropped ({}); nobody on it",
                t.number,
                t.title,
                t.drop_reason.as_deref().unwrap_or_default().trim()
            );
        }
        _ => {
            if let Some(owner) = name(tx, t.owner_bot_id)? {
                out.push_str(&format!("; {owner} on it"));
            }
            if let Some(r) = name(tx, t.reviewer_bot_id)? {
                out.push_str(&format!("; reviewed by {r}"));
            }
        }
    }
    if t.is_sample {
        out.push_str(" (the sample)");
    }
    Ok(out)
}

pub fn ticket_situation(
    tx: &Tx<'_>,
    plan: PlanId,
    own: Option<TicketId>,
) -> Result<Option<String>, StoreError> {
    let tickets = tx.tickets_of_plan(plan)?;
    let d = tx.plan_deliverables(plan)?;
    let mut out = Vec::new();
    if d.large_state == LargeState::Large && !d.laid_out {
        out.push(LAY_IT_OUT_FIRST.to_string());
    }
    if !tickets.is_empty() {
        let (_, _, _, counter) = counter_of(&tickets);
        let mut s = format!("The job's tickets ({counter}):");
        for t in &tickets {
            // T20: dropped tickets are left out, but for this turn's own.
            if t.stage == TicketStage::Dropped && !set_aside(t) && Some(t.id) != own {
                continue;
            }
            s.push_str(&format!("\n- {}", line(tx, t)?));
        }
        out.push(s);
    }
    if let Some(id) = own
        && let Some(t) = tickets.iter().find(|t| t.id == id)
    {
        let mut s = format!(
            "This turn's ticket: {}. You work in its folder {}/ (its ticket.md says what it is).",
            line(tx, t)?,
            folder_name(t)
        );
        if !t.done_when.trim().is_empty() {
            s.push_str(&format!("\nDone when: {}", t.done_when.trim()));
        }
        let parts = tx.parts_of_ticket(id)?;
        if !parts.is_empty() {
            s.push_str("\nIts parts:");
            for p in &parts {
                s.push_str(&format!(
                    "\n- {} {} — {}{}",
                    p.number,
                    p.label,
                    p.stage.as_str(),
                    if p.blocked { " (blocked)" } else { "" }
                ));
            }
        }
        for w in waits_for(&nodes(&tickets), d.sample_ticket_id, id) {
            s.push_str(&format!(
                "\n{}: nothing is generated or handed over on it until then.",
                w.text()
            ));
        }
        if t.is_sample {
            s.push_str(
                "\nThis is the sample: make it to the job's full standard, not a preview. Do not \
                 ask the user to approve it; hand it over as any other ticket.",
            );
        }
        out.push(s);
    }
    Ok((!out.is_empty()).then(|| out.join("\n\n")))
}

fn situation(thread: &Thread, store: &Store) -> Result<Option<String>, StoreError> {
    if !crate::tools::in_conversation(thread) {
        return Ok(None);
    }
    let Some(run) = thread.lease.holder else {
        return Ok(None);
    };
    store.read(|tx| {
        let Some(seg) = tx.segment_work(run)? else {
            return Ok(None);
        };
        let item = tx.work_item(seg.work_item_id)?;
        match (item.mode, item.plan_id) {
            (WorkMode::Work, Some(plan)) => {
                ticket_situation(tx, plan, item.ticket_id.map(TicketId))
            }
            _ => Ok(None),
        }
    })
}

impl ContextContributor for TicketSituation {
    fn name(&self) -> &str {
        "tickets"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match situation(thread, store) {
            Ok(Some(text)) => out.situation.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "the tickets' situation could not be read")
            }
        }
    }
}
