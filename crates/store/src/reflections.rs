//! The reflection lesson's record (digest 003-B §10.2): one row per quality event that called
//! for one (an overturned approval, a capability ceiling) — proposed, adopted, declined,
//! nothing, failed or skipped — and the checklist items adopted from them.

use crate::{CallRecord, Result, StoreError, Tx, args};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use troupe_core::reflection::When;
use troupe_core::{BotId, CheckId, PlanId, SessionMessageId, TicketId};

/// A reflection to record.
#[derive(Clone, Debug)]
pub struct NewReflection {
    pub bot_id: BotId,
    pub plan_id: PlanId,
    pub ticket_id: TicketId,
    pub quality_event_id: i64,
    /// review_miss | ceiling
    pub cause: &'static str,
    /// proposed | nothing | failed | skipped
    pub state: &'static str,
    pub proposal: Option<Value>,
    /// The model call, none made for a skipped one.
    pub call: CallRecord,
    pub error: Option<String>,
}

/// A recorded reflection.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReflectionRecord {
    pub id: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub bot_id: BotId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub task_id: PlanId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub ticket_id: TicketId,
    pub quality_event_id: i64,
    /// review_miss | ceiling
    pub cause: String,
    /// proposed | adopted | declined | nothing | failed | skipped
    pub state: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub proposal: Option<Value>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub message_id: Option<SessionMessageId>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub check_id: Option<CheckId>,
    pub model: Option<String>,
    pub cost_usd: Option<f64>,
    pub error: Option<String>,
    pub at: i64,
    pub answered_at: Option<i64>,
}

/// A checklist item a Bot holds itself to.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChecklistItem {
    pub id: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub bot_id: BotId,
    /// before_reviewing | before_handing_over | before_generating
    pub when: String,
    pub text: String,
    pub reflection_id: i64,
    pub enabled: bool,
    pub created_at: i64,
}

const COLUMNS: &str = "id, bot_id, plan_id, ticket_id, quality_event_id, cause, state, proposal, \
    message_id, check_id, model, cost_usd, error, at, answered_at";

fn row(r: &crate::db::Row) -> Result<ReflectionRecord> {
    let proposal: Option<String> = r.get(7)?;
    Ok(ReflectionRecord {
        id: r.get(0)?,
        bot_id: BotId(r.get(1)?),
        task_id: PlanId(r.get(2)?),
        ticket_id: TicketId(r.get(3)?),
        quality_event_id: r.get(4)?,
        cause: r.get(5)?,
        state: r.get(6)?,
        proposal: proposal.and_then(|p| serde_json::from_str(&p).ok()),
        message_id: r.get::<Option<i64>>(8)?.map(SessionMessageId),
        check_id: r.get::<Option<i64>>(9)?.map(CheckId),
        model: r.get(10)?,
        cost_usd: r.get(11)?,
        error: r.get(12)?,
        at: r.get(13)?,
        answered_at: r.get(14)?,
    })
}

fn item(r: &crate::db::Row) -> Result<ChecklistItem> {
    Ok(ChecklistItem {
        id: r.get(0)?,
        bot_id: BotId(r.get(1)?),
        when: r.get(2)?,
        text: r.get(3)?,
        reflection_id: r.get(4)?,
        enabled: r.get::<i64>(5)? == 1,
        created_at: r.get(6)?,
    })
}

/// A quality event that calls for a reflection: `(event id, at, cause, bot, plan, ticket)`.
pub type ReflectionCause = (i64, i64, String, BotId, PlanId, TicketId);

const ITEM_COLUMNS: &str = "id, bot_id, read_when, text, reflection_id, enabled, created_at";

