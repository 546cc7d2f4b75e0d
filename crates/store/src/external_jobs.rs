//! External jobs (B §8): the renders a media server accepted, their waiters, and the reads the
//! poller, the submit rules and the ball holder need. When a job is due and how it settles are
//! `troupe_core::external_job`'s; this keeps the rows and appends their events to the job's
//! home conversation (else the submitter's thread).

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::{Value, json};
use troupe_core::external_job::{JobStatus, PartJob};
use troupe_core::ids::ExternalJobId;
use troupe_core::{BotId, MessageId, PlanId, RunId, ThreadId, TicketId, WorkItemId};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExternalJobRecord {
    pub id: ExternalJobId,
    /// The tool source that offered the pair (an MCP server is `mcp:<name>`).
    pub server: String,
    /// The submit tool.
    pub tool: String,
    /// Its partner, which the poller asks.
    pub check_tool: String,
    pub args_fingerprint: String,
    /// What was sent, as JSON text (without any `resubmit_reason`).
    pub arguments: String,
    pub submitter_bot_id: Option<BotId>,
    pub submitter_thread_id: ThreadId,
    pub submitter_work_item_id: Option<WorkItemId>,
    pub run_id: RunId,
    pub message_id: Option<MessageId>,
    pub plan_id: Option<PlanId>,
    pub ticket_id: Option<TicketId>,
    pub part_number: Option<i64>,
    pub remote_id: String,
    /// The key the id came under in the submit's answer.
    pub remote_key: String,
    /// pending, done, failed or lost.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub status: JobStatus,
    /// The last answer read: url, duration, cost, error, raw_lines.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<Value>,
    pub resubmit_reason: Option<String>,
    pub created_at: i64,
    /// Meaningful while pending.
    pub next_poll_at: i64,
    pub poll_step: u32,
    pub polls: u32,
    pub finished_at: Option<i64>,
    pub updated_at: i64,
    /// Threads that checked on it (filled by [`Tx::external_job_full`]).
    pub waiters: Vec<ExternalJobWaiter>,
}

/// A Bot that checked on a job (EJ4).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExternalJobWaiter {
    pub thread_id: ThreadId,
    pub bot_id: Option<BotId>,
    pub work_item_id: Option<WorkItemId>,
    pub added_at: i64,
}

/// A job to register.
#[derive(Clone, Debug)]
pub struct NewExternalJob {
    pub server: String,
    pub tool: String,
    pub check_tool: String,
    pub args_fingerprint: String,
    pub arguments: String,
    pub submitter_bot_id: Option<BotId>,
    pub submitter_thread_id: ThreadId,
    pub submitter_work_item_id: Option<WorkItemId>,
    pub run_id: RunId,
    pub message_id: Option<MessageId>,
    pub plan_id: Option<PlanId>,
    pub ticket_id: Option<TicketId>,
    pub part_number: Option<i64>,
    pub remote_id: String,
    pub remote_key: String,
    pub resubmit_reason: Option<String>,
    pub next_poll_at: i64,
}

/// What one poll settled.
#[derive(Clone, Debug)]
pub enum JobUpdate {
    /// Still pending: the next poll's time and step.
    Again {
        next_poll_at: i64,
        poll_step: u32,
    },
    Finished {
        status: JobStatus,
    },
}

const COLUMNS: &str = "id, server, tool, check_tool, args_fingerprint, arguments, \
    submitter_bot_id, submitter_thread_id, submitter_work_item_id, run_id, message_id, plan_id, \
    ticket_id, part_number, remote_id, remote_key, status, result, resubmit_reason, created_at, \
    next_poll_at, poll_step, polls, finished_at, updated_at";

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("external job {what}: {e}"))
}

