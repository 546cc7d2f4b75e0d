//! Routines (seed 003: the morning brief): a Bot's work on a schedule in one conversation.
//! Making one opens its standing job there; each due time the tick ([`tick`]) adds a ticket
//! to it and wakes the Bot on that ticket. A run's hand-over is approved once its checks pass
//! (`by: routine`, RT-a), the standing job never goes dormant (PLAN-D11), the supervisor never
//! calls it back (SV-12) and no retrospective looks back on it (RS3). The person makes them
//! here and on the page; a Bot with `set_routine` ([`tools`]), which a hold refuses (HOLD-T1).

pub mod tick;
pub mod tools;

use crate::memories::coded;
use crate::plans::{OpenPlan, make_plan};
use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;
use troupe_core::conversation::SessionKind;
use troupe_core::plan::{PlanStatus, RevisionCause, SpecPatch};
use troupe_core::routine;
use troupe_core::schedule::Trigger;
use troupe_core::{BotId, SessionId, TicketId};
use troupe_store::{NewRoutine, Routine, RoutineEdit, RoutineStatus, StoreError, Tx};

/// Runs listed with a routine.
const RECENT_RUNS: u32 = 5;

/// `POST /v1/routines`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRoutineRequest {
    /// The Bot that does it.
    pub bot_id: i64,
    /// The conversation its runs speak in: a direct with the person or a group the Bot is in.
    pub session_id: i64,
    /// One per Bot, at most 80 characters.
    pub name: String,
    /// What each run does, at most 4,000 characters.
    pub instruction: String,
    /// `{"kind":"every","seconds":N}` (N ≥ 900) or
    /// `{"kind":"cron","expr":"0 9 * * MON-FRI","tz":"Europe/Paris"}`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub schedule: Value,
}

/// `PATCH /v1/routines/{id}`: absent fields stay.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutinePatchRequest {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub instruction: Option<String>,
    /// A new schedule; its first run counts from now.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(default)]
    pub schedule: Option<Value>,
    /// `active` or `paused`. Resuming counts the next run from now; pausing drops a run a
    /// hold kept back.
    #[serde(default)]
    pub status: Option<String>,
}

/// One run as listed: its due time and its ticket as it stands.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoutineRunView {
    pub due_at: i64,
    pub ran_at: i64,
    pub ticket_id: Option<i64>,
    pub ticket_number: Option<i64>,
    /// The ticket's stage (`todo`, `in_progress`, `in_review`, `approved`, …).
    pub stage: Option<String>,
}

/// A routine as the API and the page show it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoutineView {
    #[serde(flatten)]
    pub routine: Routine,
    pub bot_name: String,
    pub session_title: String,
    /// The standing job's name.
    pub plan_name: String,
    /// The next run on the schedule's own clock (`2026-12-08 09:00`, or `… UTC`).
    pub next_due_label: Option<String>,
    /// The newest runs, newest first.
    pub recent_runs: Vec<RoutineRunView>,
}

pub(crate) fn view(tx: &Tx<'_>, r: Routine) -> Result<RoutineView, StoreError> {
    let schedule = Trigger::parse(&r.schedule).ok();
    let mut recent_runs = Vec::new();
    for run in tx.routine_runs(r.id, RECENT_RUNS)? {
        let ticket = match run.ticket_id {
            Some(t) => tx.find_ticket(TicketId(t))?,
            None => None,
        };
        recent_runs.push(RoutineRunView {
            due_at: run.due_at,
            ran_at: run.ran_at,
            ticket_id: run.ticket_id,
            ticket_number: ticket.as_ref().map(|t| t.number),
            stage: ticket.map(|t| t.stage.as_str().to_string()),
        });
    }
    Ok(RoutineView {
        bot_name: tx.bot(r.bot_id)?.name,
        session_title: tx.session(r.session_id)?.title,
        plan_name: tx.plan(r.plan_id)?.name,
        next_due_label: match (schedule, r.next_due_at) {
            (s, Some(at)) if r.status == RoutineStatus::Active => {
                Some(routine::due_label(s.as_ref(), at))
            }
            _ => None,
        },
        recent_runs,
        routine: r,
    })
}

