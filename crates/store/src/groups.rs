//! Groups and Bot↔Bot directs: members (present or departed) and the confirmed lead, the
//! segments Bots speak in, who each line reached, what the reader and the judgements made of
//! a line, and asks with their one answer.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::conversation::{AskAnswer, Session, SessionKind};
use troupe_core::{BotId, RunId, SessionId, SessionMessageId, ThreadId};

/// The thread purpose of a Bot's work in a conversation (one thread per Bot × conversation).
pub const CONVERSATION: &str = "conversation";

/// A member row: present while `left_at` is empty.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemberRow {
    pub bot_id: BotId,
    pub is_lead: bool,
    pub joined_at: i64,
    pub left_at: Option<i64>,
    pub added_by: String,
}

/// One run of a Bot in a conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Segment {
    pub run_id: RunId,
    pub bot_id: BotId,
    pub session_id: SessionId,
    pub trigger_line_id: Option<SessionMessageId>,
    pub binding: serde_json::Value,
}

/// Who a line reached, and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LineDelivery {
    pub bot_id: BotId,
    pub how: String,
    pub thread_id: ThreadId,
    /// Said to the Bot here while its work speaks in another conversation (WI-9, "said to
    /// you"): the conversation it answers in with `send_message`.
    pub reply_in: Option<SessionId>,
}

/// A stored reading of a line.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineReading {
    pub kind: String,
    pub line_id: Option<SessionMessageId>,
    pub turn_id: Option<RunId>,
    pub model: Option<String>,
    pub failure: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub reading: serde_json::Value,
    pub raw: Option<String>,
    pub created_at: i64,
}

/// A `line_readings` row as read: kind, line, turn, model, failure, reading, raw, time.
type ReadingRow = (
    String,
    Option<i64>,
    Option<i64>,
    Option<String>,
    Option<String>,
    String,
    Option<String>,
    i64,
);

