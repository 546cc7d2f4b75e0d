//! Quality events (digest 003-B §9): a work-log record that something went wrong, classified
//! by its type alone — no model is asked whose fault it was (QE2). Each cause writes one in
//! the transaction that records it, with `Tx::quality_event`; the Bot, model, job and ticket
//! come from the turn when the caller does not name them. `orchestration` (a stall, a crash,
//! a broken stop) is listed only to maintainers and is nobody's quality (QE4). The report is in
//! `quality_report.rs`.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::{Value, json};
use troupe_core::quality::ReplyShape;
pub use troupe_core::quality::{QualityType, cause};
use troupe_core::{BotId, PlanId, RunId, TicketId};

const MARKED_CAUSE: &str = cause::MARKED;

/// A quality event to write. Unnamed refs are read from the turn (`run_id`).
#[derive(Clone, Debug)]
pub struct NewQualityEvent {
    pub kind: QualityType,
    pub cause: String,
    pub bot_id: Option<BotId>,
    pub model: Option<String>,
    pub plan_id: Option<PlanId>,
    pub ticket_id: Option<TicketId>,
    pub run_id: Option<RunId>,
    /// The record the cause wrote: (`review`, id), (`submission`, id), (`line`, id), …
    pub source: Option<(&'static str, i64)>,
    pub detail: Value,
}

impl NewQualityEvent {
    pub fn new(kind: QualityType, cause: &str) -> Self {
        NewQualityEvent {
            kind,
            cause: cause.to_string(),
            bot_id: None,
            model: None,
            plan_id: None,
            ticket_id: None,
            run_id: None,
            source: None,
            detail: json!({}),
        }
    }
    pub fn run(mut self, run: Option<RunId>) -> Self {
        self.run_id = run;
        self
    }
    pub fn bot(mut self, bot: Option<BotId>) -> Self {
        self.bot_id = bot;
        self
    }
    pub fn model(mut self, model: Option<String>) -> Self {
        self.model = model;
        self
    }
    pub fn plan(mut self, plan: PlanId) -> Self {
        self.plan_id = Some(plan);
        self
    }
    pub fn ticket(mut self, ticket: TicketId) -> Self {
        self.ticket_id = Some(ticket);
        self
    }
    pub fn source(mut self, kind: &'static str, id: i64) -> Self {
        self.source = Some((kind, id));
        self
    }
    pub fn detail(mut self, detail: Value) -> Self {
        self.detail = detail;
        self
    }
}

/// A `quality_events` row.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QualityEventRecord {
    pub id: i64,
    #[serde(rename = "type")]
    pub kind: QualityType,
    pub cause: String,
    pub bot_id: Option<BotId>,
    pub model: Option<String>,
    /// The job (`/v1/tasks/:id`).
    pub task_id: Option<PlanId>,
    pub ticket_id: Option<TicketId>,
    /// The turn.
    pub turn_id: Option<RunId>,
    /// What recorded the cause (`review`, `submission`, `line`, `check`, `run`, `lesson`);
    /// none once a cleared conversation's line was its source.
    pub source_kind: Option<String>,
    pub source_id: Option<i64>,
    pub at: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub detail: Value,
}

/// Which events to list, newest first.
#[derive(Clone, Debug, Default)]
pub struct QualityFilter {
    pub bot_id: Option<BotId>,
    pub kind: Option<QualityType>,
    /// Only events at or after this time (ms).
    pub since: i64,
    /// Maintainers also see `orchestration` events.
    pub maintainer: bool,
    pub limit: u32,
}

const COLUMNS: &str = "id, type, cause, bot_id, model, plan_id, ticket_id, run_id, source_kind, \
    source_id, at, detail";

