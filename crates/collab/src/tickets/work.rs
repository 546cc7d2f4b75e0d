//! Work on one ticket (T21, T24, T17): `work_on` names a ticket of the chosen job by its
//! number; it must be that job's, and what it depends on (and the job's sample) must be
//! through. The Bot's work on a ticket is its own work item, in a thread whose folder is the
//! ticket's, so its turns work there by default.

use super::folders::{folder_for, folder_name, make_folder};
use super::graph::{wait_refusal, waits};
use crate::bots::binding_for;
use serde_json::Value;
use troupe_core::thread::Interaction;
use troupe_core::{BotId, PlanId, TicketId};
use troupe_store::{Layout, LayoutItem, NewThread, StoreError, TicketRecord, Tx, WorkItemRecord};

/// The Bot's work item on `ticket` of `plan`, made (with its thread in the ticket's folder)
/// if new.
pub(crate) fn ensure_ticket_item(
    tx: &mut Tx<'_>,
    plan: PlanId,
    bot: BotId,
    ticket: TicketId,
) -> Result<WorkItemRecord, StoreError> {
    if let Some(item) = tx.ticket_item(bot, plan, ticket)? {
        return Ok(item);
    }
    let record = tx.plan(plan)?;
    let t = tx.ticket(ticket)?;
    let dir = make_folder(&t, &record)?;
    let thread = tx.create_thread(&NewThread {
        parent_id: None,
        title: format!("{} #{:02} {}", record.name, t.number, t.title),
        agent: binding_for(&tx.bot(bot)?),
        workspace: dir.display().to_string(),
        workspace_root: crate::desk::job_root(&record.folder),
        interaction: Interaction::Interactive,
    })?;
    tx.create_ticket_item(bot, plan, ticket, thread.id, record.home_session_id)
}

/// DS-9: a ticket `work_on` opens on the job for the Bot calling it, to do, in its folder; a
/// live ticket of the Bot's own with that title already is the one meant.
fn open_ticket(
    tx: &mut Tx<'_>,
    plan: PlanId,
    bot: BotId,
    new: &Value,
) -> Result<Result<TicketRecord, String>, StoreError> {
    let title = new
        .get("title")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    if title.is_empty() {
        return Ok(Err(
            "work_on: ticket.new.title must say what the ticket is for".into(),
        ));
    }
    // The same title again names the ticket it opened (a retried call opens no twin).
    if let Some(t) = tx.tickets_of_plan(plan)?.into_iter().find(|t| {
        t.owner_bot_id == Some(bot)
            && t.stage != troupe_core::ticket::TicketStage::Dropped
            && t.title.trim().eq_ignore_ascii_case(title)
    }) {
        return Ok(Ok(t));
    }
    let d = tx.plan_deliverables(plan)?;
    if d.large_state == troupe_core::large_job::LargeState::Large && !d.laid_out {
        return Ok(Err(
            "work_on: this is a large job: its lead lays it out first, sample and all \
             (plan_items); work on one of its tickets once it has them"
                .into(),
        ));
    }
    let record = tx.plan(plan)?;
    let layout = Layout {
        items: vec![LayoutItem {
            title: title.to_string(),
            owner_bot_id: Some(bot),
            ..Default::default()
        }],
        drops: Vec::new(),
    };
    let laid = tx.lay_out(plan, &layout, |n, t| folder_for(&record.folder, n, t))?;
    let t =
        laid.tickets.into_iter().next().ok_or_else(|| {
            StoreError::Corrupt(format!("laying out a ticket on {plan} made none"))
        })?;
    make_folder(&t, &record)?;
    crate::tickets::delivery::after_stage_change(tx, t.id)?;
    Ok(Ok(tx.ticket(t.id)?))
}

/// The job's tickets as a refusal lists them: `#01 Poster (01-Poster/), …`.
pub(crate) fn ticket_list(tickets: &[TicketRecord]) -> String {
    if tickets.is_empty() {
        return "it has no tickets yet".into();
    }
    tickets
        .iter()
        .map(|t| format!("#{:02} {} ({}/)", t.number, t.title, folder_name(t)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `work_on`'s `ticket`: the job's ticket it names, or why it cannot be worked on now
/// (`not_in_plan`, `waits_for_dependency`); `{"new": {"title"}}` opens one on the job, owned
/// by `bot` (DS-9).
pub(crate) fn ticket_to_work_on(
    tx: &mut Tx<'_>,
    plan: PlanId,
    bot: BotId,
    raw: &Value,
) -> Result<Result<TicketRecord, String>, StoreError> {
    if let Some(new) = raw.get("new") {
        return open_ticket(tx, plan, bot, new);
    }
    let number = match raw {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().trim_start_matches('#').parse().ok(),
        _ => None,
    };
    let Some(number) = number else {
        return Ok(Err(format!(
            "work_on: ticket: give the ticket's number (e.g. 2 or \"#02\"), not {raw}"
        )));
    };
    let Some(t) = tx.ticket_by_number(plan, number)? else {
        let name = tx.plan(plan)?.name;
        return Ok(Err(format!(
            "work_on: not_in_plan: ticket #{number:02} is not a ticket of the job \"{name}\" \
             ({plan}); its tickets: {}",
            ticket_list(&tx.tickets_of_plan(plan)?)
        )));
    };
    if let Some(text) = wait_refusal(&waits(tx, plan, t.id)?) {
        return Ok(Err(format!("work_on: ticket #{:02}: {text}", t.number)));
    }
    Ok(Ok(t))
}
