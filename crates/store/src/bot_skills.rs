//! A Bot's skills (seed 003, ADR 0052): named instructions it reads with `read_skill`, one
//! per name (compared without case), at most 30 a Bot. Written by the Bot's `write_skill`, the
//! person, or the Bot's retrospective, whose change stands marked until the Bot or the person
//! rewrites the skill.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::{BotId, skill};

/// One skill.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BotSkill {
    pub id: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub bot_id: BotId,
    pub name: String,
    /// The catalog line: what it is for.
    pub description: String,
    pub body: String,
    /// The retrospective whose change stands in it, until the Bot or the person rewrites it.
    pub retrospective_id: Option<i64>,
    /// The name of that retrospective's job.
    pub retrospective_of: Option<String>,
    /// The project skill copied from it, if it is shared.
    pub shared_as: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One line of a Bot's catalog: a skill's name and what it is for, not its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogEntry {
    pub name: String,
    pub description: String,
    /// A project skill: its owner's name. None: the Bot's own.
    pub shared_from: Option<String>,
}

/// Who writes a skill.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SkillWriter {
    /// The Bot, in a turn (its `write_skill` tool).
    Bot,
    /// The person, through the API or the page.
    Person,
    /// The Bot's retrospective (its id).
    Retrospective(i64),
}

/// A skill written or rewritten: the name, the catalog line (a new skill needs one; none
/// keeps a rewritten skill's) and the text.
#[derive(Clone, Debug)]
pub struct SkillText<'a> {
    pub name: &'a str,
    pub description: Option<&'a str>,
    pub body: &'a str,
}

const SELECT: &str = "SELECT s.id, s.bot_id, s.name, s.description, s.body, s.retrospective_id, \
    p.name, ps.id, s.created_at, s.updated_at
    FROM bot_skills s
    LEFT JOIN retrospectives r ON r.id = s.retrospective_id
    LEFT JOIN plans p ON p.id = r.plan_id
    LEFT JOIN project_skills ps ON ps.source_skill_id = s.id";

fn row(r: &crate::db::Row) -> Result<BotSkill> {
    Ok(BotSkill {
        id: r.get(0)?,
        bot_id: BotId(r.get(1)?),
        name: r.get(2)?,
        description: r.get(3)?,
        body: r.get(4)?,
        retrospective_id: r.get(5)?,
        retrospective_of: r.get(6)?,
        shared_as: r.get(7)?,
        created_at: r.get(8)?,
        updated_at: r.get(9)?,
    })
}

/// The id of the row whose name is `wanted`, compared without case.
pub(crate) fn same_name(rows: Vec<(i64, String)>, wanted: &str) -> Option<i64> {
    let wanted = wanted.trim().to_lowercase();
    rows.into_iter()
        .find(|(_, n)| n.to_lowercase() == wanted)
        .map(|(id, _)| id)
}

pub(crate) fn invalid(e: String) -> StoreError {
    StoreError::Invalid(e)
}

