//! Bots, model roles, conversations and their lines.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde_json::json;
use troupe_core::conversation::{
    Ask, Author, Bot, LineKind, LineStatus, Session, SessionKind, SessionMessage,
};
use troupe_core::thread::EndpointSpec;
use troupe_core::{BotId, MessageId, PlanId, RunId, SessionId, SessionMessageId, ThreadId};

#[derive(Clone, Debug)]
pub struct NewBot {
    pub name: String,
    pub persona: String,
    pub endpoint: Option<EndpointSpec>,
    pub scripted: bool,
}

#[derive(Clone, Debug)]
pub struct NewLine {
    pub session_id: SessionId,
    pub author: Author,
    pub bot_id: Option<BotId>,
    pub parent_id: Option<SessionMessageId>,
    pub body: String,
    pub thread_message_id: Option<MessageId>,
    pub turn_id: Option<RunId>,
    pub status: LineStatus,
    pub kind: LineKind,
    /// A person's line that waits to be read and routed starts at `reading`.
    pub routing: Option<&'static str>,
    /// An ask line's question (its answer starts empty), and the thread that waits on it.
    pub ask: Option<(Ask, ThreadId)>,
}

impl NewLine {
    /// A plain line with nothing special about it.
    pub fn plain(session_id: SessionId, author: Author, body: String) -> NewLine {
        NewLine {
            session_id,
            author,
            bot_id: None,
            parent_id: None,
            body,
            thread_message_id: None,
            turn_id: None,
            status: LineStatus::Done,
            kind: LineKind::Line,
            routing: None,
            ask: None,
        }
    }
}

