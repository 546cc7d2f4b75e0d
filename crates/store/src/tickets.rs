//! Tickets (digest 003-B §1): a job's units of deliverable work, laid out by the lead in one
//! call with their dependencies, parts and the sample, and edited by the user on the board.
//! The database keeps the stage rules (migration 0021): the status is a mapping row of the
//! stage, a user's status edit moves the stage (`tickets_stage_follows_status`), a stage write
//! names its source and every move is logged in `ticket_stage_changes`. The methods here write
//! the stage with its source and then append `ticket_stage_changed` to the job's home
//! conversation. Which moves are allowed is `troupe_core::ticket`'s.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use std::collections::HashMap;
use troupe_core::ticket::{PartStage, StageSource, TicketStage, TicketStatus};
use troupe_core::{BotId, PartId, PlanId, SubmissionId, TicketId};

/// A `tickets` row with what it depends on.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TicketRecord {
    pub id: TicketId,
    pub plan_id: PlanId,
    /// Shown `#NN`.
    pub number: i64,
    /// The lead's layout key.
    pub key: Option<String>,
    pub title: String,
    pub description: String,
    pub done_when: String,
    pub stage: TicketStage,
    pub status: TicketStatus,
    /// Who wrote the stage last; none before the first move.
    pub stage_source: Option<StageSource>,
    pub owner_bot_id: Option<BotId>,
    pub reviewer_bot_id: Option<BotId>,
    pub is_sample: bool,
    /// The lead's reason for a drop; none when the user set it aside.
    pub drop_reason: Option<String>,
    pub folder: String,
    /// Through (T17): handed over at least once.
    pub handed_over_once: bool,
    /// Who made the approved version.
    pub approved_by_bot_id: Option<BotId>,
    pub depends_on: Vec<TicketId>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A ticket's part (B §1.4).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartRecord {
    pub id: PartId,
    pub ticket_id: TicketId,
    pub number: i64,
    pub label: String,
    pub stage: PartStage,
    /// Hand-overs that named it (or named no part), T16.
    pub attempts: i64,
    pub current_file: Option<String>,
    pub blocked: bool,
}

/// One logged stage move of a ticket, or of one of its parts.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageChange {
    pub ticket_id: TicketId,
    pub part_id: Option<PartId>,
    /// A ticket's or a part's stage, as stored.
    pub from: String,
    pub to: String,
    pub source: String,
    pub at: i64,
}

/// What a stage write did: the move, or nothing when the ticket was there already.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageMove {
    pub ticket_id: TicketId,
    pub from: TicketStage,
    pub to: TicketStage,
    pub source: StageSource,
}

/// A ticket a layout names: one already in the job, or the layout's own item at that index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TicketRef {
    Existing(TicketId),
    Item(usize),
}

/// One item of a layout (`plan_items`): a new ticket, or (with `ticket`) an existing one
/// whose fields it writes again. Parts are added by label; those it already has stay.
#[derive(Clone, Debug, Default)]
pub struct LayoutItem {
    pub ticket: Option<TicketId>,
    pub key: Option<String>,
    pub title: String,
    pub description: String,
    pub done_when: String,
    pub owner_bot_id: Option<BotId>,
    pub reviewer_bot_id: Option<BotId>,
    pub depends_on: Vec<TicketRef>,
    pub parts: Vec<String>,
    pub sample: bool,
}

/// A whole layout, written in one go: items, then drops (ticket, reason).
#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub items: Vec<LayoutItem>,
    pub drops: Vec<(TicketId, String)>,
}

/// What a layout wrote: its items' tickets in order, and the drops' moves.
#[derive(Clone, Debug)]
pub struct LaidOut {
    pub tickets: Vec<TicketRecord>,
    pub dropped: Vec<StageMove>,
}

/// A user's board edit (`PATCH /v1/tickets/:id`); `None` leaves a field alone.
#[derive(Clone, Debug, Default)]
pub struct BoardPatch {
    pub status: Option<TicketStatus>,
    pub reviewer_bot_id: Option<Option<BotId>>,
    pub depends_on: Option<Vec<TicketId>>,
    pub sample: Option<bool>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub done_when: Option<String>,
}

/// What a board edit did beyond the fields: the stage its status moved, and the undecided
/// hand-overs that edit superseded (T7).
#[derive(Clone, Debug)]
pub struct BoardEdit {
    pub ticket: TicketRecord,
    pub moved: Option<StageMove>,
    pub superseded: Vec<SubmissionId>,
}