fn bad(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

fn pair_key(a: BotId, b: BotId) -> String {
    let (lo, hi) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    format!("{}:{}", lo.0, hi.0)
}

impl Tx<'_> {
    /// Every member row of a conversation, present ones first in joining order.
    pub fn members(&self, session: SessionId) -> Result<Vec<MemberRow>> {
        self.query_all(
            "SELECT bot_id, is_lead, joined_at, left_at, added_by FROM session_members
             WHERE session_id = ?1 ORDER BY left_at IS NOT NULL, joined_at, bot_id",
            args![session.0],
            |r| {
                Ok(MemberRow {
                    bot_id: BotId(r.get(0)?),
                    is_lead: r.get(1)?,
                    joined_at: r.get(2)?,
                    left_at: r.get(3)?,
                    added_by: r.get(4)?,
                })
            },
        )
    }

    /// Add a Bot to a conversation (or bring a departed one back). False when it is present
    /// already: nothing changes.
    pub fn add_member(&mut self, session: SessionId, bot: BotId, by: &str) -> Result<bool> {
        let row: Option<Option<i64>> = self.query_opt(
            "SELECT left_at FROM session_members WHERE session_id = ?1 AND bot_id = ?2",
            args![session.0, bot.0],
            |r| r.get(0),
        )?;
        match row {
            Some(None) => return Ok(false),
            Some(Some(_)) => {
                self.exec(
                    "UPDATE session_members SET left_at = NULL, joined_at = ?3, added_by = ?4
                     WHERE session_id = ?1 AND bot_id = ?2",
                    args![session.0, bot.0, self.now, by],
                )?;
            }
            None => {
                self.exec(
                    "INSERT INTO session_members (session_id, bot_id, joined_at, added_by) VALUES (?1, ?2, ?3, ?4)",
                    args![session.0, bot.0, self.now, by],
                )?;
            }
        }
        self.session_event(
            "member_added",
            session,
            None,
            json!({"bot_id": bot, "by": by}),
        )?;
        Ok(true)
    }

    /// A member leaves: its row stays (its lines and turns keep their speaker), its lead goes.
    pub fn remove_member(&mut self, session: SessionId, bot: BotId) -> Result<bool> {
        let n = self.exec(
            "UPDATE session_members SET left_at = ?3, is_lead = 0
             WHERE session_id = ?1 AND bot_id = ?2 AND left_at IS NULL",
            args![session.0, bot.0, self.now],
        )?;
        if n > 0 {
            self.session_event("member_removed", session, None, json!({"bot_id": bot}))?;
        }
        Ok(n > 0)
    }

    /// The confirmed lead of a group, if any (it may since have been archived).
    pub fn lead(&self, session: SessionId) -> Result<Option<BotId>> {
        Ok(self
            .query_opt(
                "SELECT bot_id FROM session_members WHERE session_id = ?1 AND is_lead = 1",
                args![session.0],
                |r| r.get::<i64>(0),
            )?
            .map(BotId))
    }

    /// The person's confirmation of a lead (or clearing it). The database refuses a lead that
    /// is not a present, live member of a group.
    pub fn set_lead(&mut self, session: SessionId, bot: Option<BotId>) -> Result<()> {
        self.exec(
            "UPDATE session_members SET is_lead = 0 WHERE session_id = ?1 AND is_lead = 1",
            args![session.0],
        )?;
        if let Some(b) = bot {
            let n = self.exec(
                "UPDATE session_members SET is_lead = 1 WHERE session_id = ?1 AND bot_id = ?2",
                args![session.0, b.0],
            )?;
            if n == 0 {
                return Err(StoreError::Invalid(format!(
                    "bot {b} is not a member of conversation {session}"
                )));
            }
        }
        self.session_event("group_lead_confirmed", session, None, json!({"lead": bot}))?;
        Ok(())
    }

    /// The direct between two Bots opened this way, if there is one.
    pub fn bot_direct(&self, a: BotId, b: BotId, via: &str) -> Result<Option<SessionId>> {
        Ok(self
            .query_opt(
                "SELECT id FROM sessions WHERE kind = 'bot_direct' AND pair_key = ?1 AND opened_via = ?2",
                args![pair_key(a, b), via],
                |r| r.get::<i64>(0),
            )?
            .map(SessionId))
    }

    /// Open the direct between `by` and `to` (one per pair and way of opening).
    pub fn open_bot_direct(
        &mut self,
        by: BotId,
        to: BotId,
        origin: Option<SessionId>,
        via: &str,
        title: &str,
    ) -> Result<Session> {
        if let Some(id) = self.bot_direct(by, to, via)? {
            return self.session(id);
        }
        let id = SessionId(self.insert(
            "INSERT INTO sessions (kind, title, created_at, updated_at, origin_session_id, opened_by_bot_id, opened_via, pair_key)
             VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6, ?7)",
            args![
                SessionKind::BotDirect.as_str(),
                title,
                self.now,
                origin.map(|s| s.0),
                by.0,
                via,
                pair_key(by, to)
            ],
        )?);
        for b in [by, to] {
            self.exec(
                "INSERT INTO session_members (session_id, bot_id, joined_at, added_by) VALUES (?1, ?2, ?3, ?4)",
                args![id.0, b.0, self.now, via],
            )?;
        }
        let session = self.session(id)?;
        self.session_event("session_created", id, None, json!({"session": session}))?;
        if let Some(o) = origin {
            // Its origin's page lists it under the group.
            self.session_event("bot_direct_opened", o, None, json!({"session": session}))?;
        }
        Ok(session)
    }

    /// Record the run a Bot speaks in, in a conversation, and the line that woke it.
    pub fn record_segment(
        &mut self,
        run: RunId,
        bot: BotId,
        session: SessionId,
        trigger_line: Option<SessionMessageId>,
    ) -> Result<()> {
        self.exec(
            // Not an upsert: an INSERT's triggers run even when its conflict clause then does
            // nothing, and the hold trigger refuses a covered row without a mode.
            "INSERT INTO segments (run_id, bot_id, session_id, trigger_line_id, created_at)
             SELECT ?1, ?2, ?3, ?4, ?5 WHERE NOT EXISTS (SELECT 1 FROM segments WHERE run_id = ?1)",
            args![run.0, bot.0, session.0, trigger_line.map(|l| l.0), self.now],
        )?;
        Ok(())
    }

    pub fn segment(&self, run: RunId) -> Result<Option<Segment>> {
        let row: Option<(i64, i64, Option<i64>, String)> = self.query_opt(
            "SELECT bot_id, session_id, trigger_line_id, binding FROM segments WHERE run_id = ?1",
            args![run.0],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        row.map(|(bot, session, line, binding)| {
            Ok(Segment {
                run_id: run,
                bot_id: BotId(bot),
                session_id: SessionId(session),
                trigger_line_id: line.map(SessionMessageId),
                binding: serde_json::from_str(&binding).map_err(|e| bad("segment binding", e))?,
            })
        })
        .transpose()
    }

    /// Note who a line reached; a repeat (same line and Bot) changes nothing.
    pub fn record_line_delivery(
        &mut self,
        line: SessionMessageId,
        bot: BotId,
        how: &str,
        thread: ThreadId,
    ) -> Result<bool> {
        let n = self.exec(
            "INSERT INTO line_deliveries (line_id, bot_id, how, thread_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (line_id, bot_id) DO NOTHING",
            args![line.0, bot.0, how, thread.0, self.now],
        )?;
        Ok(n > 0)
    }

    /// Whether a keyed delivery to a thread has become a message (a model call read it).
    pub fn delivery_consumed(&self, thread: ThreadId, key: &str) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT item_id FROM inbox_receipts WHERE thread_id = ?1 AND delivery_key = ?2",
                args![thread.0, key],
                |r| r.get::<i64>(0),
            )?
            .is_some())
    }

    /// The newest line given to a thread as work.
    pub fn newest_line_delivered_to(&self, thread: ThreadId) -> Result<Option<SessionMessageId>> {
        Ok(self
            .query_opt(
                "SELECT line_id FROM line_deliveries WHERE thread_id = ?1 ORDER BY line_id DESC LIMIT 1",
                args![thread.0],
                |r| r.get::<i64>(0),
            )?
            .map(SessionMessageId))
    }

    /// Up to `n` lines before `line` in its conversation, oldest first.
    pub fn lines_before(
        &self,
        session: SessionId,
        line: SessionMessageId,
        n: u32,
    ) -> Result<Vec<troupe_core::conversation::SessionMessage>> {
        let ids: Vec<i64> = self.query_all(
            "SELECT id FROM session_messages WHERE session_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
            args![session.0, line.0, n],
            |r| r.get(0),
        )?;
        ids.into_iter()
            .rev()
            .map(|id| self.line(SessionMessageId(id)))
            .collect()
    }

    pub fn line_deliveries(&self, line: SessionMessageId) -> Result<Vec<LineDelivery>> {
        self.query_all(
            "SELECT bot_id, how, thread_id, reply_in FROM line_deliveries WHERE line_id = ?1 ORDER BY created_at, bot_id",
            args![line.0],
            |r| {
                Ok(LineDelivery {
                    bot_id: BotId(r.get(0)?),
                    how: r.get(1)?,
                    thread_id: ThreadId(r.get(2)?),
                    reply_in: r.get::<Option<i64>>(3)?.map(SessionId),
                })
            },
        )
    }

    /// Mark a delivered line as said to its Bot in `session` (WI-9).
    pub fn mark_reply_in(
        &mut self,
        line: SessionMessageId,
        bot: BotId,
        session: SessionId,
    ) -> Result<()> {
        self.exec(
            "UPDATE line_deliveries SET reply_in = ?3 WHERE line_id = ?1 AND bot_id = ?2",
            args![line.0, bot.0, session.0],
        )?;
        Ok(())
    }

    /// Move a person's line along reading → queued → routed (or withdrawn).
    pub fn set_line_routing(&mut self, line: SessionMessageId, state: &str) -> Result<()> {
        let routed_at = (state == "routed").then_some(self.now);
        self.exec(
            "UPDATE session_messages SET routing = ?2, routed_at = COALESCE(?3, routed_at) WHERE id = ?1",
            args![line.0, state, routed_at],
        )?;
        let session = self.line(line)?.session_id;
        self.session_event(
            "line_routing",
            session,
            None,
            json!({"message_id": line, "routing": state}),
        )?;
        Ok(())
    }

    /// A conversation's lines still being read or waiting their turn, oldest first.
    pub fn unrouted_lines_of(&self, session: SessionId) -> Result<Vec<SessionMessageId>> {
        self.query_all(
            "SELECT id FROM session_messages WHERE session_id = ?1 AND routing IN ('reading', 'queued') ORDER BY id",
            args![session.0],
            |r| Ok(SessionMessageId(r.get(0)?)),
        )
    }

    /// Lines still being read or waiting their turn, across conversations, oldest first.
    pub fn unrouted_lines(&self) -> Result<Vec<(SessionId, SessionMessageId)>> {
        self.query_all(
            "SELECT session_id, id FROM session_messages WHERE routing IN ('reading', 'queued') ORDER BY id",
            args![],
            |r| Ok((SessionId(r.get(0)?), SessionMessageId(r.get(1)?))),
        )
    }

    /// Store a reading; a second reading of the same line (or Bot text in a turn) keeps the
    /// first and answers false.
    #[allow(clippy::too_many_arguments)]
    pub fn save_line_reading(
        &mut self,
        kind: &str,
        line: Option<SessionMessageId>,
        turn: Option<RunId>,
        text_key: Option<&str>,
        model: Option<&str>,
        failure: Option<&str>,
        reading: &serde_json::Value,
        raw: Option<&str>,
    ) -> Result<bool> {
        let n = self.exec(
            "INSERT INTO line_readings (kind, line_id, turn_id, text_key, model, failure, reading, raw, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT DO NOTHING",
            args![
                kind,
                line.map(|l| l.0),
                turn.map(|t| t.0),
                text_key,
                model,
                failure,
                reading.to_string(),
                raw,
                self.now
            ],
        )?;
        if n > 0 {
            let payload = json!({"kind": kind, "message_id": line, "turn_id": turn, "model": model,
                                 "failure": failure, "reading": reading});
            match line {
                Some(l) => {
                    let session = self.line(l)?.session_id;
                    self.session_event("reader_answer", session, turn, payload)?;
                }
                None => self.event("reader_answer", None, turn, payload)?,
            }
        }
        Ok(n > 0)
    }

    /// The readings of a line, oldest first.
    pub fn line_readings(&self, line: SessionMessageId) -> Result<Vec<LineReading>> {
        self.readings_where("line_id = ?1", args![line.0])
    }

    /// The stored reading of a Bot's text within a turn.
    pub fn bot_reading(&self, turn: RunId, text_key: &str) -> Result<Option<LineReading>> {
        Ok(self
            .readings_where(
                "kind = 'bot' AND turn_id = ?1 AND text_key = ?2",
                args![turn.0, text_key],
            )?
            .pop())
    }

    fn readings_where(&self, filter: &str, args: &[crate::Value]) -> Result<Vec<LineReading>> {
        let sql = format!(
            "SELECT kind, line_id, turn_id, model, failure, reading, raw, created_at FROM line_readings WHERE {filter} ORDER BY id"
        );
        let rows: Vec<ReadingRow> = self.query_all(&sql, args, |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ))
        })?;
        rows.into_iter()
            .map(
                |(kind, line, turn, model, failure, reading, raw, created_at)| {
                    Ok(LineReading {
                        kind,
                        line_id: line.map(SessionMessageId),
                        turn_id: turn.map(RunId),
                        model,
                        failure,
                        reading: serde_json::from_str(&reading).map_err(|e| bad("reading", e))?,
                        raw,
                        created_at,
                    })
                },
            )
            .collect()
    }

    /// One Bot's join-or-sit-out answer on a line (`joined` empty when it failed).
    pub fn save_judgement(
        &mut self,
        line: SessionMessageId,
        bot: BotId,
        joined: Option<bool>,
        failure: Option<&str>,
        raw: Option<&str>,
    ) -> Result<()> {
        self.exec(
            "INSERT INTO judgements (line_id, bot_id, joined, failure, raw, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (line_id, bot_id) DO NOTHING",
            args![line.0, bot.0, joined, failure, raw, self.now],
        )?;
        Ok(())
    }

    /// The judgements stored for a line: (Bot, joined).
    pub fn judgements(&self, line: SessionMessageId) -> Result<Vec<(BotId, Option<bool>)>> {
        self.query_all(
            "SELECT bot_id, joined FROM judgements WHERE line_id = ?1 ORDER BY bot_id",
            args![line.0],
            |r| Ok((BotId(r.get(0)?), r.get(1)?)),
        )
    }

    /// The open ask a thread waits on, if any.
    pub fn open_ask_of_thread(&self, thread: ThreadId) -> Result<Option<SessionMessageId>> {
        Ok(self
            .query_opt(
                "SELECT id FROM session_messages WHERE ask_thread_id = ?1 AND kind = 'ask'
                 AND ask_answer IS NULL AND ask_closed_at IS NULL ORDER BY id DESC LIMIT 1",
                args![thread.0],
                |r| r.get::<i64>(0),
            )?
            .map(SessionMessageId))
    }

    /// A Bot's newest open ask in a conversation, from any of its threads (its desk there or
    /// its work on a job speaking there): the ask line and the thread waiting on it.
    pub fn open_ask_of_bot_in(
        &self,
        session: SessionId,
        bot: BotId,
    ) -> Result<Option<(SessionMessageId, ThreadId)>> {
        self.query_opt(
            "SELECT id, ask_thread_id FROM session_messages
             WHERE session_id = ?1 AND bot_id = ?2 AND kind = 'ask'
               AND ask_answer IS NULL AND ask_closed_at IS NULL AND ask_thread_id IS NOT NULL
             ORDER BY id DESC LIMIT 1",
            args![session.0, bot.0],
            |r| Ok((SessionMessageId(r.get(0)?), ThreadId(r.get(1)?))),
        )
    }

    /// The Bots whose turn waits on an open ask here (as `open_ask_of_bot_in` finds one).
    pub fn bots_with_open_asks_in(&self, session: SessionId) -> Result<Vec<BotId>> {
        self.query_all(
            "SELECT DISTINCT bot_id FROM session_messages
             WHERE session_id = ?1 AND kind = 'ask'
               AND ask_answer IS NULL AND ask_closed_at IS NULL AND ask_thread_id IS NOT NULL
               AND bot_id IS NOT NULL",
            args![session.0],
            |r| Ok(BotId(r.get(0)?)),
        )
    }

    /// Open asks in a conversation: (line, asking Bot, its thread).
    pub fn open_asks(
        &self,
        session: SessionId,
    ) -> Result<Vec<(SessionMessageId, BotId, ThreadId)>> {
        self.query_all(
            "SELECT id, bot_id, ask_thread_id FROM session_messages WHERE session_id = ?1 AND kind = 'ask'
             AND ask_answer IS NULL AND ask_closed_at IS NULL ORDER BY id",
            args![session.0],
            |r| {
                Ok((
                    SessionMessageId(r.get(0)?),
                    BotId(r.get(1)?),
                    ThreadId(r.get(2)?),
                ))
            },
        )
    }

    /// The thread waiting on an ask.
    pub fn ask_thread(&self, line: SessionMessageId) -> Result<Option<ThreadId>> {
        Ok(self
            .query_opt(
                "SELECT ask_thread_id FROM session_messages WHERE id = ?1",
                args![line.0],
                |r| r.get::<Option<i64>>(0),
            )?
            .flatten()
            .map(ThreadId))
    }

    /// Store an ask's one answer (the database keeps the first).
    pub fn answer_ask(&mut self, line: SessionMessageId, answer: &AskAnswer) -> Result<()> {
        let text = serde_json::to_string(answer).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.exec(
            "UPDATE session_messages SET ask_answer = ?2, answered_at = ?3 WHERE id = ?1",
            args![line.0, text, self.now],
        )?;
        let l = self.line(line)?;
        self.session_event(
            "ask_answered",
            l.session_id,
            l.turn_id,
            json!({"message": l}),
        )?;
        Ok(())
    }

    /// An ask whose turn ended without an answer takes none any more.
    pub fn close_asks_of_thread(&mut self, thread: ThreadId) -> Result<usize> {
        let open: Vec<i64> = self.query_all(
            "SELECT id FROM session_messages WHERE ask_thread_id = ?1 AND kind = 'ask'
             AND ask_answer IS NULL AND ask_closed_at IS NULL",
            args![thread.0],
            |r| r.get(0),
        )?;
        for id in &open {
            self.exec(
                "UPDATE session_messages SET ask_closed_at = ?2 WHERE id = ?1",
                args![id, self.now],
            )?;
            let l = self.line(SessionMessageId(*id))?;
            self.session_event("ask_closed", l.session_id, l.turn_id, json!({"message": l}))?;
        }
        Ok(open.len())
    }

    /// GL-4 handoffs per Bot in a group since `since`: its turn-sent lines that reached another
    /// member by naming it (or @everyone), plus the Bot↔Bot directs it opened from the group
    /// that have a first line.
    pub fn handoff_counts(&self, group: SessionId, since: i64) -> Result<Vec<(BotId, u32)>> {
        self.query_all(
            "SELECT bot_id, CAST(SUM(n) AS BIGINT) FROM (
                 SELECT m.bot_id AS bot_id, COUNT(DISTINCT m.id) AS n
                 FROM session_messages m JOIN line_deliveries d ON d.line_id = m.id
                 WHERE m.session_id = ?1 AND m.author = 'bot' AND m.turn_id IS NOT NULL
                   AND m.created_at >= ?2 AND d.how IN ('mention', 'everyone')
                 GROUP BY m.bot_id
                 UNION ALL
                 SELECT s.opened_by_bot_id AS bot_id, COUNT(*) AS n
                 FROM sessions s
                 WHERE s.kind = 'bot_direct' AND s.origin_session_id = ?1 AND s.created_at >= ?2
                   AND EXISTS (SELECT 1 FROM session_messages f WHERE f.session_id = s.id)
                 GROUP BY s.opened_by_bot_id
             ) AS c GROUP BY bot_id ORDER BY bot_id",
            args![group.0, since],
            |r| Ok((BotId(r.get(0)?), r.get::<i64>(1)? as u32)),
        )
    }
}
