//! The retrospective's record (digest 003-B §11): one row per Bot and delivery — skipped,
//! done or failed — with its lists and each change it asked for, made or not and why, and
//! what the change replaced, so the person can undo it while it still stands as written.

use crate::bot_memories::MemoryWriter;
use crate::bot_skills::{SkillText, SkillWriter};
use crate::{CallRecord, Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::{Value, json};
use troupe_core::{BotId, PlanId};

/// A retrospective to record.
#[derive(Clone, Debug)]
pub struct NewRetrospective {
    pub plan_id: PlanId,
    pub bot_id: BotId,
    pub delivered_at: i64,
    /// RS5: it looked only at what went wrong since then.
    pub since_at: Option<i64>,
    /// skipped | done | failed
    pub state: &'static str,
    pub went_wrong: Vec<String>,
    pub summary: Option<String>,
    /// `{tripped_up, sent_back_because, do_again, verdicts}`.
    pub lists: Value,
    /// The model call, none made for a skipped one.
    pub call: CallRecord,
    pub error: Option<String>,
}

/// One change a retrospective asked for.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RetrospectiveChange {
    pub id: i64,
    pub retrospective_id: i64,
    /// memory | skill (a skill's change is to its text; its subject is the skill's name)
    pub target: String,
    /// write | delete
    pub kind: String,
    pub subject: String,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Why it was not made; none: made.
    pub refused: Option<String>,
    pub undone_at: Option<i64>,
    /// Undo works only while the change stands as the retrospective made it.
    pub undoable: bool,
}

/// A recorded retrospective.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RetrospectiveRecord {
    pub id: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub task_id: PlanId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub bot_id: BotId,
    pub delivered_at: i64,
    pub since_at: Option<i64>,
    /// skipped | done | failed
    pub state: String,
    pub went_wrong: Vec<String>,
    pub summary: Option<String>,
    pub tripped_up: Vec<String>,
    pub sent_back_because: Vec<String>,
    pub do_again: Vec<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub verdicts: Value,
    pub model: Option<String>,
    pub cost_usd: Option<f64>,
    pub error: Option<String>,
    pub at: i64,
    pub changes: Vec<RetrospectiveChange>,
}

const COLUMNS: &str = "id, plan_id, bot_id, delivered_at, since_at, state, went_wrong, summary, \
    lists, model, cost_usd, error, at";

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn row(r: &crate::db::Row) -> Result<RetrospectiveRecord> {
    let went: String = r.get(6)?;
    let lists: String = r.get(8)?;
    let lists: Value = serde_json::from_str(&lists).unwrap_or(Value::Null);
    Ok(RetrospectiveRecord {
        id: r.get(0)?,
        task_id: PlanId(r.get(1)?),
        bot_id: BotId(r.get(2)?),
        delivered_at: r.get(3)?,
        since_at: r.get(4)?,
        state: r.get(5)?,
        went_wrong: strings(&serde_json::from_str(&went).unwrap_or(Value::Null)),
        summary: r.get(7)?,
        tripped_up: strings(&lists["tripped_up"]),
        sent_back_because: strings(&lists["sent_back_because"]),
        do_again: strings(&lists["do_again"]),
        verdicts: lists.get("verdicts").cloned().unwrap_or(json!([])),
        model: r.get(9)?,
        cost_usd: r.get(10)?,
        error: r.get(11)?,
        at: r.get(12)?,
        changes: Vec::new(),
    })
}

/// Whether a made change still stands as the retrospective made it, against the Bot's
/// memories and skills now.
fn stands(
    c: &RetrospectiveChange,
    memories: &[crate::BotMemory],
    skills: &[crate::BotSkill],
) -> bool {
    if c.refused.is_some() || c.undone_at.is_some() {
        return false;
    }
    if c.target == "skill" {
        let name = c.subject.to_lowercase();
        return skills.iter().any(|s| {
            s.name.to_lowercase() == name
                && s.retrospective_id == Some(c.retrospective_id)
                && Some(&s.body) == c.after.as_ref()
        });
    }
    let subject = c.subject.to_lowercase();
    let now = memories
        .iter()
        .find(|m| m.subject.to_lowercase() == subject);
    match c.kind.as_str() {
        "write" => now.is_some_and(|m| {
            m.retrospective_id == Some(c.retrospective_id) && Some(&m.body) == c.after.as_ref()
        }),
        _ => now.is_none(),
    }
}

