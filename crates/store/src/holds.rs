//! Holds (digest A §14): a person's stop kept as a row with the targets it gained at creation,
//! and what it covers. The database keeps the rules (migration 0019): a live turn a hold in
//! force covers is refused (`held`, [`StoreError::Held`]) unless it is read-only; a hold is
//! never deleted; its scope, source, creation time and targets never change; lifted is for
//! good. Which holds are made, what they stop and what a lift reopens are the conversation
//! layer's (`troupe_core::hold` holds the rules).

use crate::db::ToValue;
use crate::{Dialect, Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use std::collections::HashMap;
use troupe_core::WorkItemId;
use troupe_core::hold::{
    Hold, HoldEffect, HoldScope, HoldSource, HoldStatus, HoldTarget, LiftedBy, TurnFacts,
};
use troupe_core::{BotId, HoldId, PlanId, RunId, SessionId, SessionMessageId, ThreadId, TicketId};

/// Names the hold lock to `pg_advisory_xact_lock` (the number is written into migration 0019
/// too): a hold is made under its exclusive side, and the `segments_held` trigger checks each
/// turn under its shared side, so a hold and a turn written at once on two connections cannot
/// miss each other. SQLite has one writer, which orders them already.
pub(crate) const HOLDS_LOCK: i64 = 0x7472_6f75_7065_0002;

/// A hold to make: its scope, the targets fixed now, and who made it.
#[derive(Clone, Debug)]
pub struct NewHold {
    pub scope: HoldScope,
    pub targets: Vec<HoldTarget>,
    pub source: HoldSource,
    pub source_message_id: Option<SessionMessageId>,
    /// The conversation whose menu or composer made it.
    pub session_id: Option<SessionId>,
    pub lift_on_next_user_message: bool,
    pub cancel: bool,
    pub composer_stop: bool,
    pub effect: HoldEffect,
}

/// A live turn a hold covers: its run is running and its segment is not read-only.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoveredTurn {
    pub run_id: RunId,
    pub thread_id: ThreadId,
    pub bot_id: BotId,
    /// The conversation it speaks in.
    pub session_id: SessionId,
    pub plan_id: Option<PlanId>,
    pub work_item_id: Option<WorkItemId>,
    /// desk, work, or none (a segment from before work items).
    pub mode: Option<String>,
}

/// What a row `c` of `held_cover` covers, given the turn's facts as SQL expressions: its Bot
/// `b`, the conversation `s` it speaks in, its thread `x`, its job `p` and that job's home `h`,
/// its ticket `t`. The same predicate as the view's comment and the triggers of 0019.
fn covers(b: &str, s: &str, x: &str, p: &str, h: &str, t: &str) -> String {
    format!(
        "(c.kind = 'everything'
          OR (c.kind = 'bot' AND c.bot_id = {b})
          OR (c.kind = 'session' AND (c.session_id = {s} OR c.session_id = {h}))
          OR (c.kind = 'plan' AND c.plan_id = {p})
          OR (c.kind = 'ticket' AND c.ticket_id = {t})
          OR (c.kind = 'bot_plan' AND c.bot_id = {b} AND c.plan_id = {p})
          OR (c.kind = 'turn' AND c.thread_id = {x})
          OR (c.kind = 'direct' AND c.session_id = {s}))"
    )
}

/// A segment with what coverage is judged on: its run `r`, work item `w` and that item's job
/// `p`. A segment's thread is its work item's, or its run's when it has none.
const TURNS: &str = "segments s JOIN runs r ON r.id = s.run_id
    LEFT JOIN work_items w ON w.id = s.work_item_id
    LEFT JOIN plans p ON p.id = w.plan_id";
const TURN_THREAD: &str = "COALESCE(w.thread_id, r.thread_id)";

const COLUMNS: &str = "id, created_at, status, lifted_at, lifted_by, lift_message_id, \
    scope_kind, bot_id, session_id, plan_id, ticket_id, run_id, thread_id, turn_session_id, \
    source, source_message_id, menu_session_id, lift_on_next_user_message, cancel, \
    composer_stop, effect";