/// Why `bot` may not have a routine speaking in `session`, field by field.
fn place_fault(tx: &Tx<'_>, bot: BotId, session: SessionId) -> Result<Option<String>, StoreError> {
    let b = match tx.bot(bot) {
        Ok(b) => b,
        Err(StoreError::NotFound { .. }) => {
            return Ok(Some(format!("bot_id: there is no Bot {}", bot.0)));
        }
        Err(e) => return Err(e),
    };
    if b.archived {
        return Ok(Some(format!("bot_id: {} is archived", b.name)));
    }
    let s = match tx.session(session) {
        Ok(s) if !s.archived => s,
        Ok(_) | Err(StoreError::NotFound { .. }) => {
            return Ok(Some(format!(
                "session_id: there is no conversation {}",
                session.0
            )));
        }
        Err(e) => return Err(e),
    };
    if s.kind == SessionKind::BotDirect {
        return Ok(Some(
            "session_id: a routine speaks in a conversation the person is in (a direct with \
             them or a group), not a Bot↔Bot direct"
                .into(),
        ));
    }
    if !s.bot_ids.contains(&bot) {
        return Ok(Some(format!(
            "session_id: {} is not a member of \"{}\"",
            b.name, s.title
        )));
    }
    Ok(None)
}

/// A request's fault, worded for the person (a 422) or the Bot (its failed call).
fn invalid(e: String) -> StoreError {
    StoreError::Invalid(e)
}

/// Make a routine and open its standing job, in the caller's transaction. A name the Bot has
/// is a `Conflict` (`routine_taken` at the edge), any other fault `Invalid`; both are found
/// before the job's folder is made.
pub(crate) fn create_in(
    tx: &mut Tx<'_>,
    workspaces: &Path,
    req: &NewRoutineRequest,
    created_by: &'static str,
    cause: RevisionCause,
) -> Result<Routine, StoreError> {
    let (bot, session) = (BotId(req.bot_id), SessionId(req.session_id));
    if let Some(fault) = place_fault(tx, bot, session)? {
        return Err(invalid(fault));
    }
    let name = routine::name(&req.name).map_err(invalid)?;
    let instruction = routine::instruction(&req.instruction).map_err(invalid)?;
    let now = tx.now();
    let schedule = routine::schedule(&req.schedule, now).map_err(invalid)?;
    if let Some(taken) = tx.routine_by_name(bot, &name)? {
        return Err(StoreError::Conflict(format!(
            "this Bot already has a routine \"{}\"; change that one instead",
            taken.name
        )));
    }
    routine::room_for_one_more(tx.routine_count(bot)?).map_err(invalid)?;
    let plan = make_plan(
        tx,
        workspaces,
        &OpenPlan {
            home_session_id: session,
            opening_line_id: None,
            title: Some(name.clone()),
            cause,
        },
    )?;
    let record = tx.plan(plan)?;
    tx.patch_plan(
        plan,
        record.version,
        &SpecPatch {
            kind: Some("routine".into()),
            goal: Some(instruction.clone()),
            ..SpecPatch::default()
        },
        cause,
    )?;
    tx.create_routine(&NewRoutine {
        bot_id: bot,
        session_id: session,
        plan_id: plan,
        name,
        instruction,
        schedule: schedule.to_value(),
        next_due_at: schedule.first_due(now),
        created_by,
    })
}

