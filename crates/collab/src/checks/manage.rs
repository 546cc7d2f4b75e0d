//! The user's checks as the API saves and shows them (AC-1, AC-5, AC-7, AC-8). Only the user
//! writes checks here: nothing is saved that reaches outside the workspace
//! (`outside_workspace`), a regex must compile, the timeout is 1–600 s. A check from words is
//! confirmed or removed, never edited (`derived_check`). A saved or changed check runs at once.
//! A check follows its Done when line through rewording; one whose line is gone is listed
//! under "checks that match no line" and still runs and counts.

use super::Checks;
use crate::CollabError;
use serde::{Deserialize, Deserializer, Serialize};
use troupe_core::acceptance_check::{
    Draft, Kind, done_when_lines, follow_line, line_key, validate,
};
use troupe_core::submission::CheckSource;
use troupe_core::{CheckId, PlanId, TicketId};
use troupe_store::{
    CheckEdit, CheckKind, CheckRecord, CheckRunRecord, NewCheck, PlanRevision, StoreError, Tx,
};

/// `POST /v1/tasks/:id/checks`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewCheckRequest {
    /// file_exists | file_contains | file_matches_regex | command | seams.
    pub kind: String,
    /// The ticket it checks; none: the job as a whole.
    #[serde(default)]
    pub ticket_id: Option<i64>,
    /// The Done when line it stands for (the job's, or its ticket's).
    #[serde(default)]
    pub done_when_line: Option<String>,
    /// Workspace-relative file (file kinds); for seams, a glob of the parts or one file to
    /// cut at its headings or scenes.
    #[serde(default)]
    pub path: Option<String>,
    /// Text to find, or a regular expression.
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub negate: bool,
    #[serde(default)]
    pub command: Option<String>,
    /// Workspace-relative folder the command runs in; the workspace root by default.
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub expected_exit: i64,
    /// Compared ignoring trailing blanks and trailing empty lines (AC-3).
    #[serde(default)]
    pub expected_output: Option<String>,
    /// 1–600; 120 by default.
    #[serde(default)]
    pub timeout_secs: Option<i64>,
}

fn double<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Some(Option::deserialize(d)?))
}

/// `PATCH /v1/checks/:id`: a field left out stays; `null` clears an optional one.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatchCheckRequest {
    #[serde(default, deserialize_with = "double")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub ticket_id: Option<Option<i64>>,
    #[serde(default, deserialize_with = "double")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub done_when_line: Option<Option<String>>,
    #[serde(default, deserialize_with = "double")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub path: Option<Option<String>>,
    #[serde(default, deserialize_with = "double")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub pattern: Option<Option<String>>,
    #[serde(default)]
    pub negate: Option<bool>,
    #[serde(default, deserialize_with = "double")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub command: Option<Option<String>>,
    #[serde(default, deserialize_with = "double")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub cwd: Option<Option<String>>,
    #[serde(default)]
    pub expected_exit: Option<i64>,
    #[serde(default, deserialize_with = "double")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub expected_output: Option<Option<String>>,
    #[serde(default)]
    pub timeout_secs: Option<i64>,
}

/// A check as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckView {
    #[serde(flatten)]
    pub check: CheckRecord,
    /// The Done when line it stands for now, followed through rewording (AC-8).
    pub line: Option<String>,
    /// False when its line is no longer in the Done when text: it still runs and counts.
    pub matches_line: bool,
    /// An offer from the user's words: measured and shown, never a gate (CW-15).
    pub to_confirm: bool,
}

/// `GET /v1/tasks/:id/checks`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanChecks {
    pub plan_id: PlanId,
    /// Every check in force or offered, by id.
    pub checks: Vec<CheckView>,
    /// "Checks that match no line" (AC-8): their Done when line was removed.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub match_no_line: Vec<CheckId>,
}

fn invalid(e: troupe_core::acceptance_check::Invalid) -> CollabError {
    CollabError::Invalid(e.to_string())
}

fn store_kind(kind: Kind) -> CheckKind {
    match kind {
        Kind::FileExists => CheckKind::FileExists,
        Kind::FileContains => CheckKind::FileContains,
        Kind::FileMatchesRegex => CheckKind::FileMatchesRegex,
        Kind::Command => CheckKind::Command,
        Kind::Words => CheckKind::Words,
        Kind::Seams => CheckKind::Seams,
    }
}

