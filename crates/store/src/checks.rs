//! Acceptance checks (digest 003-C §15) and checks from the user's words (§16, kind `words`),
//! with their runs: each check keeps its last five (trigger `check_runs_keep_five`), a run's
//! output tail at most 4000 characters. The timeout is 1–600 s (120 by default); an offer
//! never gates; a check from words is never edited (`derived_check`). Removing a check keeps
//! its row (`removed_at`), so a removed one is known. Writes append `check_changed`,
//! `check_confirmed` and `check_run` to the job's home conversation. Running checks, and
//! which paths are outside the workspace, are the callers'.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use std::collections::HashMap;
use std::fmt;
use troupe_core::submission::CheckSource;
use troupe_core::words_check::{Bound, Dimension, Value as Said};
use troupe_core::{CheckId, PlanId, SubmissionId, TicketId};

/// The longest output tail a run keeps, in characters.
pub const OUTPUT_TAIL_MAX: usize = 4000;
/// A check's timeout when none is given, and the longest allowed, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u32 = 120;
pub const MAX_TIMEOUT_SECS: u32 = 600;

macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident, $what:literal, { $($v:ident => $s:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($v),+ }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $($name::$v => $s),+ }
            }

            pub fn parse(s: &str) -> Result<Self, String> {
                match s {
                    $($s => Ok($name::$v),)+
                    other => Err(format!(
                        concat!($what, " '{}' is not one of ", $($s, " "),+),
                        other
                    )),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_enum!(
    /// What a check looks at.
    CheckKind, "check kind", {
        FileExists => "file_exists",
        FileContains => "file_contains",
        FileMatchesRegex => "file_matches_regex",
        Command => "command",
        Words => "words",
        Standard => "standard",
        Seams => "seams",
    }
);

text_enum!(
    /// A check from words: an offer (measured, shown, never a gate) or in force.
    WordsStatus, "words check status", {
        Offer => "offer",
        InForce => "in_force",
    }
);

text_enum!(
    /// How a run ended: `blocked` reached outside the workspace and did not run; `error`
    /// gave no evidence either way.
    RunOutcome, "check run outcome", {
        Passed => "passed",
        Failed => "failed",
        Blocked => "blocked",
        Error => "error",
    }
);

/// A `checks` row with its kept runs.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckRecord {
    pub id: CheckId,
    pub plan_id: PlanId,
    /// None: plan-wide.
    pub ticket_id: Option<TicketId>,
    pub done_when_line: Option<String>,
    pub kind: CheckKind,
    pub path: Option<String>,
    pub pattern: Option<String>,
    pub negate: bool,
    pub command: Option<String>,
    pub cwd: Option<String>,
    pub expected_exit: i64,
    pub expected_output: Option<String>,
    pub timeout_secs: u32,
    pub source: CheckSource,
    pub gate: bool,
    pub confirmed: bool,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub dimension: Option<Dimension>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub value: Option<Said>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub bound: Option<Bound>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The user's line the number stands on.
    pub quote_id: Option<i64>,
    pub sample_ticket_id: Option<TicketId>,
    pub status: Option<WordsStatus>,
    pub said_count: i64,
    pub removed_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The kept runs, newest first.
    pub runs: Vec<CheckRunRecord>,
}

/// One run of a check.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckRunRecord {
    pub id: i64,
    pub check_id: CheckId,
    /// The hand-over it was run for.
    pub submission_id: Option<SubmissionId>,
    pub outcome: RunOutcome,
    /// One line, in the app's language.
    pub detail: String,
    pub output_tail: String,
    /// What a check from words measured (seconds, short side, ratio or fps).
    pub measured: Option<f64>,
    /// The judge looked at pictures: for reference only, it neither holds a hand-over back
    /// nor backs it, and does not hold the job's delivery back.
    pub for_reference: bool,
    pub started_at: i64,
    pub ended_at: i64,
}