fn bad(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

const BOT_COLUMNS: &str = "id, name, persona, endpoint, scripted, archived_at, created_at";

fn bot_from_row(r: &crate::Row) -> Result<Bot> {
    let endpoint: Option<String> = r.get(3)?;
    let archived: Option<i64> = r.get(5)?;
    let (id, name, persona, scripted, created_at) = (
        BotId(r.get(0)?),
        r.get::<String>(1)?,
        r.get::<String>(2)?,
        r.get::<bool>(4)?,
        r.get(6)?,
    );
    (|| {
        Ok(Bot {
            id,
            name,
            persona,
            endpoint: endpoint
                .map(|e| serde_json::from_str(&e))
                .transpose()
                .map_err(|e| bad("bot endpoint", e))?,
            scripted,
            archived: archived.is_some(),
            created_at,
        })
    })()
}

const LINE_COLUMNS: &str = "id, session_id, author, bot_id, parent_id, body, turn_id, status, \
     created_at, kind, routing, ask, ask_answer, answered_at, ask_closed_at, control, control_acted, \
     edited_at, ask_closed_why";

fn line_from_row(r: &crate::Row) -> Result<SessionMessage> {
    let author: String = r.get(2)?;
    let status: String = r.get(7)?;
    let id = SessionMessageId(r.get(0)?);
    let session_id = SessionId(r.get(1)?);
    let bot_id = r.get::<Option<i64>>(3)?.map(BotId);
    let parent_id = r.get::<Option<i64>>(4)?.map(SessionMessageId);
    let body: String = r.get(5)?;
    let turn_id = r.get::<Option<i64>>(6)?.map(RunId);
    let created_at: i64 = r.get(8)?;
    let kind: String = r.get(9)?;
    let routing: Option<String> = r.get(10)?;
    let ask: Option<String> = r.get(11)?;
    let answer: Option<String> = r.get(12)?;
    let answered_at: Option<i64> = r.get(13)?;
    let closed_at: Option<i64> = r.get(14)?;
    let json = |i: usize, what: &str| -> Result<Option<serde_json::Value>> {
        r.get::<Option<String>>(i)?
            .map(|t| serde_json::from_str(&t).map_err(|e| bad(what, e)))
            .transpose()
    };
    let control = json(15, "line control")?;
    let control_acted = json(16, "line control press")?;
    let edited_at: Option<i64> = r.get(17)?;
    let closed_why: Option<String> = r.get(18)?;
    let ask = ask
        .map(|text| -> Result<Ask> {
            let mut ask: Ask = serde_json::from_str(&text).map_err(|e| bad("line ask", e))?;
            ask.answer = answer
                .map(|a| serde_json::from_str(&a))
                .transpose()
                .map_err(|e| bad("ask answer", e))?;
            ask.answered_at = answered_at;
            ask.closed_at = closed_at;
            ask.closed_why = closed_why;
            Ok(ask)
        })
        .transpose()?;
    (|| {
        Ok(SessionMessage {
            id,
            session_id,
            author: Author::parse(&author).map_err(|e| bad("line author", e))?,
            bot_id,
            parent_id,
            body,
            turn_id,
            status: LineStatus::parse(&status).map_err(|e| bad("line status", e))?,
            created_at,
            kind: LineKind::parse(&kind).map_err(|e| bad("line kind", e))?,
            routing,
            ask,
            control,
            control_acted,
            edited: edited_at.is_some(),
            edited_at,
        })
    })()
}

impl Tx<'_> {
    /// Give a line its control buttons.
    pub fn set_line_control(
        &mut self,
        line: SessionMessageId,
        control: &serde_json::Value,
    ) -> Result<()> {
        self.exec(
            "UPDATE session_messages SET control = ?2 WHERE id = ?1",
            args![line.0, control.to_string()],
        )?;
        // Pages showing the conversation redraw the line with its buttons without a reload.
        let after = self.line(line)?;
        self.session_event(
            "session_message_control",
            after.session_id,
            None,
            serde_json::json!({"message": after}),
        )?;
        Ok(())
    }

    /// Record the one press of a line's buttons; false when one was pressed already.
    pub fn press_line_control(
        &mut self,
        line: SessionMessageId,
        acted: &serde_json::Value,
    ) -> Result<bool> {
        let n = self.exec(
            "UPDATE session_messages SET control_acted = ?2 WHERE id = ?1 AND control_acted IS NULL",
            args![line.0, acted.to_string()],
        )?;
        Ok(n == 1)
    }

    /// Append an event that belongs to a conversation (published on commit).
    pub fn session_event(
        &mut self,
        kind: &str,
        session: SessionId,
        run: Option<RunId>,
        payload: serde_json::Value,
    ) -> Result<()> {
        self.append_event(kind, None, run, Some(session), payload)?;
        Ok(())
    }

    /// Events after `after` that belong to a conversation: its own, and those of its threads.
    pub fn session_events_after(
        &self,
        after: troupe_core::EventId,
        session: SessionId,
        limit: u32,
    ) -> Result<Vec<crate::Event>> {
        self.events_where(
            "id > ?1 AND (session_id = ?2 OR thread_id IN (SELECT thread_id FROM session_threads WHERE session_id = ?2))",
            args![after.0, session.0],
            limit,
        )
    }

    pub fn create_bot(&mut self, b: &NewBot) -> Result<Bot> {
        let taken: Option<i64> = self.query_opt(
            "SELECT id FROM bots WHERE lower(name) = lower(?1) AND archived_at IS NULL",
            args![b.name],
            |r| r.get(0),
        )?;
        if taken.is_some() {
            return Err(StoreError::Conflict(format!(
                "a Bot named '{}' already exists",
                b.name
            )));
        }
        let endpoint = b
            .endpoint
            .as_ref()
            .map(|e| serde_json::to_string(e).unwrap_or_default());
        let id = self.insert(
            "INSERT INTO bots (name, persona, endpoint, scripted, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
            args![b.name, b.persona, endpoint, b.scripted, self.now],
        )?;
        let bot = self.bot(BotId(id))?;
        self.event("bot_created", None, None, json!({"bot": bot}))?;
        Ok(bot)
    }

    pub fn bot(&self, id: BotId) -> Result<Bot> {
        let sql = format!("SELECT {BOT_COLUMNS} FROM bots WHERE id = ?1");
        self.query_opt(&sql, args![id.0], bot_from_row)?
            .ok_or_else(|| StoreError::not_found("bot", id))
    }

    /// Every live Bot's id and name, by id: what reading mentions needs, without the rest of
    /// each Bot's row.
    pub fn live_bot_names(&self) -> Result<Vec<(BotId, String)>> {
        self.query_all(
            "SELECT id, name FROM bots WHERE archived_at IS NULL ORDER BY id",
            args![],
            |r| Ok((BotId(r.get(0)?), r.get(1)?)),
        )
    }

    pub fn bots(&self, include_archived: bool) -> Result<Vec<Bot>> {
        let sql =
            format!("SELECT {BOT_COLUMNS} FROM bots WHERE ?1 OR archived_at IS NULL ORDER BY id");
        self.query_all(&sql, args![include_archived], bot_from_row)
    }

    /// Replace a Bot's editable fields (the caller merges a patch first).
    pub fn update_bot(&mut self, bot: &Bot) -> Result<Bot> {
        let taken: Option<i64> = self.query_opt(
                "SELECT id FROM bots WHERE lower(name) = lower(?1) AND archived_at IS NULL AND id <> ?2",
                args![bot.name, bot.id.0],
                |r| r.get(0),
            )?;
        if taken.is_some() {
            return Err(StoreError::Conflict(format!(
                "a Bot named '{}' already exists",
                bot.name
            )));
        }
        let endpoint = bot
            .endpoint
            .as_ref()
            .map(|e| serde_json::to_string(e).unwrap_or_default());
        let n = self.exec(
            "UPDATE bots SET name = ?2, persona = ?3, endpoint = ?4, updated_at = ?5 WHERE id = ?1",
            args![bot.id.0, bot.name, bot.persona, endpoint, self.now],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("bot", bot.id));
        }
        let bot = self.bot(bot.id)?;
        self.event("bot_updated", None, None, json!({"bot": bot}))?;
        Ok(bot)
    }

    /// Archive a Bot: it leaves the list, its history stays.
    pub fn archive_bot(&mut self, id: BotId) -> Result<Bot> {
        let bot = self.bot(id)?;
        if bot.archived {
            // Already archived: nothing changes, nothing is announced again.
            return Ok(bot);
        }
        self.exec(
            "UPDATE bots SET archived_at = COALESCE(archived_at, ?2), updated_at = ?2 WHERE id = ?1",
            args![id.0, self.now],
        )?;
        let bot = self.bot(id)?;
        self.event("bot_archived", None, None, json!({"bot": bot}))?;
        Ok(bot)
    }

    pub fn set_model_role(&mut self, role: &str, endpoint: &EndpointSpec) -> Result<()> {
        let text =
            serde_json::to_string(endpoint).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.exec(
            "INSERT INTO model_roles (role, endpoint, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (role) DO UPDATE SET endpoint = excluded.endpoint, updated_at = excluded.updated_at",
            args![role, text, self.now],
        )?;
        self.event("role_set", None, None, json!({"role": role}))?;
        Ok(())
    }

    pub fn model_roles(&self) -> Result<Vec<(String, EndpointSpec)>> {
        let rows = self.query_all(
            "SELECT role, endpoint FROM model_roles ORDER BY role",
            args![],
            |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?)),
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (role, text) = row;
            out.push((
                role,
                serde_json::from_str(&text).map_err(|e| bad("role endpoint", e))?,
            ));
        }
        Ok(out)
    }

    pub fn create_session(
        &mut self,
        kind: SessionKind,
        title: &str,
        bots: &[BotId],
    ) -> Result<Session> {
        let id = SessionId(self.insert(
            "INSERT INTO sessions (kind, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
            args![kind.as_str(), title, self.now],
        )?);
        for b in bots {
            self.exec(
                "INSERT INTO session_members (session_id, bot_id, joined_at) VALUES (?1, ?2, ?3)",
                args![id.0, b.0, self.now],
            )?;
        }
        let session = self.session(id)?;
        self.session_event("session_created", id, None, json!({"session": session}))?;
        Ok(session)
    }

    pub fn session(&self, id: SessionId) -> Result<Session> {
        type SessionRow = (
            String,
            String,
            Option<i64>,
            i64,
            Option<i64>,
            Option<i64>,
            Option<String>,
        );
        let row: Option<SessionRow> = self.query_opt(
            "SELECT kind, title, archived_at, created_at, origin_session_id, opened_by_bot_id, opened_via
             FROM sessions WHERE id = ?1",
            args![id.0],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )?;
        let (kind, title, archived, created_at, origin, opened_by, opened_via) =
            row.ok_or_else(|| StoreError::not_found("session", id))?;
        // Present members only: one who left keeps its row (and history) but is not listed.
        let bot_ids: Vec<_> = self
            .query_all(
                "SELECT bot_id FROM session_members WHERE session_id = ?1 AND left_at IS NULL ORDER BY bot_id",
                args![id.0],
                |r| r.get::<i64>(0),
            )?
            .into_iter()
            .map(BotId)
            .collect();
        Ok(Session {
            id,
            kind: SessionKind::parse(&kind).map_err(|e| bad("session kind", e))?,
            title,
            bot_ids,
            archived: archived.is_some(),
            created_at,
            origin_session_id: origin.map(SessionId),
            opened_by_bot_id: opened_by.map(BotId),
            opened_via,
        })
    }

    pub fn sessions(&self, limit: u32) -> Result<Vec<Session>> {
        let ids: Vec<_> = self.query_all(
            "SELECT id FROM sessions WHERE archived_at IS NULL ORDER BY id DESC LIMIT ?1",
            args![limit],
            |r| r.get::<i64>(0),
        )?;
        ids.into_iter()
            .map(|id| self.session(SessionId(id)))
            .collect()
    }

    pub fn bind_thread(
        &mut self,
        session: SessionId,
        bot: BotId,
        thread: ThreadId,
        purpose: &str,
    ) -> Result<()> {
        self.exec(
            "INSERT INTO session_threads (thread_id, session_id, bot_id, purpose) VALUES (?1, ?2, ?3, ?4)",
            args![thread.0, session.0, bot.0, purpose],
        )?;
        Ok(())
    }

    /// The thread a Bot works in for a conversation, for one purpose.
    pub fn session_thread(
        &self,
        session: SessionId,
        bot: BotId,
        purpose: &str,
    ) -> Result<Option<ThreadId>> {
        Ok(self.query_opt(
                "SELECT thread_id FROM session_threads WHERE session_id = ?1 AND bot_id = ?2 AND purpose = ?3 ORDER BY thread_id LIMIT 1",
                args![session.0, bot.0, purpose],
                |r| r.get::<i64>(0),
            )?
            .map(ThreadId))
    }

    /// Each member's thread of `purpose` here (the first, as `session_thread` picks), in one
    /// query: routing a line to every member looks them up together.
    pub fn session_threads_by_bot(
        &self,
        session: SessionId,
        purpose: &str,
    ) -> Result<std::collections::HashMap<BotId, ThreadId>> {
        let rows = self.query_all(
            "SELECT bot_id, MIN(thread_id) FROM session_threads WHERE session_id = ?1 AND purpose = ?2
             GROUP BY bot_id",
            args![session.0, purpose],
            |r| Ok((BotId(r.get(0)?), ThreadId(r.get(1)?))),
        )?;
        Ok(rows.into_iter().collect())
    }

    pub fn session_threads(&self, session: SessionId) -> Result<Vec<ThreadId>> {
        let ids: Vec<_> = self
            .query_all(
                "SELECT thread_id FROM session_threads WHERE session_id = ?1 ORDER BY thread_id",
                args![session.0],
                |r| r.get::<i64>(0),
            )?
            .into_iter()
            .map(ThreadId)
            .collect();
        Ok(ids)
    }

    /// Every thread a Bot works in, across conversations.
    /// Every thread a Bot works in: its conversations' and its work on jobs.
    pub fn bot_threads(&self, bot: BotId) -> Result<Vec<ThreadId>> {
        let ids: Vec<_> = self
            .query_all(
                "SELECT thread_id FROM session_threads WHERE bot_id = ?1
                 UNION SELECT thread_id FROM work_items WHERE bot_id = ?1 AND mode = 'work'
                 ORDER BY 1",
                args![bot.0],
                |r| r.get::<i64>(0),
            )?
            .into_iter()
            .map(ThreadId)
            .collect();
        Ok(ids)
    }

    /// The conversation and Bot a thread works for, if any: a conversation's thread, or a
    /// Bot × job thread, which speaks where its newest segment does.
    pub fn thread_session(&self, thread: ThreadId) -> Result<Option<(SessionId, BotId)>> {
        let bound = self.query_opt(
            "SELECT session_id, bot_id FROM session_threads WHERE thread_id = ?1",
            args![thread.0],
            |r| Ok((SessionId(r.get(0)?), BotId(r.get(1)?))),
        )?;
        if bound.is_some() {
            return Ok(bound);
        }
        self.query_opt(
            "SELECT s.session_id, s.bot_id FROM segments s JOIN runs r ON r.id = s.run_id
             WHERE r.thread_id = ?1 ORDER BY s.run_id DESC LIMIT 1",
            args![thread.0],
            |r| Ok((SessionId(r.get(0)?), BotId(r.get(1)?))),
        )
    }

    pub fn insert_line(&mut self, l: &NewLine) -> Result<SessionMessage> {
        let ask = l
            .ask
            .as_ref()
            .map(|(a, _)| {
                let mut question = a.clone();
                question.answer = None;
                question.answered_at = None;
                question.closed_at = None;
                serde_json::to_string(&question)
            })
            .transpose()
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        let id = self.insert(
            "INSERT INTO session_messages (session_id, author, bot_id, parent_id, body, thread_message_id, turn_id, status, created_at, kind, routing, ask, ask_thread_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            args![
                l.session_id.0,
                l.author.as_str(),
                l.bot_id.map(|b| b.0),
                l.parent_id.map(|p| p.0),
                l.body,
                l.thread_message_id.map(|m| m.0),
                l.turn_id.map(|r| r.0),
                l.status.as_str(),
                self.now,
                l.kind.as_str(),
                l.routing,
                ask,
                l.ask.as_ref().map(|(_, t)| t.0)
            ],
        )?;
        let line = self.line(SessionMessageId(id))?;
        // Every plain line of the person's is kept as a quote in the write that stores it.
        if line.author == Author::User && line.kind == LineKind::Line {
            self.keep_line_quote(&line)?;
        }
        self.exec(
            "UPDATE sessions SET updated_at = ?2 WHERE id = ?1",
            args![l.session_id.0, self.now],
        )?;
        self.session_event(
            "session_message",
            l.session_id,
            l.turn_id,
            json!({"message": line}),
        )?;
        Ok(line)
    }

    pub fn line(&self, id: SessionMessageId) -> Result<SessionMessage> {
        let sql = format!("SELECT {LINE_COLUMNS} FROM session_messages WHERE id = ?1");
        self.query_opt(&sql, args![id.0], line_from_row)?
            .ok_or_else(|| StoreError::not_found("message", id))
    }

    /// Whether a kernel message was already projected into a conversation.
    pub fn line_for_thread_message(&self, m: MessageId) -> Result<Option<SessionMessageId>> {
        Ok(self
            .query_opt(
                "SELECT id FROM session_messages WHERE thread_message_id = ?1",
                args![m.0],
                |r| r.get::<i64>(0),
            )?
            .map(SessionMessageId))
    }

    /// The conversation's newest `n` lines, oldest first.
    pub fn recent_lines(&self, session: SessionId, n: u32) -> Result<Vec<SessionMessage>> {
        let sql = format!(
            "SELECT {LINE_COLUMNS} FROM session_messages WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2"
        );
        let mut lines = self.query_all(&sql, args![session.0, n], line_from_row)?;
        lines.reverse();
        Ok(lines)
    }

    pub fn lines(
        &self,
        session: SessionId,
        after: Option<SessionMessageId>,
        limit: u32,
    ) -> Result<Vec<SessionMessage>> {
        let sql = format!(
            "SELECT {LINE_COLUMNS} FROM session_messages WHERE session_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3"
        );
        self.query_all(
            &sql,
            args![session.0, after.map(|a| a.0).unwrap_or(0), limit],
            line_from_row,
        )
    }

    /// WQ-1: the conversation where the person last said something filed under `plan`, if it
    /// is still open (not archived).
    pub fn where_user_last_spoke_of(&self, plan: PlanId) -> Result<Option<SessionId>> {
        Ok(self
            .query_opt(
                "SELECT m.session_id FROM message_filings f
                 JOIN session_messages m ON m.id = f.message_id
                 JOIN sessions s ON s.id = m.session_id
                 WHERE f.plan_id = ?1 AND m.author = 'user' AND s.archived_at IS NULL
                 ORDER BY m.id DESC LIMIT 1",
                args![plan.0],
                |r| r.get::<i64>(0),
            )?
            .map(SessionId))
    }

    /// AC-12: the bodies of `bot`'s newest `n` replies in `session`, newest first — those filed
    /// under `plan` when it is given. A Bot's replies are lines it wrote (not asks or notices).
    pub fn bot_replies_in(
        &self,
        session: SessionId,
        bot: BotId,
        plan: Option<PlanId>,
        n: u32,
    ) -> Result<Vec<(SessionMessageId, String)>> {
        let row = |r: &crate::Row| Ok((SessionMessageId(r.get::<i64>(0)?), r.get::<String>(1)?));
        match plan {
            None => self.query_all(
                "SELECT id, body FROM session_messages
                 WHERE session_id = ?1 AND bot_id = ?2 AND author = 'bot' AND kind = 'line'
                 ORDER BY id DESC LIMIT ?3",
                args![session.0, bot.0, n],
                row,
            ),
            Some(plan) => self.query_all(
                "SELECT m.id, m.body FROM session_messages m
                 WHERE m.session_id = ?1 AND m.bot_id = ?2 AND m.author = 'bot'
                   AND m.kind = 'line'
                   AND EXISTS (SELECT 1 FROM message_filings f
                               WHERE f.message_id = m.id AND f.plan_id = ?3)
                 ORDER BY m.id DESC LIMIT ?4",
                args![session.0, bot.0, plan.0, n],
                row,
            ),
        }
    }

    /// The person's newest open direct conversation with `bot`.
    pub fn user_direct_with(&self, bot: BotId) -> Result<Option<SessionId>> {
        Ok(self
            .query_opt(
                "SELECT s.id FROM sessions s JOIN session_members m ON m.session_id = s.id
                 WHERE s.kind = 'direct' AND s.archived_at IS NULL AND m.bot_id = ?1
                   AND m.left_at IS NULL
                 ORDER BY s.id DESC LIMIT 1",
                args![bot.0],
                |r| r.get::<i64>(0),
            )?
            .map(SessionId))
    }
}
