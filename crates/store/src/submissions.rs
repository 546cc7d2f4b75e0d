//! Submissions (digest 003-B §4): one hand-over of a ticket's work, with its files (path,
//! SHA-256, size — never changed after, by trigger), the parts it covers, and what became of
//! it; and the files Bots' lines posted or named (`line_files`). Every write appends its
//! event to the job's home conversation: `submission_created`, `submission_approved`,
//! `submission_awaiting_word`, `submission_superseded`. Which moves exist is
//! `troupe_core::submission`'s.

use crate::checks::CheckRunRecord;
use crate::reviews::ReviewRecord;
use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use std::collections::HashMap;
use troupe_core::submission::{ApprovedBy, SubmissionOrigin, SubmissionState, is_undecided};
use troupe_core::{
    BotId, PartId, PlanId, RunId, SessionId, SessionMessageId, SubmissionId, TicketId, WorkItemId,
};

/// One file handed over.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SubmittedFile {
    pub path: String,
    pub sha256: String,
    pub size: i64,
}

/// A `submissions` row with its files, parts, the check runs made for it and its reviews.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SubmissionRecord {
    pub id: SubmissionId,
    pub ticket_id: TicketId,
    pub plan_id: PlanId,
    pub origin: SubmissionOrigin,
    pub producer_bot_id: Option<BotId>,
    /// The segment it was handed over from.
    pub run_id: Option<RunId>,
    pub work_item_id: Option<WorkItemId>,
    /// The words of a words hand-over.
    pub content: Option<String>,
    pub note: String,
    pub claims: Vec<String>,
    pub state: SubmissionState,
    pub approved_by: Option<ApprovedBy>,
    pub approved_by_bot_id: Option<BotId>,
    /// The user's line that let it through.
    pub approved_message_id: Option<SessionMessageId>,
    pub superseded_by: Option<SubmissionId>,
    pub created_at: i64,
    pub decided_at: Option<i64>,
    /// By path.
    pub files: Vec<SubmittedFile>,
    /// None: the whole ticket.
    pub parts: Vec<PartId>,
    /// The runs of its checks made for it, newest first (each check keeps its last five).
    pub check_runs: Vec<CheckRunRecord>,
    pub reviews: Vec<ReviewRecord>,
}

/// A hand-over to record.
#[derive(Clone, Debug)]
pub struct NewSubmission {
    pub ticket_id: TicketId,
    pub origin: SubmissionOrigin,
    pub producer_bot_id: Option<BotId>,
    pub run_id: Option<RunId>,
    pub work_item_id: Option<WorkItemId>,
    pub content: Option<String>,
    pub note: String,
    pub claims: Vec<String>,
    pub files: Vec<SubmittedFile>,
    pub parts: Vec<PartId>,
}

/// A hand-over and its files as (path, sha256), by path: what `unchanged` compares.
pub type HandOverFiles = (SubmissionId, Vec<(String, String)>);

/// A file a Bot's line posted or named, first cited when.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LineFile {
    pub line_id: SessionMessageId,
    pub path: String,
    pub sha256: Option<String>,
    pub first_cited_at: i64,
}

const COLUMNS: &str = "s.id, s.ticket_id, s.plan_id, s.origin, s.producer_bot_id, s.run_id, \
    s.work_item_id, s.content, s.note, s.claims, s.state, s.approved_by, s.approved_by_bot_id, \
    s.approved_message_id, s.superseded_by, s.created_at, s.decided_at";

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

fn from_row(r: &crate::Row) -> Result<SubmissionRecord> {
    let claims: String = r.get(9)?;
    Ok(SubmissionRecord {
        id: SubmissionId(r.get(0)?),
        ticket_id: TicketId(r.get(1)?),
        plan_id: PlanId(r.get(2)?),
        origin: SubmissionOrigin::parse(&r.get::<String>(3)?)
            .map_err(|e| corrupt("submission", e))?,
        producer_bot_id: r.get::<Option<i64>>(4)?.map(BotId),
        run_id: r.get::<Option<i64>>(5)?.map(RunId),
        work_item_id: r.get::<Option<i64>>(6)?.map(WorkItemId),
        content: r.get(7)?,
        note: r.get(8)?,
        claims: serde_json::from_str(&claims).map_err(|e| corrupt("submission claims", e))?,
        state: SubmissionState::parse(&r.get::<String>(10)?)
            .map_err(|e| corrupt("submission", e))?,
        approved_by: r
            .get::<Option<String>>(11)?
            .map(|b| ApprovedBy::parse(&b).map_err(|e| corrupt("submission", e)))
            .transpose()?,
        approved_by_bot_id: r.get::<Option<i64>>(12)?.map(BotId),
        approved_message_id: r.get::<Option<i64>>(13)?.map(SessionMessageId),
        superseded_by: r.get::<Option<i64>>(14)?.map(SubmissionId),
        created_at: r.get(15)?,
        decided_at: r.get(16)?,
        files: Vec::new(),
        parts: Vec::new(),
        check_runs: Vec::new(),
        reviews: Vec::new(),
    })
}

