//! The requirements ledger as rows (digest 003-C §6): entries, every time the user said one,
//! the jobs that set one aside, and every step with the plan version it stood at (RL-9). The
//! database refuses a quote that is not in its line, an erased line, and a delete outside a
//! purge (migration 0029); a press on an entry that moved on since is a conflict (RL-21).

use crate::{Result, StoreError, Tx, args};
use serde_json::json;
use troupe_core::ids::RequirementId;
use troupe_core::requirement::{Nature, Polarity, Scope, SourceKind, State};
use troupe_core::words_check::Number;
use troupe_core::{PlanId, SessionId, SessionMessageId, TicketId};

/// One entry.
#[derive(Clone, Debug, PartialEq)]
pub struct RequirementRecord {
    pub id: RequirementId,
    pub plan_id: PlanId,
    pub ticket_id: Option<TicketId>,
    pub session_id: Option<SessionId>,
    pub scope: Scope,
    pub quote: String,
    pub source_kind: SourceKind,
    pub source_message_id: Option<SessionMessageId>,
    pub source_quote_id: Option<i64>,
    pub restatement: String,
    pub category: Option<String>,
    pub nature: Option<Nature>,
    pub polarity: Polarity,
    pub number: Option<Number>,
    pub state: State,
    pub replaces_id: Option<RequirementId>,
    pub said_count: i64,
    /// How many jobs it was said in.
    pub job_count: i64,
    pub said_at: i64,
    pub taken_out_at: Option<i64>,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// An entry to write.
#[derive(Clone, Debug, PartialEq)]
pub struct NewRequirement {
    pub plan_id: PlanId,
    pub ticket_id: Option<TicketId>,
    pub session_id: Option<SessionId>,
    pub scope: Scope,
    pub quote: String,
    pub source_kind: SourceKind,
    pub source_message_id: Option<SessionMessageId>,
    pub source_quote_id: Option<i64>,
    pub restatement: String,
    pub category: Option<String>,
    pub nature: Option<Nature>,
    pub polarity: Polarity,
    pub number: Option<Number>,
    pub state: State,
    pub replaces_id: Option<RequirementId>,
    pub said_at: i64,
}

/// A state change asked for by a press, applied only on the version the user saw.
#[derive(Clone, Debug, PartialEq)]
pub struct RequirementChange {
    pub state: State,
    pub scope: Scope,
    pub clear_taken_out: bool,
}

const COLUMNS: &str = "r.id, r.plan_id, r.ticket_id, r.session_id, r.scope, r.quote, r.source_kind,
    r.source_message_id, r.source_quote_id, r.restatement, r.category, r.nature, r.polarity,
    r.number, r.state, r.replaces_id, r.said_count,
    (SELECT COUNT(DISTINCT s.plan_id) FROM requirement_sayings s WHERE s.requirement_id = r.id),
    r.said_at, r.taken_out_at, r.version, r.created_at, r.updated_at";

fn bad(what: &str, e: String) -> StoreError {
    StoreError::Corrupt(format!("requirement {what}: {e}"))
}

fn record(r: &crate::Row) -> Result<RequirementRecord> {
    let nature: Option<String> = r.get(11)?;
    let number: Option<String> = r.get(13)?;
    Ok(RequirementRecord {
        id: RequirementId(r.get(0)?),
        plan_id: PlanId(r.get(1)?),
        ticket_id: r.get::<Option<i64>>(2)?.map(TicketId),
        session_id: r.get::<Option<i64>>(3)?.map(SessionId),
        scope: Scope::parse(&r.get::<String>(4)?).map_err(|e| bad("scope", e))?,
        quote: r.get(5)?,
        source_kind: SourceKind::parse(&r.get::<String>(6)?).map_err(|e| bad("source", e))?,
        source_message_id: r.get::<Option<i64>>(7)?.map(SessionMessageId),
        source_quote_id: r.get(8)?,
        restatement: r.get(9)?,
        category: r.get(10)?,
        nature: nature
            .as_deref()
            .map(Nature::parse)
            .transpose()
            .map_err(|e| bad("nature", e))?,
        polarity: Polarity::parse(&r.get::<String>(12)?).map_err(|e| bad("polarity", e))?,
        number: number
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| bad("number", e.to_string()))?,
        state: State::parse(&r.get::<String>(14)?).map_err(|e| bad("state", e))?,
        replaces_id: r.get::<Option<i64>>(15)?.map(RequirementId),
        said_count: r.get(16)?,
        job_count: r.get(17)?,
        said_at: r.get(18)?,
        taken_out_at: r.get(19)?,
        version: r.get(20)?,
        created_at: r.get(21)?,
        updated_at: r.get(22)?,
    })
}