/// A check to save. A words check's `dimension`, `value`, `bound`, `min`, `max`, `quote_id`,
/// `status` and `said_count` come from `troupe_core::words_check`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewCheck {
    pub plan_id: PlanId,
    pub ticket_id: Option<TicketId>,
    pub done_when_line: Option<String>,
    pub kind: CheckKind,
    pub path: Option<String>,
    pub pattern: Option<String>,
    pub negate: bool,
    pub command: Option<String>,
    pub cwd: Option<String>,
    pub expected_exit: i64,
    pub expected_output: Option<String>,
    /// None: the default, 120 s.
    pub timeout_secs: Option<u32>,
    pub source: CheckSource,
    pub dimension: Option<Dimension>,
    pub value: Option<Said>,
    pub bound: Option<Bound>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub quote_id: Option<i64>,
    pub sample_ticket_id: Option<TicketId>,
    pub status: Option<WordsStatus>,
    pub said_count: i64,
}

impl NewCheck {
    /// A check of `kind` with nothing else set: fill in what the kind needs.
    pub fn new(plan_id: PlanId, kind: CheckKind, source: CheckSource) -> NewCheck {
        NewCheck {
            plan_id,
            ticket_id: None,
            done_when_line: None,
            kind,
            path: None,
            pattern: None,
            negate: false,
            command: None,
            cwd: None,
            expected_exit: 0,
            expected_output: None,
            timeout_secs: None,
            source,
            dimension: None,
            value: None,
            bound: None,
            min: None,
            max: None,
            quote_id: None,
            sample_ticket_id: None,
            status: None,
            said_count: 0,
        }
    }
}

/// A user's edit of a check (`PATCH /v1/checks/:id`); `None` leaves a field alone.
#[derive(Clone, Debug, Default)]
pub struct CheckEdit {
    pub ticket_id: Option<Option<TicketId>>,
    pub done_when_line: Option<Option<String>>,
    pub path: Option<Option<String>>,
    pub pattern: Option<Option<String>>,
    pub negate: Option<bool>,
    pub command: Option<Option<String>>,
    pub cwd: Option<Option<String>>,
    pub expected_exit: Option<i64>,
    pub expected_output: Option<Option<String>>,
    pub timeout_secs: Option<u32>,
}

/// A run to record.
#[derive(Clone, Debug, PartialEq)]
pub struct NewCheckRun {
    pub check_id: CheckId,
    pub submission_id: Option<SubmissionId>,
    pub outcome: RunOutcome,
    pub detail: String,
    /// Kept to its last 4000 characters.
    pub output_tail: String,
    pub measured: Option<f64>,
    pub for_reference: bool,
    pub started_at: i64,
}

const COLUMNS: &str = "c.id, c.plan_id, c.ticket_id, c.done_when_line, c.kind, c.path, \
    c.pattern, c.negate, c.command, c.cwd, c.expected_exit, c.expected_output, c.timeout_secs, \
    c.source, c.gate, c.confirmed, c.dimension, c.value, c.bound, c.min, c.max, c.quote_id, \
    c.sample_ticket_id, c.status, c.said_count, c.removed_at, c.created_at, c.updated_at";

const RUN_COLUMNS: &str = "k.id, k.check_id, k.submission_id, k.outcome, k.detail, \
    k.output_tail, k.measured, k.started_at, k.ended_at, k.for_reference";

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

fn parsed<T>(v: Option<String>, parse: impl Fn(&str) -> Result<T, String>) -> Result<Option<T>> {
    v.map(|s| parse(&s).map_err(|e| corrupt("check", e)))
        .transpose()
}

