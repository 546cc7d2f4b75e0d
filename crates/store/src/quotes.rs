//! User quotes (C §5) and a line's earlier words. A quote is written in the transaction that
//! writes the words it keeps (a person's line, an answer, a board edit, an edit's changed
//! clauses); it is filed like its line, and follows each later filing of the line
//! (`Tx::file_line` files the line's quotes with it). A clear keeps quotes (UQ-1); only erasing empties
//! them (UQ-2), and nothing ever rewrites their words.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::conversation::SessionMessage;
use troupe_core::quote::{QuoteSource, clip_quote};
use troupe_core::{PlanId, SessionId, SessionMessageId};

/// A job (and maybe ticket) a quote is filed under.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct QuoteFiling {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub plan_id: PlanId,
    pub ticket_id: Option<i64>,
}

/// A `user_quotes` row with its filings.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UserQuote {
    pub id: i64,
    /// The words verbatim (cut as `clip_quote` does); empty once erased.
    pub body: String,
    /// The line (or, for an answer, the ask) it came from; null after a clear.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub message_id: Option<SessionMessageId>,
    /// Where it was said; null for board words and after a group's deletion.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub session_id: Option<SessionId>,
    pub source: QuoteSource,
    /// An edit's quote: the line's first quote.
    pub first_quote_id: Option<i64>,
    pub erased: bool,
    pub created_at: i64,
    pub filings: Vec<QuoteFiling>,
}

/// A quote to keep. Filed under `filings`, and under whatever its line is filed under now.
#[derive(Clone, Debug)]
pub struct NewQuote {
    pub body: String,
    pub message_id: Option<SessionMessageId>,
    pub session_id: Option<SessionId>,
    pub source: QuoteSource,
    pub first_quote_id: Option<i64>,
    pub filings: Vec<QuoteFiling>,
}

/// A line's words before one of its edits.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LineVersion {
    /// 1 for the words as sent, then one more per edit.
    pub version: i64,
    pub body: String,
    /// When these words were written (sent, or saved by an edit).
    pub at: i64,
}

const COLUMNS: &str =
    "id, body, message_id, session_id, source_kind, first_quote_id, erased, created_at";

type Row = (
    i64,
    String,
    Option<i64>,
    Option<i64>,
    String,
    Option<i64>,
    bool,
    i64,
);

fn row(r: &crate::Row) -> Result<Row> {
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
}