impl Tx<'_> {
    /// Record a retrospective, priced from `model_prices` when its model has one. None: one
    /// is recorded for this Bot and delivery already (another node, or an earlier tick).
    pub fn record_retrospective(&mut self, n: &NewRetrospective) -> Result<Option<i64>> {
        let cost = self.cost_of_call(
            n.call.model.as_deref(),
            n.call.input_tokens,
            n.call.output_tokens,
        )?;
        let id: Option<i64> = self.query_opt(
            "INSERT INTO retrospectives (plan_id, bot_id, delivered_at, since_at, state,
                 went_wrong, summary, lists, model, input_tokens, output_tokens, cost_usd, raw,
                 error, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             ON CONFLICT (plan_id, bot_id, delivered_at) DO NOTHING
             RETURNING id",
            args![
                n.plan_id.0,
                n.bot_id.0,
                n.delivered_at,
                n.since_at,
                n.state,
                json!(n.went_wrong).to_string(),
                n.summary,
                n.lists.to_string(),
                n.call.model,
                n.call.input_tokens as i64,
                n.call.output_tokens as i64,
                cost,
                n.call.raw,
                n.error,
                self.now
            ],
            |r| r.get(0),
        )?;
        if let Some(id) = id {
            // In the job's conversation, so the job's view hears it on its stream.
            let payload = json!({"task_id": n.plan_id, "bot_id": n.bot_id,
                                 "retrospective_id": id, "state": n.state});
            match self.plan(n.plan_id)?.home_session_id {
                Some(home) => self.session_event("retrospective_recorded", home, None, payload)?,
                None => self.event("retrospective_recorded", None, None, payload)?,
            }
        }
        Ok(id)
    }

    /// Jobs delivered between `from` and `to` (ms) and still delivered (RS2), never a
    /// routine's standing job (RS3).
    pub fn plans_delivered_between(&self, from: i64, to: i64) -> Result<Vec<(PlanId, i64)>> {
        self.query_all(
            "SELECT id, delivered_at FROM plans
             WHERE delivered = 1 AND delivered_at IS NOT NULL AND delivered_at >= ?1
               AND delivered_at <= ?2
               AND NOT EXISTS (SELECT 1 FROM routines r WHERE r.plan_id = plans.id)
             ORDER BY id",
            args![from, to],
            |r| Ok((PlanId(r.get(0)?), r.get(1)?)),
        )
    }

    /// How many hand-overs each Bot made on a job (RS3 picks from these).
    pub fn handover_counts(&self, plan: PlanId) -> Result<Vec<(BotId, u32)>> {
        self.query_all(
            "SELECT producer_bot_id, count(*) FROM submissions
             WHERE plan_id = ?1 AND producer_bot_id IS NOT NULL
             GROUP BY producer_bot_id ORDER BY producer_bot_id",
            args![plan.0],
            |r| Ok((BotId(r.get(0)?), r.get::<i64>(1)? as u32)),
        )
    }

    /// The causes of a Bot's quality events on a job since `since` (RS4, RS5), oldest first.
    pub fn quality_causes_of(&self, plan: PlanId, bot: BotId, since: i64) -> Result<Vec<String>> {
        self.query_all(
            "SELECT cause FROM quality_events
             WHERE plan_id = ?1 AND bot_id = ?2 AND at >= ?3 ORDER BY id",
            args![plan.0, bot.0, since],
            |r| r.get(0),
        )
    }

    /// Whether this Bot's retrospective of this delivery is recorded.
    pub fn retrospective_recorded(
        &self,
        plan: PlanId,
        bot: BotId,
        delivered_at: i64,
    ) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT 1 FROM retrospectives
                 WHERE plan_id = ?1 AND bot_id = ?2 AND delivered_at = ?3",
                args![plan.0, bot.0, delivered_at],
                |_| Ok(()),
            )?
            .is_some())
    }

    /// When this Bot last looked back on this job (RS5).
    pub fn last_retrospective_at(&self, plan: PlanId, bot: BotId) -> Result<Option<i64>> {
        self.query_one(
            "SELECT max(at) FROM retrospectives WHERE plan_id = ?1 AND bot_id = ?2",
            args![plan.0, bot.0],
            |r| r.get(0),
        )
    }

    /// Retrospectives with a model call since `since`, and what they cost (§11.5's budget).
    pub fn retrospective_spend_since(&self, since: i64) -> Result<(usize, f64)> {
        self.query_one(
            "SELECT count(*), sum(cost_usd) FROM retrospectives
             WHERE at >= ?1 AND model IS NOT NULL",
            args![since],
            |r| {
                Ok((
                    r.get::<i64>(0)? as usize,
                    r.get::<Option<f64>>(1)?.unwrap_or(0.0),
                ))
            },
        )
    }

    /// Record one change and, unless refused, make it. A change the store refuses is kept as
    /// not made, with the store's reason.
    pub fn apply_retrospective_change(
        &mut self,
        retrospective: i64,
        bot: BotId,
        kind: &str,
        subject: &str,
        after: Option<&str>,
        refused: Option<&str>,
    ) -> Result<RetrospectiveChange> {
        let mut before = None;
        let mut refused = refused.map(String::from);
        if refused.is_none() {
            let made = match (kind, after) {
                ("write", Some(body)) => self
                    .write_bot_memory(
                        bot,
                        subject,
                        body,
                        MemoryWriter::Retrospective(retrospective),
                    )
                    .map(|(_, b)| b),
                ("delete", None) => self
                    .forget_bot_memory(bot, subject)
                    .map(|m| m.map(|m| m.body)),
                _ => Err(StoreError::Invalid(format!(
                    "a {kind} change is not of that shape"
                ))),
            };
            match made {
                Ok(b) => before = b,
                Err(StoreError::Invalid(m) | StoreError::Conflict(m)) => refused = Some(m),
                Err(e) => return Err(e),
            }
        }
        let id = self.insert(
            "INSERT INTO retrospective_changes (retrospective_id, kind, subject, before_body,
                 after_body, refused)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            args![retrospective, kind, subject, before, after, refused],
        )?;
        self.retrospective_change(id)
    }

    /// Record one change to a skill (written whole from the retrospective's edit, already
    /// checked against §11.4) and, unless refused, make it. A new skill needs its catalog line.
    pub fn apply_retrospective_skill_change(
        &mut self,
        retrospective: i64,
        bot: BotId,
        text: &SkillText<'_>,
        refused: Option<&str>,
    ) -> Result<RetrospectiveChange> {
        let mut before = None;
        let mut refused = refused.map(String::from);
        if refused.is_none() {
            match self.write_bot_skill(bot, text, SkillWriter::Retrospective(retrospective)) {
                Ok((_, b)) => before = b,
                Err(StoreError::Invalid(m) | StoreError::Conflict(m)) => refused = Some(m),
                Err(e) => return Err(e),
            }
        }
        let id = self.insert(
            "INSERT INTO retrospective_changes (retrospective_id, target, kind, subject,
                 before_body, after_body, refused)
             VALUES (?1, 'skill', 'write', ?2, ?3, ?4, ?5)",
            args![retrospective, text.name.trim(), before, text.body, refused],
        )?;
        self.retrospective_change(id)
    }

    pub fn retrospective_change(&self, id: i64) -> Result<RetrospectiveChange> {
        self.changes_where("c.id", id)?
            .pop()
            .ok_or_else(|| StoreError::not_found("retrospective change", id))
    }

    /// Changes by `column` (`c.id` or `c.retrospective_id`), oldest first, each with whether
    /// it still stands (the Bot's memories read once).
    fn changes_where(&self, column: &str, id: i64) -> Result<Vec<RetrospectiveChange>> {
        let found = self.query_all(
            &format!(
                "SELECT c.id, c.retrospective_id, c.kind, c.subject, c.before_body, c.after_body,
                        c.refused, c.undone_at, r.bot_id, c.target
                 FROM retrospective_changes c JOIN retrospectives r ON r.id = c.retrospective_id
                 WHERE {column} = ?1 ORDER BY c.id"
            ),
            args![id],
            |r| {
                Ok((
                    RetrospectiveChange {
                        id: r.get(0)?,
                        retrospective_id: r.get(1)?,
                        target: r.get(9)?,
                        kind: r.get(2)?,
                        subject: r.get(3)?,
                        before: r.get(4)?,
                        after: r.get(5)?,
                        refused: r.get(6)?,
                        undone_at: r.get(7)?,
                        undoable: false,
                    },
                    BotId(r.get(8)?),
                ))
            },
        )?;
        let Some((_, bot)) = found.first() else {
            return Ok(Vec::new());
        };
        let memories = self.bot_memories(*bot)?;
        let skills = self.bot_skills(*bot)?;
        Ok(found
            .into_iter()
            .map(|(c, _)| RetrospectiveChange {
                undoable: stands(&c, &memories, &skills),
                ..c
            })
            .collect())
    }

    /// Undo a change that still stands; one changed since is refused (it is new now: S-RS3).
    pub fn undo_retrospective_change(&mut self, id: i64) -> Result<RetrospectiveChange> {
        let c = self.retrospective_change(id)?;
        if !c.undoable {
            return Err(StoreError::Conflict(if c.undone_at.is_some() {
                "this change was undone already".into()
            } else if c.refused.is_some() {
                "this change was not made".into()
            } else {
                format!(
                    "the {} changed since the retrospective wrote it; the change is new now",
                    c.target
                )
            }));
        }
        let bot: BotId = self.query_one(
            "SELECT bot_id FROM retrospectives WHERE id = ?1",
            args![c.retrospective_id],
            |r| Ok(BotId(r.get(0)?)),
        )?;
        if c.target == "skill" {
            if let Some(s) = self.bot_skill_by_name(bot, &c.subject)? {
                match c.before.as_deref() {
                    None => self.delete_bot_skill(s.id).map(|_| ())?,
                    Some(before) => self.restore_bot_skill(s.id, before).map(|_| ())?,
                }
            }
            self.exec(
                "UPDATE retrospective_changes SET undone_at = ?2 WHERE id = ?1",
                args![id, self.now],
            )?;
            return self.retrospective_change(id);
        }
        match (c.kind.as_str(), c.before.as_deref()) {
            ("write", None) => {
                if let Some(m) = self.bot_memory_by_subject(bot, &c.subject)? {
                    self.delete_bot_memory(m.id)?;
                }
            }
            ("write", Some(before)) => {
                if let Some(m) = self.bot_memory_by_subject(bot, &c.subject)? {
                    self.edit_bot_memory(m.id, None, Some(before), None)?;
                }
            }
            (_, Some(before)) => {
                self.restore_bot_memory(bot, &c.subject, before)?;
            }
            (_, None) => {}
        }
        self.exec(
            "UPDATE retrospective_changes SET undone_at = ?2 WHERE id = ?1",
            args![id, self.now],
        )?;
        self.retrospective_change(id)
    }

    /// A job's retrospectives, newest first, with their changes.
    pub fn retrospectives_of_plan(&self, plan: PlanId) -> Result<Vec<RetrospectiveRecord>> {
        self.retrospectives_where("plan_id", plan.0)
    }

    /// A Bot's retrospectives, newest first, with their changes.
    pub fn retrospectives_of_bot(&self, bot: BotId) -> Result<Vec<RetrospectiveRecord>> {
        self.retrospectives_where("bot_id", bot.0)
    }

    fn retrospectives_where(&self, column: &str, id: i64) -> Result<Vec<RetrospectiveRecord>> {
        let mut out = self.query_all(
            &format!("SELECT {COLUMNS} FROM retrospectives WHERE {column} = ?1 ORDER BY id DESC"),
            args![id],
            row,
        )?;
        for r in &mut out {
            r.changes = self.changes_where("c.retrospective_id", r.id)?;
        }
        Ok(out)
    }
}
