//! A Bot's memories (digest 003-B §11.4): notes it keeps for itself, at most 20 on at once,
//! one per subject (compared without case). Written by the Bot's `remember`, edited or turned
//! off by the person, or written by the Bot's retrospective, which marks them until the Bot
//! or the person rewrites them.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::{BotId, bot_memory};

/// One memory.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BotMemory {
    pub id: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub bot_id: BotId,
    pub subject: String,
    pub body: String,
    /// Off: the Bot no longer reads it, and nothing but the person changes it.
    pub enabled: bool,
    /// The retrospective that wrote it, until the Bot or the person rewrites it.
    pub retrospective_id: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The name of the job whose retrospective wrote it ("Written by the retrospective of …").
    pub retrospective_of: Option<String>,
}

/// Who writes a memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemoryWriter {
    /// The Bot, in a turn (its `remember` tool).
    Bot,
    /// The person, through the API or the page.
    Person,
    /// The Bot's retrospective (its id).
    Retrospective(i64),
}

/// With the name of the job whose retrospective wrote it, for its mark.
const SELECT: &str = "SELECT m.id, m.bot_id, m.subject, m.body, m.enabled, m.retrospective_id, \
    m.created_at, m.updated_at, p.name
    FROM bot_memories m
    LEFT JOIN retrospectives r ON r.id = m.retrospective_id
    LEFT JOIN plans p ON p.id = r.plan_id";

fn row(r: &crate::db::Row) -> Result<BotMemory> {
    Ok(BotMemory {
        id: r.get(0)?,
        bot_id: BotId(r.get(1)?),
        subject: r.get(2)?,
        body: r.get(3)?,
        enabled: r.get::<i64>(4)? == 1,
        retrospective_id: r.get(5)?,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
        retrospective_of: r.get(8)?,
    })
}

fn invalid(e: String) -> StoreError {
    StoreError::Invalid(e)
}

