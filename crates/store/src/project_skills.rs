//! Project skills (QE7, ADR 0052): a Bot's skill shared with every Bot as a copy of it as it
//! was then. Every Bot's catalog shows the ones that are on (at most 20) and every Bot reads
//! them; none changes them. The person updates the copy from the owner's skill, turns it off,
//! or stops sharing it; a copy outlives its owner's skill and its owner.

use crate::bot_skills::{invalid, same_name};
use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::{BotId, skill};

/// One shared copy.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProjectSkill {
    pub id: i64,
    /// The skill it was copied from; none once the owner deleted it.
    pub source_skill_id: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub owner_bot_id: BotId,
    pub owner_name: String,
    /// The owner was archived: the copy is marked as from an archived Bot.
    pub owner_archived: bool,
    pub name: String,
    pub description: String,
    pub body: String,
    pub enabled: bool,
    pub shared_at: i64,
    pub updated_at: i64,
    /// The owner has changed its skill since this copy was taken ("Update the shared copy").
    pub owner_changed: bool,
    /// When the owner's skill last changed (what an update confirms it was shown).
    pub source_updated_at: Option<i64>,
}

const SELECT: &str = "SELECT ps.id, ps.source_skill_id, ps.owner_bot_id, b.name, \
    b.archived_at IS NOT NULL, ps.name, ps.description, ps.body, ps.enabled, ps.shared_at, \
    ps.updated_at, s.body IS NOT NULL AND (s.body <> ps.body OR s.description <> ps.description \
    OR s.name <> ps.name), s.updated_at
    FROM project_skills ps
    JOIN bots b ON b.id = ps.owner_bot_id
    LEFT JOIN bot_skills s ON s.id = ps.source_skill_id";

fn row(r: &crate::db::Row) -> Result<ProjectSkill> {
    Ok(ProjectSkill {
        id: r.get(0)?,
        source_skill_id: r.get(1)?,
        owner_bot_id: BotId(r.get(2)?),
        owner_name: r.get(3)?,
        owner_archived: r.get::<bool>(4)?,
        name: r.get(5)?,
        description: r.get(6)?,
        body: r.get(7)?,
        enabled: r.get::<i64>(8)? == 1,
        shared_at: r.get(9)?,
        updated_at: r.get(10)?,
        owner_changed: r.get::<Option<bool>>(11)?.unwrap_or(false),
        source_updated_at: r.get(12)?,
    })
}

impl Tx<'_> {
    /// Every shared copy, by name.
    pub fn project_skills(&self) -> Result<Vec<ProjectSkill>> {
        self.query_all(&format!("{SELECT} ORDER BY lower(ps.name)"), &[], row)
    }

    pub fn project_skill(&self, id: i64) -> Result<ProjectSkill> {
        self.query_opt(&format!("{SELECT} WHERE ps.id = ?1"), args![id], row)?
            .ok_or_else(|| StoreError::not_found("project skill", id))
    }

    /// The shared copy with this name, compared without case (in Rust, as a Bot's skill's).
    pub fn project_skill_by_name(&self, name: &str) -> Result<Option<ProjectSkill>> {
        let names = self.query_all("SELECT id, name FROM project_skills", &[], |r| {
            Ok((r.get::<i64>(0)?, r.get::<String>(1)?))
        })?;
        match same_name(names, name) {
            Some(id) => self.project_skill(id).map(Some),
            None => Ok(None),
        }
    }

    fn project_skills_on(&self) -> Result<usize> {
        self.query_one(
            "SELECT count(*) FROM project_skills WHERE enabled = 1",
            &[],
            |r| Ok(r.get::<i64>(0)? as usize),
        )
    }

    /// Share a Bot's skill with every Bot: a copy as it is now, turned on.
    pub fn share_bot_skill(&mut self, skill_id: i64) -> Result<ProjectSkill> {
        let s = self.bot_skill(skill_id)?;
        if let Some(shared) = s.shared_as {
            return Err(StoreError::Conflict(format!(
                "\"{}\" is shared already (project skill {shared})",
                s.name
            )));
        }
        if self.project_skill_by_name(&s.name)?.is_some() {
            return Err(StoreError::Conflict(format!(
                "a project skill \"{}\" exists already; rename this skill first",
                s.name
            )));
        }
        skill::room_for_one_more_shared(self.project_skills_on()?).map_err(invalid)?;
        let id = self.insert(
            "INSERT INTO project_skills (source_skill_id, owner_bot_id, name, description, body,
                 enabled, shared_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?6)",
            args![s.id, s.bot_id.0, s.name, s.description, s.body, self.now],
        )?;
        self.project_skill_event(id, &s.name, s.bot_id, "shared")
    }

    /// Take the owner's skill as it is now into the copy; `seen_updated_at` is the owner's
    /// skill's change the person was shown, so a change made since is not taken unseen.
    pub fn update_project_skill(&mut self, id: i64, seen_updated_at: i64) -> Result<ProjectSkill> {
        let ps = self.project_skill(id)?;
        let Some(source) = ps.source_skill_id else {
            return Err(StoreError::Conflict(
                "the owner's skill was deleted; this copy can no longer be updated".into(),
            ));
        };
        let s = self.bot_skill(source)?;
        if s.updated_at != seen_updated_at {
            return Err(StoreError::Conflict(
                "the owner's skill changed again since it was shown; look at it again".into(),
            ));
        }
        if !ps.owner_changed {
            return Err(StoreError::Conflict(
                "the shared copy already says what the owner's skill says".into(),
            ));
        }
        if let Some(other) = self.project_skill_by_name(&s.name)?.filter(|o| o.id != id) {
            return Err(StoreError::Conflict(format!(
                "another project skill is named \"{}\" (project skill {})",
                s.name, other.id
            )));
        }
        self.exec(
            "UPDATE project_skills SET name = ?2, description = ?3, body = ?4, updated_at = ?5
             WHERE id = ?1",
            args![id, s.name, s.description, s.body, self.now],
        )?;
        self.project_skill_event(id, &s.name, ps.owner_bot_id, "updated")
    }

    /// Turn a shared copy on (at most 20 are) or off.
    pub fn set_project_skill_enabled(&mut self, id: i64, enabled: bool) -> Result<ProjectSkill> {
        let ps = self.project_skill(id)?;
        if enabled && !ps.enabled {
            skill::room_for_one_more_shared(self.project_skills_on()?).map_err(invalid)?;
        }
        self.exec(
            "UPDATE project_skills SET enabled = ?2 WHERE id = ?1",
            args![id, i64::from(enabled)],
        )?;
        let change = if enabled { "turned_on" } else { "turned_off" };
        self.project_skill_event(id, &ps.name, ps.owner_bot_id, change)
    }

    /// Stop sharing: the copy is gone from every Bot's catalog; the owner's skill stays.
    pub fn unshare_project_skill(&mut self, id: i64) -> Result<ProjectSkill> {
        let ps = self.project_skill(id)?;
        self.exec("DELETE FROM project_skills WHERE id = ?1", args![id])?;
        self.event(
            "project_skill_changed",
            None,
            None,
            json!({"project_skill_id": id, "name": ps.name, "owner_bot_id": ps.owner_bot_id,
                   "change": "unshared"}),
        )?;
        Ok(ps)
    }

    fn project_skill_event(
        &mut self,
        id: i64,
        name: &str,
        owner: BotId,
        change: &str,
    ) -> Result<ProjectSkill> {
        self.event(
            "project_skill_changed",
            None,
            None,
            json!({"project_skill_id": id, "name": name, "owner_bot_id": owner,
                   "change": change}),
        )?;
        self.project_skill(id)
    }
}