impl Tx<'_> {
    /// A Bot's skills, by name.
    pub fn bot_skills(&self, bot: BotId) -> Result<Vec<BotSkill>> {
        self.query_all(
            &format!("{SELECT} WHERE s.bot_id = ?1 ORDER BY lower(s.name)"),
            args![bot.0],
            row,
        )
    }

    /// The Bot's catalog, read at every model call: its own skills, then the project skills
    /// that are on, by name and catalog line only.
    pub fn skill_catalog(&self, bot: BotId) -> Result<Vec<CatalogEntry>> {
        self.query_all(
            "SELECT name, description, NULL, 0 FROM bot_skills WHERE bot_id = ?1
             UNION ALL
             SELECT ps.name, ps.description, b.name, 1 FROM project_skills ps
             JOIN bots b ON b.id = ps.owner_bot_id WHERE ps.enabled = 1
             ORDER BY 4, 1",
            args![bot.0],
            |r| {
                Ok(CatalogEntry {
                    name: r.get(0)?,
                    description: r.get(1)?,
                    shared_from: r.get(2)?,
                })
            },
        )
    }

    pub fn bot_skill(&self, id: i64) -> Result<BotSkill> {
        self.query_opt(&format!("{SELECT} WHERE s.id = ?1"), args![id], row)?
            .ok_or_else(|| StoreError::not_found("skill", id))
    }

    /// The Bot's skill with this name, compared without case — in Rust, so both backends fold
    /// the same letters (SQLite's `lower()` folds ASCII only).
    pub fn bot_skill_by_name(&self, bot: BotId, name: &str) -> Result<Option<BotSkill>> {
        let names = self.query_all(
            "SELECT id, name FROM bot_skills WHERE bot_id = ?1",
            args![bot.0],
            |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
        )?;
        match same_name(names, name) {
            Some(id) => self.bot_skill(id).map(Some),
            None => Ok(None),
        }
    }

    /// Write a skill: a new name is added (it needs a description; at most 30 a Bot), the
    /// same name rewritten. Answers the skill and the text it replaced.
    pub fn write_bot_skill(
        &mut self,
        bot: BotId,
        text: &SkillText<'_>,
        by: SkillWriter,
    ) -> Result<(BotSkill, Option<String>)> {
        let name = skill::name(text.name).map_err(invalid)?;
        // In the order the page's form asks for them, so the first fault named is the first seen.
        let description = text
            .description
            .map(skill::description)
            .transpose()
            .map_err(invalid)?;
        let body = skill::body(text.body).map_err(invalid)?;
        let mark = match by {
            SkillWriter::Bot | SkillWriter::Person => None,
            SkillWriter::Retrospective(r) => Some(r),
        };
        let (id, before) = match self.bot_skill_by_name(bot, &name)? {
            Some(s) => {
                let description = description.unwrap_or(s.description);
                self.exec(
                    "UPDATE bot_skills SET description = ?2, body = ?3, retrospective_id = ?4,
                         updated_at = ?5
                     WHERE id = ?1",
                    args![s.id, description, body, mark, self.now],
                )?;
                (s.id, Some(s.body))
            }
            None => {
                let description = description.ok_or_else(|| {
                    invalid("a new skill needs a description: one line on what it is for".into())
                })?;
                let held = self.query_one(
                    "SELECT count(*) FROM bot_skills WHERE bot_id = ?1",
                    args![bot.0],
                    |r| Ok(r.get::<i64>(0)? as usize),
                )?;
                skill::room_for_one_more(held).map_err(invalid)?;
                let id = self.insert(
                    "INSERT INTO bot_skills (bot_id, name, description, body, retrospective_id,
                         created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                    args![bot.0, name, description, body, mark, self.now],
                )?;
                (id, None)
            }
        };
        let s = self.bot_skill(id)?;
        self.skill_event(
            &s,
            if before.is_some() {
                "rewritten"
            } else {
                "added"
            },
        )?;
        Ok((s, before))
    }

    /// The person's edit: a new name, catalog line or text (any of which clears the
    /// retrospective's mark).
    pub fn edit_bot_skill(
        &mut self,
        id: i64,
        name: Option<&str>,
        description: Option<&str>,
        body: Option<&str>,
    ) -> Result<BotSkill> {
        let cur = self.bot_skill(id)?;
        let name = match name {
            Some(n) => skill::name(n).map_err(invalid)?,
            None => cur.name.clone(),
        };
        let description = match description {
            Some(d) => skill::description(d).map_err(invalid)?,
            None => cur.description.clone(),
        };
        let body = match body {
            Some(b) => skill::body(b).map_err(invalid)?,
            None => cur.body.clone(),
        };
        if name.to_lowercase() != cur.name.to_lowercase()
            && self.bot_skill_by_name(cur.bot_id, &name)?.is_some()
        {
            return Err(StoreError::Conflict(format!(
                "this Bot already has a skill \"{name}\""
            )));
        }
        let changed = name != cur.name || description != cur.description || body != cur.body;
        let mark = if changed { None } else { cur.retrospective_id };
        self.exec(
            "UPDATE bot_skills SET name = ?2, description = ?3, body = ?4, retrospective_id = ?5,
                 updated_at = ?6
             WHERE id = ?1",
            args![id, name, description, body, mark, self.now],
        )?;
        let s = self.bot_skill(id)?;
        self.skill_event(&s, "edited")?;
        Ok(s)
    }

    /// Delete a skill. A shared copy of it stays, no longer tied to it.
    pub fn delete_bot_skill(&mut self, id: i64) -> Result<BotSkill> {
        let s = self.bot_skill(id)?;
        self.exec(
            "UPDATE project_skills SET source_skill_id = NULL WHERE source_skill_id = ?1",
            args![id],
        )?;
        self.exec("DELETE FROM bot_skills WHERE id = ?1", args![id])?;
        self.skill_event(&s, "deleted")?;
        Ok(s)
    }

    /// Put a skill's text back as it was before a retrospective's change (the change undone).
    pub(crate) fn restore_bot_skill(&mut self, id: i64, body: &str) -> Result<BotSkill> {
        self.exec(
            "UPDATE bot_skills SET body = ?2, retrospective_id = NULL, updated_at = ?3
             WHERE id = ?1",
            args![id, body, self.now],
        )?;
        let s = self.bot_skill(id)?;
        self.skill_event(&s, "restored")?;
        Ok(s)
    }

    fn skill_event(&mut self, s: &BotSkill, change: &str) -> Result<()> {
        self.event(
            "skill_changed",
            None,
            None,
            json!({"bot_id": s.bot_id, "skill_id": s.id, "name": s.name, "change": change}),
        )
    }
}