impl Tx<'_> {
    /// Keep a quote; answers it with its filings.
    pub fn insert_quote(&mut self, q: &NewQuote) -> Result<UserQuote> {
        let id = self.insert(
            "INSERT INTO user_quotes
                 (body, message_id, session_id, source_kind, first_quote_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            args![
                clip_quote(&q.body),
                q.message_id.map(|m| m.0),
                q.session_id.map(|s| s.0),
                q.source.as_str(),
                q.first_quote_id,
                self.now
            ],
        )?;
        for f in &q.filings {
            self.file_quote(id, *f)?;
        }
        if let Some(line) = q.message_id {
            // Filed like its line is now; later filings follow by the trigger.
            self.exec(
                "INSERT INTO user_quote_filings (quote_id, plan_id, ticket_id, at)
                 SELECT ?1, plan_id, ticket_id, ?3 FROM message_filings WHERE message_id = ?2
                 ON CONFLICT DO NOTHING",
                args![id, line.0, self.now],
            )?;
        }
        let payload = json!({"quote_id": id, "message_id": q.message_id,
                             "source_kind": q.source.as_str()});
        match q.session_id {
            Some(s) => self.session_event("user_quote_kept", s, None, payload)?,
            None => self.event("user_quote_kept", None, None, payload)?,
        }
        self.user_quote(id)
    }

    /// A person's line, kept as it is written (every plain line of the person's).
    pub fn keep_line_quote(&mut self, line: &SessionMessage) -> Result<UserQuote> {
        self.insert_quote(&NewQuote {
            body: line.body.clone(),
            message_id: Some(line.id),
            session_id: Some(line.session_id),
            source: QuoteSource::Line,
            first_quote_id: None,
            filings: Vec::new(),
        })
    }

    /// File a quote under a job (and ticket); filing it there again changes nothing.
    pub fn file_quote(&mut self, quote: i64, f: QuoteFiling) -> Result<bool> {
        let n = self.exec(
            "INSERT INTO user_quote_filings (quote_id, plan_id, ticket_id, at)
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
            args![quote, f.plan_id.0, f.ticket_id, self.now],
        )?;
        Ok(n > 0)
    }

    /// A line's quotes follow a filing the line just got (reader, desk, `work_on`, a
    /// refile): `Tx::file_line` calls this in its write.
    pub fn file_line_quotes(
        &mut self,
        line: SessionMessageId,
        plan: PlanId,
        ticket: Option<i64>,
    ) -> Result<usize> {
        self.exec(
            "INSERT INTO user_quote_filings (quote_id, plan_id, ticket_id, at)
             SELECT id, ?2, ?3, ?4 FROM user_quotes WHERE message_id = ?1
             ON CONFLICT DO NOTHING",
            args![line.0, plan.0, ticket, self.now],
        )
    }

    /// One quote.
    pub fn user_quote(&self, id: i64) -> Result<UserQuote> {
        let sql = format!("SELECT {COLUMNS} FROM user_quotes WHERE id = ?1");
        let r = self
            .query_opt(&sql, args![id], row)?
            .ok_or_else(|| StoreError::not_found("user quote", id))?;
        self.quote_of(r)
    }

    /// Every quote filed under the job (erased ones too, empty), oldest first.
    pub fn quotes_of_plan(&self, plan: PlanId) -> Result<Vec<UserQuote>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM user_quotes WHERE id IN
                 (SELECT quote_id FROM user_quote_filings WHERE plan_id = ?1)
             ORDER BY created_at, id"
        );
        let rows = self.query_all(&sql, args![plan.0], row)?;
        rows.into_iter().map(|r| self.quote_of(r)).collect()
    }

    /// The quotes of one line (its first, then its edits'), oldest first.
    pub fn quotes_of_line(&self, line: SessionMessageId) -> Result<Vec<UserQuote>> {
        let sql = format!("SELECT {COLUMNS} FROM user_quotes WHERE message_id = ?1 ORDER BY id");
        let rows = self.query_all(&sql, args![line.0], row)?;
        rows.into_iter().map(|r| self.quote_of(r)).collect()
    }

    fn quote_of(&self, r: Row) -> Result<UserQuote> {
        let (id, body, message_id, session_id, source, first_quote_id, erased, created_at) = r;
        let filings = self.query_all(
            "SELECT plan_id, ticket_id FROM user_quote_filings WHERE quote_id = ?1
             ORDER BY plan_id, COALESCE(ticket_id, 0)",
            args![id],
            |r| {
                Ok(QuoteFiling {
                    plan_id: PlanId(r.get(0)?),
                    ticket_id: r.get(1)?,
                })
            },
        )?;
        Ok(UserQuote {
            id,
            body,
            message_id: message_id.map(SessionMessageId),
            session_id: session_id.map(SessionId),
            source: QuoteSource::parse(&source)
                .map_err(|e| StoreError::Corrupt(format!("quote source: {e}")))?,
            first_quote_id,
            erased,
            created_at,
            filings,
        })
    }

    /// UQ-1: a clear keeps the conversation's quotes but not their tie to its lines; a
    /// group's deletion (`forget_session`) unties them from the group too. How many changed.
    pub fn detach_session_quotes(
        &mut self,
        session: SessionId,
        forget_session: bool,
    ) -> Result<usize> {
        let sql = if forget_session {
            "UPDATE user_quotes SET message_id = NULL, session_id = NULL WHERE session_id = ?1"
        } else {
            "UPDATE user_quotes SET message_id = NULL
             WHERE session_id = ?1 AND message_id IS NOT NULL"
        };
        self.exec(sql, args![session.0])
    }

    /// UQ-2: the words said in the conversation are erased: emptied, marked, the rows kept.
    /// Board words have no conversation and are untouched. How many were erased.
    pub fn erase_session_quotes(&mut self, session: SessionId) -> Result<usize> {
        self.exec(
            "UPDATE user_quotes SET body = '', erased = 1 WHERE session_id = ?1 AND erased = 0",
            args![session.0],
        )
    }

    /// UQ-17: a line taken back: its quotes are erased.
    pub fn erase_line_quotes(&mut self, line: SessionMessageId) -> Result<usize> {
        self.exec(
            "UPDATE user_quotes SET body = '', erased = 1 WHERE message_id = ?1 AND erased = 0",
            args![line.0],
        )
    }

    /// Change a person's line's words (ADR 0063): its words before are kept as a version,
    /// the line says when it was edited, and its clients are told.
    pub fn edit_line_body(&mut self, line: SessionMessageId, body: &str) -> Result<SessionMessage> {
        let before = self.line(line)?;
        let versions: i64 = self.query_one(
            "SELECT COUNT(*) FROM line_versions WHERE message_id = ?1",
            args![line.0],
            |r| r.get(0),
        )?;
        // The words as sent were written when the line was; each later one at its edit.
        let at = if versions == 0 {
            before.created_at
        } else {
            before.edited_at.unwrap_or(before.created_at)
        };
        self.exec(
            "INSERT INTO line_versions (message_id, version, body, at) VALUES (?1, ?2, ?3, ?4)",
            args![line.0, versions + 1, before.body, at],
        )?;
        self.exec(
            "UPDATE session_messages SET body = ?2, edited_at = ?3 WHERE id = ?1",
            args![line.0, body, self.now],
        )?;
        let after = self.line(line)?;
        self.session_event(
            "session_message_edited",
            after.session_id,
            None,
            json!({"message": after}),
        )?;
        Ok(after)
    }

    /// A line's earlier words, oldest first (the current words are the line's own).
    pub fn line_versions(&self, line: SessionMessageId) -> Result<Vec<LineVersion>> {
        self.query_all(
            "SELECT version, body, at FROM line_versions WHERE message_id = ?1 ORDER BY version",
            args![line.0],
            |r| {
                Ok(LineVersion {
                    version: r.get(0)?,
                    body: r.get(1)?,
                    at: r.get(2)?,
                })
            },
        )
    }

    /// The edit history of the conversation's lines goes with its transcript. How many
    /// versions went.
    pub fn delete_session_line_versions(&mut self, session: SessionId) -> Result<usize> {
        let n = self.exec(
            "DELETE FROM line_versions
             WHERE message_id IN (SELECT id FROM session_messages WHERE session_id = ?1)",
            args![session.0],
        )?;
        self.exec(
            "UPDATE session_messages SET edited_at = NULL
             WHERE session_id = ?1 AND edited_at IS NOT NULL",
            args![session.0],
        )?;
        Ok(n)
    }

    /// A person's plain line taken as a waiting Bot's answer (ASK-4): its quote is an
    /// answer's, so the line is no longer editable (UQ-7).
    pub fn mark_line_quote_answer(&mut self, line: SessionMessageId) -> Result<usize> {
        self.exec(
            "UPDATE user_quotes SET source_kind = 'answer'
             WHERE message_id = ?1 AND source_kind = 'line' AND first_quote_id IS NULL",
            args![line.0],
        )
    }

    /// Whether the app carried the line out as a stop itself (CL-2): a hold made from its
    /// words, and no Bot given the line. An undone stop handed to a Bot as a line has a
    /// delivery and is the person's line again.
    pub fn line_executed_as_stop(&self, line: SessionMessageId) -> Result<bool> {
        self.query_one(
            "SELECT EXISTS (SELECT 1 FROM holds WHERE source_message_id = ?1
                                AND source = 'user_text')
                 AND NOT EXISTS (SELECT 1 FROM line_deliveries WHERE line_id = ?1)",
            args![line.0],
            |r| r.get::<bool>(0),
        )
    }

    /// UQ-13: an unread inbox item of an edited line holds its new words only.
    pub fn set_inbox_body(&mut self, item: troupe_core::InboxItemId, body: &str) -> Result<()> {
        self.exec(
            "UPDATE inbox_items SET body = ?2 WHERE id = ?1",
            args![item.0, body],
        )?;
        Ok(())
    }

    /// UQ-5: whether the run is the first segment any Bot ran on the job (its trigger is the
    /// request that opened the job).
    pub fn first_segment_of_plan(&self, plan: PlanId, run: troupe_core::RunId) -> Result<bool> {
        let earlier: i64 = self.query_one(
            "SELECT COUNT(*) FROM segments s JOIN work_items w ON w.id = s.work_item_id
             WHERE w.plan_id = ?1 AND s.run_id < ?2",
            args![plan.0, run.0],
            |r| r.get(0),
        )?;
        Ok(earlier == 0)
    }
}
