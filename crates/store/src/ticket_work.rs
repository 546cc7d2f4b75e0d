//! Bots' work on one ticket of a job (Bot × job × ticket, C §1): its own work item and thread
//! in the ticket's folder (T24), found again by Bot, job and ticket; and a job's ticket by the
//! number the lead and the Bots use (`#NN`).

use crate::{Result, StoreError, Tx, args};
use serde_json::json;
use troupe_core::work_item::WorkMode;
use troupe_core::{BotId, PlanId, SessionId, ThreadId, TicketId, WorkItemId};

use crate::{TicketRecord, WorkItemRecord};

impl Tx<'_> {
    /// The Bot's work item on this ticket of the job, if it has one.
    pub fn ticket_item(
        &self,
        bot: BotId,
        plan: PlanId,
        ticket: TicketId,
    ) -> Result<Option<WorkItemRecord>> {
        let id: Option<i64> = self.query_opt(
            "SELECT id FROM work_items
             WHERE mode = 'work' AND bot_id = ?1 AND plan_id = ?2 AND ticket_id = ?3
             ORDER BY id LIMIT 1",
            args![bot.0, plan.0, ticket.0],
            |r| r.get(0),
        )?;
        id.map(|i| self.work_item(WorkItemId(i))).transpose()
    }

    /// A work item for the Bot's work on one ticket, running in `thread` (whose workspace is
    /// the ticket's folder). Appends `work_item_changed` as every new work item does.
    pub fn create_ticket_item(
        &mut self,
        bot: BotId,
        plan: PlanId,
        ticket: TicketId,
        thread: ThreadId,
        speaks_in: Option<SessionId>,
    ) -> Result<WorkItemRecord> {
        let t = self.ticket(ticket)?;
        if t.plan_id != plan {
            return Err(StoreError::Invalid(format!(
                "not_in_plan: ticket {ticket} belongs to job {}, not {plan}",
                t.plan_id
            )));
        }
        let id = self.insert(
            "INSERT INTO work_items (bot_id, mode, plan_id, ticket_id, thread_id, speaks_in,
                                     created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
            args![
                bot.0,
                WorkMode::Work.as_str(),
                plan.0,
                ticket.0,
                thread.0,
                speaks_in.map(|s| s.0),
                self.now
            ],
        )?;
        let item = self.work_item(WorkItemId(id))?;
        let payload = json!({
            "work_item_id": item.id, "bot_id": item.bot_id, "mode": item.mode.as_str(),
            "plan_id": item.plan_id, "ticket_id": ticket, "state": item.state.as_str(),
            "waiting_on": item.waiting_on,
        });
        match item.speaks_in {
            Some(s) => self.session_event("work_item_changed", s, None, payload)?,
            None => self.event("work_item_changed", Some(thread), None, payload)?,
        }
        Ok(item)
    }

    /// The job's ticket numbered `number` (`#NN`).
    pub fn ticket_by_number(&self, plan: PlanId, number: i64) -> Result<Option<TicketRecord>> {
        let id: Option<i64> = self.query_opt(
            "SELECT id FROM tickets WHERE plan_id = ?1 AND number = ?2",
            args![plan.0, number],
            |r| r.get(0),
        )?;
        id.map(|i| self.ticket(TicketId(i))).transpose()
    }
}