impl Tx<'_> {
    /// A Bot's memories, oldest first.
    pub fn bot_memories(&self, bot: BotId) -> Result<Vec<BotMemory>> {
        self.query_all(
            &format!("{SELECT} WHERE m.bot_id = ?1 ORDER BY m.id"),
            args![bot.0],
            row,
        )
    }

    pub fn bot_memory(&self, id: i64) -> Result<BotMemory> {
        self.query_opt(&format!("{SELECT} WHERE m.id = ?1"), args![id], row)?
            .ok_or_else(|| StoreError::not_found("memory", id))
    }

    /// The Bot's memory with this subject, compared without case.
    pub fn bot_memory_by_subject(&self, bot: BotId, subject: &str) -> Result<Option<BotMemory>> {
        let wanted = subject.trim().to_lowercase();
        Ok(self
            .bot_memories(bot)?
            .into_iter()
            .find(|m| m.subject.to_lowercase() == wanted))
    }

    /// Write a memory: a new subject is added (on, if fewer than 20 are on), the same subject
    /// rewritten. A memory the person turned off is not touched. Answers the memory and the
    /// body it replaced.
    pub fn write_bot_memory(
        &mut self,
        bot: BotId,
        subject: &str,
        body: &str,
        by: MemoryWriter,
    ) -> Result<(BotMemory, Option<String>)> {
        let subject = bot_memory::subject(subject).map_err(invalid)?;
        let body = bot_memory::body(body).map_err(invalid)?;
        let mark = match by {
            MemoryWriter::Bot | MemoryWriter::Person => None,
            MemoryWriter::Retrospective(r) => Some(r),
        };
        let (id, before) = match self.bot_memory_by_subject(bot, &subject)? {
            Some(m) if !m.enabled => {
                return Err(StoreError::Conflict(format!(
                    "the memory \"{}\" was turned off by the person; it is not changed",
                    m.subject
                )));
            }
            Some(m) => {
                self.exec(
                    "UPDATE bot_memories SET body = ?2, retrospective_id = ?3, updated_at = ?4
                     WHERE id = ?1",
                    args![m.id, body, mark, self.now],
                )?;
                (m.id, Some(m.body))
            }
            None => {
                let on = self.bot_memories(bot)?.iter().filter(|m| m.enabled).count();
                bot_memory::room_for_one_more(on).map_err(invalid)?;
                let id = self.insert(
                    "INSERT INTO bot_memories (bot_id, subject, body, enabled, retrospective_id,
                         created_at, updated_at)
                     VALUES (?1, ?2, ?3, 1, ?4, ?5, ?5)",
                    args![bot.0, subject, body, mark, self.now],
                )?;
                (id, None)
            }
        };
        let m = self.bot_memory(id)?;
        self.memory_event(&m, "written")?;
        Ok((m, before))
    }

    /// Delete the Bot's memory with this subject; a memory the person turned off is not
    /// touched. Answers what was deleted (none: no such subject).
    pub fn forget_bot_memory(&mut self, bot: BotId, subject: &str) -> Result<Option<BotMemory>> {
        match self.bot_memory_by_subject(bot, subject)? {
            None => Ok(None),
            Some(m) if !m.enabled => Err(StoreError::Conflict(format!(
                "the memory \"{}\" was turned off by the person; it is not changed",
                m.subject
            ))),
            Some(m) => self.delete_bot_memory(m.id).map(Some),
        }
    }

    /// The person's edit: new words (which clear the retrospective's mark) or on/off.
    pub fn edit_bot_memory(
        &mut self,
        id: i64,
        subject: Option<&str>,
        body: Option<&str>,
        enabled: Option<bool>,
    ) -> Result<BotMemory> {
        let cur = self.bot_memory(id)?;
        let subject = match subject {
            Some(s) => bot_memory::subject(s).map_err(invalid)?,
            None => cur.subject.clone(),
        };
        let body = match body {
            Some(b) => bot_memory::body(b).map_err(invalid)?,
            None => cur.body.clone(),
        };
        if subject.to_lowercase() != cur.subject.to_lowercase()
            && self.bot_memory_by_subject(cur.bot_id, &subject)?.is_some()
        {
            return Err(StoreError::Conflict(format!(
                "this Bot already has a memory \"{subject}\""
            )));
        }
        let enabled = enabled.unwrap_or(cur.enabled);
        if enabled && !cur.enabled {
            let on = self
                .bot_memories(cur.bot_id)?
                .iter()
                .filter(|m| m.enabled)
                .count();
            bot_memory::room_for_one_more(on).map_err(invalid)?;
        }
        let reworded = subject != cur.subject || body != cur.body;
        let mark = if reworded { None } else { cur.retrospective_id };
        self.exec(
            "UPDATE bot_memories SET subject = ?2, body = ?3, enabled = ?4, retrospective_id = ?5,
                 updated_at = ?6
             WHERE id = ?1",
            args![id, subject, body, i64::from(enabled), mark, self.now],
        )?;
        let m = self.bot_memory(id)?;
        self.memory_event(&m, "edited")?;
        Ok(m)
    }

    pub fn delete_bot_memory(&mut self, id: i64) -> Result<BotMemory> {
        let m = self.bot_memory(id)?;
        self.exec("DELETE FROM bot_memories WHERE id = ?1", args![id])?;
        self.memory_event(&m, "deleted")?;
        Ok(m)
    }

    /// Put back a memory as it was (a retrospective's change undone).
    pub(crate) fn restore_bot_memory(
        &mut self,
        bot: BotId,
        subject: &str,
        body: &str,
    ) -> Result<BotMemory> {
        let on = self.bot_memories(bot)?.iter().filter(|m| m.enabled).count();
        bot_memory::room_for_one_more(on).map_err(invalid)?;
        let id = self.insert(
            "INSERT INTO bot_memories (bot_id, subject, body, enabled, created_at, updated_at)
             VALUES (?1, ?2, ?3, 1, ?4, ?4)",
            args![bot.0, subject, body, self.now],
        )?;
        let m = self.bot_memory(id)?;
        self.memory_event(&m, "restored")?;
        Ok(m)
    }

    fn memory_event(&mut self, m: &BotMemory, change: &str) -> Result<()> {
        self.event(
            "bot_memory_changed",
            None,
            None,
            json!({"bot_id": m.bot_id, "memory_id": m.id, "subject": m.subject, "change": change}),
        )
    }
}