fn core_kind(kind: CheckKind) -> Option<Kind> {
    Some(match kind {
        CheckKind::FileExists => Kind::FileExists,
        CheckKind::FileContains => Kind::FileContains,
        CheckKind::FileMatchesRegex => Kind::FileMatchesRegex,
        CheckKind::Command => Kind::Command,
        CheckKind::Words => Kind::Words,
        CheckKind::Seams => Kind::Seams,
        CheckKind::Standard => return None,
    })
}

/// AC-8: the line `c` stands for now, and whether it is still in its Done when text. The
/// job's Done when is followed through the job's revisions since the check was saved or
/// changed; a ticket's is matched by text.
fn follow(c: &CheckRecord, current: &str, revisions: &[PlanRevision]) -> (Option<String>, bool) {
    let Some(line) = c.done_when_line.as_deref() else {
        return (None, true);
    };
    let mut key = line_key(line);
    let now = done_when_lines(current);
    if now.contains(&key) {
        return (Some(key), true);
    }
    if c.ticket_id.is_none() {
        for r in revisions.iter().filter(|r| r.at >= c.updated_at) {
            let change = &r.changes["done_when"];
            let (Some(old), Some(new)) = (change["old"].as_str(), change["new"].as_str()) else {
                continue;
            };
            if !done_when_lines(old).contains(&key) {
                continue;
            }
            match follow_line(&key, old, new) {
                Some(next) => key = next,
                None => return (Some(line_key(line)), false),
            }
        }
    }
    let matched = now.contains(&key);
    (Some(if matched { key } else { line_key(line) }), matched)
}

/// Every live check of the job as the API shows it.
pub fn plan_checks(tx: &Tx<'_>, plan: PlanId) -> Result<PlanChecks, StoreError> {
    let p = tx.plan(plan)?;
    let revisions = tx.plan_revisions(plan)?;
    let tickets = tx.tickets_of_plan(plan)?;
    let mut out = PlanChecks {
        plan_id: plan,
        checks: Vec::new(),
        match_no_line: Vec::new(),
    };
    for c in tx.checks_of_plan(plan, false)? {
        let text = match c.ticket_id {
            Some(t) => tickets
                .iter()
                .find(|x| x.id == t)
                .map_or("", |x| x.done_when.as_str()),
            None => p.spec.done_when.as_str(),
        };
        let v = view_with(c, text, &revisions);
        if !v.matches_line {
            out.match_no_line.push(v.check.id);
        }
        out.checks.push(v);
    }
    Ok(out)
}

fn view_with(c: CheckRecord, text: &str, revisions: &[PlanRevision]) -> CheckView {
    let (line, matches_line) = follow(&c, text, revisions);
    let to_confirm = c.kind == CheckKind::Words && !c.confirmed;
    CheckView {
        check: c,
        line,
        matches_line,
        to_confirm,
    }
}

/// One check as the API shows it.
pub fn check_view(tx: &Tx<'_>, id: CheckId) -> Result<CheckView, StoreError> {
    let c = tx.check(id)?;
    let text = match c.ticket_id {
        Some(t) => tx.ticket(t)?.done_when,
        None => tx.plan(c.plan_id)?.spec.done_when,
    };
    let revisions = tx.plan_revisions(c.plan_id)?;
    Ok(view_with(c, &text, &revisions))
}

/// A ticket id given in a body names a ticket (else 422 naming the field, not 404).
fn known_ticket(tx: &Tx<'_>, t: Option<i64>) -> Result<(), StoreError> {
    match t {
        Some(t) if tx.find_ticket(TicketId(t))?.is_none() => Err(StoreError::Invalid(format!(
            "ticket_id: there is no ticket {t}"
        ))),
        _ => Ok(()),
    }
}

impl Checks {
    /// Save the user's check (AC-1, AC-7). The caller runs it at once ([`Checks::spawn_run`]).
    pub fn create(&self, plan: PlanId, r: &NewCheckRequest) -> Result<CheckRecord, CollabError> {
        let kind = Kind::parse(&r.kind).map_err(invalid)?;
        let timeout = validate(
            kind,
            &Draft {
                path: r.path.as_deref(),
                pattern: r.pattern.as_deref(),
                negate: r.negate,
                command: r.command.as_deref(),
                cwd: r.cwd.as_deref(),
                expected_exit: r.expected_exit,
                expected_output: r.expected_output.as_deref(),
                timeout_secs: r.timeout_secs,
            },
        )
        .map_err(invalid)?;
        if let Some(line) = &r.done_when_line
            && line.trim().is_empty()
        {
            return Err(CollabError::invalid(
                "done_when_line: empty; leave it out for a check of the whole job",
            ));
        }
        let trim = |v: &Option<String>| v.as_deref().map(|s| s.trim().to_string());
        Ok(self.store().write(|tx| {
            known_ticket(tx, r.ticket_id)?;
            let c = tx.create_check(&NewCheck {
                ticket_id: r.ticket_id.map(TicketId),
                done_when_line: r.done_when_line.as_deref().map(line_key),
                path: trim(&r.path),
                pattern: r.pattern.clone(),
                negate: r.negate,
                command: r.command.clone(),
                cwd: trim(&r.cwd),
                expected_exit: r.expected_exit,
                expected_output: r.expected_output.clone(),
                timeout_secs: Some(timeout),
                ..NewCheck::new(plan, store_kind(kind), CheckSource::User)
            })?;
            crate::quality::check_written(tx, &c)?;
            Ok(c)
        })?)
    }