const TICKET_COLUMNS: &str = "id, plan_id, number, key, title, description, done_when, stage, \
    status, stage_source, owner_bot_id, reviewer_bot_id, is_sample, drop_reason, folder, \
    handed_over_once, approved_by_bot_id, created_at, updated_at";

const PART_COLUMNS: &str = "id, ticket_id, number, label, stage, attempts, current_file, blocked";

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

fn ticket_from_row(r: &crate::Row) -> Result<TicketRecord> {
    Ok(TicketRecord {
        id: TicketId(r.get(0)?),
        plan_id: PlanId(r.get(1)?),
        number: r.get(2)?,
        key: r.get(3)?,
        title: r.get(4)?,
        description: r.get(5)?,
        done_when: r.get(6)?,
        stage: TicketStage::parse(&r.get::<String>(7)?).map_err(|e| corrupt("ticket", e))?,
        status: TicketStatus::parse(&r.get::<String>(8)?).map_err(|e| corrupt("ticket", e))?,
        stage_source: r
            .get::<Option<String>>(9)?
            .map(|s| StageSource::parse(&s).map_err(|e| corrupt("ticket", e)))
            .transpose()?,
        owner_bot_id: r.get::<Option<i64>>(10)?.map(BotId),
        reviewer_bot_id: r.get::<Option<i64>>(11)?.map(BotId),
        is_sample: r.get(12)?,
        drop_reason: r.get(13)?,
        folder: r.get(14)?,
        handed_over_once: r.get(15)?,
        approved_by_bot_id: r.get::<Option<i64>>(16)?.map(BotId),
        depends_on: Vec::new(),
        created_at: r.get(17)?,
        updated_at: r.get(18)?,
    })
}

fn part_from_row(r: &crate::Row) -> Result<PartRecord> {
    Ok(PartRecord {
        id: PartId(r.get(0)?),
        ticket_id: TicketId(r.get(1)?),
        number: r.get(2)?,
        label: r.get(3)?,
        stage: PartStage::parse(&r.get::<String>(4)?).map_err(|e| corrupt("part", e))?,
        attempts: r.get(5)?,
        current_file: r.get(6)?,
        blocked: r.get(7)?,
    })
}

/// A hand-over made it through (T17) when a stage it reaches this way is a passed one.
fn hands_over(to: TicketStage, source: StageSource) -> bool {
    source != StageSource::User
        && matches!(
            to,
            TicketStage::Submitted | TicketStage::InReview | TicketStage::Approved
        )
}

