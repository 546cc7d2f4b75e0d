//! Plans ("jobs"): the record, its versioned spec with the cause of every revision (PLAN-O2),
//! dormancy, and the filing of lines under plans (`message_filings`). Every change appends a
//! `plan_changed` event to the plan's home conversation.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::Serialize;
use serde_json::{Map, Value as Json, json};
use troupe_core::conversation::{Author, SessionMessage};
use troupe_core::plan::{
    FIELD_MAX_CHARS, PlanSpec, PlanStatus, RevisionCause, SpecPatch, validate_name, validate_patch,
};
use troupe_core::{PlanId, SessionId, SessionMessageId};

/// A `plans` row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanRecord {
    pub id: PlanId,
    pub name: String,
    pub spec: PlanSpec,
    pub status: PlanStatus,
    pub delivered_at: Option<i64>,
    pub dormant_at: Option<i64>,
    pub dormant_cause: Option<String>,
    pub renamed_at: Option<i64>,
    pub last_user_activity_at: Option<i64>,
    pub original_request: String,
    pub home_session_id: Option<SessionId>,
    pub opening_line_id: Option<SessionMessageId>,
    pub folder: String,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl PlanRecord {
    pub fn is_dormant(&self) -> bool {
        self.dormant_at.is_some()
    }
}

/// A plan to open. Its folder is computed from its new id (see [`Tx::create_plan`]).
#[derive(Clone, Debug)]
pub struct NewPlan {
    pub name: String,
    /// The opening line's words, verbatim.
    pub original_request: String,
    pub home_session_id: SessionId,
    pub opening_line_id: Option<SessionMessageId>,
    pub spec: PlanSpec,
    pub cause: RevisionCause,
}

/// One version of a plan's spec.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanRevision {
    pub plan_id: PlanId,
    pub version: i64,
    pub cause: RevisionCause,
    /// `{"field": {"old": …, "new": …}}` for each field the revision changed.
    pub changes: Json,
    pub at: i64,
}

/// How a line came to be filed under a plan.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FilingSource {
    QuotedReply,
    Path,
    Binding,
    Reader,
    WorkOn,
    Desk,
}

impl FilingSource {
    pub fn as_str(self) -> &'static str {
        match self {
            FilingSource::QuotedReply => "quoted_reply",
            FilingSource::Path => "path",
            FilingSource::Binding => "binding",
            FilingSource::Reader => "reader",
            FilingSource::WorkOn => "work_on",
            FilingSource::Desk => "desk",
        }
    }

    pub fn parse(s: &str) -> Result<FilingSource, String> {
        Ok(match s {
            "quoted_reply" => FilingSource::QuotedReply,
            "path" => FilingSource::Path,
            "binding" => FilingSource::Binding,
            "reader" => FilingSource::Reader,
            "work_on" => FilingSource::WorkOn,
            "desk" => FilingSource::Desk,
            other => return Err(format!("unknown filing source '{other}'")),
        })
    }
}

/// A line filed under a plan (and maybe one of its tickets and a part).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Filing {
    pub message_id: SessionMessageId,
    pub plan_id: PlanId,
    pub ticket_id: Option<i64>,
    pub part_id: Option<String>,
    pub source: FilingSource,
    /// Who filed it: `reader`, `user`, `turn:<id>`, …
    pub filed_by: String,
    /// A locked signal (quote, path, binding): not the reader's correctable default.
    pub locked: bool,
    pub primary: bool,
    pub at: i64,
}

/// A filing to make: [`Filing`] without its time.
#[derive(Clone, Debug)]
pub struct NewFiling {
    pub message_id: SessionMessageId,
    pub plan_id: PlanId,
    pub ticket_id: Option<i64>,
    pub part_id: Option<String>,
    pub source: FilingSource,
    pub filed_by: String,
    pub locked: bool,
    pub primary: bool,
}

const PLAN_COLUMNS: &str = "id, name, kind, goal, done_when, rules, process, progress, status, \
    delivered_at, dormant_at, dormant_cause, renamed_at, last_user_activity_at, original_request, \
    home_session_id, opening_line_id, folder, version, created_at, updated_at";

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

