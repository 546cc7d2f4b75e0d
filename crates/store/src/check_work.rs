//! What the checks' runner needs beyond the checks themselves: which jobs have checks, whether
//! a job is quiet (AC-5), the user's lines filed under a job (checks from words, §16), and the
//! few writes a check from words makes besides its reading (the file it is bound to, a
//! withdrawal by later words, its count while in force, the first pass).

use crate::{CheckRecord, Result, Tx, args};
use serde_json::json;
use troupe_core::{CheckId, PlanId, SessionMessageId, TicketId};

/// A job's segments as the quiet rule reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentActivity {
    /// Segments running on the job now.
    pub live: usize,
    /// When the job last had a segment start or end; none if it never had one.
    pub last_at: Option<i64>,
    /// When the latest segment on the job started.
    pub last_started_at: Option<i64>,
}

/// A person's line filed under a job, with the ticket it was filed under there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiledUserLine {
    pub line_id: SessionMessageId,
    pub body: String,
    pub created_at: i64,
    pub ticket_id: Option<TicketId>,
}

impl Tx<'_> {
    /// The jobs with at least one check not removed.
    pub fn plans_with_checks(&self) -> Result<Vec<PlanId>> {
        self.query_all(
            "SELECT DISTINCT plan_id FROM checks WHERE removed_at IS NULL ORDER BY plan_id",
            args![],
            |r| Ok(PlanId(r.get(0)?)),
        )
    }

    /// The job's segments: how many run now, and the latest start or end.
    pub fn plan_segment_activity(&self, plan: PlanId) -> Result<SegmentActivity> {
        let (live, started, ended) = self.query_one(
            "SELECT COALESCE(SUM(CASE WHEN r.status = 'running' THEN 1 ELSE 0 END), 0),
                    MAX(r.started_at), MAX(r.ended_at)
             FROM segments s JOIN work_items w ON w.id = s.work_item_id
             JOIN runs r ON r.id = s.run_id
             WHERE w.plan_id = ?1",
            args![plan.0],
            |r| {
                Ok((
                    r.get::<i64>(0)?,
                    r.get::<Option<i64>>(1)?,
                    r.get::<Option<i64>>(2)?,
                ))
            },
        )?;
        Ok(SegmentActivity {
            live: live as usize,
            last_at: started.max(ended),
            last_started_at: started,
        })
    }

    /// The person's lines filed under a job, oldest first, each once (its filing under a
    /// ticket of the job, if any).
    pub fn user_lines_filed_under(&self, plan: PlanId) -> Result<Vec<FiledUserLine>> {
        self.query_all(
            "SELECT m.id, m.body, m.created_at, MAX(f.ticket_id)
             FROM message_filings f JOIN session_messages m ON m.id = f.message_id
             WHERE f.plan_id = ?1 AND m.author = 'user'
             GROUP BY m.id, m.body, m.created_at
             ORDER BY m.id",
            args![plan.0],
            |r| {
                Ok(FiledUserLine {
                    line_id: SessionMessageId(r.get(0)?),
                    body: r.get(1)?,
                    created_at: r.get(2)?,
                    ticket_id: r.get::<Option<i64>>(3)?.map(TicketId),
                })
            },
        )
    }

    /// The ticket a Bot's line citing files was filed under in this job, if any.
    pub fn line_ticket_in_plan(
        &self,
        line: SessionMessageId,
        plan: PlanId,
    ) -> Result<Option<TicketId>> {
        self.query_opt(
            "SELECT MAX(ticket_id) FROM message_filings WHERE message_id = ?1 AND plan_id = ?2",
            args![line.0, plan.0],
            |r| r.get::<Option<i64>>(0),
        )
        .map(|t| t.flatten().map(TicketId))
    }

    /// The file a check from words measures (its final cut), or none found yet.
    pub fn set_words_check_file(&mut self, id: CheckId, path: Option<&str>) -> Result<()> {
        self.exec(
            "UPDATE checks SET path = ?2 WHERE id = ?1 AND kind = 'words'",
            args![id.0, path],
        )?;
        Ok(())
    }

    /// A check in force counts the words said again since it was confirmed (CW-9); its
    /// confirmation time (`updated_at`) stays.
    pub fn set_words_said_count(&mut self, id: CheckId, said_count: i64) -> Result<()> {
        self.exec(
            "UPDATE checks SET said_count = ?2 WHERE id = ?1 AND kind = 'words'",
            args![id.0, said_count],
        )?;
        Ok(())
    }

    /// Later words replaced or withdrew an offer (CW-8, CW-10): it is removed with a said
    /// count of 0, which tells it from one the user removed (those words stop counting; these
    /// do not). Confirming it is then `withdrawn`.
    pub fn withdraw_words_offer(&mut self, id: CheckId) -> Result<bool> {
        let n = self.exec(
            "UPDATE checks SET removed_at = ?2, updated_at = ?2, said_count = 0
             WHERE id = ?1 AND kind = 'words' AND status = 'offer' AND removed_at IS NULL",
            args![id.0, self.now],
        )?;
        if n > 0 {
            let c = self.check(id)?;
            self.check_work_event("check_changed", &c, json!({"change": "withdrawn"}))?;
        }
        Ok(n > 0)
    }

    /// `check_first_passed`: the check passed for the first time.
    pub fn check_first_passed(&mut self, id: CheckId, run_id: i64) -> Result<()> {
        let c = self.check(id)?;
        self.check_work_event("check_first_passed", &c, json!({"run_id": run_id}))
    }

    fn check_work_event(
        &mut self,
        kind: &str,
        c: &CheckRecord,
        extra: serde_json::Value,
    ) -> Result<()> {
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