impl Tx<'_> {
    pub fn ticket(&self, id: TicketId) -> Result<TicketRecord> {
        self.find_ticket(id)?
            .ok_or_else(|| StoreError::not_found("ticket", id))
    }

    pub fn find_ticket(&self, id: TicketId) -> Result<Option<TicketRecord>> {
        let sql = format!("SELECT {TICKET_COLUMNS} FROM tickets WHERE id = ?1");
        let Some(mut t) = self.query_opt(&sql, args![id.0], ticket_from_row)? else {
            return Ok(None);
        };
        t.depends_on = self.query_all(
            "SELECT depends_on_id FROM ticket_dependencies WHERE ticket_id = ?1
             ORDER BY depends_on_id",
            args![id.0],
            |r| Ok(TicketId(r.get(0)?)),
        )?;
        Ok(Some(t))
    }

    /// A job's tickets by number, each with what it depends on (two queries).
    pub fn tickets_of_plan(&self, plan: PlanId) -> Result<Vec<TicketRecord>> {
        let sql =
            format!("SELECT {TICKET_COLUMNS} FROM tickets WHERE plan_id = ?1 ORDER BY number");
        let mut tickets = self.query_all(&sql, args![plan.0], ticket_from_row)?;
        let mut deps: HashMap<i64, Vec<TicketId>> = HashMap::new();
        for (t, on) in self.query_all(
            "SELECT d.ticket_id, d.depends_on_id FROM ticket_dependencies d
             JOIN tickets t ON t.id = d.ticket_id WHERE t.plan_id = ?1
             ORDER BY d.ticket_id, d.depends_on_id",
            args![plan.0],
            |r| Ok((r.get::<i64>(0)?, TicketId(r.get(1)?))),
        )? {
            deps.entry(t).or_default().push(on);
        }
        for t in &mut tickets {
            t.depends_on = deps.remove(&t.id.0).unwrap_or_default();
        }
        Ok(tickets)
    }

    /// The number the job's next ticket gets.
    pub fn next_ticket_number(&self, plan: PlanId) -> Result<i64> {
        self.query_one(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM tickets WHERE plan_id = ?1",
            args![plan.0],
            |r| r.get(0),
        )
    }

    /// Write a layout in one go: new tickets at to_do (numbered on from the job's last, each
    /// in the folder `folder(number, title)` gives, fixed from then on), existing ones written
    /// again, dependencies replaced, parts added, the sample moved to the item marked so, and
    /// the drops (stage dropped, source `lead_drop`, with the reason). A layout with a sample
    /// lays the job out (`laid_out`, `sample_ticket_id`). The database refuses a second sample
    /// and a reviewer who owns the ticket; which layouts stand otherwise (loops, a large job's
    /// sample) is the caller's to judge first.
    pub fn lay_out(
        &mut self,
        plan: PlanId,
        layout: &Layout,
        folder: impl Fn(i64, &str) -> String,
    ) -> Result<LaidOut> {
        self.plan(plan)?;
        let mut ids = Vec::with_capacity(layout.items.len());
        let mut number = self.next_ticket_number(plan)?;
        for (i, item) in layout.items.iter().enumerate() {
            if item.title.trim().is_empty() {
                return Err(StoreError::Invalid(format!(
                    "items[{i}].title: must not be empty"
                )));
            }
            let id = match item.ticket {
                Some(id) => {
                    self.ticket_of(plan, id, &format!("items[{i}].ticket"))?;
                    self.exec(
                        "UPDATE tickets SET key = COALESCE(?2, key), title = ?3, description = ?4,
                             done_when = ?5, owner_bot_id = ?6, reviewer_bot_id = ?7,
                             updated_at = ?8
                         WHERE id = ?1",
                        args![
                            id.0,
                            item.key,
                            item.title.trim(),
                            item.description,
                            item.done_when,
                            item.owner_bot_id.map(|b| b.0),
                            item.reviewer_bot_id.map(|b| b.0),
                            self.now
                        ],
                    )?;
                    id
                }
                None => {
                    let n = number;
                    number += 1;
                    let dir = folder(n, item.title.trim());
                    if dir.trim().is_empty() {
                        return Err(StoreError::Invalid(format!(
                            "items[{i}]: the ticket needs a folder"
                        )));
                    }
                    TicketId(self.insert(
                        "INSERT INTO tickets (plan_id, number, key, title, description, done_when,
                             owner_bot_id, reviewer_bot_id, folder, created_at, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
                        args![
                            plan.0,
                            n,
                            item.key,
                            item.title.trim(),
                            item.description,
                            item.done_when,
                            item.owner_bot_id.map(|b| b.0),
                            item.reviewer_bot_id.map(|b| b.0),
                            dir,
                            self.now
                        ],
                    )?)
                }
            };
            ids.push(id);
        }
        for (i, item) in layout.items.iter().enumerate() {
            let mut on = Vec::with_capacity(item.depends_on.len());
            for r in &item.depends_on {
                on.push(match r {
                    TicketRef::Existing(t) => {
                        self.ticket_of(plan, *t, &format!("items[{i}].depends_on"))?;
                        *t
                    }
                    TicketRef::Item(j) => *ids.get(*j).ok_or_else(|| {
                        StoreError::Invalid(format!(
                            "items[{i}].depends_on: the layout has no item {j}"
                        ))
                    })?,
                });
            }
            if item.ticket.is_none() || !item.depends_on.is_empty() {
                self.write_dependencies(ids[i], &on)?;
            }
            self.add_parts(ids[i], &item.parts)?;
        }
        if let Some(i) = layout.items.iter().position(|it| it.sample) {
            self.make_sample(plan, Some(ids[i]))?;
        }
        let mut dropped = Vec::new();
        for (id, reason) in &layout.drops {
            self.ticket_of(plan, *id, "drops.ticket")?;
            if let Some(m) = self.drop_ticket(*id, reason)? {
                dropped.push(m);
            }
        }
        let tickets = ids
            .iter()
            .map(|id| self.ticket(*id))
            .collect::<Result<Vec<_>>>()?;
        Ok(LaidOut { tickets, dropped })
    }

    /// A ticket that must be of `plan`; `field` names it in the error.
    fn ticket_of(&self, plan: PlanId, id: TicketId, field: &str) -> Result<TicketRecord> {
        let t = self
            .find_ticket(id)?
            .ok_or_else(|| StoreError::Invalid(format!("{field}: ticket {id} does not exist")))?;
        if t.plan_id != plan {
            return Err(StoreError::Invalid(format!(
                "other_plan: {field}: ticket {id} belongs to job {}, not {plan}",
                t.plan_id
            )));
        }
        Ok(t)
    }

    fn write_dependencies(&mut self, ticket: TicketId, on: &[TicketId]) -> Result<()> {
        self.exec(
            "DELETE FROM ticket_dependencies WHERE ticket_id = ?1",
            args![ticket.0],
        )?;
        for d in on {
            if *d == ticket {
                return Err(StoreError::Invalid(format!(
                    "depends_on_self: ticket {ticket} cannot wait for itself"
                )));
            }
            self.exec(
                "INSERT INTO ticket_dependencies (ticket_id, depends_on_id) VALUES (?1, ?2)
                 ON CONFLICT DO NOTHING",
                args![ticket.0, d.0],
            )?;
        }
        Ok(())
    }

    /// Make `ticket` the job's sample (or, with none, leave the job without one): the old
    /// sample gives it up first, and the plan records it. Setting a sample lays the job out.
    fn make_sample(&mut self, plan: PlanId, ticket: Option<TicketId>) -> Result<()> {
        self.exec(
            "UPDATE tickets SET is_sample = 0, updated_at = ?2
             WHERE plan_id = ?1 AND is_sample = 1 AND id <> ?3",
            args![plan.0, self.now, ticket.map_or(0, |t| t.0)],
        )?;
        if let Some(t) = ticket {
            self.exec(
                "UPDATE tickets SET is_sample = 1, updated_at = ?2 WHERE id = ?1 AND is_sample = 0",
                args![t.0, self.now],
            )?;
        }
        self.exec(
            "UPDATE plans SET sample_ticket_id = CAST(?2 AS BIGINT),
                 laid_out = CASE WHEN CAST(?2 AS BIGINT) IS NULL THEN laid_out ELSE 1 END,
                 updated_at = ?3
             WHERE id = ?1",
            args![plan.0, ticket.map(|t| t.0), self.now],
        )?;
        // SA4: the checks holding tickets to an old sample's standard come down with it.
        self.exec(
            "UPDATE checks SET removed_at = ?2, updated_at = ?2
             WHERE plan_id = ?1 AND kind = 'standard' AND removed_at IS NULL
               AND sample_ticket_id <> ?3",
            args![plan.0, self.now, ticket.map_or(0, |t| t.0)],
        )?;
        Ok(())
    }

    /// Add parts by label after the ticket's last (those it has by that label stay as they
    /// are); answers every part of the ticket.
    pub fn add_parts(&mut self, ticket: TicketId, labels: &[String]) -> Result<Vec<PartRecord>> {
        let mut have = self.parts_of_ticket(ticket)?;
        let mut next = have.iter().map(|p| p.number).max().unwrap_or(0) + 1;
        for label in labels {
            let label = label.trim();
            if label.is_empty() {
                return Err(StoreError::Invalid("parts: a part needs a label".into()));
            }
            if have.iter().any(|p| p.label == label) {
                continue;
            }
            let id = self.insert(
                "INSERT INTO ticket_parts (ticket_id, number, label) VALUES (?1, ?2, ?3)",
                args![ticket.0, next, label],
            )?;
            next += 1;
            have.push(self.part(PartId(id))?);
        }
        Ok(have)
    }

    pub fn part(&self, id: PartId) -> Result<PartRecord> {
        let sql = format!("SELECT {PART_COLUMNS} FROM ticket_parts WHERE id = ?1");
        self.query_opt(&sql, args![id.0], part_from_row)?
            .ok_or_else(|| StoreError::not_found("part", id))
    }

    /// A ticket's parts by number.
    pub fn parts_of_ticket(&self, ticket: TicketId) -> Result<Vec<PartRecord>> {
        let sql =
            format!("SELECT {PART_COLUMNS} FROM ticket_parts WHERE ticket_id = ?1 ORDER BY number");
        self.query_all(&sql, args![ticket.0], part_from_row)
    }

    /// A job's parts, by ticket and number (one query).
    pub fn parts_of_plan(&self, plan: PlanId) -> Result<Vec<PartRecord>> {
        let sql = format!(
            "SELECT {} FROM ticket_parts p JOIN tickets t ON t.id = p.ticket_id
             WHERE t.plan_id = ?1 ORDER BY t.number, p.number",
            PART_COLUMNS
                .split(", ")
                .map(|c| format!("p.{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.query_all(&sql, args![plan.0], part_from_row)
    }

    /// Write a ticket's stage with its source (T3), the status alongside; a move is logged by
    /// the database and appended as `ticket_stage_changed` {task_id, ticket_id, from, to,
    /// source}. Leaving dropped clears the drop reason; a passed hand-over marks it through.
    /// None when the ticket was at that stage already.
    pub fn set_ticket_stage(
        &mut self,
        id: TicketId,
        to: TicketStage,
        source: StageSource,
    ) -> Result<Option<StageMove>> {
        let cur = self.ticket(id)?;
        if cur.stage == to {
            return Ok(None);
        }
        self.exec(
            "UPDATE tickets SET stage = ?2, status = ?3, stage_source = ?4,
                 drop_reason = CASE WHEN ?2 = 'dropped' THEN drop_reason END,
                 handed_over_once = CASE WHEN ?5 THEN 1 ELSE handed_over_once END,
                 updated_at = ?6
             WHERE id = ?1",
            args![
                id.0,
                to.as_str(),
                to.status().as_str(),
                source.as_str(),
                hands_over(to, source),
                self.now
            ],
        )?;
        let m = StageMove {
            ticket_id: id,
            from: cur.stage,
            to,
            source,
        };
        self.stage_event(cur.plan_id, &m, None)?;
        Ok(Some(m))
    }

    /// The lead drops a ticket through layout (stage dropped, source `lead_drop`) with its
    /// reason, which stays on it (Q4).
    pub fn drop_ticket(&mut self, id: TicketId, reason: &str) -> Result<Option<StageMove>> {
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(StoreError::Invalid(
                "drops.reason: a lead's drop says why".into(),
            ));
        }
        let moved = self.set_ticket_stage(id, TicketStage::Dropped, StageSource::LeadDrop)?;
        self.exec(
            "UPDATE tickets SET drop_reason = ?2 WHERE id = ?1",
            args![id.0, reason],
        )?;
        Ok(moved)
    }

    /// The user's board edit. A status change moves the stage through the database's trigger
    /// (source `user`), is appended as `ticket_stage_changed`, and supersedes the ticket's
    /// undecided hand-overs (T7). `sample: true` moves the job's sample here; `depends_on`
    /// replaces the list (tickets of the same job only).
    pub fn board_patch(&mut self, id: TicketId, p: &BoardPatch) -> Result<BoardEdit> {
        let cur = self.ticket(id)?;
        if let Some(title) = &p.title
            && title.trim().is_empty()
        {
            return Err(StoreError::Invalid("title: must not be empty".into()));
        }
        let reviewer = match p.reviewer_bot_id {
            Some(r) => r,
            None => cur.reviewer_bot_id,
        };
        self.exec(
            "UPDATE tickets SET title = ?2, description = ?3, done_when = ?4,
                 reviewer_bot_id = ?5, status = ?6, updated_at = ?7
             WHERE id = ?1",
            args![
                id.0,
                p.title.as_deref().map_or(cur.title.as_str(), str::trim),
                p.description.as_deref().unwrap_or(&cur.description),
                p.done_when.as_deref().unwrap_or(&cur.done_when),
                reviewer.map(|b| b.0),
                p.status.unwrap_or(cur.status).as_str(),
                self.now
            ],
        )?;
        if let Some(on) = &p.depends_on {
            for d in on {
                self.ticket_of(cur.plan_id, *d, "depends_on")?;
            }
            self.write_dependencies(id, on)?;
        }
        match p.sample {
            Some(true) => self.make_sample(cur.plan_id, Some(id))?,
            Some(false) if cur.is_sample => self.make_sample(cur.plan_id, None)?,
            _ => {}
        }
        let after = self.ticket(id)?;
        let mut moved = None;
        let mut superseded = Vec::new();
        if after.stage != cur.stage {
            let m = StageMove {
                ticket_id: id,
                from: cur.stage,
                to: after.stage,
                source: StageSource::User,
            };
            self.stage_event(cur.plan_id, &m, None)?;
            moved = Some(m);
        }
        if after.status != cur.status {
            superseded = self.supersede_undecided(id, None)?;
        }
        Ok(BoardEdit {
            ticket: after,
            moved,
            superseded,
        })
    }

    /// Move a part's stage with its source, logged with the part and appended as
    /// `ticket_stage_changed` with `part_id`. None when it was there already.
    pub fn set_part_stage(
        &mut self,
        part: PartId,
        to: PartStage,
        source: StageSource,
    ) -> Result<Option<(PartStage, PartStage)>> {
        let cur = self.part(part)?;
        if cur.stage == to {
            return Ok(None);
        }
        self.exec(
            "UPDATE ticket_parts SET stage = ?2 WHERE id = ?1",
            args![part.0, to.as_str()],
        )?;
        self.exec(
            "INSERT INTO ticket_stage_changes (ticket_id, part_id, from_stage, to_stage, source, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            args![
                cur.ticket_id.0,
                part.0,
                cur.stage.as_str(),
                to.as_str(),
                source.as_str(),
                self.now
            ],
        )?;
        let plan = self.ticket(cur.ticket_id)?.plan_id;
        let home = self.plan(plan)?.home_session_id;
        let payload = json!({
            "task_id": plan, "ticket_id": cur.ticket_id, "part_id": part,
            "from": cur.stage.as_str(), "to": to.as_str(), "source": source.as_str(),
        });
        match home {
            Some(s) => self.session_event("ticket_stage_changed", s, None, payload)?,
            None => self.event("ticket_stage_changed", None, None, payload)?,
        }
        Ok(Some((cur.stage, to)))
    }

    /// A hand-over counted one attempt on the part and made `file` its current one (T16).
    pub fn count_part_attempt(&mut self, part: PartId, file: Option<&str>) -> Result<PartRecord> {
        let n = self.exec(
            "UPDATE ticket_parts SET attempts = attempts + 1,
                 current_file = COALESCE(?2, current_file)
             WHERE id = ?1",
            args![part.0, file],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("part", part));
        }
        self.part(part)
    }

    /// Mark a part stuck at its ceiling, or free it (Deliverables II's counters decide).
    pub fn set_part_blocked(&mut self, part: PartId, blocked: bool) -> Result<()> {
        let n = self.exec(
            "UPDATE ticket_parts SET blocked = ?2 WHERE id = ?1",
            args![part.0, blocked],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("part", part));
        }
        Ok(())
    }

    /// Record who made the approved version ("approved, by X").
    pub fn set_ticket_maker(&mut self, id: TicketId, bot: Option<BotId>) -> Result<()> {
        let n = self.exec(
            "UPDATE tickets SET approved_by_bot_id = ?2, updated_at = ?3 WHERE id = ?1",
            args![id.0, bot.map(|b| b.0), self.now],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("ticket", id));
        }
        Ok(())
    }

    /// A ticket's logged stage moves, its parts' included, oldest first.
    pub fn ticket_stage_changes(&self, id: TicketId) -> Result<Vec<StageChange>> {
        self.query_all(
            "SELECT ticket_id, part_id, from_stage, to_stage, source, at
             FROM ticket_stage_changes WHERE ticket_id = ?1 ORDER BY id",
            args![id.0],
            |r| {
                Ok(StageChange {
                    ticket_id: TicketId(r.get(0)?),
                    part_id: r.get::<Option<i64>>(1)?.map(PartId),
                    from: r.get(2)?,
                    to: r.get(3)?,
                    source: r.get(4)?,
                    at: r.get(5)?,
                })
            },
        )
    }

    /// `ticket_stage_changed` in the job's home conversation (a job without one: the global
    /// log).
    fn stage_event(&mut self, plan: PlanId, m: &StageMove, part: Option<PartId>) -> Result<()> {
        let home = self.plan(plan)?.home_session_id;
        let mut payload = json!({
            "task_id": plan, "ticket_id": m.ticket_id, "from": m.from.as_str(),
            "to": m.to.as_str(), "source": m.source.as_str(),
        });
        if let Some(p) = part {
            payload["part_id"] = json!(p);
        }
        match home {
            Some(s) => self.session_event("ticket_stage_changed", s, None, payload),
            None => self.event("ticket_stage_changed", None, None, payload),
        }
    }
}
