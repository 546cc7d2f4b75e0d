//! The requirements ledger as the user works it (digest 003-C §6): "What you asked for" grouped
//! per RL-19 with each entry's buttons, and a press applied only on the version the user saw
//! (RL-21). Writers: the scribe (`crate::scribe`), fallback capture (`capture`), board lines
//! (`board`); what Bots read is `situation`, what reviews require is `required`. Bots never
//! write it.

pub mod board;
pub mod capture;
pub mod edits;
pub mod import;
pub mod required;
pub mod situation;

pub use required::LedgerItems;
pub use situation::RequirementsSituation;

use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use troupe_core::ids::RequirementId;
use troupe_core::requirement::{
    self, Action, Facts, Group, Nature, Polarity, Scope, SourceKind, State,
};
use troupe_core::{PlanId, SessionMessageId, TicketId};
use troupe_store::{RequirementChange, RequirementRecord, StoreError, Tx};

/// One entry as the board shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RequirementView {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub id: RequirementId,
    /// Shown `R-n`.
    pub label: String,
    pub quote: String,
    pub restatement: String,
    pub category: Option<String>,
    pub nature: Option<Nature>,
    pub polarity: Polarity,
    pub source_kind: SourceKind,
    /// The line to jump to, while it is still in the transcript.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub source_line_id: Option<SessionMessageId>,
    pub scope: Scope,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub ticket_id: Option<TicketId>,
    pub state: State,
    pub said_count: i64,
    pub job_count: i64,
    /// The job that recorded it, when another one did (inherited).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub inherited_from: Option<PlanId>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub replaces_id: Option<RequirementId>,
    /// The number it sets, as asked ("108–132 s"), when it gives exactly one.
    pub number: Option<String>,
    /// Send it back with a press; a press on another version is 409 `requirement_changed`.
    pub version: i64,
    /// The buttons it offers on this job's board.
    pub actions: Vec<Action>,
}

/// One of RL-19's groups; inherited entries are grouped by the job they came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RequirementGroup {
    pub group: Group,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub from_job: Option<PlanId>,
    pub entries: Vec<RequirementView>,
}

/// "What you asked for" on one job.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanRequirements {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub task_id: PlanId,
    pub groups: Vec<RequirementGroup>,
    /// Entries waiting for the user ("Needs a look" under the goal).
    pub needs_a_look: usize,
}

/// A press: `POST /v1/requirements/:id/action`.
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ActionRequest {
    pub action: Action,
    /// The entry's version the user saw.
    pub version: i64,
    /// The job whose board it was pressed on (default: the job that recorded it); needed for
    /// an inherited entry's "Not for this job" and "Restore".
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    #[serde(default)]
    pub task_id: Option<PlanId>,
}

pub(crate) fn facts(r: &RequirementRecord, excluded_here: bool) -> Facts {
    Facts {
        state: r.state,
        scope: r.scope,
        plan: r.plan_id,
        source: r.source_kind,
        excluded_here,
        taken_out: r.taken_out_at.is_some(),
    }
}

/// An entry seen from `here`.
pub fn view(
    tx: &Tx<'_>,
    r: &RequirementRecord,
    here: PlanId,
    excluded_here: bool,
) -> Result<RequirementView, StoreError> {
    let f = facts(r, excluded_here);
    // A cleared transcript keeps no line to jump to.
    let source_line_id = match r.source_message_id {
        Some(l) if !tx.line(l)?.body.is_empty() => Some(l),
        _ => None,
    };
    Ok(RequirementView {
        id: r.id,
        label: r.id.to_string(),
        quote: r.quote.clone(),
        restatement: r.restatement.clone(),
        category: r.category.clone(),
        nature: r.nature,
        polarity: r.polarity,
        source_kind: r.source_kind,
        source_line_id,
        scope: r.scope,
        ticket_id: r.ticket_id,
        state: r.state,
        said_count: r.said_count,
        job_count: r.job_count,
        inherited_from: f.inherited(here).then_some(r.plan_id),
        replaces_id: r.replaces_id,
        number: r.number.as_ref().map(|n| n.asked()),
        version: r.version,
        actions: requirement::offered(&f, here),
    })
}