fn from_row(r: &crate::Row) -> Result<ExternalJobRecord> {
    let result: Option<String> = r.get(17)?;
    Ok(ExternalJobRecord {
        id: ExternalJobId(r.get(0)?),
        server: r.get(1)?,
        tool: r.get(2)?,
        check_tool: r.get(3)?,
        args_fingerprint: r.get(4)?,
        arguments: r.get(5)?,
        submitter_bot_id: r.get::<Option<i64>>(6)?.map(BotId),
        submitter_thread_id: ThreadId(r.get(7)?),
        submitter_work_item_id: r.get::<Option<i64>>(8)?.map(WorkItemId),
        run_id: RunId(r.get(9)?),
        message_id: r.get::<Option<i64>>(10)?.map(MessageId),
        plan_id: r.get::<Option<i64>>(11)?.map(PlanId),
        ticket_id: r.get::<Option<i64>>(12)?.map(TicketId),
        part_number: r.get(13)?,
        remote_id: r.get(14)?,
        remote_key: r.get(15)?,
        status: JobStatus::parse(&r.get::<String>(16)?).map_err(|e| corrupt("status", e))?,
        result: result
            .map(|t| serde_json::from_str(&t).map_err(|e| corrupt("result", e)))
            .transpose()?,
        resubmit_reason: r.get(18)?,
        created_at: r.get(19)?,
        next_poll_at: r.get(20)?,
        poll_step: r.get::<i64>(21)? as u32,
        polls: r.get::<i64>(22)? as u32,
        finished_at: r.get(23)?,
        updated_at: r.get(24)?,
        waiters: Vec::new(),
    })
}

