//! From the whole job down to one of its tickets (DS-10, DS-15): a segment bound to the whole
//! job may `work_on` one of that job's tickets, even after acting (a ticket's folder is inside
//! the job's: no other job's directory), so a lead that laid the job out can start on its own
//! ticket; a segment on a ticket that has done nothing yet (no effect) may move to another ticket
//! of the same job. Moving hands the line that woke the segment to the Bot's work on the ticket,
//! whose thread works in the ticket's folder, and ends this segment `moved`; the line stays
//! filed to what it was filed to (DS-11). Anything else is refused as an ordinary failed call.

use super::folders::folder_name;
use super::work::{ensure_ticket_item, ticket_to_work_on};
use crate::desk::{Bound, hand_to};
use troupe_core::{PlanId, RunId, TicketId};
use troupe_store::{StoreError, Tx, WorkItemRecord};

/// Move `run`'s segment, bound to `item` on `plan`, to the ticket `raw` names: what the Bot
/// reads and how the segment ends, or why it stays.
pub(crate) fn descend(
    tx: &mut Tx<'_>,
    run: RunId,
    item: &WorkItemRecord,
    plan: PlanId,
    raw: &serde_json::Value,
) -> Result<Result<(String, Bound), String>, StoreError> {
    let t = match ticket_to_work_on(tx, plan, item.bot_id, raw)? {
        Ok(t) => t,
        Err(text) => return Ok(Err(text)),
    };
    let job = tx.plan(plan)?;
    let from = match item.ticket_id {
        None => format!("your work on the whole job \"{}\"", job.name),
        Some(id) if id == t.id.0 => {
            return Ok(Err(format!(
                "work_on: you are already working on ticket #{:02} \"{}\": go on here",
                t.number, t.title
            )));
        }
        Some(id) => {
            let here = tx.ticket(TicketId(id))?;
            if !tx.effects_for_run(run)?.is_empty() {
                return Ok(Err(format!(
                    "work_on: this turn has already acted on ticket #{:02} \"{}\" (it wrote \
                     files or ran commands), so it keeps that ticket; finish here and end your \
                     turn — ticket #{:02} is worked on in a turn of its own",
                    here.number, here.title, t.number
                )));
            }
            format!("ticket #{:02} \"{}\"", here.number, here.title)
        }
    };
    let seg = tx
        .segment(run)?
        .ok_or_else(|| StoreError::Corrupt(format!("run {run} has no segment")))?;
    let target = ensure_ticket_item(tx, plan, item.bot_id, t.id)?;
    let folder = folder_name(&t);
    let note = format!(
        "You moved here from {from} to work on ticket #{:02} \"{}\" of \"{}\"; this work runs \
         in the ticket's folder ({folder}/).",
        t.number, t.title, job.name
    );
    let how = hand_to(
        tx,
        &target,
        seg.session_id,
        seg.trigger_line_id,
        plan,
        Some(note),
    )?;
    let ticket = format!("ticket #{:02} \"{}\"", t.number, t.title);
    let text = match how {
        Bound::Moved => format!(
            "You moved to {ticket} (folder {folder}/). This turn ends here; your work on the \
             ticket starts at once with the same line, in its folder — go on there."
        ),
        Bound::Merged => format!(
            "Your work on {ticket} is already running; the line went to it, which hears it at \
             its next step. This turn ends here."
        ),
        Bound::Queued(n) => format!(
            "You moved to {ticket} (folder {folder}/), but your work slots are full: it is \
             queued, at position {n}, and starts when a slot frees up. This turn ends here."
        ),
    };
    Ok(Ok((text, how)))
}