/// RL-19: the job's entries in their groups; the job's own by count, then newest.
pub fn plan_requirements(tx: &Tx<'_>, plan: PlanId) -> Result<PlanRequirements, StoreError> {
    tx.plan(plan)?;
    let excluded = tx.requirements_excluded_in(plan)?;
    let mut groups: BTreeMap<(Group, Option<PlanId>), Vec<RequirementView>> = BTreeMap::new();
    for r in tx.requirements_of_plan(plan)? {
        let ex = excluded.contains(&r.id);
        let Some(g) = requirement::group(&facts(&r, ex), plan) else {
            continue;
        };
        let from = matches!(g, Group::Inherited).then_some(r.plan_id);
        groups
            .entry((g, from))
            .or_default()
            .push(view(tx, &r, plan, ex)?);
    }
    let mut out = Vec::new();
    let mut needs = 0;
    for ((group, from_job), mut entries) in groups {
        if group == Group::Own {
            entries.sort_by(|a, b| b.said_count.cmp(&a.said_count).then(b.id.cmp(&a.id)));
        }
        if matches!(group, Group::Waiting | Group::OldRules | Group::TakenOut) {
            needs += entries.len();
        }
        out.push(RequirementGroup {
            group,
            from_job,
            entries,
        });
    }
    Ok(PlanRequirements {
        task_id: plan,
        groups: out,
        needs_a_look: needs,
    })
}

fn refused(e: StoreError) -> CollabError {
    match e {
        StoreError::Conflict(m) if m.starts_with("requirement_changed") => {
            CollabError::conflict("requirement_changed", m)
        }
        other => other.into(),
    }
}

impl Collab {
    /// "What you asked for" on a job (404 for an unknown job).
    pub fn plan_requirements(&self, plan: PlanId) -> Result<PlanRequirements, CollabError> {
        Ok(self.store().read(|tx| plan_requirements(tx, plan))?)
    }

    /// The user's press (RL-19, RL-21): on another version than the one seen it is 409
    /// `requirement_changed`; a button the entry does not offer there is 422
    /// `action_not_offered`. Refused presses write nothing.
    pub fn requirement_action(
        &self,
        id: RequirementId,
        req: &ActionRequest,
    ) -> Result<RequirementView, CollabError> {
        self.store()
            .write(|tx| press(tx, id, req))
            .map_err(refused)?
    }
}

/// The press in one transaction. Refusals come before any write and are the inner error; a
/// store error undoes the whole press.
fn press(
    tx: &mut Tx<'_>,
    id: RequirementId,
    req: &ActionRequest,
) -> Result<Result<RequirementView, CollabError>, StoreError> {
    let r = tx.requirement(id)?;
    let here = req.task_id.unwrap_or(r.plan_id);
    tx.plan(here)?;
    if r.version != req.version {
        return Ok(Err(CollabError::conflict(
            "requirement_changed",
            format!(
                "requirement_changed: {id} moved on since version {} (now {})",
                req.version, r.version
            ),
        )));
    }
    let excluded = tx.requirements_excluded_in(here)?.contains(&r.id);
    let out = match requirement::apply(&facts(&r, excluded), req.action, here) {
        Ok(out) => out,
        Err(e) => return Ok(Err(CollabError::invalid(e.to_string()))),
    };
    let after = match out.excluded_here {
        Some(ex) => tx.exclude_requirement(id, r.version, here, ex, out.step)?,
        None => tx.change_requirement(
            id,
            r.version,
            here,
            &RequirementChange {
                state: out.state,
                scope: out.scope,
                clear_taken_out: out.clears_taken_out,
            },
            out.step,
        )?,
    };
    // A confirmed replacement takes the old entry's place when it stands on later words
    // (RL-3); the old one stays in force until then (RL-4).
    if req.action == Action::Confirm
        && let Some(old_id) = r.replaces_id
    {
        let old = tx.requirement(old_id)?;
        if old.state == State::InForce && requirement::may_replace(old.said_at, r.said_at) {
            tx.set_requirement_state(old_id, old.plan_id, State::Replaced, "replaced")?;
        }
    }
    let excluded = tx.requirements_excluded_in(here)?.contains(&after.id);
    Ok(Ok(view(tx, &after, here, excluded)?))
}