/// A scope as its columns: kind, bot, session, plan, ticket, run, thread, turn session.
struct ScopeRow {
    kind: &'static str,
    bot: Option<i64>,
    session: Option<i64>,
    plan: Option<i64>,
    ticket: Option<i64>,
    run: Option<i64>,
    thread: Option<i64>,
    turn_session: Option<i64>,
}

impl ScopeRow {
    fn of(scope: &HoldScope) -> ScopeRow {
        let mut row = ScopeRow {
            kind: scope.kind(),
            bot: None,
            session: None,
            plan: None,
            ticket: None,
            run: None,
            thread: None,
            turn_session: None,
        };
        match scope {
            HoldScope::Everything => {}
            HoldScope::Bot { bot_id } => row.bot = Some(bot_id.0),
            HoldScope::Session { session_id } => row.session = Some(session_id.0),
            HoldScope::Plan { plan_id } => row.plan = Some(plan_id.0),
            HoldScope::Ticket { ticket_id } => row.ticket = Some(ticket_id.0),
            HoldScope::BotPlan { bot_id, plan_id } => {
                row.bot = Some(bot_id.0);
                row.plan = Some(plan_id.0);
            }
            HoldScope::Turn {
                run_id,
                thread_id,
                bot_id,
                session_id,
                plan_id,
            } => {
                row.run = Some(run_id.0);
                row.thread = Some(thread_id.0);
                row.bot = Some(bot_id.0);
                row.turn_session = Some(session_id.0);
                row.plan = plan_id.map(|p| p.0);
            }
        }
        row
    }
}

/// Ids per `IN (...)` list, well under either backend's limit on parameters.
const IN_LIST_MAX: usize = 500;

/// `?1, ?2, …, ?n`.
fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

/// A ref the row's kind must have.
fn need(v: Option<i64>, kind: &str, column: &str) -> Result<i64> {
    v.ok_or_else(|| corrupt("hold", format!("a {kind} hold without its {column}")))
}

fn from_row(r: &crate::Row) -> Result<Hold> {
    let kind: String = r.get(6)?;
    let bot: Option<i64> = r.get(7)?;
    let session: Option<i64> = r.get(8)?;
    let plan: Option<i64> = r.get(9)?;
    let ticket: Option<i64> = r.get(10)?;
    let k = kind.as_str();
    let scope = match k {
        "everything" => HoldScope::Everything,
        "bot" => HoldScope::Bot {
            bot_id: BotId(need(bot, k, "bot_id")?),
        },
        "session" => HoldScope::Session {
            session_id: SessionId(need(session, k, "session_id")?),
        },
        "plan" => HoldScope::Plan {
            plan_id: PlanId(need(plan, k, "plan_id")?),
        },
        "ticket" => HoldScope::Ticket {
            ticket_id: TicketId(need(ticket, k, "ticket_id")?),
        },
        "bot_plan" => HoldScope::BotPlan {
            bot_id: BotId(need(bot, k, "bot_id")?),
            plan_id: PlanId(need(plan, k, "plan_id")?),
        },
        "turn" => HoldScope::Turn {
            run_id: RunId(need(r.get(11)?, k, "run_id")?),
            thread_id: ThreadId(need(r.get(12)?, k, "thread_id")?),
            bot_id: BotId(need(bot, k, "bot_id")?),
            session_id: SessionId(need(r.get(13)?, k, "turn_session_id")?),
            plan_id: plan.map(PlanId),
        },
        other => return Err(corrupt("hold scope", format!("unknown kind '{other}'"))),
    };
    let effect: String = r.get(20)?;
    Ok(Hold {
        id: HoldId(r.get(0)?),
        created_at: r.get(1)?,
        status: HoldStatus::parse(&r.get::<String>(2)?).map_err(|e| corrupt("hold", e))?,
        lifted_at: r.get(3)?,
        lifted_by: r
            .get::<Option<String>>(4)?
            .map(|b| LiftedBy::parse(&b).map_err(|e| corrupt("hold", e)))
            .transpose()?,
        lift_message_id: r.get::<Option<i64>>(5)?.map(SessionMessageId),
        scope,
        targets: Vec::new(),
        source: HoldSource::parse(&r.get::<String>(14)?).map_err(|e| corrupt("hold", e))?,
        source_message_id: r.get::<Option<i64>>(15)?.map(SessionMessageId),
        session_id: r.get::<Option<i64>>(16)?.map(SessionId),
        lift_on_next_user_message: r.get(17)?,
        cancel: r.get(18)?,
        composer_stop: r.get(19)?,
        effect: serde_json::from_str(&effect).map_err(|e| corrupt("hold effect", e))?,
    })
}

