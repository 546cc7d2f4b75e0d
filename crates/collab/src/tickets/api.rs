//! The board's side of tickets (B §0.5, §1.6): the user lists a job's tickets, adds one (to
//! do), adds parts (T15), edits a ticket — its status (the stage follows, source user, and its
//! undecided hand-overs are superseded: T7), reviewer (T8), dependencies (T17), the sample
//! (SA5), title, description, Done when — and answers the large-job banner (LJ2).
//!
//! A 422 here is `CollabError::Invalid("<code>: <what is wrong>")`; the routes answer it with
//! that code.

use super::delivery::after_stage_change;
use super::folders::{folder_for, make_folder};
use super::graph::nodes;
use super::view::{self, TicketList, TicketView};
use crate::error::CollabError;
use serde::{Deserialize, Deserializer};
use troupe_core::large_job::{LargeEvent, can_make_sample, next_large};
use troupe_core::ticket::{TicketStage, TicketStatus, check_dependencies, is_through};
use troupe_core::{BotId, PlanId, TicketId};
use troupe_store::{BoardPatch, Layout, LayoutItem, PlanDeliverables, StoreError, Tx};

/// `POST /v1/tasks/:id/tickets`: the user adds a ticket on the board; it opens to do.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTicketRequest {
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub done_when: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub owner_bot_id: Option<BotId>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub reviewer_bot_id: Option<BotId>,
}

/// `POST /v1/tickets/:id/parts`: parts the user adds by label (T15).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartsRequest {
    pub parts: Vec<String>,
}

fn some<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// `PATCH /v1/tickets/:id`: the user's board edit; a field left out stays as it is.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TicketPatchRequest {
    #[serde(default)]
    pub status: Option<TicketStatus>,
    /// `null` clears the reviewer.
    #[serde(default, deserialize_with = "some")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub reviewer_bot_id: Option<Option<BotId>>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<i64>>))]
    pub depends_on: Option<Vec<TicketId>>,
    /// Only `true`: make this ticket the job's sample.
    #[serde(default)]
    pub sample: Option<bool>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub done_when: Option<String>,
}

/// `POST /v1/tasks/:id/large`: the large-job banner's buttons.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LargeChoiceRequest {
    /// `no_need` or `treat_as_large`.
    pub choice: String,
}

fn coded(code: &str, what: impl std::fmt::Display) -> CollabError {
    CollabError::Invalid(format!("{code}: {what}"))
}

type Checked<T> = Result<Result<T, CollabError>, StoreError>;

/// T8: a reviewer is a Bot of the job's conversation and not the ticket's owner.
fn check_reviewer(tx: &Tx<'_>, plan: PlanId, owner: Option<BotId>, reviewer: BotId) -> Checked<()> {
    if Some(reviewer) == owner {
        return Ok(Err(coded(
            "reviewer_is_owner",
            format!("reviewer_bot_id: {reviewer} owns this ticket and cannot review it"),
        )));
    }
    check_member(tx, plan, "reviewer_bot_id", reviewer)
}

fn check_member(tx: &Tx<'_>, plan: PlanId, field: &str, bot: BotId) -> Checked<()> {
    let members = match tx.plan(plan)?.home_session_id {
        Some(home) => tx.session(home)?.bot_ids,
        None => Vec::new(),
    };
    if !members.contains(&bot) {
        return Ok(Err(coded(
            "not_in_conversation",
            format!("{field}: {bot} is not a Bot of this job's conversation"),
        )));
    }
    Ok(Ok(()))
}

impl crate::Collab {
    /// A job's tickets with the counter (T14).
    pub fn tickets(&self, plan: PlanId) -> Result<TicketList, CollabError> {
        Ok(self.store().read(|tx| view::list(tx, plan))?)
    }

    pub fn ticket(&self, id: TicketId) -> Result<TicketView, CollabError> {
        Ok(self.store().read(|tx| view::one(tx, id))?)
    }

    /// The user adds a ticket on the board: to do, in its own folder with its `ticket.md`.
    pub fn add_ticket(
        &self,
        plan: PlanId,
        req: NewTicketRequest,
    ) -> Result<TicketView, CollabError> {
        let title = req.title.trim().to_string();
        if title.is_empty() {
            return Err(coded("invalid", "title: required, and not blank"));
        }
        self.store().write(|tx| {
            let record = tx.plan(plan)?;
            if let Some(owner) = req.owner_bot_id
                && let Err(e) = check_member(tx, plan, "owner_bot_id", owner)?
            {
                return Ok(Err(e));
            }
            if let Some(r) = req.reviewer_bot_id
                && let Err(e) = check_reviewer(tx, plan, req.owner_bot_id, r)?
            {
                return Ok(Err(e));
            }
            let layout = Layout {
                items: vec![LayoutItem {
                    title: title.clone(),
                    description: req.description.clone().unwrap_or_default(),
                    done_when: req.done_when.clone().unwrap_or_default(),
                    owner_bot_id: req.owner_bot_id,
                    reviewer_bot_id: req.reviewer_bot_id,
                    ..Default::default()
                }],
                drops: Vec::new(),
            };
            let laid = tx.lay_out(plan, &layout, |n, t| folder_for(&record.folder, n, t))?;
            let t = &laid.tickets[0];
            make_folder(t, &record)?;
            after_stage_change(tx, t.id)?;
            view::one(tx, t.id).map(Ok)
        })?
    }