fn from_row(r: &crate::Row) -> Result<CheckRecord> {
    let value: Option<String> = r.get(17)?;
    Ok(CheckRecord {
        id: CheckId(r.get(0)?),
        plan_id: PlanId(r.get(1)?),
        ticket_id: r.get::<Option<i64>>(2)?.map(TicketId),
        done_when_line: r.get(3)?,
        kind: CheckKind::parse(&r.get::<String>(4)?).map_err(|e| corrupt("check", e))?,
        path: r.get(5)?,
        pattern: r.get(6)?,
        negate: r.get(7)?,
        command: r.get(8)?,
        cwd: r.get(9)?,
        expected_exit: r.get(10)?,
        expected_output: r.get(11)?,
        timeout_secs: r.get(12)?,
        source: CheckSource::parse(&r.get::<String>(13)?).map_err(|e| corrupt("check", e))?,
        gate: r.get(14)?,
        confirmed: r.get(15)?,
        dimension: parsed(r.get(16)?, Dimension::parse)?,
        value: value
            .map(|v| serde_json::from_str(&v).map_err(|e| corrupt("check value", e)))
            .transpose()?,
        bound: parsed(r.get(18)?, Bound::parse)?,
        min: r.get(19)?,
        max: r.get(20)?,
        quote_id: r.get(21)?,
        sample_ticket_id: r.get::<Option<i64>>(22)?.map(TicketId),
        status: parsed(r.get(23)?, WordsStatus::parse)?,
        said_count: r.get(24)?,
        removed_at: r.get(25)?,
        created_at: r.get(26)?,
        updated_at: r.get(27)?,
        runs: Vec::new(),
    })
}

fn run_from_row(r: &crate::Row) -> Result<CheckRunRecord> {
    Ok(CheckRunRecord {
        id: r.get(0)?,
        check_id: CheckId(r.get(1)?),
        submission_id: r.get::<Option<i64>>(2)?.map(SubmissionId),
        outcome: RunOutcome::parse(&r.get::<String>(3)?).map_err(|e| corrupt("check run", e))?,
        detail: r.get(4)?,
        output_tail: r.get(5)?,
        measured: r.get(6)?,
        started_at: r.get(7)?,
        ended_at: r.get(8)?,
        for_reference: r.get(9)?,
    })
}

/// The 422 of a timeout outside 1–600 s.
fn check_timeout(t: u32) -> Result<()> {
    if t == 0 || t > MAX_TIMEOUT_SECS {
        return Err(StoreError::Invalid(format!(
            "timeout_secs: {t} is outside 1–{MAX_TIMEOUT_SECS} seconds"
        )));
    }
    Ok(())
}

/// The last `OUTPUT_TAIL_MAX` characters of `s`.
fn tail(s: &str) -> &str {
    match s.char_indices().rev().nth(OUTPUT_TAIL_MAX - 1) {
        Some((i, _)) => &s[i..],
        None => s,
    }
}

fn blank(v: &Option<String>) -> bool {
    v.as_deref().is_none_or(|s| s.trim().is_empty())
}

/// What the kind needs, said plainly (the database's `check_shape` refuses the rest).
fn check_shape(c: &NewCheck) -> Result<()> {
    let need = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(StoreError::Invalid(format!("{what} (kind {})", c.kind)))
        }
    };
    match c.kind {
        CheckKind::FileExists => need(!blank(&c.path), "path: a file check names its file"),
        CheckKind::FileContains | CheckKind::FileMatchesRegex => {
            need(!blank(&c.path), "path: a file check names its file")?;
            need(c.pattern.is_some(), "pattern: what to look for is missing")
        }
        CheckKind::Command => need(!blank(&c.command), "command: must not be empty"),
        CheckKind::Words => {
            need(
                c.source == CheckSource::Words,
                "source: a words check comes from words",
            )?;
            need(
                c.dimension.is_some(),
                "dimension: a words check measures one",
            )?;
            need(c.status.is_some(), "status: offer or in_force")
        }
        CheckKind::Standard => {
            need(
                c.source == CheckSource::Sample,
                "source: a standard check is the sample's",
            )?;
            need(
                c.ticket_id.is_some() && c.sample_ticket_id.is_some(),
                "ticket_id, sample_ticket_id: a standard check holds a ticket to a sample",
            )
        }
        CheckKind::Seams => need(
            blank(&c.path) != blank(&c.command),
            "path, command: a seams check's parts come from one of them",
        ),
    }
}