/// A `hold_targets` row read as `hold_id, kind, run_id, thread_id, bot_id, plan_id,
/// session_id`.
fn target_from_row(r: &crate::Row) -> Result<(HoldId, HoldTarget)> {
    let kind: String = r.get(1)?;
    let k = kind.as_str();
    let target = match k {
        "turn" => HoldTarget::Turn {
            run_id: RunId(need(r.get(2)?, k, "run_id")?),
            thread_id: ThreadId(need(r.get(3)?, k, "thread_id")?),
            bot_id: BotId(need(r.get(4)?, k, "bot_id")?),
        },
        "bot_plan" => HoldTarget::BotPlan {
            bot_id: BotId(need(r.get(4)?, k, "bot_id")?),
            plan_id: PlanId(need(r.get(5)?, k, "plan_id")?),
        },
        "direct" => HoldTarget::Direct {
            session_id: SessionId(need(r.get(6)?, k, "session_id")?),
        },
        other => return Err(corrupt("hold target", format!("unknown kind '{other}'"))),
    };
    Ok((HoldId(r.get(0)?), target))
}

impl Tx<'_> {
    /// Make a hold, in force, with its targets, in one go. On PostgreSQL it first takes the
    /// hold lock's exclusive side (held to commit): a turn another connection is writing now
    /// is either committed before this reads the turns it covers, or checked after this hold
    /// commits. Best called first in its write, before rows other writers may wait on.
    pub fn insert_hold(&mut self, h: &NewHold) -> Result<Hold> {
        if self.dialect() == Dialect::Postgres {
            self.exec(
                &format!("SELECT pg_advisory_xact_lock({HOLDS_LOCK})"),
                args![],
            )?;
        }
        let s = ScopeRow::of(&h.scope);
        let effect = serde_json::to_string(&h.effect).map_err(|e| corrupt("hold effect", e))?;
        let id = self.insert(
            "INSERT INTO holds (created_at, status, scope_kind, bot_id, session_id, plan_id,
                 ticket_id, run_id, thread_id, turn_session_id, source, source_message_id,
                 menu_session_id, lift_on_next_user_message, cancel, composer_stop,
                 target_count, effect)
             VALUES (?1, 'in_force', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,
                 ?15, ?16, ?17)",
            args![
                self.now,
                s.kind,
                s.bot,
                s.session,
                s.plan,
                s.ticket,
                s.run,
                s.thread,
                s.turn_session,
                h.source.as_str(),
                h.source_message_id.map(|m| m.0),
                h.session_id.map(|m| m.0),
                h.lift_on_next_user_message,
                h.cancel,
                h.composer_stop,
                h.targets.len(),
                effect
            ],
        )?;
        for t in &h.targets {
            let (kind, run, thread, bot, plan, session) = match t {
                HoldTarget::Turn {
                    run_id,
                    thread_id,
                    bot_id,
                } => (
                    "turn",
                    Some(run_id.0),
                    Some(thread_id.0),
                    Some(bot_id.0),
                    None,
                    None,
                ),
                HoldTarget::BotPlan { bot_id, plan_id } => (
                    "bot_plan",
                    None,
                    None,
                    Some(bot_id.0),
                    Some(plan_id.0),
                    None,
                ),
                HoldTarget::Direct { session_id } => {
                    ("direct", None, None, None, None, Some(session_id.0))
                }
            };
            self.exec(
                "INSERT INTO hold_targets (hold_id, kind, run_id, thread_id, bot_id, plan_id,
                     session_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                args![id, kind, run, thread, bot, plan, session],
            )?;
        }
        let hold = self.hold(HoldId(id))?;
        self.hold_event(&hold)?;
        Ok(hold)
    }

    pub fn hold(&self, id: HoldId) -> Result<Hold> {
        self.find_hold(id)?
            .ok_or_else(|| StoreError::not_found("hold", id))
    }

    pub fn find_hold(&self, id: HoldId) -> Result<Option<Hold>> {
        let sql = format!("SELECT {COLUMNS} FROM holds WHERE id = ?1");
        let Some(mut hold) = self.query_opt(&sql, args![id.0], from_row)? else {
            return Ok(None);
        };
        hold.targets = self
            .query_all(
                "SELECT hold_id, kind, run_id, thread_id, bot_id, plan_id, session_id
                 FROM hold_targets WHERE hold_id = ?1 ORDER BY id",
                args![id.0],
                target_from_row,
            )?
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        Ok(Some(hold))
    }

    /// Holds newest first: those in force, or every one ever made.
    pub fn holds(&self, include_lifted: bool) -> Result<Vec<Hold>> {
        let filter = if include_lifted {
            ""
        } else {
            "WHERE status = 'in_force'"
        };
        let mut holds = self.query_all(
            &format!("SELECT {COLUMNS} FROM holds {filter} ORDER BY id DESC"),
            args![],
            from_row,
        )?;
        let mut targets: HashMap<HoldId, Vec<HoldTarget>> = HashMap::new();
        let sql = format!(
            "SELECT hold_id, kind, run_id, thread_id, bot_id, plan_id, session_id
             FROM hold_targets WHERE hold_id IN (SELECT id FROM holds {filter})
             ORDER BY hold_id, id"
        );
        for (hold, target) in self.query_all(&sql, args![], target_from_row)? {
            targets.entry(hold).or_default().push(target);
        }
        for hold in &mut holds {
            hold.targets = targets.remove(&hold.id).unwrap_or_default();
        }
        Ok(holds)
    }

    /// The holds in force, newest first.
    pub fn holds_in_force(&self) -> Result<Vec<Hold>> {
        self.holds(false)
    }

    /// The newest hold in force with exactly this scope (its targets aside), if any: a repeat
    /// of a stop in force answers it rather than making another.
    pub fn hold_in_force_with_scope(&self, scope: &HoldScope) -> Result<Option<Hold>> {
        let s = ScopeRow::of(scope);
        // Ids are positive, so 0 stands for "none" on both sides.
        let same = |column: &str, n: usize| {
            format!("COALESCE({column}, 0) = COALESCE(CAST(?{n} AS BIGINT), 0)")
        };
        let sql = format!(
            "SELECT id FROM holds WHERE status = 'in_force' AND scope_kind = ?1
               AND {} AND {} AND {} AND {} AND {} AND {} AND {}
             ORDER BY id DESC LIMIT 1",
            same("bot_id", 2),
            same("session_id", 3),
            same("plan_id", 4),
            same("ticket_id", 5),
            same("run_id", 6),
            same("thread_id", 7),
            same("turn_session_id", 8),
        );
        let id: Option<i64> = self.query_opt(
            &sql,
            args![
                s.kind,
                s.bot,
                s.session,
                s.plan,
                s.ticket,
                s.run,
                s.thread,
                s.turn_session
            ],
            |r| r.get(0),
        )?;
        id.map(|id| self.hold(HoldId(id))).transpose()
    }

    /// Lift a hold in force: `true` with it lifted now, or `false` with it as it was when it
    /// is lifted already (HOLD-3: the first lift stands).
    pub fn lift_hold(
        &mut self,
        id: HoldId,
        by: LiftedBy,
        message: Option<SessionMessageId>,
    ) -> Result<(Hold, bool)> {
        let n = self.exec(
            "UPDATE holds SET status = 'lifted', lifted_at = ?2, lifted_by = ?3,
                 lift_message_id = ?4
             WHERE id = ?1 AND status = 'in_force'",
            args![id.0, self.now, by.as_str(), message.map(|m| m.0)],
        )?;
        let hold = self.hold(id)?;
        if n == 1 {
            self.hold_event(&hold)?;
        }
        Ok((hold, n == 1))
    }

    /// Record what making or lifting the hold did.
    pub fn set_hold_effect(&mut self, id: HoldId, effect: &HoldEffect) -> Result<Hold> {
        let text = serde_json::to_string(effect).map_err(|e| corrupt("hold effect", e))?;
        let n = self.exec(
            "UPDATE holds SET effect = ?2 WHERE id = ?1",
            args![id.0, text],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("hold", id));
        }
        let hold = self.hold(id)?;
        self.hold_event(&hold)?;
        Ok(hold)
    }

    /// The holds in force that cover a turn with these facts, oldest first: the database's
    /// own predicate (`held_cover`), so this names the holds behind a `held` refusal.
    pub fn covering_holds(&self, facts: &TurnFacts) -> Result<Vec<HoldId>> {
        let sql = format!(
            "SELECT DISTINCT c.hold_id FROM held_cover c WHERE {} ORDER BY c.hold_id",
            covers("?1", "?2", "?3", "?4", "?5", "?6")
        );
        let ids = self.query_all(
            &sql,
            args![
                facts.bot_id.0,
                facts.session_id.0,
                facts.thread_id.0,
                facts.plan_id.map(|p| p.0),
                facts.plan_home.map(|s| s.0),
                facts.ticket_id.map(|t| t.0)
            ],
            |r| r.get::<i64>(0),
        )?;
        Ok(ids.into_iter().map(HoldId).collect())
    }

    /// The live turns a hold covers (none once it is lifted), by run: those the database would
    /// refuse to write, the ones making it must stop. Read-only turns are left out.
    pub fn covered_live_turns(&self, hold: HoldId) -> Result<Vec<CoveredTurn>> {
        let sql = format!(
            "SELECT s.run_id, {TURN_THREAD}, s.bot_id, s.session_id, w.plan_id, s.work_item_id,
                    s.mode
             FROM {TURNS}
             WHERE r.status = 'running' AND (s.mode IS NULL OR s.mode <> 'readonly')
               AND EXISTS (SELECT 1 FROM held_cover c WHERE c.hold_id = ?1 AND {})
             ORDER BY s.run_id",
            covers(
                "s.bot_id",
                "s.session_id",
                TURN_THREAD,
                "w.plan_id",
                "p.home_session_id",
                "w.ticket_id"
            )
        );
        self.query_all(&sql, args![hold.0], |r| {
            Ok(CoveredTurn {
                run_id: RunId(r.get(0)?),
                thread_id: ThreadId(r.get(1)?),
                bot_id: BotId(r.get(2)?),
                session_id: SessionId(r.get(3)?),
                plan_id: r.get::<Option<i64>>(4)?.map(PlanId),
                work_item_id: r.get::<Option<i64>>(5)?.map(WorkItemId),
                mode: r.get(6)?,
            })
        })
    }

    /// The lines these turns wrote, as (turn, line) oldest first, read in one pass over the
    /// lines: a stop over many live turns asks this once rather than once per turn (lines
    /// have no index by turn, so each ask reads them all).
    pub fn lines_of_turns(&self, runs: &[RunId]) -> Result<Vec<(RunId, SessionMessageId)>> {
        let (Some(lo), Some(hi)) = (runs.iter().min(), runs.iter().max()) else {
            return Ok(Vec::new());
        };
        let rows = self.query_all(
            "SELECT turn_id, id FROM session_messages WHERE turn_id BETWEEN ?1 AND ?2
             ORDER BY id",
            args![lo.0, hi.0],
            |r| Ok((RunId(r.get(0)?), SessionMessageId(r.get(1)?))),
        )?;
        Ok(rows.into_iter().filter(|(t, _)| runs.contains(t)).collect())
    }

    /// Every live run with a segment, as (its thread, run, what its turn is judged on), by
    /// run: the turns a stop may cover, read in one pass rather than one read per run.
    pub fn live_turn_facts(&self) -> Result<Vec<(ThreadId, RunId, TurnFacts)>> {
        let sql = format!(
            "SELECT r.thread_id, s.run_id, s.bot_id, s.session_id, {TURN_THREAD}, w.plan_id,
                    p.home_session_id, w.ticket_id
             FROM {TURNS} WHERE r.status = 'running' ORDER BY s.run_id"
        );
        self.query_all(&sql, args![], |r| {
            Ok((
                ThreadId(r.get(0)?),
                RunId(r.get(1)?),
                TurnFacts {
                    bot_id: BotId(r.get(2)?),
                    session_id: SessionId(r.get(3)?),
                    thread_id: ThreadId(r.get(4)?),
                    plan_id: r.get::<Option<i64>>(5)?.map(PlanId),
                    plan_home: r.get::<Option<i64>>(6)?.map(SessionId),
                    ticket_id: r.get::<Option<i64>>(7)?.map(TicketId),
                },
            ))
        })
    }

    /// The calls these runs made, as (run, tool, summary) oldest first, in one read per few
    /// hundred runs: what a stop notes about each turn it ends.
    pub fn calls_of_runs(&self, runs: &[RunId]) -> Result<Vec<(RunId, String, String)>> {
        let mut out = Vec::new();
        for chunk in runs.chunks(IN_LIST_MAX) {
            let sql = format!(
                "SELECT run_id, tool, summary FROM effects WHERE run_id IN ({}) ORDER BY id",
                placeholders(chunk.len())
            );
            let params: Vec<crate::db::Value> = chunk.iter().map(|r| r.0.to_value()).collect();
            out.extend(self.query_all(&sql, &params, |r| {
                Ok((RunId(r.get(0)?), r.get(1)?, r.get(2)?))
            })?);
        }
        if runs.len() > IN_LIST_MAX {
            out.sort_by_key(|(r, _, _)| runs.iter().position(|x| x == r));
        }
        Ok(out)
    }

    /// Of these threads, those with an ask still open (unanswered, not closed): one read of
    /// the open asks, so a stop closes asks only where there are some.
    pub fn threads_with_open_asks(&self, threads: &[ThreadId]) -> Result<Vec<ThreadId>> {
        let open: Vec<i64> = self.query_all(
            "SELECT DISTINCT ask_thread_id FROM session_messages
             WHERE kind = 'ask' AND ask_answer IS NULL AND ask_closed_at IS NULL
               AND ask_thread_id IS NOT NULL",
            args![],
            |r| r.get(0),
        )?;
        Ok(threads
            .iter()
            .copied()
            .filter(|t| open.contains(&t.0))
            .collect())
    }

    /// What a run's turn is judged on, from its segment; `None` for a run without one (a
    /// child task's, say), live or not.
    pub fn turn_facts(&self, run: RunId) -> Result<Option<TurnFacts>> {
        let sql = format!(
            "SELECT s.bot_id, s.session_id, {TURN_THREAD}, w.plan_id, p.home_session_id,
                    w.ticket_id
             FROM {TURNS} WHERE s.run_id = ?1"
        );
        self.query_opt(&sql, args![run.0], |r| {
            Ok(TurnFacts {
                bot_id: BotId(r.get(0)?),
                session_id: SessionId(r.get(1)?),
                thread_id: ThreadId(r.get(2)?),
                plan_id: r.get::<Option<i64>>(3)?.map(PlanId),
                plan_home: r.get::<Option<i64>>(4)?.map(SessionId),
                ticket_id: r.get::<Option<i64>>(5)?.map(TicketId),
            })
        })
    }

    /// `hold_changed`: made, lifted or its effect recorded. Not a conversation's own event (a
    /// hold may touch many); the conversation layer tells the ones it touches.
    fn hold_event(&mut self, h: &Hold) -> Result<()> {
        self.event(
            "hold_changed",
            None,
            None,
            json!({
                "hold_id": h.id, "status": h.status.as_str(), "scope": h.scope,
                "source": h.source.as_str(), "session_id": h.session_id,
            }),
        )
    }
}