impl Tx<'_> {
    /// The overturned approvals and ceilings since `since` no reflection answers yet, oldest
    /// first.
    pub fn reflection_causes_since(&self, since: i64) -> Result<Vec<ReflectionCause>> {
        self.query_all(
            "SELECT q.id, q.at, q.cause, q.bot_id, q.plan_id, q.ticket_id FROM quality_events q
             WHERE q.cause IN ('review_miss', 'ceiling') AND q.at >= ?1
               AND q.bot_id IS NOT NULL AND q.plan_id IS NOT NULL AND q.ticket_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM reflections r WHERE r.quality_event_id = q.id)
             ORDER BY q.id",
            args![since],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    BotId(r.get(3)?),
                    PlanId(r.get(4)?),
                    TicketId(r.get(5)?),
                ))
            },
        )
    }

    /// Whether the Bot reflected on the ticket since `since` (once a day per Bot and ticket).
    pub fn reflected_since(&self, bot: BotId, ticket: TicketId, since: i64) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT 1 FROM reflections WHERE bot_id = ?1 AND ticket_id = ?2 AND at >= ?3
                   AND model IS NOT NULL LIMIT 1",
                args![bot.0, ticket.0, since],
                |_| Ok(()),
            )?
            .is_some())
    }

    /// Reflections with a model call since `since`, and what they cost.
    pub fn reflection_spend_since(&self, since: i64) -> Result<(usize, f64)> {
        self.query_one(
            "SELECT count(*), sum(cost_usd) FROM reflections WHERE at >= ?1 AND model IS NOT NULL",
            args![since],
            |r| {
                Ok((
                    r.get::<i64>(0)? as usize,
                    r.get::<Option<f64>>(1)?.unwrap_or(0.0),
                ))
            },
        )
    }

    /// Record a reflection, priced from `model_prices`. None: one is recorded for its event.
    pub fn record_reflection(&mut self, n: &NewReflection) -> Result<Option<ReflectionRecord>> {
        let cost = self.cost_of_call(
            n.call.model.as_deref(),
            n.call.input_tokens,
            n.call.output_tokens,
        )?;
        let id: Option<i64> = self.query_opt(
            "INSERT INTO reflections (bot_id, plan_id, ticket_id, quality_event_id, cause, state,
                 proposal, model, input_tokens, output_tokens, cost_usd, raw, error, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (quality_event_id) DO NOTHING
             RETURNING id",
            args![
                n.bot_id.0,
                n.plan_id.0,
                n.ticket_id.0,
                n.quality_event_id,
                n.cause,
                n.state,
                n.proposal.as_ref().map(|p| p.to_string()),
                n.call.model,
                n.call.input_tokens as i64,
                n.call.output_tokens as i64,
                cost,
                n.call.raw,
                n.error,
                self.now
            ],
            |r| r.get(0),
        )?;
        id.map(|id| self.reflection(id)).transpose()
    }

    pub fn reflection(&self, id: i64) -> Result<ReflectionRecord> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM reflections WHERE id = ?1"),
            args![id],
            row,
        )?
        .ok_or_else(|| StoreError::not_found("reflection", id))
    }

    /// A job's reflections, newest first.
    pub fn reflections_of_plan(&self, plan: PlanId) -> Result<Vec<ReflectionRecord>> {
        self.query_all(
            &format!("SELECT {COLUMNS} FROM reflections WHERE plan_id = ?1 ORDER BY id DESC"),
            args![plan.0],
            row,
        )
    }

    pub fn set_reflection_card(&mut self, id: i64, line: SessionMessageId) -> Result<()> {
        self.exec(
            "UPDATE reflections SET message_id = ?2 WHERE id = ?1",
            args![id, line.0],
        )?;
        Ok(())
    }

    /// The person's answer to a proposal still open: adopted (with the check it made) or
    /// declined. An answered one is refused.
    pub fn answer_reflection(
        &mut self,
        id: i64,
        adopted: bool,
        check: Option<CheckId>,
    ) -> Result<ReflectionRecord> {
        let n = self.exec(
            "UPDATE reflections SET state = ?2, check_id = ?3, answered_at = ?4
             WHERE id = ?1 AND state = 'proposed'",
            args![
                id,
                if adopted { "adopted" } else { "declined" },
                check.map(|c| c.0),
                self.now
            ],
        )?;
        if n == 0 {
            let r = self.reflection(id)?;
            return Err(StoreError::Conflict(format!(
                "this proposal is {} already",
                r.state
            )));
        }
        let r = self.reflection(id)?;
        self.event(
            "reflection_answered",
            None,
            None,
            json!({"task_id": r.task_id, "reflection_id": id, "state": r.state}),
        )?;
        Ok(r)
    }

    /// Keep an adopted checklist item for the Bot.
    pub fn add_checklist_item(
        &mut self,
        bot: BotId,
        when: When,
        text: &str,
        reflection: i64,
    ) -> Result<ChecklistItem> {
        let id = self.insert(
            "INSERT INTO checklist_items (bot_id, read_when, text, reflection_id, created_at,
                 updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
            args![bot.0, when.as_str(), text, reflection, self.now],
        )?;
        self.checklist_item(id)
    }

    pub fn checklist_item(&self, id: i64) -> Result<ChecklistItem> {
        self.query_opt(
            &format!("SELECT {ITEM_COLUMNS} FROM checklist_items WHERE id = ?1"),
            args![id],
            item,
        )?
        .ok_or_else(|| StoreError::not_found("checklist item", id))
    }

    /// Every checklist item (one Bot's when given), oldest first.
    pub fn checklist_items(&self, bot: Option<BotId>) -> Result<Vec<ChecklistItem>> {
        match bot {
            Some(b) => self.query_all(
                &format!(
                    "SELECT {ITEM_COLUMNS} FROM checklist_items WHERE bot_id = ?1 ORDER BY id"
                ),
                args![b.0],
                item,
            ),
            None => self.query_all(
                &format!("SELECT {ITEM_COLUMNS} FROM checklist_items ORDER BY id"),
                args![],
                item,
            ),
        }
    }

    /// Switch an item on, or retire it.
    pub fn set_checklist_item_enabled(&mut self, id: i64, enabled: bool) -> Result<ChecklistItem> {
        self.checklist_item(id)?;
        self.exec(
            "UPDATE checklist_items SET enabled = ?2, updated_at = ?3 WHERE id = ?1",
            args![id, i64::from(enabled), self.now],
        )?;
        self.checklist_item(id)
    }
}