fn from_row(r: &crate::Row) -> Result<QualityEventRecord> {
    let kind: String = r.get(1)?;
    let detail: String = r.get(11)?;
    Ok(QualityEventRecord {
        id: r.get(0)?,
        kind: QualityType::parse(&kind)
            .map_err(|e| StoreError::Corrupt(format!("quality event: {e}")))?,
        cause: r.get(2)?,
        bot_id: r.get::<Option<i64>>(3)?.map(BotId),
        model: r.get(4)?,
        task_id: r.get::<Option<i64>>(5)?.map(PlanId),
        ticket_id: r.get::<Option<i64>>(6)?.map(TicketId),
        turn_id: r.get::<Option<i64>>(7)?.map(RunId),
        source_kind: r.get(8)?,
        source_id: r.get(9)?,
        at: r.get(10)?,
        detail: serde_json::from_str(&detail).unwrap_or(Value::Null),
    })
}

/// What a turn says about itself: its Bot, the model its last call used, its job and ticket.
struct TurnRefs {
    bot: Option<i64>,
    model: Option<String>,
    plan: Option<i64>,
    ticket: Option<i64>,
    thread: Option<i64>,
}

impl Tx<'_> {
    fn turn_refs(&self, run: RunId) -> Result<TurnRefs> {
        let found = self.query_opt(
            "SELECT COALESCE(s.bot_id, w.bot_id, st.bot_id), w.plan_id, w.ticket_id, r.thread_id,
                    (SELECT m.model FROM model_calls m WHERE m.run_id = r.id
                     ORDER BY m.id DESC LIMIT 1)
             FROM runs r
             LEFT JOIN segments s ON s.run_id = r.id
             LEFT JOIN work_items w ON w.id = s.work_item_id
             LEFT JOIN session_threads st ON st.thread_id = r.thread_id
             WHERE r.id = ?1",
            args![run.0],
            |r| {
                Ok(TurnRefs {
                    bot: r.get(0)?,
                    plan: r.get(1)?,
                    ticket: r.get(2)?,
                    thread: r.get(3)?,
                    model: r.get(4)?,
                })
            },
        )?;
        found.ok_or_else(|| StoreError::not_found("turn", run))
    }

    /// Write a quality event in the caller's transaction, filling the Bot, model, job and
    /// ticket from the turn where not given, and append `quality_event` (not for
    /// `orchestration`, which only maintainers see). None when the event exists already (a
    /// turn's mark, a review miss: one each).
    pub fn quality_event(&mut self, e: NewQualityEvent) -> Result<Option<QualityEventRecord>> {
        if e.cause.trim().is_empty() {
            return Err(StoreError::Invalid("cause: must not be empty".into()));
        }
        let refs = match e.run_id {
            Some(run) => Some(self.turn_refs(run)?),
            None => None,
        };
        let from_turn = |f: fn(&TurnRefs) -> Option<i64>| refs.as_ref().and_then(f);
        let bot = e.bot_id.map(|b| b.0).or_else(|| from_turn(|t| t.bot));
        let model = e
            .model
            .clone()
            .or_else(|| refs.as_ref().and_then(|t| t.model.clone()));
        let plan = e.plan_id.map(|p| p.0).or_else(|| from_turn(|t| t.plan));
        let ticket = e.ticket_id.map(|t| t.0).or_else(|| from_turn(|t| t.ticket));
        let (source_kind, source_id) = match e.source {
            Some((k, id)) => (Some(k), Some(id)),
            None => (None, None),
        };
        let id: Option<i64> = self.query_opt(
            "INSERT INTO quality_events (type, cause, bot_id, model, plan_id, ticket_id, run_id,
                 source_kind, source_id, at, detail)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT DO NOTHING RETURNING id",
            args![
                e.kind.as_str(),
                e.cause.trim(),
                bot,
                model,
                plan,
                ticket,
                e.run_id.map(|r| r.0),
                source_kind,
                source_id,
                self.now,
                e.detail.to_string()
            ],
            |r| r.get(0),
        )?;
        let Some(id) = id else {
            return Ok(None);
        };
        let rec = self.quality_event_by_id(id)?;
        if rec.kind != QualityType::Orchestration {
            let thread = from_turn(|t| t.thread).map(troupe_core::ThreadId);
            self.event("quality_event", thread, rec.turn_id, json!(rec))?;
        }
        Ok(Some(rec))
    }

    pub fn quality_event_by_id(&self, id: i64) -> Result<QualityEventRecord> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM quality_events WHERE id = ?1"),
            args![id],
            from_row,
        )?
        .ok_or_else(|| StoreError::not_found("quality event", id))
    }

    /// The events a record caused (e.g. a line's complaint), oldest first.
    pub fn quality_events_of_source(&self, kind: &str, id: i64) -> Result<Vec<QualityEventRecord>> {
        self.query_all(
            &format!(
                "SELECT {COLUMNS} FROM quality_events WHERE source_kind = ?1 AND source_id = ?2
                 ORDER BY id"
            ),
            args![kind, id],
            from_row,
        )
    }

    /// Events by the filter, newest first.
    pub fn quality_events(&self, f: &QualityFilter) -> Result<Vec<QualityEventRecord>> {
        self.query_all(
            &format!(
                "SELECT {COLUMNS} FROM quality_events
                 WHERE at >= ?1
                   AND (CAST(?2 AS BIGINT) IS NULL OR bot_id = ?2)
                   AND (CAST(?3 AS TEXT) IS NULL OR type = ?3)
                   AND (CAST(?4 AS BIGINT) = 1 OR type <> 'orchestration')
                 ORDER BY at DESC, id DESC LIMIT ?5"
            ),
            args![
                f.since,
                f.bot_id.map(|b| b.0),
                f.kind.map(|k| k.as_str()),
                i64::from(f.maintainer),
                i64::from(f.limit.max(1))
            ],
            from_row,
        )
    }

    /// The user's "the model's problem" toggle on a turn (QE3): marking writes a `model`
    /// event (cause `marked`), unmarking removes it. Answers whether the turn is marked now.
    pub fn set_model_problem(&mut self, run: RunId, marked: bool) -> Result<bool> {
        self.run(run)?;
        if marked {
            self.quality_event(
                NewQualityEvent::new(QualityType::Model, MARKED_CAUSE)
                    .run(Some(run))
                    .source("run", run.0),
            )?;
        } else {
            let n = self.exec(
                "DELETE FROM quality_events WHERE run_id = ?1 AND cause = ?2",
                args![run.0, MARKED_CAUSE],
            )?;
            if n > 0 {
                self.event(
                    "quality_event_removed",
                    None,
                    Some(run),
                    json!({"turn_id": run, "cause": MARKED_CAUSE}),
                )?;
            }
        }
        self.model_problem(run)
    }

    /// The Bot whose turn this is (its segment's, or its conversation thread's); none for an
    /// app step or a thread no Bot owns.
    pub fn bot_of_turn(&self, run: RunId) -> Result<Option<BotId>> {
        Ok(self.turn_refs(run)?.bot.map(BotId))
    }

    /// How the turn's replies came back, from its model calls (indexed by run): whether the
    /// provider said the model declined one, and whether one was cut off at the length cap.
    pub fn run_reply_shape(&self, run: RunId) -> Result<ReplyShape> {
        self.query_one(
            "SELECT COALESCE(SUM(CASE WHEN finish = 'refusal' THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN finish = 'length' THEN 1 ELSE 0 END), 0)
             FROM model_calls WHERE run_id = ?1",
            args![run.0],
            |r| {
                Ok(match (r.get::<i64>(0)? > 0, r.get::<i64>(1)? > 0) {
                    (true, _) => ReplyShape::Declined,
                    (false, true) => ReplyShape::CutOff,
                    (false, false) => ReplyShape::Whole,
                })
            },
        )
    }

    /// Whether the user marked the turn as the model's problem.
    pub fn model_problem(&self, run: RunId) -> Result<bool> {
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM quality_events WHERE run_id = ?1 AND cause = ?2",
            args![run.0, MARKED_CAUSE],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }
}
