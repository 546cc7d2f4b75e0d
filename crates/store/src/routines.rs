//! Routines (seed 003): a Bot's work on a schedule in one conversation, each due time a ticket
//! of its standing job. The store keeps the routine, its next and owed due times, and one
//! `routine_runs` row per run — written once per routine and due time, whatever repeats.

use crate::bot_skills::{invalid, same_name};
use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::{Value, json};
use troupe_core::{BotId, PlanId, SessionId, TicketId, routine};

/// Whether a routine runs.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoutineStatus {
    Active,
    Paused,
}

impl RoutineStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RoutineStatus::Active => "active",
            RoutineStatus::Paused => "paused",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<RoutineStatus, String> {
        match s {
            "active" => Ok(RoutineStatus::Active),
            "paused" => Ok(RoutineStatus::Paused),
            other => Err(format!("status: '{other}' is not active or paused")),
        }
    }
}

/// One routine.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Routine {
    pub id: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub bot_id: BotId,
    /// The conversation its runs speak in.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// Its standing job: each run is a ticket there.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub plan_id: PlanId,
    pub name: String,
    /// What each run does.
    pub instruction: String,
    /// `{"kind":"every","seconds":N}` or `{"kind":"cron","expr":…,"tz":…}`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub schedule: Value,
    pub status: RoutineStatus,
    /// The next scheduled run (ms since the epoch).
    pub next_due_at: Option<i64>,
    /// A due time a hold kept from running: it runs once the hold lifts.
    pub owed_due_at: Option<i64>,
    pub last_run_at: Option<i64>,
    /// Runs so far (each a ticket of the standing job).
    pub runs: i64,
    /// `user` or `bot`.
    pub created_by: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One run: the due time it was for and its ticket.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoutineRun {
    pub due_at: i64,
    /// None once its ticket is gone (its job was cleared away).
    pub ticket_id: Option<i64>,
    pub ran_at: i64,
}

/// A routine to add: its fields already checked by `troupe_core::routine`, its standing job
/// already opened.
#[derive(Clone, Debug)]
pub struct NewRoutine {
    pub bot_id: BotId,
    pub session_id: SessionId,
    pub plan_id: PlanId,
    pub name: String,
    pub instruction: String,
    pub schedule: Value,
    pub next_due_at: Option<i64>,
    /// `user` or `bot`.
    pub created_by: &'static str,
}

/// A change to a routine; absent fields stay.
#[derive(Clone, Debug, Default)]
pub struct RoutineEdit {
    pub name: Option<String>,
    pub instruction: Option<String>,
    /// A new schedule and its first due time.
    pub schedule: Option<(Value, Option<i64>)>,
    pub status: Option<RoutineStatus>,
    pub next_due_at: Option<Option<i64>>,
    pub owed_due_at: Option<Option<i64>>,
    pub last_run_at: Option<i64>,
}

const SELECT: &str = "SELECT r.id, r.bot_id, r.session_id, r.plan_id, r.name, r.instruction, \
    r.schedule, r.status, r.next_due_at, r.owed_due_at, r.last_run_at, \
    (SELECT count(*) FROM routine_runs rr WHERE rr.routine_id = r.id), \
    r.created_by, r.created_at, r.updated_at FROM routines r";

fn row(r: &crate::db::Row) -> Result<Routine> {
    let schedule: String = r.get(6)?;
    let status: String = r.get(7)?;
    Ok(Routine {
        id: r.get(0)?,
        bot_id: BotId(r.get(1)?),
        session_id: SessionId(r.get(2)?),
        plan_id: PlanId(r.get(3)?),
        name: r.get(4)?,
        instruction: r.get(5)?,
        schedule: serde_json::from_str(&schedule)
            .map_err(|e| StoreError::Corrupt(format!("routine schedule: {e}")))?,
        status: RoutineStatus::parse(&status).map_err(StoreError::Corrupt)?,
        next_due_at: r.get(8)?,
        owed_due_at: r.get(9)?,
        last_run_at: r.get(10)?,
        runs: r.get(11)?,
        created_by: r.get(12)?,
        created_at: r.get(13)?,
        updated_at: r.get(14)?,
    })
}

