//! Check-backs: the one-time timers a Bot books for its own work item. The store keeps the rows,
//! the one-pending-per-key rule and the events; when one is due and what firing does are the
//! conversation layer's (`troupe_core::check_back` holds the rules).

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::check_back::CheckBackState;
use troupe_core::{BotId, CheckBackId, PlanId, RunId, SessionId, WorkItemId};

/// How far back the hourly booking limit looks.
const HOUR_MS: i64 = 3_600_000;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckBackRecord {
    pub id: CheckBackId,
    pub bot_id: BotId,
    pub work_item_id: WorkItemId,
    /// Where it was booked, and where the woken segment speaks.
    pub session_id: SessionId,
    pub plan_id: Option<PlanId>,
    pub dedupe_key: String,
    pub due_at: i64,
    /// What the Bot said it would check.
    pub note: String,
    /// pending, set_aside, fired, voided or cleared.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub state: CheckBackState,
    pub booked_by_run_id: Option<RunId>,
    pub created_at: i64,
    pub fired_at: Option<i64>,
    pub updated_at: i64,
}

pub struct NewCheckBack {
    pub bot_id: BotId,
    pub work_item_id: WorkItemId,
    pub session_id: SessionId,
    pub plan_id: Option<PlanId>,
    pub dedupe_key: String,
    pub due_at: i64,
    pub note: String,
    pub booked_by_run_id: Option<RunId>,
}

/// Which check-backs a listing wants; every field left empty matches all.
#[derive(Clone, Debug, Default)]
pub struct CheckBackFilter {
    pub bot_id: Option<BotId>,
    pub session_id: Option<SessionId>,
    pub state: Option<CheckBackState>,
}

/// What the hourly booking limit counts against: the job, or the work item when it has none.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BookingScope {
    Plan(PlanId),
    WorkItem(WorkItemId),
}

const COLUMNS: &str = "id, bot_id, work_item_id, session_id, plan_id, dedupe_key, due_at, note, \
    state, booked_by_run_id, created_at, fired_at, updated_at";

fn from_row(r: &crate::Row) -> Result<CheckBackRecord> {
    Ok(CheckBackRecord {
        id: CheckBackId(r.get(0)?),
        bot_id: BotId(r.get(1)?),
        work_item_id: WorkItemId(r.get(2)?),
        session_id: SessionId(r.get(3)?),
        plan_id: r.get::<Option<i64>>(4)?.map(PlanId),
        dedupe_key: r.get(5)?,
        due_at: r.get(6)?,
        note: r.get(7)?,
        state: CheckBackState::parse(&r.get::<String>(8)?)
            .map_err(|e| StoreError::Corrupt(format!("check-back state: {e}")))?,
        booked_by_run_id: r.get::<Option<i64>>(9)?.map(RunId),
        created_at: r.get(10)?,
        fired_at: r.get(11)?,
        updated_at: r.get(12)?,
    })
}