impl Tx<'_> {
    /// Register a job the server accepted (EJ1), pending, its first poll at `next_poll_at`.
    pub fn insert_external_job(&mut self, j: &NewExternalJob) -> Result<ExternalJobRecord> {
        if j.remote_id.trim().is_empty() {
            return Err(StoreError::Invalid(
                "an external job needs the id its server gave".into(),
            ));
        }
        let id = self.insert(
            "INSERT INTO external_jobs (server, tool, check_tool, args_fingerprint, arguments,
                 submitter_bot_id, submitter_thread_id, submitter_work_item_id, run_id,
                 message_id, plan_id, ticket_id, part_number, remote_id, remote_key, status,
                 resubmit_reason, created_at, next_poll_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                     'pending', ?16, ?17, ?18, ?17)",
            args![
                j.server,
                j.tool,
                j.check_tool,
                j.args_fingerprint,
                j.arguments,
                j.submitter_bot_id.map(|b| b.0),
                j.submitter_thread_id.0,
                j.submitter_work_item_id.map(|w| w.0),
                j.run_id.0,
                j.message_id.map(|m| m.0),
                j.plan_id.map(|p| p.0),
                j.ticket_id.map(|t| t.0),
                j.part_number,
                j.remote_id,
                j.remote_key,
                j.resubmit_reason,
                self.now,
                j.next_poll_at
            ],
        )?;
        let job = self.external_job(ExternalJobId(id))?;
        self.external_job_event("external_job_registered", &job, json!({}))?;
        Ok(job)
    }

    pub fn external_job(&self, id: ExternalJobId) -> Result<ExternalJobRecord> {
        self.find_external_job(id)?
            .ok_or_else(|| StoreError::not_found("external job", id))
    }

    pub fn find_external_job(&self, id: ExternalJobId) -> Result<Option<ExternalJobRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM external_jobs WHERE id = ?1");
        self.query_opt(&sql, args![id.0], from_row)
    }

    /// The job with its waiters.
    pub fn external_job_full(&self, id: ExternalJobId) -> Result<Option<ExternalJobRecord>> {
        let Some(mut job) = self.find_external_job(id)? else {
            return Ok(None);
        };
        job.waiters = self.external_job_waiters(id)?;
        Ok(Some(job))
    }

    /// Jobs newest first, of one job (plan) or all, with their waiters.
    pub fn external_jobs(
        &self,
        plan: Option<PlanId>,
        limit: u32,
    ) -> Result<Vec<ExternalJobRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM external_jobs
             WHERE (CAST(?1 AS BIGINT) IS NULL OR plan_id = ?1) ORDER BY id DESC LIMIT ?2"
        );
        let mut jobs = self.query_all(&sql, args![plan.map(|p| p.0), limit], from_row)?;
        for j in &mut jobs {
            j.waiters = self.external_job_waiters(j.id)?;
        }
        Ok(jobs)
    }

    /// EJ2: the newest job with the same server, tool and arguments made since `since`,
    /// whatever job or ticket it was filed under.
    pub fn same_external_job(
        &self,
        server: &str,
        tool: &str,
        fingerprint: &str,
        since: i64,
    ) -> Result<Option<ExternalJobRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM external_jobs
             WHERE server = ?1 AND tool = ?2 AND args_fingerprint = ?3 AND created_at >= ?4
             ORDER BY id DESC LIMIT 1"
        );
        self.query_opt(&sql, args![server, tool, fingerprint, since], from_row)
    }

    /// EJ4: the newest job a check tool's call names, by any of `names` (remote ids, or the
    /// job's own `ej_N`).
    pub fn external_job_named(
        &self,
        server: &str,
        check_tool: &str,
        names: &[String],
    ) -> Result<Option<ExternalJobRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM external_jobs
             WHERE server = ?1 AND check_tool = ?2 AND remote_id = ?3 ORDER BY id DESC LIMIT 1"
        );
        for name in names {
            if let Some(j) = self.query_opt(&sql, args![server, check_tool, name], from_row)? {
                return Ok(Some(j));
            }
            if let Ok(id) = name.parse::<ExternalJobId>()
                && let Some(j) = self.find_external_job(id)?
                && j.server == server
                && j.check_tool == check_tool
            {
                return Ok(Some(j));
            }
        }
        Ok(None)
    }

    /// Pending jobs whose poll is due by `now`, the longest waiting first.
    pub fn due_external_jobs(&self, now: i64, limit: u32) -> Result<Vec<ExternalJobRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM external_jobs WHERE status = 'pending' AND next_poll_at <= ?1
             ORDER BY next_poll_at, id LIMIT ?2"
        );
        self.query_all(&sql, args![now, limit], from_row)
    }

    /// Take a due poll for this node: moves `next_poll_at` from `due_at` to `until` only if no
    /// one else did (one claimant across nodes; a poller that dies leaves it due at `until`).
    pub fn claim_external_poll(
        &mut self,
        id: ExternalJobId,
        due_at: i64,
        until: i64,
    ) -> Result<bool> {
        let n = self.exec(
            "UPDATE external_jobs SET next_poll_at = ?3, updated_at = ?4
             WHERE id = ?1 AND status = 'pending' AND next_poll_at = ?2",
            args![id.0, due_at, until, self.now],
        )?;
        Ok(n == 1)
    }

    /// Write what a poll found: the answer read (if any), and the next poll or the end.
    pub fn settle_external_job(
        &mut self,
        id: ExternalJobId,
        result: Option<&Value>,
        update: &JobUpdate,
    ) -> Result<ExternalJobRecord> {
        let result = result.map(Value::to_string);
        match update {
            JobUpdate::Again {
                next_poll_at,
                poll_step,
            } => {
                self.exec(
                    "UPDATE external_jobs SET result = COALESCE(?2, result), next_poll_at = ?3,
                         poll_step = ?4, polls = polls + 1, updated_at = ?5
                     WHERE id = ?1 AND status = 'pending'",
                    args![id.0, result, next_poll_at, *poll_step as i64, self.now],
                )?;
                self.external_job(id)
            }
            JobUpdate::Finished { status } => {
                let n = self.exec(
                    "UPDATE external_jobs SET result = COALESCE(?2, result), status = ?3,
                         polls = polls + 1, finished_at = ?4, updated_at = ?4
                     WHERE id = ?1 AND status = 'pending'",
                    args![id.0, result, status.as_str(), self.now],
                )?;
                let job = self.external_job(id)?;
                if n == 1 {
                    self.external_job_event(
                        "external_job_changed",
                        &job,
                        json!({"status": status.as_str()}),
                    )?;
                }
                Ok(job)
            }
        }
    }

    /// EJ4: add a waiter; answers whether it is new.
    pub fn add_external_job_waiter(
        &mut self,
        job: ExternalJobId,
        thread: ThreadId,
        bot: Option<BotId>,
        work_item: Option<WorkItemId>,
    ) -> Result<bool> {
        let n = self.exec(
            "INSERT INTO external_job_waiters (job_id, thread_id, bot_id, work_item_id, added_at)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (job_id, thread_id) DO NOTHING",
            args![
                job.0,
                thread.0,
                bot.map(|b| b.0),
                work_item.map(|w| w.0),
                self.now
            ],
        )?;
        Ok(n == 1)
    }

    pub fn external_job_waiters(&self, job: ExternalJobId) -> Result<Vec<ExternalJobWaiter>> {
        self.query_all(
            "SELECT thread_id, bot_id, work_item_id, added_at FROM external_job_waiters
             WHERE job_id = ?1 ORDER BY added_at, thread_id",
            args![job.0],
            |r| {
                Ok(ExternalJobWaiter {
                    thread_id: ThreadId(r.get(0)?),
                    bot_id: r.get::<Option<i64>>(1)?.map(BotId),
                    work_item_id: r.get::<Option<i64>>(2)?.map(WorkItemId),
                    added_at: r.get(3)?,
                })
            },
        )
    }

    /// EJ3: how part `number` of the job (on `ticket`, or on no ticket) stands: a job still
    /// pending on it, or one done whose result no hand-over on the ticket has carried since.
    pub fn part_job(
        &self,
        plan: PlanId,
        ticket: Option<TicketId>,
        number: i64,
    ) -> Result<Option<PartJob>> {
        let scope = "plan_id = ?1 AND part_number = ?3
                     AND (ticket_id = ?2 OR (ticket_id IS NULL AND CAST(?2 AS BIGINT) IS NULL))";
        let running: i64 = self.query_one(
            &format!("SELECT COUNT(*) FROM external_jobs WHERE {scope} AND status = 'pending'"),
            args![plan.0, ticket.map(|t| t.0), number],
            |r| r.get(0),
        )?;
        if running > 0 {
            return Ok(Some(PartJob::Running));
        }
        let unhanded: i64 = self.query_one(
            &format!(
                "SELECT COUNT(*) FROM external_jobs j WHERE {scope} AND j.status = 'done'
                 AND NOT EXISTS (SELECT 1 FROM submissions s
                     WHERE s.plan_id = j.plan_id
                       AND (j.ticket_id IS NULL OR s.ticket_id = j.ticket_id)
                       AND s.created_at >= j.finished_at)"
            ),
            args![plan.0, ticket.map(|t| t.0), number],
            |r| r.get(0),
        )?;
        Ok((unhanded > 0).then_some(PartJob::NotHandedOver))
    }

    /// EJ7: a job still runs on the ticket — filed on it, or submitted on its job as a whole
    /// by the Bot that owns it. The ball is then the poller's.
    pub fn running_job_on_ticket(&self, ticket: TicketId) -> Result<bool> {
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM external_jobs j
             WHERE j.status = 'pending' AND (j.ticket_id = ?1 OR (j.ticket_id IS NULL
                 AND EXISTS (SELECT 1 FROM tickets t WHERE t.id = ?1 AND t.plan_id = j.plan_id
                             AND t.owner_bot_id = j.submitter_bot_id)))",
            args![ticket.0],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// EJ8: the jobs being polled that a check-back on this work could be about — its job's
    /// (plan's), or, with no job, those its thread submitted or waits on.
    pub fn polled_jobs_for(
        &self,
        plan: Option<PlanId>,
        thread: ThreadId,
    ) -> Result<Vec<ExternalJobRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM external_jobs j WHERE j.status = 'pending'
               AND ((CAST(?1 AS BIGINT) IS NOT NULL AND j.plan_id = ?1)
                 OR j.submitter_thread_id = ?2
                 OR EXISTS (SELECT 1 FROM external_job_waiters w
                            WHERE w.job_id = j.id AND w.thread_id = ?2))
             ORDER BY j.id"
        );
        self.query_all(&sql, args![plan.map(|p| p.0), thread.0], from_row)
    }

    /// The event goes to the job's home conversation, else the submitter's conversation, else
    /// the submitter's thread.
    fn external_job_event(
        &mut self,
        kind: &str,
        j: &ExternalJobRecord,
        extra: Value,
    ) -> Result<()> {
        let mut payload = json!({
            "external_job_id": j.id, "status": j.status.as_str(), "tool": j.tool,
            "remote_id": j.remote_id, "plan_id": j.plan_id, "ticket_id": j.ticket_id,
            "submitter_bot_id": j.submitter_bot_id,
        });
        if let (Value::Object(more), Some(obj)) = (extra, payload.as_object_mut()) {
            obj.extend(more);
        }
        let home = match j.plan_id {
            Some(p) => self.plan(p)?.home_session_id,
            None => None,
        };
        let session = match home {
            Some(s) => Some(s),
            None => self.thread_session(j.submitter_thread_id)?.map(|(s, _)| s),
        };
        match session {
            Some(s) => self.session_event(kind, s, Some(j.run_id), payload),
            None => self.event(kind, Some(j.submitter_thread_id), Some(j.run_id), payload),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layout, LayoutItem, NewBot, NewPlan, NewRun, NewThread, Store};
    use std::sync::Arc;
    use troupe_core::ManualClock;
    use troupe_core::conversation::SessionKind;
    use troupe_core::plan::{PlanSpec, RevisionCause};
    use troupe_core::thread::{AgentBinding, Interaction};

    struct World {
        store: Store,
        bot: BotId,
        other: BotId,
        thread: ThreadId,
        run: RunId,
        plan: PlanId,
        ticket: TicketId,
    }

    fn world() -> World {
        let store = crate::testing::open(Arc::new(ManualClock::new(1_000_000)));
        let (bot, other, thread, run, plan, ticket) = store
            .write(|tx| {
                let new = |name: &str| NewBot {
                    name: name.into(),
                    persona: String::new(),
                    endpoint: None,
                    scripted: false,
                };
                let bot = tx.create_bot(&new("Ada"))?.id;
                let other = tx.create_bot(&new("Bo"))?.id;
                let session = tx.create_session(SessionKind::Direct, "t", &[bot])?.id;
                let thread = tx.create_thread(&NewThread {
                    workspace_root: None,
                    parent_id: None,
                    title: "t".into(),
                    agent: AgentBinding::new("Ada", "be brief"),
                    workspace: "/tmp".into(),
                    interaction: Interaction::Interactive,
                })?;
                let run = tx.start_run(&NewRun {
                    thread_id: thread.id,
                    trigger: "test".into(),
                    owner_pid: 1,
                    owner_boot: "b".into(),
                })?;
                let plan = tx
                    .create_plan(
                        &NewPlan {
                            name: "mv".into(),
                            original_request: "make the video".into(),
                            home_session_id: session,
                            opening_line_id: None,
                            spec: PlanSpec::default(),
                            cause: RevisionCause::User,
                        },
                        |id| format!("/tmp/plan-{}", id.0),
                    )?
                    .id;
                let laid = tx.lay_out(
                    plan,
                    &Layout {
                        items: vec![LayoutItem {
                            title: "Shots".into(),
                            owner_bot_id: Some(bot),
                            ..Default::default()
                        }],
                        drops: Vec::new(),
                    },
                    |n, t| format!("/tmp/{n}-{t}"),
                )?;
                Ok((bot, other, thread.id, run.id, plan, laid.tickets[0].id))
            })
            .unwrap();
        World {
            store,
            bot,
            other,
            thread,
            run,
            plan,
            ticket,
        }
    }

    fn job(w: &World, submitter: BotId, ticket: Option<TicketId>) -> ExternalJobRecord {
        w.store
            .write(|tx| {
                tx.insert_external_job(&NewExternalJob {
                    server: "media".into(),
                    tool: "submit_render".into(),
                    check_tool: "check_render".into(),
                    args_fingerprint: "fp".into(),
                    arguments: "{}".into(),
                    submitter_bot_id: Some(submitter),
                    submitter_thread_id: w.thread,
                    submitter_work_item_id: None,
                    run_id: w.run,
                    message_id: None,
                    plan_id: Some(w.plan),
                    ticket_id: ticket,
                    part_number: None,
                    remote_id: "abc".into(),
                    remote_key: "request_id".into(),
                    resubmit_reason: None,
                    next_poll_at: tx.now() + 30_000,
                })
            })
            .unwrap()
    }

    fn running(w: &World) -> bool {
        w.store
            .read(|tx| tx.running_job_on_ticket(w.ticket))
            .unwrap()
    }

    #[test]
    fn a_due_poll_is_taken_once() {
        let w = world();
        let j = job(&w, w.bot, Some(w.ticket));
        let claim = |until| {
            w.store
                .write(|tx| tx.claim_external_poll(j.id, j.next_poll_at, until))
                .unwrap()
        };
        assert!(claim(j.next_poll_at + 120_000));
        // A second poller read the same due time: it finds the poll taken.
        assert!(!claim(j.next_poll_at + 120_000));
        let due = w
            .store
            .read(|tx| tx.due_external_jobs(j.next_poll_at, 10))
            .unwrap();
        assert!(due.is_empty(), "taken until the claim runs out");
    }

    #[test]
    fn a_job_runs_on_its_ticket_or_on_the_tickets_its_submitter_owns() {
        let w = world();
        assert!(!running(&w));
        // Another Bot's job on the job as a whole does not count on Ada's ticket.
        let others = job(&w, w.other, None);
        assert!(!running(&w));
        // Ada's own job on the whole job counts on the ticket she owns (EJ7).
        let whole = job(&w, w.bot, None);
        assert!(running(&w));
        w.store
            .write(|tx| {
                tx.settle_external_job(
                    whole.id,
                    None,
                    &JobUpdate::Finished {
                        status: JobStatus::Lost,
                    },
                )
            })
            .unwrap();
        assert!(!running(&w));
        let filed = job(&w, w.other, Some(w.ticket));
        assert!(running(&w), "filed on the ticket, whoever submitted it");
        let settled = w
            .store
            .write(|tx| {
                tx.settle_external_job(
                    filed.id,
                    Some(&json!({"status": "done", "url": "https://m/v.mp4"})),
                    &JobUpdate::Finished {
                        status: JobStatus::Done,
                    },
                )
            })
            .unwrap();
        assert_eq!(settled.result.unwrap()["url"], "https://m/v.mp4");
        assert!(settled.finished_at.is_some());
        assert!(!running(&w));
        // A settled job settles once: a repeat changes nothing.
        let again = w
            .store
            .write(|tx| {
                tx.settle_external_job(
                    filed.id,
                    None,
                    &JobUpdate::Finished {
                        status: JobStatus::Failed,
                    },
                )
            })
            .unwrap();
        assert_eq!(again.status, JobStatus::Done);
        assert_eq!(others.status, JobStatus::Pending);
    }

    #[test]
    fn waiters_are_added_once_per_thread() {
        let w = world();
        let j = job(&w, w.bot, None);
        let add = || {
            w.store
                .write(|tx| tx.add_external_job_waiter(j.id, w.thread, Some(w.other), None))
                .unwrap()
        };
        assert!(add());
        assert!(!add());
        let full = w
            .store
            .read(|tx| tx.external_job_full(j.id))
            .unwrap()
            .unwrap();
        assert_eq!(full.waiters.len(), 1);
        assert_eq!(full.waiters[0].bot_id, Some(w.other));
    }
}