/// Change a routine in the caller's transaction (see [`RoutinePatchRequest`]). The store
/// checks the name and the instruction, and refuses a name the Bot has (`Conflict`).
pub(crate) fn patch_in(
    tx: &mut Tx<'_>,
    id: i64,
    req: &RoutinePatchRequest,
) -> Result<Routine, StoreError> {
    let cur = tx.routine(id)?;
    let now = tx.now();
    let status = req
        .status
        .as_deref()
        .map(|s| RoutineStatus::parse(s.trim()))
        .transpose()
        .map_err(invalid)?;
    let schedule = req
        .schedule
        .as_ref()
        .map(|v| routine::schedule(v, now))
        .transpose()
        .map_err(invalid)?;
    let mut edit = RoutineEdit {
        name: req.name.clone(),
        instruction: req.instruction.clone(),
        schedule: schedule.as_ref().map(|s| (s.to_value(), s.first_due(now))),
        ..RoutineEdit::default()
    };
    match status {
        Some(RoutineStatus::Paused) if cur.status == RoutineStatus::Active => {
            edit.status = Some(RoutineStatus::Paused);
            edit.owed_due_at = Some(None);
        }
        Some(RoutineStatus::Active) if cur.status == RoutineStatus::Paused => {
            edit.status = Some(RoutineStatus::Active);
            // The times it was paused over are not run late: the next one counts from now.
            if schedule.is_none()
                && let Ok(s) = Trigger::parse(&cur.schedule)
            {
                edit.next_due_at = Some(s.first_due(now));
            }
        }
        _ => {}
    }
    let r = tx.edit_routine(id, &edit)?;
    tx.routine_event(&r, "changed")?;
    Ok(r)
}

/// Delete a routine; its standing job closes (done) and keeps its tickets.
pub(crate) fn delete_in(
    tx: &mut Tx<'_>,
    id: i64,
    cause: RevisionCause,
) -> Result<Routine, StoreError> {
    let r = tx.delete_routine(id)?;
    let plan = tx.plan(r.plan_id)?;
    if plan.status == PlanStatus::Active {
        tx.patch_plan(
            plan.id,
            plan.version,
            &SpecPatch {
                status: Some(PlanStatus::Done),
                ..SpecPatch::default()
            },
            cause,
        )?;
    }
    Ok(r)
}

impl Collab {
    /// Routines, by Bot and name; only a Bot's or a conversation's when given.
    pub fn routines(
        &self,
        bot: Option<BotId>,
        session: Option<SessionId>,
    ) -> Result<Vec<RoutineView>, CollabError> {
        Ok(self.store().read(|tx| {
            if let Some(b) = bot {
                tx.bot(b)?;
            }
            if let Some(s) = session {
                tx.session(s)?;
            }
            tx.routines(bot, session)?
                .into_iter()
                .map(|r| view(tx, r))
                .collect()
        })?)
    }

    pub fn routine(&self, id: i64) -> Result<RoutineView, CollabError> {
        Ok(self.store().read(|tx| view(tx, tx.routine(id)?))?)
    }

    /// The person makes a routine: its standing job opens in the conversation.
    pub fn create_routine(&self, req: NewRoutineRequest) -> Result<RoutineView, CollabError> {
        let workspaces = self.workspaces.clone();
        self.store()
            .write(|tx| {
                let r = create_in(tx, &workspaces, &req, "user", RevisionCause::User)?;
                view(tx, r)
            })
            .map_err(|e| coded(e, "routine_taken"))
    }

    pub fn patch_routine(
        &self,
        id: i64,
        req: RoutinePatchRequest,
    ) -> Result<RoutineView, CollabError> {
        self.store()
            .write(|tx| {
                let r = patch_in(tx, id, &req)?;
                view(tx, r)
            })
            .map_err(|e| coded(e, "routine_taken"))
    }

    /// Delete a routine: no more runs; its standing job closes with its tickets kept.
    pub fn delete_routine(&self, id: i64) -> Result<Routine, CollabError> {
        Ok(self
            .store()
            .write(|tx| delete_in(tx, id, RevisionCause::User))?)
    }
}