impl Tx<'_> {
    /// Book a check-back. A pending one with the same dedupe key is voided first (the event
    /// says it was replaced, and by which); any other key's booking, another work item's or a
    /// delegation wait, is left alone (CB-7, DEL-26).
    pub fn book_check_back(&mut self, c: &NewCheckBack) -> Result<CheckBackRecord> {
        if c.dedupe_key.trim().is_empty() {
            return Err(StoreError::Invalid(
                "a check-back needs a dedupe key".into(),
            ));
        }
        let replaced = self.pending_check_back_by_key(&c.dedupe_key)?;
        if let Some(old) = &replaced {
            self.write_state(old.id, CheckBackState::Voided)?;
        }
        let id = self.insert(
            "INSERT INTO check_backs (bot_id, work_item_id, session_id, plan_id, dedupe_key,
                                      due_at, note, state, booked_by_run_id, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?9, ?9)",
            args![
                c.bot_id.0,
                c.work_item_id.0,
                c.session_id.0,
                c.plan_id.map(|p| p.0),
                c.dedupe_key,
                c.due_at,
                c.note,
                c.booked_by_run_id.map(|r| r.0),
                self.now
            ],
        )?;
        let booked = self.check_back(CheckBackId(id))?;
        if let Some(old) = replaced {
            let old = self.check_back(old.id)?;
            self.check_back_event(&old, Some(json!({"reason": "replaced", "by": booked.id})))?;
        }
        self.check_back_event(&booked, None)?;
        Ok(booked)
    }

    pub fn check_back(&self, id: CheckBackId) -> Result<CheckBackRecord> {
        let sql = format!("SELECT {COLUMNS} FROM check_backs WHERE id = ?1");
        self.query_opt(&sql, args![id.0], from_row)?
            .ok_or_else(|| StoreError::not_found("check-back", id))
    }

    /// The check-back, held for this transaction: on PostgreSQL another node's scan that wants
    /// it waits until this one commits and then reads what it recorded, so it fires once in
    /// the cluster. On SQLite the single writer already orders them.
    pub fn claim_check_back(&self, id: CheckBackId) -> Result<CheckBackRecord> {
        let lock = if self.locks_rows() {
            " FOR NO KEY UPDATE"
        } else {
            ""
        };
        let sql = format!("SELECT {COLUMNS} FROM check_backs WHERE id = ?1{lock}");
        self.query_opt(&sql, args![id.0], from_row)?
            .ok_or_else(|| StoreError::not_found("check-back", id))
    }

    /// The work item's pending check-back, if it has one.
    pub fn pending_check_back(&self, work_item: WorkItemId) -> Result<Option<CheckBackRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM check_backs WHERE work_item_id = ?1 AND state = 'pending'
             ORDER BY id DESC LIMIT 1"
        );
        self.query_opt(&sql, args![work_item.0], from_row)
    }

    fn pending_check_back_by_key(&self, key: &str) -> Result<Option<CheckBackRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM check_backs WHERE dedupe_key = ?1 AND state = 'pending'"
        );
        self.query_opt(&sql, args![key], from_row)
    }

    /// Check-backs matching `filter`, newest first, at most `limit`.
    pub fn check_backs(
        &self,
        filter: &CheckBackFilter,
        limit: u32,
    ) -> Result<Vec<CheckBackRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM check_backs
             WHERE (CAST(?1 AS BIGINT) IS NULL OR bot_id = ?1)
               AND (CAST(?2 AS BIGINT) IS NULL OR session_id = ?2)
               AND (CAST(?3 AS TEXT) IS NULL OR state = ?3)
             ORDER BY id DESC LIMIT ?4"
        );
        self.query_all(
            &sql,
            args![
                filter.bot_id.map(|b| b.0),
                filter.session_id.map(|s| s.0),
                filter.state.map(CheckBackState::as_str),
                limit
            ],
            from_row,
        )
    }

    /// Pending check-backs due at or before `now`, the longest overdue first. However long ago
    /// one fell due, it is simply due (CB-4).
    pub fn due_check_backs(&self, now: i64, limit: u32) -> Result<Vec<CheckBackRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM check_backs WHERE state = 'pending' AND due_at <= ?1
             ORDER BY due_at, id LIMIT ?2"
        );
        self.query_all(&sql, args![now, limit], from_row)
    }

    /// Bookings made on `scope` in the hour before `now`, whatever became of them: one that
    /// replaced another still counts, so replacing is no way around the limit.
    pub fn bookings_in_last_hour(&self, scope: BookingScope, now: i64) -> Result<usize> {
        let (column, id) = match scope {
            BookingScope::Plan(p) => ("plan_id", p.0),
            BookingScope::WorkItem(w) => ("work_item_id", w.0),
        };
        let sql =
            format!("SELECT COUNT(*) FROM check_backs WHERE {column} = ?1 AND created_at > ?2");
        let n: i64 = self.query_one(&sql, args![id, now - HOUR_MS], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// Move a check-back to `state` (a fired one records when). Answers it as it now stands;
    /// setting the state it has changes nothing and logs nothing.
    pub fn set_check_back_state(
        &mut self,
        id: CheckBackId,
        state: CheckBackState,
    ) -> Result<CheckBackRecord> {
        let before = self.check_back(id)?;
        if before.state == state {
            return Ok(before);
        }
        self.write_state(id, state)?;
        let after = self.check_back(id)?;
        self.check_back_event(&after, None)?;
        Ok(after)
    }

    fn write_state(&mut self, id: CheckBackId, state: CheckBackState) -> Result<()> {
        let fired_at = (state == CheckBackState::Fired).then_some(self.now);
        self.exec(
            "UPDATE check_backs SET state = ?2, fired_at = COALESCE(?3, fired_at), updated_at = ?4
             WHERE id = ?1",
            args![id.0, state.as_str(), fired_at, self.now],
        )?;
        Ok(())
    }

    fn check_back_event(
        &mut self,
        c: &CheckBackRecord,
        extra: Option<serde_json::Value>,
    ) -> Result<()> {
        let mut payload = json!({
            "check_back_id": c.id, "bot_id": c.bot_id, "work_item_id": c.work_item_id,
            "plan_id": c.plan_id, "state": c.state.as_str(), "due_at": c.due_at,
        });
        if let (Some(serde_json::Value::Object(more)), Some(obj)) = (extra, payload.as_object_mut())
        {
            obj.extend(more);
        }
        self.session_event(
            "check_back_changed",
            c.session_id,
            c.booked_by_run_id,
            payload,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewBot, NewThread, NewWorkItem, Store};
    use std::sync::Arc;
    use troupe_core::conversation::SessionKind;
    use troupe_core::thread::{AgentBinding, Interaction};
    use troupe_core::work_item::WorkMode;
    use troupe_core::{Clock, ManualClock};

    struct Fixture {
        store: Store,
        clock: ManualClock,
        bot: BotId,
        session: SessionId,
    }

    fn fixture() -> Fixture {
        let clock = ManualClock::new(1_000_000);
        let store = crate::testing::open(Arc::new(clock.clone()));
        let (bot, session) = store
            .write(|tx| {
                let bot = tx
                    .create_bot(&NewBot {
                        name: "Alpha".into(),
                        persona: String::new(),
                        endpoint: None,
                        scripted: false,
                    })?
                    .id;
                let session = tx.create_session(SessionKind::Direct, "t", &[bot])?.id;
                Ok((bot, session))
            })
            .unwrap();
        Fixture {
            store,
            clock,
            bot,
            session,
        }
    }

    /// A desk work item on a thread of its own.
    fn work_item(f: &Fixture, title: &str) -> WorkItemId {
        f.store
            .write(|tx| {
                let thread = tx.create_thread(&NewThread {
                    workspace_root: None,
                    parent_id: None,
                    title: title.into(),
                    agent: AgentBinding::new("a", "be brief"),
                    workspace: "/tmp".into(),
                    interaction: Interaction::Interactive,
                })?;
                let other_session = tx.create_session(SessionKind::Direct, title, &[f.bot])?.id;
                Ok(tx
                    .create_work_item(&NewWorkItem {
                        bot_id: f.bot,
                        mode: WorkMode::Desk,
                        plan_id: None,
                        session_id: Some(other_session),
                        thread_id: thread.id,
                        speaks_in: Some(other_session),
                    })?
                    .id)
            })
            .unwrap()
    }

    fn booking(f: &Fixture, item: WorkItemId, due_in: i64, note: &str) -> NewCheckBack {
        NewCheckBack {
            bot_id: f.bot,
            work_item_id: item,
            session_id: f.session,
            plan_id: None,
            dedupe_key: format!("work_item:{}", item.0),
            due_at: f.clock.now_ms() + due_in,
            note: note.into(),
            booked_by_run_id: None,
        }
    }

    fn events(f: &Fixture) -> Vec<crate::Event> {
        f.store
            .read(|tx| tx.session_events_after(troupe_core::EventId(0), f.session, 1000))
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == "check_back_changed")
            .collect()
    }

    #[test]
    fn check_backs_rebooking_replaces_only_the_same_key() {
        let f = fixture();
        let (a, b) = (work_item(&f, "a"), work_item(&f, "b"));
        let first = f
            .store
            .write(|tx| tx.book_check_back(&booking(&f, a, 60_000, "first")))
            .unwrap();
        let other = f
            .store
            .write(|tx| tx.book_check_back(&booking(&f, b, 60_000, "other job")))
            .unwrap();
        let second = f
            .store
            .write(|tx| tx.book_check_back(&booking(&f, a, 120_000, "second")))
            .unwrap();
        let (first, other) = f
            .store
            .read(|tx| Ok((tx.check_back(first.id)?, tx.check_back(other.id)?)))
            .unwrap();
        assert_eq!(first.state, CheckBackState::Voided);
        assert_eq!(other.state, CheckBackState::Pending, "another job's stays");
        assert_eq!(second.state, CheckBackState::Pending);
        let voided = events(&f)
            .into_iter()
            .find(|e| e.payload["state"] == "voided")
            .expect("the replacement is logged");
        assert_eq!(voided.payload["reason"], "replaced");
        assert_eq!(voided.payload["by"], json!(second.id));
        let pending = f
            .store
            .read(|tx| tx.pending_check_back(a))
            .unwrap()
            .unwrap();
        assert_eq!(pending.id, second.id);
    }

    #[test]
    fn check_backs_one_pending_per_key_is_held_by_the_schema() {
        let f = fixture();
        let a = work_item(&f, "a");
        f.store
            .write(|tx| tx.book_check_back(&booking(&f, a, 60_000, "x")))
            .unwrap();
        let raw = format!(
            "INSERT INTO check_backs (bot_id, work_item_id, session_id, dedupe_key, due_at, note,
                                      state, created_at, updated_at)
             VALUES ({}, {}, {}, 'work_item:{}', 1, 'again', 'pending', 1, 1)",
            f.bot.0, a.0, f.session.0, a.0
        );
        assert!(f.store.write(|tx| tx.raw_execute(&raw)).is_err());
        let bad_state = raw.replace("'pending'", "'asleep'");
        assert!(f.store.write(|tx| tx.raw_execute(&bad_state)).is_err());
    }

    #[test]
    fn check_backs_due_are_pending_and_oldest_first() {
        let f = fixture();
        let (a, b, c) = (work_item(&f, "a"), work_item(&f, "b"), work_item(&f, "c"));
        let late = f
            .store
            .write(|tx| tx.book_check_back(&booking(&f, a, 300_000, "late")))
            .unwrap();
        let early = f
            .store
            .write(|tx| tx.book_check_back(&booking(&f, b, 60_000, "early")))
            .unwrap();
        let done = f
            .store
            .write(|tx| tx.book_check_back(&booking(&f, c, 30_000, "done")))
            .unwrap();
        f.store
            .write(|tx| tx.set_check_back_state(done.id, CheckBackState::Fired))
            .unwrap();
        let now = f.clock.now_ms();
        let due = |at: i64| {
            f.store
                .read(|tx| tx.due_check_backs(at, 10))
                .unwrap()
                .into_iter()
                .map(|c| c.id)
                .collect::<Vec<_>>()
        };
        assert!(due(now).is_empty());
        assert_eq!(due(now + 60_000), vec![early.id]);
        // A day late, both are simply due, the one due first first.
        assert_eq!(due(now + 86_400_000), vec![early.id, late.id]);
    }

    #[test]
    fn check_backs_state_changes_stamp_and_log() {
        let f = fixture();
        let a = work_item(&f, "a");
        let c = f
            .store
            .write(|tx| tx.book_check_back(&booking(&f, a, 60_000, "x")))
            .unwrap();
        f.clock.advance(60_000);
        let fired = f
            .store
            .write(|tx| tx.set_check_back_state(c.id, CheckBackState::Fired))
            .unwrap();
        assert_eq!(fired.fired_at, Some(f.clock.now_ms()));
        let again = f
            .store
            .write(|tx| tx.set_check_back_state(c.id, CheckBackState::Fired))
            .unwrap();
        assert_eq!(again, fired);
        let states: Vec<String> = events(&f)
            .iter()
            .map(|e| e.payload["state"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(states, ["pending", "fired"], "a no-op logs nothing");
    }

    #[test]
    fn check_backs_listing_filters_and_hourly_count() {
        let f = fixture();
        let (a, b) = (work_item(&f, "a"), work_item(&f, "b"));
        for n in 0..3 {
            f.store
                .write(|tx| tx.book_check_back(&booking(&f, a, 60_000, &format!("a{n}"))))
                .unwrap();
        }
        f.store
            .write(|tx| tx.book_check_back(&booking(&f, b, 60_000, "b")))
            .unwrap();
        let now = f.clock.now_ms();
        let count = |scope, at| {
            f.store
                .read(|tx| tx.bookings_in_last_hour(scope, at))
                .unwrap()
        };
        assert_eq!(
            count(BookingScope::WorkItem(a), now),
            3,
            "replaced ones count"
        );
        assert_eq!(count(BookingScope::WorkItem(b), now), 1);
        assert_eq!(count(BookingScope::WorkItem(a), now + HOUR_MS), 0);
        let list =
            |filter: CheckBackFilter| f.store.read(|tx| tx.check_backs(&filter, 100)).unwrap();
        assert_eq!(list(CheckBackFilter::default()).len(), 4);
        let pending = list(CheckBackFilter {
            state: Some(CheckBackState::Pending),
            ..Default::default()
        });
        assert_eq!(pending.len(), 2);
        assert_eq!(pending[0].note, "b", "newest first");
        let mine = list(CheckBackFilter {
            bot_id: Some(f.bot),
            session_id: Some(f.session),
            state: Some(CheckBackState::Voided),
        });
        assert_eq!(mine.len(), 2);
        assert!(
            list(CheckBackFilter {
                bot_id: Some(BotId(f.bot.0 + 99)),
                ..Default::default()
            })
            .is_empty()
        );
    }
}