impl Tx<'_> {
    /// One entry (404 when unknown).
    pub fn requirement(&self, id: RequirementId) -> Result<RequirementRecord> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM requirements r WHERE r.id = ?1"),
            args![id.0],
            record,
        )?
        .ok_or_else(|| StoreError::not_found("requirement", id))
    }

    /// What the ledger holds for a job: its own entries, the session entries of its home
    /// conversation that other jobs recorded (RL-13), and standing entries when the job is a
    /// video one (its home conversation runs the video engine; RL-14), oldest first.
    pub fn requirements_of_plan(&self, plan: PlanId) -> Result<Vec<RequirementRecord>> {
        self.query_all(
            &format!(
                "SELECT {COLUMNS} FROM requirements r, plans p
                 LEFT JOIN sessions hs ON hs.id = p.home_session_id
                 WHERE p.id = ?1 AND (r.plan_id = p.id
                     OR (r.scope = 'session' AND r.session_id = p.home_session_id)
                     OR (r.scope = 'standing' AND hs.engine = 'video'))
                 ORDER BY r.id"
            ),
            args![plan.0],
            record,
        )
    }

    /// The entries a job set aside ("Not for this job").
    pub fn requirements_excluded_in(&self, plan: PlanId) -> Result<Vec<RequirementId>> {
        self.query_all(
            "SELECT requirement_id FROM requirement_exclusions WHERE plan_id = ?1
             ORDER BY requirement_id",
            args![plan.0],
            |r| Ok(RequirementId(r.get(0)?)),
        )
    }

    /// The entries standing on a line's words.
    pub fn requirements_on_line(&self, line: SessionMessageId) -> Result<Vec<RequirementRecord>> {
        self.query_all(
            &format!(
                "SELECT {COLUMNS} FROM requirements r WHERE r.source_message_id = ?1 ORDER BY r.id"
            ),
            args![line.0],
            record,
        )
    }

    /// Write an entry with its first saying and its step (`added`).
    pub fn add_requirement(&mut self, n: &NewRequirement) -> Result<RequirementRecord> {
        let number = n
            .number
            .as_ref()
            .map(|x| serde_json::to_string(x).map_err(|e| StoreError::Invalid(e.to_string())))
            .transpose()?;
        let id = self.insert(
            "INSERT INTO requirements (plan_id, ticket_id, session_id, scope, quote, source_kind,
                 source_message_id, source_quote_id, restatement, category, nature, polarity,
                 number, state, replaces_id, said_at, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?17)",
            args![
                n.plan_id.0,
                n.ticket_id.map(|t| t.0),
                n.session_id.map(|s| s.0),
                n.scope.as_str(),
                n.quote,
                n.source_kind.as_str(),
                n.source_message_id.map(|m| m.0),
                n.source_quote_id,
                n.restatement,
                n.category,
                n.nature.map(|x| x.as_str()),
                n.polarity.as_str(),
                number,
                n.state.as_str(),
                n.replaces_id.map(|r| r.0),
                n.said_at,
                self.now
            ],
        )?;
        let id = RequirementId(id);
        self.exec(
            "INSERT INTO requirement_sayings (requirement_id, plan_id, message_id, said_at)
             VALUES (?1, ?2, ?3, ?4)",
            args![
                id.0,
                n.plan_id.0,
                n.source_message_id.map(|m| m.0),
                n.said_at
            ],
        )?;
        self.requirement_step(id, n.plan_id, "added")?;
        self.requirement(id)
    }

    /// The user said it again (in `plan`, by `line`): counted once per line. Said again in a
    /// job that set it aside, it applies there again (RL-13). False when the line counted
    /// already.
    pub fn raise_requirement(
        &mut self,
        id: RequirementId,
        plan: PlanId,
        line: Option<SessionMessageId>,
        said_at: i64,
    ) -> Result<bool> {
        if let Some(l) = line {
            let seen: i64 = self.query_one(
                "SELECT COUNT(*) FROM requirement_sayings WHERE requirement_id = ?1 AND message_id = ?2",
                args![id.0, l.0],
                |r| r.get(0),
            )?;
            if seen > 0 {
                return Ok(false);
            }
        }
        self.exec(
            "INSERT INTO requirement_sayings (requirement_id, plan_id, message_id, said_at)
             VALUES (?1, ?2, ?3, ?4)",
            args![id.0, plan.0, line.map(|m| m.0), said_at],
        )?;
        self.exec(
            "UPDATE requirements SET said_count = said_count + 1, version = version + 1,
                 updated_at = ?2 WHERE id = ?1",
            args![id.0, self.now],
        )?;
        self.exec(
            "DELETE FROM requirement_exclusions WHERE requirement_id = ?1 AND plan_id = ?2",
            args![id.0, plan.0],
        )?;
        self.requirement_step(id, plan, "said_again")?;
        Ok(true)
    }

    /// Apply a press on the version the user saw; another version is `requirement_changed`.
    pub fn change_requirement(
        &mut self,
        id: RequirementId,
        seen_version: i64,
        plan: PlanId,
        change: &RequirementChange,
        step: &str,
    ) -> Result<RequirementRecord> {
        let n = self.exec(
            "UPDATE requirements SET state = ?3, scope = ?4,
                 taken_out_at = CASE WHEN ?5 = 1 THEN NULL ELSE taken_out_at END,
                 version = version + 1, updated_at = ?6
             WHERE id = ?1 AND version = ?2",
            args![
                id.0,
                seen_version,
                change.state.as_str(),
                change.scope.as_str(),
                i64::from(change.clear_taken_out),
                self.now
            ],
        )?;
        if n == 0 {
            let now = self.requirement(id)?;
            return Err(StoreError::Conflict(format!(
                "requirement_changed: {id} is at version {}, not {seen_version}",
                now.version
            )));
        }
        self.requirement_step(id, plan, step)?;
        self.requirement(id)
    }

    /// A state change the app makes on the user's behalf elsewhere (a confirmed replacement's
    /// old entry, a board line removed, erased words), whatever the version.
    pub fn set_requirement_state(
        &mut self,
        id: RequirementId,
        plan: PlanId,
        state: State,
        step: &str,
    ) -> Result<()> {
        self.exec(
            "UPDATE requirements SET state = ?2, version = version + 1, updated_at = ?3
             WHERE id = ?1",
            args![id.0, state.as_str(), self.now],
        )?;
        self.requirement_step(id, plan, step)
    }

    /// A line several jobs of one conversation share holds for the conversation (RL-15).
    pub fn set_requirement_scope_session(&mut self, id: RequirementId) -> Result<()> {
        self.exec(
            "UPDATE requirements SET scope = 'session', version = version + 1, updated_at = ?2
             WHERE id = ?1 AND scope <> 'session'",
            args![id.0, self.now],
        )?;
        Ok(())
    }

    /// "Not for this job" (true) or "Restore" (false) for one job, on the version seen.
    pub fn exclude_requirement(
        &mut self,
        id: RequirementId,
        seen_version: i64,
        plan: PlanId,
        excluded: bool,
        step: &str,
    ) -> Result<RequirementRecord> {
        let n = self.exec(
            "UPDATE requirements SET version = version + 1, updated_at = ?3
             WHERE id = ?1 AND version = ?2",
            args![id.0, seen_version, self.now],
        )?;
        if n == 0 {
            self.requirement(id)?;
            return Err(StoreError::Conflict(format!(
                "requirement_changed: {id} moved on since version {seen_version}"
            )));
        }
        if excluded {
            self.exec(
                "INSERT INTO requirement_exclusions (requirement_id, plan_id, at) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING",
                args![id.0, plan.0, self.now],
            )?;
        } else {
            self.exec(
                "DELETE FROM requirement_exclusions WHERE requirement_id = ?1 AND plan_id = ?2",
                args![id.0, plan.0],
            )?;
        }
        self.requirement_step(id, plan, step)?;
        self.requirement(id)
    }

    /// RL-20 / UQ-2: the words of every entry standing on the line are emptied and those
    /// entries no longer apply. Which entries changed.
    pub fn erase_requirement_words(
        &mut self,
        line: SessionMessageId,
    ) -> Result<Vec<RequirementId>> {
        let hit: Vec<RequirementRecord> = self
            .requirements_on_line(line)?
            .into_iter()
            .filter(|r| !r.quote.is_empty())
            .collect();
        for r in &hit {
            let state = match r.state {
                State::ToConfirm | State::OldRuleUnverified => State::NotARequirement,
                State::InForce => State::NoLongerApplies,
                other => other,
            };
            self.exec(
                "UPDATE requirements SET quote = '', state = ?2, version = version + 1,
                     updated_at = ?3 WHERE id = ?1",
                args![r.id.0, state.as_str(), self.now],
            )?;
            self.requirement_step(r.id, r.plan_id, "words_erased")?;
        }
        Ok(hit.into_iter().map(|r| r.id).collect())
    }

    /// UQ-2 on a clear or delete with erasure: every entry standing on a line said in the
    /// conversation loses its words ([`Tx::erase_requirement_words`]). Which entries changed.
    pub fn erase_session_requirement_words(
        &mut self,
        session: SessionId,
    ) -> Result<Vec<RequirementId>> {
        let lines: Vec<i64> = self.query_all(
            "SELECT DISTINCT r.source_message_id FROM requirements r
             JOIN session_messages m ON m.id = r.source_message_id
             WHERE m.session_id = ?1 AND r.quote <> '' ORDER BY r.source_message_id",
            args![session.0],
            |r| r.get(0),
        )?;
        let mut out = Vec::new();
        for l in lines {
            out.extend(self.erase_requirement_words(SessionMessageId(l))?);
        }
        Ok(out)
    }

    /// UQ-12: the user took the entry's words out of their line; it stays in force, shown
    /// first among "Words you took out" until they press. False when it was marked already.
    pub fn mark_requirement_taken_out(&mut self, id: RequirementId, plan: PlanId) -> Result<bool> {
        let n = self.exec(
            "UPDATE requirements SET taken_out_at = ?2, version = version + 1, updated_at = ?2
             WHERE id = ?1 AND taken_out_at IS NULL",
            args![id.0, self.now],
        )?;
        if n == 1 {
            self.requirement_step(id, plan, "words_taken_out")?;
        }
        Ok(n == 1)
    }

    /// Whether the user said the entry in another line than `line` too.
    pub fn requirement_said_elsewhere(
        &self,
        id: RequirementId,
        line: SessionMessageId,
    ) -> Result<bool> {
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM requirement_sayings
             WHERE requirement_id = ?1 AND (message_id IS NULL OR message_id <> ?2)",
            args![id.0, line.0],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// RL-1's only delete: every entry a job recorded, with their sayings, exclusions and
    /// steps, inside a purge row that the delete trigger asks for. How many entries went.
    pub fn purge_requirements(&mut self, plan: PlanId) -> Result<usize> {
        self.exec(
            "INSERT INTO requirement_purges (plan_id) VALUES (?1) ON CONFLICT DO NOTHING",
            args![plan.0],
        )?;
        let mine = "SELECT id FROM requirements WHERE plan_id = ?1";
        for table in [
            "requirement_sayings",
            "requirement_exclusions",
            "requirement_steps",
        ] {
            self.exec(
                &format!("DELETE FROM {table} WHERE requirement_id IN ({mine})"),
                args![plan.0],
            )?;
        }
        self.exec(
            &format!("UPDATE requirements SET replaces_id = NULL WHERE replaces_id IN ({mine})"),
            args![plan.0],
        )?;
        let n = self.exec("DELETE FROM requirements WHERE plan_id = ?1", args![plan.0])?;
        self.exec(
            "DELETE FROM requirement_purges WHERE plan_id = ?1",
            args![plan.0],
        )?;
        Ok(n)
    }

    /// RL-9: the step in the log with the plan version it stood at, and
    /// `requirement_changed {step, plan_version}` for the job's conversation.
    fn requirement_step(&mut self, id: RequirementId, plan: PlanId, step: &str) -> Result<()> {
        let r = self.requirement(id)?;
        let p = self.plan(plan)?;
        self.exec(
            "INSERT INTO requirement_steps (requirement_id, plan_id, step, state, plan_version, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            args![id.0, plan.0, step, r.state.as_str(), p.version, self.now],
        )?;
        let payload = json!({
            "requirement_id": id, "plan_id": plan, "step": step, "plan_version": p.version,
            "state": r.state.as_str(), "version": r.version,
        });
        match p.home_session_id {
            Some(s) => self.session_event("requirement_changed", s, None, payload),
            None => self.event("requirement_changed", None, None, payload),
        }
    }

    /// RL-6: whether the job had delivered something by `at` — a Bot line filed under it
    /// carried a file, or one of its tickets was handed over, in review or approved (even if
    /// sent back since).
    pub fn plan_delivered_by(&self, plan: PlanId, at: i64) -> Result<bool> {
        let n: i64 = self.query_one(
            "SELECT (SELECT COUNT(*) FROM message_filings f
                     JOIN session_messages m ON m.id = f.message_id
                     JOIN line_files lf ON lf.line_id = m.id
                     WHERE f.plan_id = ?1 AND m.author = 'bot' AND m.created_at <= ?2)
                  + (SELECT COUNT(*) FROM ticket_stage_changes c
                     JOIN tickets t ON t.id = c.ticket_id
                     WHERE t.plan_id = ?1 AND c.at <= ?2
                         AND c.to_stage IN ('submitted', 'in_review', 'approved'))",
            args![plan.0, at],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// The jobs an entry was said in (a board line counts as said there).
    pub fn requirement_saying_plans(&self, id: RequirementId) -> Result<Vec<PlanId>> {
        self.query_all(
            "SELECT DISTINCT plan_id FROM requirement_sayings WHERE requirement_id = ?1
             ORDER BY plan_id",
            args![id.0],
            |r| Ok(PlanId(r.get(0)?)),
        )
    }

    /// The jobs that set an entry aside.
    pub fn requirement_excluded_plans(&self, id: RequirementId) -> Result<Vec<PlanId>> {
        self.query_all(
            "SELECT plan_id FROM requirement_exclusions WHERE requirement_id = ?1 ORDER BY plan_id",
            args![id.0],
            |r| Ok(PlanId(r.get(0)?)),
        )
    }

    /// The jobs whose board has Rules or Done when lines, oldest first (RL-15's import).
    pub fn plans_with_board_lines(&self) -> Result<Vec<PlanId>> {
        self.query_all(
            "SELECT id FROM plans WHERE rules <> '' OR done_when <> '' ORDER BY id",
            args![],
            |r| Ok(PlanId(r.get(0)?)),
        )
    }

    /// The database's own `fold()` of a text: the test holding it equal to
    /// `troupe_core::requirement::db_fold` on both backends reads it here.
    pub fn database_fold(&self, text: &str) -> Result<String> {
        self.query_one("SELECT fold(?1)", args![text], |r| r.get(0))
    }

    /// Every step of an entry: (step, state, plan version), oldest first.
    pub fn requirement_steps(&self, id: RequirementId) -> Result<Vec<(String, String, i64)>> {
        self.query_all(
            "SELECT step, state, plan_version FROM requirement_steps WHERE requirement_id = ?1
             ORDER BY id",
            args![id.0],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
    }
}