impl Tx<'_> {
    /// Add a routine (at most 20 a Bot, one per name compared without case).
    pub fn create_routine(&mut self, n: &NewRoutine) -> Result<Routine> {
        let name = routine::name(&n.name).map_err(invalid)?;
        let instruction = routine::instruction(&n.instruction).map_err(invalid)?;
        if self.routine_by_name(n.bot_id, &name)?.is_some() {
            return Err(StoreError::Conflict(format!(
                "this Bot already has a routine \"{name}\""
            )));
        }
        routine::room_for_one_more(self.routine_count(n.bot_id)?).map_err(invalid)?;
        let id = self.insert(
            "INSERT INTO routines (bot_id, session_id, plan_id, name, instruction, schedule,
                 status, next_due_at, created_by, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'active', ?7, ?8, ?9, ?9)",
            args![
                n.bot_id.0,
                n.session_id.0,
                n.plan_id.0,
                name,
                instruction,
                n.schedule.to_string(),
                n.next_due_at,
                n.created_by,
                self.now
            ],
        )?;
        let r = self.routine(id)?;
        self.routine_event(&r, "added")?;
        Ok(r)
    }

    /// How many routines the Bot has.
    pub fn routine_count(&self, bot: BotId) -> Result<usize> {
        self.query_one(
            "SELECT count(*) FROM routines WHERE bot_id = ?1",
            args![bot.0],
            |r| Ok(r.get::<i64>(0)? as usize),
        )
    }

    pub fn routine(&self, id: i64) -> Result<Routine> {
        self.query_opt(&format!("{SELECT} WHERE r.id = ?1"), args![id], row)?
            .ok_or_else(|| StoreError::not_found("routine", id))
    }

    /// Read under a row lock where the backend has them, so two nodes' ticks take turns.
    pub fn claim_routine(&self, id: i64) -> Result<Routine> {
        if self.locks_rows() {
            self.query_opt(
                "SELECT id FROM routines WHERE id = ?1 FOR NO KEY UPDATE",
                args![id],
                |r| r.get::<i64>(0),
            )?;
        }
        self.routine(id)
    }

    /// The Bot's routine with this name, compared without case (in Rust, as skills are).
    pub fn routine_by_name(&self, bot: BotId, name: &str) -> Result<Option<Routine>> {
        let names = self.query_all(
            "SELECT id, name FROM routines WHERE bot_id = ?1",
            args![bot.0],
            |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
        )?;
        match same_name(names, name) {
            Some(id) => self.routine(id).map(Some),
            None => Ok(None),
        }
    }

    /// Routines, by Bot and name; only a Bot's or a conversation's when given.
    pub fn routines(&self, bot: Option<BotId>, session: Option<SessionId>) -> Result<Vec<Routine>> {
        self.query_all(
            &format!(
                "{SELECT} WHERE (CAST(?1 AS BIGINT) IS NULL OR r.bot_id = ?1)
                   AND (CAST(?2 AS BIGINT) IS NULL OR r.session_id = ?2)
                 ORDER BY r.bot_id, lower(r.name), r.id"
            ),
            args![bot.map(|b| b.0), session.map(|s| s.0)],
            row,
        )
    }

    /// The routine whose standing job `plan` is.
    pub fn routine_of_plan(&self, plan: PlanId) -> Result<Option<Routine>> {
        self.query_opt(
            &format!("{SELECT} WHERE r.plan_id = ?1"),
            args![plan.0],
            row,
        )
    }

    /// Whether `plan` is a routine's standing job (one indexed look-up).
    pub fn is_routine_plan(&self, plan: PlanId) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT 1 FROM routines WHERE plan_id = ?1",
                args![plan.0],
                |r| r.get::<i64>(0),
            )?
            .is_some())
    }

    /// Active routines a tick must look at: due by `now`, or owing a run a hold kept back.
    pub fn due_routines(&self, now: i64, limit: u32) -> Result<Vec<i64>> {
        self.query_all(
            "SELECT id FROM routines WHERE status = 'active'
               AND (next_due_at <= ?1 OR owed_due_at IS NOT NULL)
             ORDER BY COALESCE(owed_due_at, next_due_at), id LIMIT ?2",
            args![now, limit as i64],
            |r| r.get::<i64>(0),
        )
    }

    pub fn edit_routine(&mut self, id: i64, e: &RoutineEdit) -> Result<Routine> {
        let cur = self.routine(id)?;
        let name = match &e.name {
            Some(n) => routine::name(n).map_err(invalid)?,
            None => cur.name.clone(),
        };
        if name.to_lowercase() != cur.name.to_lowercase()
            && self.routine_by_name(cur.bot_id, &name)?.is_some()
        {
            return Err(StoreError::Conflict(format!(
                "this Bot already has a routine \"{name}\""
            )));
        }
        let instruction = match &e.instruction {
            Some(i) => routine::instruction(i).map_err(invalid)?,
            None => cur.instruction.clone(),
        };
        let (schedule, mut next) = match &e.schedule {
            Some((s, first)) => (s.clone(), *first),
            None => (cur.schedule.clone(), cur.next_due_at),
        };
        if let Some(n) = e.next_due_at {
            next = n;
        }
        let status = e.status.unwrap_or(cur.status);
        let owed = e.owed_due_at.unwrap_or(cur.owed_due_at);
        self.exec(
            "UPDATE routines SET name = ?2, instruction = ?3, schedule = ?4, status = ?5,
                 next_due_at = ?6, owed_due_at = ?7, last_run_at = ?8, updated_at = ?9
             WHERE id = ?1",
            args![
                id,
                name,
                instruction,
                schedule.to_string(),
                status.as_str(),
                next,
                owed,
                e.last_run_at.or(cur.last_run_at),
                self.now
            ],
        )?;
        self.routine(id)
    }

    /// Remove a routine and its run records (its standing job and tickets stay, closed by
    /// the caller).
    pub fn delete_routine(&mut self, id: i64) -> Result<Routine> {
        let r = self.routine(id)?;
        self.exec("DELETE FROM routine_runs WHERE routine_id = ?1", args![id])?;
        self.exec("DELETE FROM routines WHERE id = ?1", args![id])?;
        self.routine_event(&r, "deleted")?;
        Ok(r)
    }

    /// Record the run for `due`; false when that due time has run already.
    pub fn record_routine_run(&mut self, id: i64, due: i64) -> Result<bool> {
        let done = self
            .query_opt(
                "SELECT 1 FROM routine_runs WHERE routine_id = ?1 AND due_at = ?2",
                args![id, due],
                |r| r.get::<i64>(0),
            )?
            .is_some();
        if done {
            return Ok(false);
        }
        self.exec(
            "INSERT INTO routine_runs (routine_id, due_at, ran_at) VALUES (?1, ?2, ?3)",
            args![id, due, self.now],
        )?;
        Ok(true)
    }

    pub fn set_routine_run_ticket(&mut self, id: i64, due: i64, ticket: TicketId) -> Result<()> {
        self.exec(
            "UPDATE routine_runs SET ticket_id = ?3 WHERE routine_id = ?1 AND due_at = ?2",
            args![id, due, ticket.0],
        )?;
        Ok(())
    }

    /// A routine's runs, newest first.
    pub fn routine_runs(&self, id: i64, limit: u32) -> Result<Vec<RoutineRun>> {
        self.query_all(
            "SELECT due_at, ticket_id, ran_at FROM routine_runs WHERE routine_id = ?1
             ORDER BY due_at DESC LIMIT ?2",
            args![id, limit as i64],
            |r| {
                Ok(RoutineRun {
                    due_at: r.get(0)?,
                    ticket_id: r.get(1)?,
                    ran_at: r.get(2)?,
                })
            },
        )
    }

    /// `routine_changed` on the global stream and in the routine's conversation, so the page
    /// keeps its list true.
    pub fn routine_event(&mut self, r: &Routine, change: &str) -> Result<()> {
        let payload = json!({
            "routine_id": r.id, "bot_id": r.bot_id.0, "session_id": r.session_id.0,
            "plan_id": r.plan_id.0, "change": change,
        });
        self.event("routine_changed", None, None, payload.clone())?;
        self.session_event("routine_changed", r.session_id, None, payload)
    }
}