impl Tx<'_> {
    /// Save a check (its gate: not for an offer) and append `check_changed` {change:
    /// created}. Paths and commands reaching outside the workspace are refused by the caller
    /// first (AC-1).
    pub fn create_check(&mut self, c: &NewCheck) -> Result<CheckRecord> {
        self.plan(c.plan_id)?;
        if let Some(t) = c.ticket_id
            && self.ticket(t)?.plan_id != c.plan_id
        {
            return Err(StoreError::Invalid(format!(
                "ticket_id: ticket {t} is not of job {}",
                c.plan_id
            )));
        }
        let timeout = c.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        check_timeout(timeout)?;
        check_shape(c)?;
        let in_force = c.status == Some(WordsStatus::InForce);
        let gate = c.kind != CheckKind::Words || in_force;
        let value = c
            .value
            .map(|v| serde_json::to_string(&v))
            .transpose()
            .map_err(|e| corrupt("check value", e))?;
        let id = CheckId(self.insert(
            "INSERT INTO checks (plan_id, ticket_id, done_when_line, kind, path, pattern, negate,
                 command, cwd, expected_exit, expected_output, timeout_secs, source, gate,
                 confirmed, dimension, value, bound, min, max, quote_id, sample_ticket_id, status,
                 said_count, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?25)",
            args![
                c.plan_id.0,
                c.ticket_id.map(|t| t.0),
                c.done_when_line,
                c.kind.as_str(),
                c.path,
                c.pattern,
                c.negate,
                c.command,
                c.cwd,
                c.expected_exit,
                c.expected_output,
                timeout,
                c.source.as_str(),
                gate,
                in_force,
                c.dimension.map(Dimension::as_str),
                value,
                c.bound.map(Bound::as_str),
                c.min,
                c.max,
                c.quote_id,
                c.sample_ticket_id.map(|t| t.0),
                c.status.map(WordsStatus::as_str),
                c.said_count,
                self.now
            ],
        )?);
        let rec = self.check(id)?;
        self.check_event("check_changed", &rec, json!({"change": "created"}))?;
        Ok(rec)
    }

    pub fn check(&self, id: CheckId) -> Result<CheckRecord> {
        self.checks_where("c.id = ?1", id.0)?
            .pop()
            .ok_or_else(|| StoreError::not_found("check", id))
    }

    /// A job's checks by id, each with its kept runs (two queries); removed ones only when
    /// asked.
    pub fn checks_of_plan(&self, plan: PlanId, removed_too: bool) -> Result<Vec<CheckRecord>> {
        let mut all = self.checks_where("c.plan_id = ?1", plan.0)?;
        if !removed_too {
            all.retain(|c| c.removed_at.is_none());
        }
        Ok(all)
    }

    fn checks_where(&self, cond: &str, arg: i64) -> Result<Vec<CheckRecord>> {
        let mut checks = self.query_all(
            &format!("SELECT {COLUMNS} FROM checks c WHERE {cond} ORDER BY c.id"),
            args![arg],
            from_row,
        )?;
        if checks.is_empty() {
            return Ok(checks);
        }
        let at: HashMap<i64, usize> = checks
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.0, i))
            .collect();
        for run in self.query_all(
            &format!(
                "SELECT {RUN_COLUMNS} FROM check_runs k JOIN checks c ON c.id = k.check_id
                 WHERE {cond} ORDER BY k.id DESC"
            ),
            args![arg],
            run_from_row,
        )? {
            checks[at[&run.check_id.0]].runs.push(run);
        }
        Ok(checks)
    }

    /// The user's edit (AC-7: an organizer's check becomes the user's). A check from words
    /// is never edited (`derived_check`), a removed one neither; `check_changed` {change:
    /// edited} is appended.
    pub fn edit_check(&mut self, id: CheckId, e: &CheckEdit) -> Result<CheckRecord> {
        let cur = self.check(id)?;
        if cur.kind == CheckKind::Words || cur.source == CheckSource::Words {
            return Err(StoreError::Conflict(
                "derived_check: a check from your words is confirmed or removed, not edited".into(),
            ));
        }
        if cur.removed_at.is_some() {
            return Err(StoreError::Conflict(format!("check {id} was removed")));
        }
        let mut next = NewCheck {
            plan_id: cur.plan_id,
            ticket_id: e.ticket_id.unwrap_or(cur.ticket_id),
            done_when_line: e.done_when_line.clone().unwrap_or(cur.done_when_line),
            kind: cur.kind,
            path: e.path.clone().unwrap_or(cur.path),
            pattern: e.pattern.clone().unwrap_or(cur.pattern),
            negate: e.negate.unwrap_or(cur.negate),
            command: e.command.clone().unwrap_or(cur.command),
            cwd: e.cwd.clone().unwrap_or(cur.cwd),
            expected_exit: e.expected_exit.unwrap_or(cur.expected_exit),
            expected_output: e.expected_output.clone().unwrap_or(cur.expected_output),
            timeout_secs: Some(e.timeout_secs.unwrap_or(cur.timeout_secs)),
            source: cur.source,
            ..NewCheck::new(cur.plan_id, cur.kind, cur.source)
        };
        if next.source == CheckSource::Organizer {
            next.source = CheckSource::User;
        }
        if let Some(t) = next.ticket_id
            && self.ticket(t)?.plan_id != cur.plan_id
        {
            return Err(StoreError::Invalid(format!(
                "ticket_id: ticket {t} is not of job {}",
                cur.plan_id
            )));
        }
        check_timeout(next.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS))?;
        if cur.kind != CheckKind::Standard {
            check_shape(&next)?;
        }
        self.exec(
            "UPDATE checks SET ticket_id = ?2, done_when_line = ?3, path = ?4, pattern = ?5,
                 negate = ?6, command = ?7, cwd = ?8, expected_exit = ?9, expected_output = ?10,
                 timeout_secs = ?11, source = ?12, updated_at = ?13
             WHERE id = ?1",
            args![
                id.0,
                next.ticket_id.map(|t| t.0),
                next.done_when_line,
                next.path,
                next.pattern,
                next.negate,
                next.command,
                next.cwd,
                next.expected_exit,
                next.expected_output,
                next.timeout_secs,
                next.source.as_str(),
                self.now
            ],
        )?;
        let rec = self.check(id)?;
        self.check_event("check_changed", &rec, json!({"change": "edited"}))?;
        Ok(rec)
    }

    /// Remove a check: it stops running and counting, and its row stays (`removed_at`), with
    /// `check_changed` {change: removed}. False when it was removed already.
    pub fn remove_check(&mut self, id: CheckId) -> Result<bool> {
        self.check(id)?;
        let n = self.exec(
            "UPDATE checks SET removed_at = ?2, updated_at = ?2 WHERE id = ?1 AND removed_at IS NULL",
            args![id.0, self.now],
        )?;
        if n > 0 {
            let rec = self.check(id)?;
            self.check_event("check_changed", &rec, json!({"change": "removed"}))?;
        }
        Ok(n > 0)
    }

    /// The user confirms an offer (CW-16): in force, confirmed, a gate; `check_confirmed`
    /// appended. One a later number withdrew (removed) is 409 `withdrawn`.
    pub fn confirm_check(&mut self, id: CheckId) -> Result<CheckRecord> {
        let cur = self.check(id)?;
        if cur.kind != CheckKind::Words {
            return Err(StoreError::Invalid(format!(
                "check {id} is not a check from your words; only those are confirmed"
            )));
        }
        if cur.removed_at.is_some() {
            return Err(StoreError::Conflict(format!(
                "withdrawn: check {id} was withdrawn by a later number"
            )));
        }
        self.exec(
            "UPDATE checks SET status = 'in_force', confirmed = 1, gate = 1, updated_at = ?2
             WHERE id = ?1",
            args![id.0, self.now],
        )?;
        let rec = self.check(id)?;
        if cur.status != Some(WordsStatus::InForce) {
            self.check_event("check_confirmed", &rec, json!({}))?;
        }
        Ok(rec)
    }

    /// Write a words check's reading again (CW-9: said once more; CW-8: the offer follows the
    /// latest target; CW-20: back to an offer when its quote is erased). An offer is never a
    /// gate, one in force always is.
    #[allow(clippy::too_many_arguments)]
    pub fn set_words_reading(
        &mut self,
        id: CheckId,
        value: Said,
        bound: Bound,
        min: Option<f64>,
        max: Option<f64>,
        quote_id: Option<i64>,
        said_count: i64,
        status: WordsStatus,
    ) -> Result<CheckRecord> {
        let cur = self.check(id)?;
        if cur.kind != CheckKind::Words {
            return Err(StoreError::Invalid(format!(
                "check {id} is not a check from your words"
            )));
        }
        if Some(value.dimension()) != cur.dimension {
            return Err(StoreError::Invalid(format!(
                "value: a {} number on a {} check",
                value.dimension().as_str(),
                cur.dimension.map_or("?", Dimension::as_str)
            )));
        }
        let in_force = status == WordsStatus::InForce;
        let value = serde_json::to_string(&value).map_err(|e| corrupt("check value", e))?;
        self.exec(
            "UPDATE checks SET value = ?2, bound = ?3, min = ?4, max = ?5, quote_id = ?6,
                 said_count = ?7, status = ?8, gate = ?9, confirmed = ?9, updated_at = ?10
             WHERE id = ?1",
            args![
                id.0,
                value,
                bound.as_str(),
                min,
                max,
                quote_id,
                said_count,
                status.as_str(),
                in_force,
                self.now
            ],
        )?;
        let rec = self.check(id)?;
        self.check_event("check_changed", &rec, json!({"change": "reading"}))?;
        Ok(rec)
    }

    /// Record a finished run (its output kept to its last 4000 characters; the database keeps
    /// the check's newest five) and append `check_run`.
    pub fn record_check_run(&mut self, run: &NewCheckRun) -> Result<CheckRunRecord> {
        let check = self.check(run.check_id)?;
        if let Some(s) = run.submission_id {
            self.submission(s)?;
        }
        let id = self.insert(
            "INSERT INTO check_runs (check_id, submission_id, outcome, detail, output_tail,
                 measured, started_at, ended_at, for_reference)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            args![
                run.check_id.0,
                run.submission_id.map(|s| s.0),
                run.outcome.as_str(),
                run.detail,
                tail(&run.output_tail),
                run.measured,
                run.started_at,
                self.now,
                run.for_reference
            ],
        )?;
        let rec = self.query_one(
            &format!("SELECT {RUN_COLUMNS} FROM check_runs k WHERE k.id = ?1"),
            args![id],
            run_from_row,
        )?;
        self.check_event(
            "check_run",
            &check,
            json!({"run_id": id, "outcome": rec.outcome.as_str(), "detail": rec.detail,
                   "submission_id": rec.submission_id, "measured": rec.measured}),
        )?;
        Ok(rec)
    }

    /// A check's kept runs, newest first.
    pub fn runs_of_check(&self, id: CheckId) -> Result<Vec<CheckRunRecord>> {
        self.query_all(
            &format!(
                "SELECT {RUN_COLUMNS} FROM check_runs k WHERE k.check_id = ?1 ORDER BY k.id DESC"
            ),
            args![id.0],
            run_from_row,
        )
    }

    /// The runs made for the submissions `s` meeting `cond` (one argument), newest first.
    pub(crate) fn check_runs_of_submissions(
        &self,
        cond: &str,
        arg: i64,
    ) -> Result<Vec<CheckRunRecord>> {
        self.query_all(
            &format!(
                "SELECT {RUN_COLUMNS} FROM check_runs k JOIN submissions s ON s.id = k.submission_id
                 WHERE {cond} ORDER BY k.id DESC"
            ),
            args![arg],
            run_from_row,
        )
    }

    fn check_event(&mut self, kind: &str, c: &CheckRecord, extra: serde_json::Value) -> Result<()> {
        let mut payload = json!({
            "task_id": c.plan_id, "ticket_id": c.ticket_id, "check_id": c.id,
        });
        if let (Some(p), serde_json::Value::Object(more)) = (payload.as_object_mut(), extra) {
            p.extend(more);
        }
        match self.plan(c.plan_id)?.home_session_id {
            Some(home) => self.session_event(kind, home, None, payload),
            None => self.event(kind, None, None, payload),
        }
    }
}