fn plan_from_row(r: &crate::Row) -> Result<PlanRecord> {
    let status: String = r.get(8)?;
    Ok(PlanRecord {
        id: PlanId(r.get(0)?),
        name: r.get(1)?,
        spec: PlanSpec {
            kind: r.get(2)?,
            goal: r.get(3)?,
            done_when: r.get(4)?,
            rules: r.get(5)?,
            process: r.get(6)?,
            progress: r.get(7)?,
        },
        status: PlanStatus::parse(&status).map_err(|e| corrupt("plan status", e))?,
        delivered_at: r.get(9)?,
        dormant_at: r.get(10)?,
        dormant_cause: r.get(11)?,
        renamed_at: r.get(12)?,
        last_user_activity_at: r.get(13)?,
        original_request: r.get(14)?,
        home_session_id: r.get::<Option<i64>>(15)?.map(SessionId),
        opening_line_id: r.get::<Option<i64>>(16)?.map(SessionMessageId),
        folder: r.get(17)?,
        version: r.get(18)?,
        created_at: r.get(19)?,
        updated_at: r.get(20)?,
    })
}

const FILING_COLUMNS: &str =
    "message_id, plan_id, ticket_id, part_id, source, filed_by, locked, is_primary, at";

fn filing_from_row(r: &crate::Row) -> Result<Filing> {
    let source: String = r.get(4)?;
    Ok(Filing {
        message_id: SessionMessageId(r.get(0)?),
        plan_id: PlanId(r.get(1)?),
        ticket_id: r.get(2)?,
        part_id: r.get(3)?,
        source: FilingSource::parse(&source).map_err(|e| corrupt("filing source", e))?,
        filed_by: r.get(5)?,
        locked: r.get(6)?,
        primary: r.get(7)?,
        at: r.get(8)?,
    })
}

fn check_fields(spec: &PlanSpec) -> Result<()> {
    for (field, value) in spec.fields() {
        if value.chars().count() > FIELD_MAX_CHARS {
            return Err(StoreError::Invalid(format!(
                "{field}: at most {FIELD_MAX_CHARS} characters"
            )));
        }
    }
    Ok(())
}

fn change(old: impl Into<Json>, new: impl Into<Json>) -> Json {
    json!({"old": old.into(), "new": new.into()})
}