    /// The user's edit (AC-7); a check from words is never edited (409 `derived_check`).
    pub fn edit(&self, id: CheckId, p: &PatchCheckRequest) -> Result<CheckRecord, CollabError> {
        let cur = self.store().read(|tx| tx.check(id))?;
        if cur.kind == CheckKind::Words {
            return Err(CollabError::conflict(
                "derived_check",
                "derived_check: a check from your words is confirmed or removed, not edited",
            ));
        }
        if cur.removed_at.is_some() {
            return Err(CollabError::conflict(
                "removed",
                format!("check {id} was removed"),
            ));
        }
        let Some(kind) = core_kind(cur.kind) else {
            return Err(CollabError::conflict(
                "derived_check",
                "derived_check: a sample's standard check follows the sample, not edits",
            ));
        };
        let pick = |new: &Option<Option<String>>, old: &Option<String>| match new {
            Some(v) => v.clone(),
            None => old.clone(),
        };
        let path = pick(&p.path, &cur.path);
        let pattern = pick(&p.pattern, &cur.pattern);
        let command = pick(&p.command, &cur.command);
        let cwd = pick(&p.cwd, &cur.cwd);
        let expected_output = pick(&p.expected_output, &cur.expected_output);
        let negate = p.negate.unwrap_or(cur.negate);
        let expected_exit = p.expected_exit.unwrap_or(cur.expected_exit);
        let timeout = validate(
            kind,
            &Draft {
                path: path.as_deref(),
                pattern: pattern.as_deref(),
                negate,
                command: command.as_deref(),
                cwd: cwd.as_deref(),
                expected_exit,
                expected_output: expected_output.as_deref(),
                timeout_secs: Some(p.timeout_secs.unwrap_or(i64::from(cur.timeout_secs))),
            },
        )
        .map_err(invalid)?;
        if let Some(Some(line)) = &p.done_when_line
            && line.trim().is_empty()
        {
            return Err(CollabError::invalid(
                "done_when_line: empty; send null for a check of the whole job",
            ));
        }
        Ok(self.store().write(|tx| {
            known_ticket(tx, p.ticket_id.flatten())?;
            tx.edit_check(
                id,
                &CheckEdit {
                    ticket_id: p.ticket_id.map(|t| t.map(TicketId)),
                    done_when_line: p
                        .done_when_line
                        .as_ref()
                        .map(|l| l.as_deref().map(line_key)),
                    path: Some(path.clone()),
                    pattern: Some(pattern.clone()),
                    negate: Some(negate),
                    command: Some(command.clone()),
                    cwd: Some(cwd.clone()),
                    expected_exit: Some(expected_exit),
                    expected_output: Some(expected_output.clone()),
                    timeout_secs: Some(timeout),
                },
            )
        })?)
    }

    /// Remove a check (a check from words too: its words stop counting, CW-10).
    pub fn remove(&self, id: CheckId) -> Result<bool, CollabError> {
        Ok(self.store().write(|tx| {
            let removed = tx.remove_check(id)?;
            // A number's offer or check gone from the board may end a replacement card (CW-18).
            let c = tx.check(id)?;
            if removed && c.kind == CheckKind::Words {
                let p = tx.plan(c.plan_id)?;
                super::replacement::sync_cards(tx, &p)?;
            }
            Ok(removed)
        })?)
    }

    /// AC-5: a saved or changed check runs at once, in the background.
    pub fn spawn_run(&self, id: CheckId) -> tokio::task::JoinHandle<Option<CheckRunRecord>> {
        let me = self.clone();
        tokio::spawn(async move {
            match me.run_check(id, None).await {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::warn!(check = %id, error = %e, "a check could not run");
                    None
                }
            }
        })
    }
}
