//! What became of a person's line a Bot's turn read (digest 003-A END-3, END-6): the ending's
//! disposition for it, kept per line and turn. Writing one again for the same turn changes
//! nothing (an ending is recorded once).

use crate::{Result, Tx, args};
use serde::Serialize;
use troupe_core::ending::Disposition;
use troupe_core::{BotId, RunId, SessionId, SessionMessageId};

/// One disposition to record.
#[derive(Clone, Debug)]
pub struct NewLineDisposition {
    pub message_id: SessionMessageId,
    pub run_id: RunId,
    pub bot_id: BotId,
    pub disposition: Disposition,
    pub why: Option<String>,
    pub by_prose: bool,
}

/// A recorded disposition.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineDispositionRecord {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub message_id: SessionMessageId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub turn_id: RunId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub bot_id: BotId,
    /// adopted, answered, declined or deferred.
    pub disposition: String,
    pub why: Option<String>,
    /// Answered by the turn's prose ending rather than given by the Bot.
    pub by_prose: bool,
    pub at: i64,
}

impl Tx<'_> {
    /// Record a disposition; one already recorded for this line and turn stays.
    pub fn record_line_disposition(&mut self, d: &NewLineDisposition) -> Result<()> {
        self.exec(
            "INSERT INTO line_dispositions (message_id, run_id, bot_id, disposition, why,
                 by_prose, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (message_id, run_id) DO NOTHING",
            args![
                d.message_id.0,
                d.run_id.0,
                d.bot_id.0,
                d.disposition.as_str(),
                d.why.as_deref().map(str::trim).filter(|w| !w.is_empty()),
                d.by_prose,
                self.now
            ],
        )?;
        Ok(())
    }

    /// The delivery keys of the person's mail run `run` read after its start (not the task
    /// that started it), oldest first: only the run's own stretch of its thread is looked at.
    pub fn person_mail_read_in(&self, run: RunId) -> Result<Vec<String>> {
        self.query_all(
            "SELECT m.delivery_key FROM runs r
             JOIN messages m ON m.thread_id = r.thread_id AND m.id > coalesce(r.root_id, 0)
             WHERE r.id = ?1 AND m.run_id = r.id AND m.role = 'user' AND m.is_root = 0
               AND m.origin = 'user' AND m.delivery_key IS NOT NULL
             ORDER BY m.id",
            args![run.0],
            |r| r.get(0),
        )
    }

    /// A line's dispositions, oldest first.
    pub fn line_dispositions(&self, line: SessionMessageId) -> Result<Vec<LineDispositionRecord>> {
        self.query_all(
            "SELECT message_id, run_id, bot_id, disposition, why, by_prose, at
             FROM line_dispositions WHERE message_id = ?1 ORDER BY at, run_id",
            args![line.0],
            |r| {
                Ok(LineDispositionRecord {
                    message_id: SessionMessageId(r.get(0)?),
                    turn_id: RunId(r.get(1)?),
                    bot_id: BotId(r.get(2)?),
                    disposition: r.get(3)?,
                    why: r.get(4)?,
                    by_prose: r.get(5)?,
                    at: r.get(6)?,
                })
            },
        )
    }

    /// Clearing a conversation blanks what the Bots said of its lines; what they did stays.
    pub fn blank_session_dispositions(&mut self, session: SessionId) -> Result<usize> {
        self.exec(
            "UPDATE line_dispositions SET why = NULL
             WHERE why IS NOT NULL
               AND message_id IN (SELECT id FROM session_messages WHERE session_id = ?1)",
            args![session.0],
        )
    }
}