impl Tx<'_> {
    /// Open a plan: the row, its folder (`folder` is given the new id and must answer an
    /// absolute path), revision 1 and the `plan_changed` event (`change: "opened"`).
    pub fn create_plan(
        &mut self,
        p: &NewPlan,
        folder: impl FnOnce(PlanId) -> String,
    ) -> Result<PlanRecord> {
        let name = validate_name(&p.name).map_err(StoreError::Invalid)?;
        check_fields(&p.spec)?;
        self.session(p.home_session_id)?;
        // The person's opening line is their latest activity on the job.
        let mut user_at = p.cause.is_user().then_some(self.now);
        if let Some(line_id) = p.opening_line_id {
            let line = self.line(line_id)?;
            if line.session_id != p.home_session_id {
                return Err(StoreError::Invalid(format!(
                    "opening_line_id: message {line_id} is not a line of conversation {}",
                    p.home_session_id
                )));
            }
            if line.author == Author::User {
                user_at = Some(user_at.map_or(line.created_at, |u| u.max(line.created_at)));
            }
        }
        let s = &p.spec;
        let id = PlanId(self.insert(
            "INSERT INTO plans (name, kind, goal, done_when, rules, process, progress,
                                original_request, home_session_id, opening_line_id, folder,
                                last_user_activity_at, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, '', ?11, ?12, ?12)",
            args![
                name,
                s.kind,
                s.goal,
                s.done_when,
                s.rules,
                s.process,
                s.progress,
                p.original_request,
                p.home_session_id.0,
                p.opening_line_id.map(|l| l.0),
                user_at,
                self.now
            ],
        )?);
        let folder = folder(id);
        if !std::path::Path::new(&folder).is_absolute() {
            return Err(StoreError::Invalid(format!(
                "a plan's folder must be an absolute path, not {folder:?}"
            )));
        }
        self.exec(
            "UPDATE plans SET folder = ?2 WHERE id = ?1",
            args![id.0, folder],
        )?;
        let mut changes = Map::new();
        changes.insert("name".into(), change(Json::Null, name));
        for (field, value) in s.fields() {
            if !value.is_empty() {
                changes.insert(field.into(), change(Json::Null, value));
            }
        }
        changes.insert(
            "status".into(),
            change(Json::Null, PlanStatus::Active.as_str()),
        );
        self.write_revision(id, 1, p.cause, &Json::Object(changes))?;
        let plan = self.plan(id)?;
        self.plan_event(
            &plan,
            json!({"plan_id": id, "version": 1, "cause": p.cause, "change": "opened"}),
        )?;
        Ok(plan)
    }

    pub fn plan(&self, id: PlanId) -> Result<PlanRecord> {
        self.find_plan(id)?
            .ok_or_else(|| StoreError::not_found("job", id))
    }

    pub fn find_plan(&self, id: PlanId) -> Result<Option<PlanRecord>> {
        let sql = format!("SELECT {PLAN_COLUMNS} FROM plans WHERE id = ?1");
        self.query_opt(&sql, args![id.0], plan_from_row)
    }

    /// The plans of a conversation, newest first: those it is home to and those any of its
    /// lines is filed under (PLAN-6: a job spans conversations).
    pub fn plans_of_session(
        &self,
        session: SessionId,
        include_dormant: bool,
    ) -> Result<Vec<PlanRecord>> {
        let sql = format!(
            "SELECT {PLAN_COLUMNS} FROM plans
             WHERE (home_session_id = ?1
                    OR id IN (SELECT f.plan_id FROM message_filings f
                              JOIN session_messages m ON m.id = f.message_id
                              WHERE m.session_id = ?1))
               AND (?2 OR dormant_at IS NULL)
             ORDER BY id DESC"
        );
        self.query_all(&sql, args![session.0, include_dormant], plan_from_row)
    }

    /// Apply an edit made on `expected_version`. A stale version is a
    /// [`StoreError::Conflict`] naming the current one, and nothing is written. Only the
    /// person renames (PLAN-2); a rename sets `renamed_at` (PLAN-3) and keeps the folder;
    /// `done` sets `delivered_at` and `active` clears it; the person's edit counts as their
    /// activity and wakes a dormant plan (PLAN-5, D9).
    pub fn patch_plan(
        &mut self,
        id: PlanId,
        expected_version: i64,
        patch: &SpecPatch,
        cause: RevisionCause,
    ) -> Result<PlanRecord> {
        // Only a hold writes `parked` (and gives the status back); it changes nothing else.
        match cause {
            RevisionCause::Hold(_) => {
                if patch.status.is_none()
                    || patch.name.is_some()
                    || patch.fields().iter().any(|(_, v)| v.is_some())
                {
                    return Err(StoreError::Invalid(
                        "a hold changes a job's status only".into(),
                    ));
                }
            }
            _ => validate_patch(patch).map_err(StoreError::Invalid)?,
        }
        let cur = self.plan(id)?;
        let stale = |current: i64| {
            StoreError::Conflict(format!(
                "job {id} is at version {current}, not {expected_version}: read it again and redo the edit"
            ))
        };
        if cur.version != expected_version {
            return Err(stale(cur.version));
        }
        let mut changes = Map::new();
        let mut next = cur.clone();
        if let Some(name) = &patch.name {
            let name = validate_name(name).map_err(StoreError::Invalid)?;
            if name != cur.name {
                if !cause.is_user() {
                    return Err(StoreError::Invalid(
                        "name: only the person renames a job".into(),
                    ));
                }
                changes.insert("name".into(), change(cur.name.as_str(), name.as_str()));
                next.name = name;
                next.renamed_at = Some(self.now);
            }
        }
        for (field, value) in patch.fields() {
            let Some(value) = value else { continue };
            let slot = match field {
                "kind" => &mut next.spec.kind,
                "goal" => &mut next.spec.goal,
                "done_when" => &mut next.spec.done_when,
                "rules" => &mut next.spec.rules,
                "process" => &mut next.spec.process,
                _ => &mut next.spec.progress,
            };
            if slot != value {
                changes.insert(field.into(), change(slot.as_str(), value));
                *slot = value.to_string();
            }
        }
        if let Some(status) = patch.status.filter(|s| *s != cur.status) {
            changes.insert(
                "status".into(),
                change(cur.status.as_str(), status.as_str()),
            );
            next.status = status;
            next.delivered_at = match status {
                PlanStatus::Done => Some(self.now),
                PlanStatus::Active => None,
                PlanStatus::Parked => cur.delivered_at,
            };
        }
        if changes.is_empty() {
            return Err(StoreError::Invalid("nothing to change".into()));
        }
        let woken = cause.is_user() && cur.is_dormant();
        if cause.is_user() {
            next.last_user_activity_at = Some(self.now);
            next.dormant_at = None;
            next.dormant_cause = None;
        }
        let s = &next.spec;
        let n = self.exec(
            "UPDATE plans SET name = ?3, kind = ?4, goal = ?5, done_when = ?6, rules = ?7,
                              process = ?8, progress = ?9, status = ?10, delivered_at = ?11,
                              renamed_at = ?12, last_user_activity_at = ?13, dormant_at = ?14,
                              dormant_cause = ?15, version = version + 1, updated_at = ?16
             WHERE id = ?1 AND version = ?2",
            args![
                id.0,
                expected_version,
                next.name,
                s.kind,
                s.goal,
                s.done_when,
                s.rules,
                s.process,
                s.progress,
                next.status.as_str(),
                next.delivered_at,
                next.renamed_at,
                next.last_user_activity_at,
                next.dormant_at,
                next.dormant_cause,
                self.now
            ],
        )?;
        if n == 0 {
            // Another writer got there between the read and the update (PostgreSQL).
            return Err(stale(self.plan(id)?.version));
        }
        let version = expected_version + 1;
        let fields: Vec<String> = changes.keys().cloned().collect();
        self.write_revision(id, version, cause, &Json::Object(changes))?;
        let plan = self.plan(id)?;
        self.plan_event(
            &plan,
            json!({"plan_id": id, "version": version, "cause": cause, "change": "edited", "fields": fields}),
        )?;
        if woken {
            self.plan_event(
                &plan,
                json!({"plan_id": id, "version": version, "cause": cause, "change": "woken"}),
            )?;
        }
        Ok(plan)
    }

    /// Put a plan to sleep (`cause`: why, e.g. `set_aside`, `delivered`, `cleared`). False
    /// when it was dormant already: the first cause stays.
    pub fn set_plan_dormant(&mut self, id: PlanId, cause: &str) -> Result<bool> {
        if cause.trim().is_empty() {
            return Err(StoreError::Invalid("a dormancy needs a cause".into()));
        }
        let n = self.exec(
            "UPDATE plans SET dormant_at = ?2, dormant_cause = ?3, updated_at = ?2
             WHERE id = ?1 AND dormant_at IS NULL",
            args![id.0, self.now, cause],
        )?;
        let plan = self.plan(id)?;
        if n > 0 {
            self.plan_event(
                &plan,
                json!({"plan_id": id, "version": plan.version, "change": "dormant", "cause": cause}),
            )?;
        }
        Ok(n > 0)
    }

    /// Delivered jobs awake whose delivery and the person's last activity on them are both at
    /// or before `cutoff` (PLAN-D5's candidates); a routine's standing job never goes dormant
    /// (PLAN-D11).
    pub fn delivered_plans_quiet_since(&self, cutoff: i64) -> Result<Vec<PlanId>> {
        self.query_all(
            "SELECT id FROM plans
             WHERE dormant_at IS NULL AND delivered_at IS NOT NULL AND delivered_at <= ?1
               AND coalesce(last_user_activity_at, 0) <= ?1
               AND NOT EXISTS (SELECT 1 FROM routines r WHERE r.plan_id = plans.id)
             ORDER BY id",
            args![cutoff],
            |r| Ok(PlanId(r.get(0)?)),
        )
    }

    /// Wake a dormant plan (the caller has checked that its cause wakes it: PLAN-D9). False
    /// when it was awake.
    pub fn wake_plan(&mut self, id: PlanId) -> Result<bool> {
        let n = self.exec(
            "UPDATE plans SET dormant_at = NULL, dormant_cause = NULL, updated_at = ?2
             WHERE id = ?1 AND dormant_at IS NOT NULL",
            args![id.0, self.now],
        )?;
        let plan = self.plan(id)?;
        if n > 0 {
            self.plan_event(
                &plan,
                json!({"plan_id": id, "version": plan.version, "change": "woken"}),
            )?;
        }
        Ok(n > 0)
    }

    /// The person did something in the plan (a line filed under it, an answer): the clock of
    /// PLAN-D3 and D5 starts again. Waking is the caller's decision.
    pub fn touch_plan_user_activity(&mut self, id: PlanId) -> Result<()> {
        let n = self.exec(
            "UPDATE plans SET last_user_activity_at = ?2, updated_at = ?2 WHERE id = ?1",
            args![id.0, self.now],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("job", id));
        }
        let plan = self.plan(id)?;
        self.plan_event(
            &plan,
            json!({"plan_id": id, "version": plan.version, "change": "user_activity"}),
        )
    }

    /// Every revision of a plan, oldest first.
    pub fn plan_revisions(&self, id: PlanId) -> Result<Vec<PlanRevision>> {
        self.query_all(
            "SELECT plan_id, version, cause, changes, at FROM plan_revisions
             WHERE plan_id = ?1 ORDER BY version",
            args![id.0],
            |r| {
                let cause: String = r.get(2)?;
                let changes: String = r.get(3)?;
                Ok(PlanRevision {
                    plan_id: PlanId(r.get(0)?),
                    version: r.get(1)?,
                    cause: RevisionCause::parse(&cause)
                        .map_err(|e| corrupt("revision cause", e))?,
                    changes: serde_json::from_str(&changes)
                        .map_err(|e| corrupt("revision changes", e))?,
                    at: r.get(4)?,
                })
            },
        )
    }

    /// File a line under a plan (and ticket). Filing it again under the same plan and ticket
    /// changes nothing and answers false.
    pub fn file_line(&mut self, f: &NewFiling) -> Result<bool> {
        if f.filed_by.trim().is_empty() {
            return Err(StoreError::Invalid("filed_by: must not be empty".into()));
        }
        let plan = self.plan(f.plan_id)?;
        self.line(f.message_id)?;
        let n = self.exec(
            "INSERT INTO message_filings
                 (message_id, plan_id, ticket_id, part_id, source, filed_by, locked, is_primary, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT DO NOTHING",
            args![
                f.message_id.0,
                f.plan_id.0,
                f.ticket_id,
                f.part_id,
                f.source.as_str(),
                f.filed_by,
                f.locked,
                f.primary,
                self.now
            ],
        )?;
        if n > 0 {
            // The line's quotes follow each filing it gets, in the same write (C §5).
            self.file_line_quotes(f.message_id, f.plan_id, f.ticket_id)?;
            self.plan_event(
                &plan,
                json!({"plan_id": f.plan_id, "version": plan.version, "change": "filed",
                       "message_id": f.message_id, "ticket_id": f.ticket_id,
                       "source": f.source.as_str()}),
            )?;
        }
        Ok(n > 0)
    }

    /// The plans (and tickets) a line is filed under, primary first.
    pub fn filings_of_line(&self, message: SessionMessageId) -> Result<Vec<Filing>> {
        let sql = format!(
            "SELECT {FILING_COLUMNS} FROM message_filings WHERE message_id = ?1
             ORDER BY is_primary DESC, at, plan_id, COALESCE(ticket_id, 0)"
        );
        self.query_all(&sql, args![message.0], filing_from_row)
    }

    /// The lines filed under a plan, oldest first, after `after`.
    pub fn plan_lines(
        &self,
        plan: PlanId,
        after: Option<SessionMessageId>,
        limit: u32,
    ) -> Result<Vec<SessionMessage>> {
        let ids: Vec<i64> = self.query_all(
            "SELECT DISTINCT message_id FROM message_filings
             WHERE plan_id = ?1 AND message_id > ?2 ORDER BY message_id LIMIT ?3",
            args![plan.0, after.map_or(0, |a| a.0), limit],
            |r| r.get(0),
        )?;
        ids.into_iter()
            .map(|id| self.line(SessionMessageId(id)))
            .collect()
    }

    fn write_revision(
        &mut self,
        id: PlanId,
        version: i64,
        cause: RevisionCause,
        changes: &Json,
    ) -> Result<()> {
        self.exec(
            "INSERT INTO plan_revisions (plan_id, version, cause, changes, at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            args![
                id.0,
                version,
                cause.to_string(),
                changes.to_string(),
                self.now
            ],
        )?;
        Ok(())
    }

    /// `plan_changed`, in the plan's home conversation (a plan without one: the global log).
    fn plan_event(&mut self, plan: &PlanRecord, payload: Json) -> Result<()> {
        match plan.home_session_id {
            Some(home) => self.session_event("plan_changed", home, None, payload),
            None => self.event("plan_changed", None, None, payload),
        }
    }
}