    /// The user adds parts to a ticket by label (those it has stay).
    pub fn add_parts(&self, id: TicketId, req: PartsRequest) -> Result<TicketView, CollabError> {
        if req.parts.is_empty() {
            return Err(coded("invalid", "parts: give at least one label"));
        }
        if let Some(i) = req.parts.iter().position(|p| p.trim().is_empty()) {
            return Err(coded(
                "invalid",
                format!("parts[{i}]: a part needs a label"),
            ));
        }
        Ok(self.store().write(|tx| {
            tx.ticket(id)?;
            tx.add_parts(id, &req.parts)?;
            view::one(tx, id)
        })?)
    }

    /// The user's board edit of a ticket.
    pub fn patch_ticket(
        &self,
        id: TicketId,
        req: TicketPatchRequest,
    ) -> Result<TicketView, CollabError> {
        for (field, v) in [("title", &req.title)] {
            if v.as_deref().is_some_and(|t| t.trim().is_empty()) {
                return Err(coded("invalid", format!("{field}: must not be blank")));
            }
        }
        if req.sample == Some(false) {
            return Err(coded(
                "invalid",
                "sample: only true (make this ticket the sample); to move the sample, make \
                 another ticket the sample",
            ));
        }
        self.store().write(|tx| {
            let cur = tx.ticket(id)?;
            let plan = cur.plan_id;
            if let Some(Some(r)) = req.reviewer_bot_id
                && let Err(e) = check_reviewer(tx, plan, cur.owner_bot_id, r)?
            {
                return Ok(Err(e));
            }
            if let Some(on) = &req.depends_on
                && let Err(e) = check_board_dependencies(tx, &cur, on)?
            {
                return Ok(Err(e));
            }
            if req.sample == Some(true) {
                let d = tx.plan_deliverables(plan)?;
                if let Err(e) = can_make_sample(
                    d.large_state,
                    d.sample_ticket_id.is_some(),
                    is_through(cur.stage, cur.handed_over_once),
                    cur.is_sample,
                ) {
                    return Ok(Err(CollabError::conflict(e.code(), e.to_string())));
                }
            }
            let edit = tx.board_patch(
                id,
                &BoardPatch {
                    status: req.status,
                    reviewer_bot_id: req.reviewer_bot_id,
                    depends_on: req.depends_on.clone(),
                    sample: req.sample,
                    title: req.title.clone(),
                    description: req.description.clone(),
                    done_when: req.done_when.clone(),
                },
            )?;
            if edit.moved.is_some() {
                after_stage_change(tx, id)?;
            }
            crate::quality::board_sent_back(tx, &edit)?;
            crate::quotes::board::ticket_edit(
                tx,
                &cur,
                req.description.as_deref(),
                req.done_when.as_deref(),
            )?;
            crate::ledger::board::ticket_done_when_edited(tx, &cur, req.done_when.as_deref())?;
            view::one(tx, id).map(Ok)
        })?
    }

    /// The large-job banner: "No need" (sticky against readings, LJ2) or "Treat as large".
    pub fn choose_large(
        &self,
        plan: PlanId,
        req: LargeChoiceRequest,
    ) -> Result<PlanDeliverables, CollabError> {
        let event = match req.choice.as_str() {
            "no_need" => LargeEvent::UserNoNeed,
            "treat_as_large" => LargeEvent::UserTreatAsLarge,
            other => {
                return Err(coded(
                    "invalid",
                    format!("choice: {other:?} is not one of no_need, treat_as_large"),
                ));
            }
        };
        self.store().write(|tx| {
            let d = tx.plan_deliverables(plan)?;
            // "No need" is sticky against readings and the supervisor (LJ2); the user's own
            // later "Treat as large" is their latest word, and wins.
            let next = next_large(&d.large_job(), event);
            tx.set_large_job(plan, &next).map(Ok)
        })?
    }
}

/// T17 for a board edit: same job only, not itself, no loop, no newly added dropped or
/// parked one, at most 39.
fn check_board_dependencies(
    tx: &Tx<'_>,
    cur: &troupe_store::TicketRecord,
    on: &[TicketId],
) -> Checked<()> {
    let mut graph = nodes(&tx.tickets_of_plan(cur.plan_id)?);
    for d in on {
        if graph.iter().any(|n| n.id == *d) {
            continue;
        }
        match tx.find_ticket(*d)? {
            Some(t) => graph.push(super::graph::node(&t)),
            None => {
                return Ok(Err(coded(
                    "unknown_ticket",
                    format!("depends_on: ticket {d} does not exist"),
                )));
            }
        }
    }
    // A dependency it already has may stay though dropped since; only new ones are refused.
    for n in graph.iter_mut() {
        if cur.depends_on.contains(&n.id) && n.stage == TicketStage::Dropped {
            n.stage = TicketStage::ToDo;
        }
    }
    let me = graph
        .iter()
        .find(|n| n.id == cur.id)
        .cloned()
        .ok_or_else(|| StoreError::not_found("ticket", cur.id))?;
    Ok(
        check_dependencies(&me, on, &graph)
            .map_err(|e| coded(e.code(), format!("depends_on: {e}"))),
    )
}