/// Which submissions a read covers, as a condition on `s` and its one argument.
enum Scope {
    One(SubmissionId),
    Plan(PlanId),
    Ticket(TicketId),
}

impl Scope {
    fn sql(&self) -> (&'static str, i64) {
        match self {
            Scope::One(id) => ("s.id = ?1", id.0),
            Scope::Plan(p) => ("s.plan_id = ?1", p.0),
            Scope::Ticket(t) => ("s.ticket_id = ?1", t.0),
        }
    }
}

fn valid_sha256(h: &str) -> bool {
    h.len() == 64
        && h.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

impl Tx<'_> {
    /// Record a hand-over at `checking`, with its files and parts (parts must be the
    /// ticket's), and append `submission_created`. Superseding the ticket's older undecided
    /// hand-overs is [`Tx::supersede_undecided`], once this one has passed.
    pub fn create_submission(&mut self, s: &NewSubmission) -> Result<SubmissionRecord> {
        let ticket = self.ticket(s.ticket_id)?;
        if s.origin == SubmissionOrigin::Answer {
            if s.content.as_deref().is_none_or(|c| c.trim().is_empty()) {
                return Err(StoreError::Invalid(
                    "content: a words hand-over carries its words".into(),
                ));
            }
            if !s.files.is_empty() {
                return Err(StoreError::Invalid(
                    "files: a words hand-over has no files".into(),
                ));
            }
        } else if s.content.is_some() {
            return Err(StoreError::Invalid(format!(
                "content: only a words hand-over carries words, not an {} one",
                s.origin
            )));
        }
        for f in &s.files {
            if f.path.trim().is_empty() {
                return Err(StoreError::Invalid("files: a file needs a path".into()));
            }
            if !valid_sha256(&f.sha256) {
                return Err(StoreError::Invalid(format!(
                    "files: {}: sha256 must be 64 lower-case hex digits",
                    f.path
                )));
            }
            if f.size < 0 {
                return Err(StoreError::Invalid(format!(
                    "files: {}: negative size",
                    f.path
                )));
            }
        }
        for p in &s.parts {
            if self.part(*p)?.ticket_id != s.ticket_id {
                return Err(StoreError::Invalid(format!(
                    "parts: part {p} is not a part of ticket {}",
                    s.ticket_id
                )));
            }
        }
        let claims = serde_json::to_string(&s.claims).map_err(|e| corrupt("claims", e))?;
        let id = SubmissionId(self.insert(
            "INSERT INTO submissions (ticket_id, plan_id, origin, producer_bot_id, run_id,
                 work_item_id, content, note, claims, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            args![
                s.ticket_id.0,
                ticket.plan_id.0,
                s.origin.as_str(),
                s.producer_bot_id.map(|b| b.0),
                s.run_id.map(|r| r.0),
                s.work_item_id.map(|w| w.0),
                s.content,
                s.note,
                claims,
                self.now
            ],
        )?);
        for f in &s.files {
            self.exec(
                "INSERT INTO submission_files (submission_id, path, sha256, size)
                 VALUES (?1, ?2, ?3, ?4)",
                args![id.0, f.path, f.sha256, f.size],
            )?;
        }
        for p in &s.parts {
            self.exec(
                "INSERT INTO submission_parts (submission_id, part_id) VALUES (?1, ?2)
                 ON CONFLICT DO NOTHING",
                args![id.0, p.0],
            )?;
        }
        let rec = self.submission(id)?;
        self.submission_event(
            "submission_created",
            &rec,
            json!({"origin": rec.origin.as_str(), "files": rec.files.len()}),
        )?;
        Ok(rec)
    }

    pub fn submission(&self, id: SubmissionId) -> Result<SubmissionRecord> {
        self.submissions_where(Scope::One(id))?
            .pop()
            .ok_or_else(|| StoreError::not_found("submission", id))
    }

    /// A job's hand-overs, newest first, each with its files, parts, check runs and reviews
    /// (a fixed handful of queries however many there are). With `ticket`, that ticket's only.
    pub fn submissions_of_plan(
        &self,
        plan: PlanId,
        ticket: Option<TicketId>,
    ) -> Result<Vec<SubmissionRecord>> {
        match ticket {
            Some(t) => {
                let all = self.submissions_where(Scope::Ticket(t))?;
                Ok(all.into_iter().filter(|s| s.plan_id == plan).collect())
            }
            None => self.submissions_where(Scope::Plan(plan)),
        }
    }

    /// UW1: the hand-overs waiting on the user's word where the user speaks in `session` —
    /// those of jobs whose conversation it is (the job's home, where its work ran, or where
    /// the user's lines were filed under it), only `maker`'s when given (the user's direct
    /// with that Bot) — the latest `limit`, newest first.
    pub fn awaiting_word_in(
        &self,
        session: SessionId,
        maker: Option<BotId>,
        limit: u32,
    ) -> Result<Vec<SubmissionRecord>> {
        let ids: Vec<SubmissionId> = self.query_all(
            "SELECT s.id FROM submissions s JOIN plans p ON p.id = s.plan_id
             WHERE s.state = 'awaiting_user' AND (?2 = 0 OR s.producer_bot_id = ?2)
               AND (p.home_session_id = ?1
                 OR EXISTS (SELECT 1 FROM segments g JOIN work_items w ON w.id = g.work_item_id
                            WHERE w.plan_id = s.plan_id AND g.session_id = ?1)
                 OR EXISTS (SELECT 1 FROM message_filings f
                            JOIN session_messages m ON m.id = f.message_id
                            WHERE f.plan_id = s.plan_id AND m.session_id = ?1))
             ORDER BY s.id DESC LIMIT ?3",
            args![session.0, maker.map_or(0, |b| b.0), i64::from(limit)],
            |r| Ok(SubmissionId(r.get(0)?)),
        )?;
        ids.into_iter().map(|id| self.submission(id)).collect()
    }

    /// Whether a hand-over `bot` did not make waits for a review that `bot` could be the one to
    /// give: one of a job of `session`'s, one of a ticket it is the reviewer of, or one an open
    /// request asks it to review (§5.1's permission, read wide: `review` checks the rest).
    pub fn review_waits_for(&self, session: SessionId, bot: BotId) -> Result<bool> {
        let found: Option<i64> = self.query_opt(
            "SELECT 1 FROM submissions s JOIN plans p ON p.id = s.plan_id
             JOIN tickets t ON t.id = s.ticket_id
             WHERE s.state IN ('submitted', 'in_review')
               AND (s.producer_bot_id IS NULL OR s.producer_bot_id <> ?2)
               AND (p.home_session_id = ?1 OR t.reviewer_bot_id = ?2
                 OR EXISTS (SELECT 1 FROM delegations d JOIN work_items w
                              ON w.id = d.recipient_work_item
                            WHERE d.plan_id = s.plan_id AND d.expects = 'review'
                              AND d.state = 'open' AND w.bot_id = ?2))
             LIMIT 1",
            args![session.0, bot.0],
            |r| r.get(0),
        )?;
        Ok(found.is_some())
    }

    /// A ticket's hand-overs, newest first, with everything [`Tx::submissions_of_plan`] gives.
    pub fn submissions_of_ticket(&self, ticket: TicketId) -> Result<Vec<SubmissionRecord>> {
        self.submissions_where(Scope::Ticket(ticket))
    }

    fn submissions_where(&self, scope: Scope) -> Result<Vec<SubmissionRecord>> {
        let (cond, arg) = scope.sql();
        let mut subs = self.query_all(
            &format!("SELECT {COLUMNS} FROM submissions s WHERE {cond} ORDER BY s.id DESC"),
            args![arg],
            from_row,
        )?;
        if subs.is_empty() {
            return Ok(subs);
        }
        let at: HashMap<i64, usize> = subs.iter().enumerate().map(|(i, s)| (s.id.0, i)).collect();
        // Ordered by `s.id` (the same value as the file's `submission_id`): SQLite then reads
        // the files in their key order along the job's index, with no sort of 10,000 rows.
        for (sub, file) in self.query_all(
            &format!(
                "SELECT f.submission_id, f.path, f.sha256, f.size FROM submission_files f
                 JOIN submissions s ON s.id = f.submission_id WHERE {cond}
                 ORDER BY s.id, f.path"
            ),
            args![arg],
            |r| {
                Ok((
                    r.get::<i64>(0)?,
                    SubmittedFile {
                        path: r.get(1)?,
                        sha256: r.get(2)?,
                        size: r.get(3)?,
                    },
                ))
            },
        )? {
            subs[at[&sub]].files.push(file);
        }
        for (sub, part) in self.query_all(
            &format!(
                "SELECT p.submission_id, p.part_id FROM submission_parts p
                 JOIN submissions s ON s.id = p.submission_id WHERE {cond}
                 ORDER BY s.id, p.part_id"
            ),
            args![arg],
            |r| Ok((r.get::<i64>(0)?, PartId(r.get(1)?))),
        )? {
            subs[at[&sub]].parts.push(part);
        }
        for run in self.check_runs_of_submissions(cond, arg)? {
            if let Some(i) = run.submission_id.and_then(|s| at.get(&s.0)) {
                subs[*i].check_runs.push(run);
            }
        }
        for review in self.reviews_of_submissions(cond, arg)? {
            subs[at[&review.submission_id.0]].reviews.push(review);
        }
        Ok(subs)
    }

    /// Move a hand-over to `state` (approval is [`Tx::approve_submission`], supersession
    /// [`Tx::supersede_undecided`]). Leaving the undecided states stamps `decided_at`;
    /// `awaiting_user` appends `submission_awaiting_word`.
    pub fn set_submission_state(
        &mut self,
        id: SubmissionId,
        state: SubmissionState,
    ) -> Result<SubmissionRecord> {
        if matches!(
            state,
            SubmissionState::Approved | SubmissionState::Superseded
        ) {
            return Err(StoreError::Invalid(format!(
                "state: {state} is written by approve_submission or supersede_undecided"
            )));
        }
        let cur = self.submission(id)?;
        self.exec(
            "UPDATE submissions SET state = ?2, decided_at = ?3 WHERE id = ?1",
            args![
                id.0,
                state.as_str(),
                if is_undecided(state) {
                    None
                } else {
                    Some(self.now)
                }
            ],
        )?;
        let rec = self.submission(id)?;
        if state == SubmissionState::AwaitingUser && cur.state != state {
            self.submission_event("submission_awaiting_word", &rec, json!({}))?;
        }
        Ok(rec)
    }

    /// Approve a hand-over: `by` (a reviewer's names `bot`; the user's word its `message`),
    /// `decided_at` stamped, the ticket's maker set to its producer, and
    /// `submission_approved` {by, message_id} appended. The ticket's stage is the caller's
    /// [`Tx::set_ticket_stage`].
    pub fn approve_submission(
        &mut self,
        id: SubmissionId,
        by: ApprovedBy,
        bot: Option<BotId>,
        message: Option<SessionMessageId>,
    ) -> Result<SubmissionRecord> {
        if (by == ApprovedBy::Reviewer) != bot.is_some() {
            return Err(StoreError::Invalid(
                "approved_by: a reviewer's approval names the reviewer, and only it does".into(),
            ));
        }
        if message.is_some() && by != ApprovedBy::User {
            return Err(StoreError::Invalid(
                "approved_message_id: only the user's word has a line".into(),
            ));
        }
        let cur = self.submission(id)?;
        self.exec(
            "UPDATE submissions SET state = 'approved', approved_by = ?2, approved_by_bot_id = ?3,
                 approved_message_id = ?4, decided_at = ?5
             WHERE id = ?1",
            args![
                id.0,
                by.as_str(),
                bot.map(|b| b.0),
                message.map(|m| m.0),
                self.now
            ],
        )?;
        self.set_ticket_maker(cur.ticket_id, cur.producer_bot_id)?;
        let rec = self.submission(id)?;
        self.submission_event(
            "submission_approved",
            &rec,
            json!({"by": by.as_str(), "bot_id": bot, "message_id": message}),
        )?;
        Ok(rec)
    }

    /// Supersede the ticket's undecided hand-overs (SP1 by a newer one `by`, SP2 by a board
    /// edit with none), `by` itself excepted; answers those superseded, each appended as
    /// `submission_superseded`.
    pub fn supersede_undecided(
        &mut self,
        ticket: TicketId,
        by: Option<SubmissionId>,
    ) -> Result<Vec<SubmissionId>> {
        let open: Vec<SubmissionRecord> = self
            .query_all(
                &format!(
                    "SELECT {COLUMNS} FROM submissions s
                     WHERE s.ticket_id = ?1 AND s.id <> ?2
                       AND s.state IN ('checking', 'submitted', 'in_review', 'awaiting_user')
                     ORDER BY s.id"
                ),
                args![ticket.0, by.map_or(0, |b| b.0)],
                from_row,
            )?
            .into_iter()
            .filter(|s| is_undecided(s.state))
            .collect();
        let mut ids = Vec::with_capacity(open.len());
        for s in open {
            self.exec(
                "UPDATE submissions SET state = 'superseded', superseded_by = ?2, decided_at = ?3
                 WHERE id = ?1",
                args![s.id.0, by.map(|b| b.0), self.now],
            )?;
            self.submission_event(
                "submission_superseded",
                &s,
                json!({"state": "superseded", "by": by}),
            )?;
            ids.push(s.id);
        }
        Ok(ids)
    }

    /// The (path, sha256) set, by path, of the ticket's newest hand-over that is approved or
    /// still open, with its id: a new hand-over equal to it is `unchanged`.
    pub fn last_handover_files(&self, ticket: TicketId) -> Result<Option<HandOverFiles>> {
        let Some(id) = self.query_opt(
            "SELECT id FROM submissions WHERE ticket_id = ?1
               AND state IN ('approved', 'checking', 'submitted', 'in_review', 'awaiting_user')
             ORDER BY id DESC LIMIT 1",
            args![ticket.0],
            |r| r.get::<i64>(0),
        )?
        else {
            return Ok(None);
        };
        let files = self.query_all(
            "SELECT path, sha256 FROM submission_files WHERE submission_id = ?1 ORDER BY path",
            args![id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(Some((SubmissionId(id), files)))
    }

    /// Record files a Bot's line posted or named (path, hash if known); a path the line
    /// cites already keeps its first citation. Answers how many were new.
    pub fn record_line_files(
        &mut self,
        line: SessionMessageId,
        files: &[(String, Option<String>)],
    ) -> Result<usize> {
        self.line(line)?;
        let mut new = 0;
        for (path, sha) in files {
            if path.trim().is_empty() {
                return Err(StoreError::Invalid(
                    "line_files: a file needs a path".into(),
                ));
            }
            if let Some(h) = sha
                && !valid_sha256(h)
            {
                return Err(StoreError::Invalid(format!(
                    "line_files: {path}: sha256 must be 64 lower-case hex digits"
                )));
            }
            new += self.exec(
                "INSERT INTO line_files (line_id, path, sha256, first_cited_at)
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                args![line.0, path, sha, self.now],
            )?;
        }
        Ok(new)
    }

    /// The files a line cites, by path.
    pub fn line_files(&self, line: SessionMessageId) -> Result<Vec<LineFile>> {
        self.query_all(
            "SELECT line_id, path, sha256, first_cited_at FROM line_files WHERE line_id = ?1
             ORDER BY path",
            args![line.0],
            line_file_from_row,
        )
    }

    /// The files the lines of a turn (a segment's run) cite, oldest citation first.
    pub fn files_cited_in_turn(&self, run: RunId) -> Result<Vec<LineFile>> {
        self.query_all(
            "SELECT f.line_id, f.path, f.sha256, f.first_cited_at FROM line_files f
             JOIN session_messages m ON m.id = f.line_id WHERE m.turn_id = ?1
             ORDER BY f.first_cited_at, f.line_id, f.path",
            args![run.0],
            line_file_from_row,
        )
    }

    /// The files Bots' lines filed under a job cite (the final cut's candidates, CW-12), by
    /// first citation.
    pub fn files_cited_under_plan(&self, plan: PlanId) -> Result<Vec<LineFile>> {
        self.query_all(
            "SELECT f.line_id, f.path, f.sha256, f.first_cited_at FROM line_files f
             JOIN session_messages m ON m.id = f.line_id
             WHERE m.author = 'bot'
               AND EXISTS (SELECT 1 FROM message_filings g
                           WHERE g.message_id = f.line_id AND g.plan_id = ?1)
             ORDER BY f.first_cited_at, f.line_id, f.path",
            args![plan.0],
            line_file_from_row,
        )
    }

    /// A submission's event in its job's home conversation, with `extra` added.
    fn submission_event(
        &mut self,
        kind: &str,
        s: &SubmissionRecord,
        extra: serde_json::Value,
    ) -> Result<()> {
        let mut payload = json!({
            "task_id": s.plan_id, "ticket_id": s.ticket_id, "submission_id": s.id,
            "state": s.state.as_str(),
        });
        if let (Some(p), serde_json::Value::Object(more)) = (payload.as_object_mut(), extra) {
            p.extend(more);
        }
        match self.plan(s.plan_id)?.home_session_id {
            Some(home) => self.session_event(kind, home, None, payload),
            None => self.event(kind, None, None, payload),
        }
    }
}

fn line_file_from_row(r: &crate::Row) -> Result<LineFile> {
    Ok(LineFile {
        line_id: SessionMessageId(r.get(0)?),
        path: r.get(1)?,
        sha256: r.get(2)?,
        first_cited_at: r.get(3)?,
    })
}
