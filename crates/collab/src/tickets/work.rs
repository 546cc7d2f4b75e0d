//! Work on one ticket (T21, T24, T17): `work_on` names a ticket of the chosen job by its
//! number; it must be that job's, and what it depends on (and the job's sample) must be
//! through. The Bot's work on a ticket is its own work item, in a thread whose folder is the
//! ticket's, so its turns work there by default.

use super::folders::{folder_name, make_folder};
use super::graph::{wait_refusal, waits};
use crate::bots::binding_for;
use serde_json::Value;
use troupe_core::thread::Interaction;
use troupe_core::{BotId, PlanId, TicketId};
use troupe_store::{NewThread, StoreError, TicketRecord, Tx, WorkItemRecord};

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
/// (`not_in_plan`, `waits_for_dependency`).
pub(crate) fn ticket_to_work_on(
    tx: &Tx<'_>,
    plan: PlanId,
    raw: &Value,
) -> Result<Result<TicketRecord, String>, StoreError> {
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
