//! What a run did: model calls, tool calls, shell command records, and admission refusals.

use crate::args;
use crate::{Result, Tx};
use serde::Serialize;
use serde_json::json;
use troupe_core::effect::UnknownCall;
use troupe_core::{MessageId, RunId, ThreadId};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelCallRecord {
    pub run_id: RunId,
    pub role: String,
    pub endpoint: String,
    pub model: String,
    pub input_tokens: u64,
    /// The part of `input_tokens` the provider served from its prompt cache.
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub latency_ms: u64,
    pub attempts: u32,
    pub error: Option<String>,
    /// Failed attempts, one line each, also when a retry succeeded.
    pub attempt_errors: Vec<String>,
    pub started_at: i64,
    /// How the provider said the answer ended (`stop`, `tool_calls`, `length`, `refusal`,
    /// `unreadable` — the server stopped it inside a tool call it could not read — or its own
    /// word); None when the call failed.
    pub finish: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCallRecord {
    pub run_id: RunId,
    pub message_id: MessageId,
    pub call_id: String,
    pub name: String,
    pub arguments: String,
    /// ok, error, refused (a guard said no) or repeated (the ledger had it already).
    pub status: String,
    pub result: String,
    pub duration_ms: u64,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommandRecord {
    pub run_id: RunId,
    pub call_id: String,
    pub command: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    pub output_tail: String,
    /// It ran to the end and exited 0 (not cut off, killed or timed out).
    pub success: bool,
}

impl CommandRecord {
    /// Exit 0, and neither cut off, signalled nor timed out.
    pub fn ran_clean(&self) -> bool {
        self.exit_code == Some(0) && self.signal.is_none() && !self.timed_out && !self.cancelled
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RefusalRecord {
    pub thread_id: ThreadId,
    pub check_name: String,
    pub cause: String,
    pub queued: bool,
    pub created_at: i64,
}

/// Tool-call and command records beyond this many per run are counted, not kept.
pub const KEPT_CALLS_PER_RUN: i64 = 80;

impl Tx<'_> {
    pub fn record_model_call(&mut self, thread: ThreadId, c: &ModelCallRecord) -> Result<()> {
        self.exec_unawaited(
            "INSERT INTO model_calls (run_id, role, endpoint, model, input_tokens, cached_input_tokens, output_tokens, latency_ms, attempts, error, attempt_errors, started_at, finish)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            args![c.run_id.0, c.role, c.endpoint, c.model, c.input_tokens, c.cached_input_tokens, c.output_tokens, c.latency_ms, c.attempts, c.error, serde_json::to_string(&c.attempt_errors).unwrap_or_else(|_| "[]".into()), c.started_at, c.finish],
        )?;
        self.event(
            "model_call",
            Some(thread),
            Some(c.run_id),
            serde_json::to_value(c).unwrap_or_default(),
        )?;
        Ok(())
    }

    pub fn model_calls(&self, run: RunId) -> Result<Vec<ModelCallRecord>> {
        self.query_all("SELECT run_id, role, endpoint, model, input_tokens, cached_input_tokens, output_tokens, latency_ms, attempts, error, attempt_errors, started_at, finish
             FROM model_calls WHERE run_id = ?1 ORDER BY id", args![run.0], |r| {
            Ok(ModelCallRecord {
                run_id: RunId(r.get(0)?),
                role: r.get(1)?,
                endpoint: r.get(2)?,
                model: r.get(3)?,
                input_tokens: r.get(4)?,
                cached_input_tokens: r.get(5)?,
                output_tokens: r.get(6)?,
                latency_ms: r.get(7)?,
                attempts: r.get(8)?,
                error: r.get(9)?,
                attempt_errors: serde_json::from_str(&r.get::<String>(10)?).unwrap_or_default(),
                started_at: r.get(11)?,
                finish: r.get(12)?,
            })
        })
    }

    /// Record a tool call; the run counts every call but keeps only its first 80 records.
    pub fn record_tool_call(&mut self, thread: ThreadId, c: &ToolCallRecord) -> Result<bool> {
        // The count before this call, in the same statement that bumps it.
        let n: i64 = self.query_one(
            "UPDATE runs SET tool_calls = tool_calls + 1 WHERE id = ?1 RETURNING tool_calls - 1",
            args![c.run_id.0],
            |r| r.get(0),
        )?;
        let kept = n < KEPT_CALLS_PER_RUN;
        if kept {
            self.exec_unawaited(
                "INSERT INTO tool_calls (run_id, message_id, call_id, name, arguments, status, result, duration_ms, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                args![c.run_id.0, c.message_id.0, c.call_id, c.name, c.arguments, c.status, c.result, c.duration_ms, self.now],
            )?;
        }
        self.event(
            "tool_call",
            Some(thread),
            Some(c.run_id),
            json!({"call_id": c.call_id, "name": c.name, "status": c.status, "duration_ms": c.duration_ms}),
        )?;
        Ok(kept)
    }

    pub fn tool_calls(&self, run: RunId) -> Result<Vec<ToolCallRecord>> {
        self.query_all("SELECT run_id, message_id, call_id, name, arguments, status, result, duration_ms FROM tool_calls WHERE run_id = ?1 ORDER BY id", args![run.0], |r| {
            Ok(ToolCallRecord {
                run_id: RunId(r.get(0)?),
                message_id: MessageId(r.get(1)?),
                call_id: r.get(2)?,
                name: r.get(3)?,
                arguments: r.get(4)?,
                status: r.get(5)?,
                result: r.get(6)?,
                duration_ms: r.get(7)?,
            })
        })
    }

    /// The names of the tool calls `thread`'s runs made at or after `since` (store clock) that
    /// ran and answered without an error, in order; a run's calls past its first 80 are not
    /// kept and not listed.
    pub fn answered_tool_calls_since(&self, thread: ThreadId, since: i64) -> Result<Vec<String>> {
        self.query_all(
            "SELECT c.name FROM tool_calls c JOIN runs r ON r.id = c.run_id
             WHERE r.thread_id = ?1 AND c.created_at >= ?2 AND c.status = 'ok'
             ORDER BY c.id",
            args![thread.0, since],
            |r| r.get(0),
        )
    }

    /// Record a finished shell command (first 80 per run are kept).
    pub fn record_command(&mut self, thread: ThreadId, c: &CommandRecord) -> Result<bool> {
        if c.timed_out {
            // Also past the kept records: a timeout teaches its lesson (B§10.1) either way.
            self.command_timed_out(thread, c)?;
        }
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM command_records WHERE run_id = ?1",
            args![c.run_id.0],
            |r| r.get(0),
        )?;
        if n >= KEPT_CALLS_PER_RUN {
            return Ok(false);
        }
        self.exec(
            "INSERT INTO command_records (run_id, call_id, command, exit_code, signal, timed_out, cancelled, duration_ms, output_tail, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            args![c.run_id.0, c.call_id, c.command, c.exit_code, c.signal, c.timed_out, c.cancelled, c.duration_ms, c.output_tail, self.now],
        )?;
        self.event(
            "command_finished",
            Some(thread),
            Some(c.run_id),
            json!({"call_id": c.call_id, "command": c.command, "exit_code": c.exit_code, "duration_ms": c.duration_ms}),
        )?;
        Ok(true)
    }

    pub fn commands(&self, run: RunId) -> Result<Vec<CommandRecord>> {
        self.query_all("SELECT run_id, call_id, command, exit_code, signal, timed_out, cancelled, duration_ms, output_tail
             FROM command_records WHERE run_id = ?1 ORDER BY id", args![run.0], |r| {
            let mut c = CommandRecord {
                run_id: RunId(r.get(0)?),
                call_id: r.get(1)?,
                command: r.get(2)?,
                exit_code: r.get(3)?,
                signal: r.get(4)?,
                timed_out: r.get(5)?,
                cancelled: r.get(6)?,
                duration_ms: r.get(7)?,
                output_tail: r.get(8)?,
                success: false,
            };
            c.success = c.ran_clean();
            Ok(c)
        })
    }

    /// Record that an admission check refused (or queued) a wake, with its cause.
    pub fn record_refusal(
        &mut self,
        thread: ThreadId,
        check: &str,
        cause: &str,
        queued: bool,
    ) -> Result<()> {
        self.refusal(thread, check, cause, queued, None)
    }

    /// Record that the drive itself refused (a pause, an unknown last effect): the same record
    /// and event, naming the call whose outcome is unknown so a person can see why.
    pub fn record_drive_refusal(
        &mut self,
        thread: ThreadId,
        refusal: &str,
        cause: &str,
        call: Option<&UnknownCall>,
    ) -> Result<()> {
        self.refusal(thread, refusal, cause, false, call)
    }

    fn refusal(
        &mut self,
        thread: ThreadId,
        check: &str,
        cause: &str,
        queued: bool,
        call: Option<&UnknownCall>,
    ) -> Result<()> {
        self.exec(
            "INSERT INTO admission_refusals (thread_id, check_name, cause, queued, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            args![thread.0, check, cause, queued, self.now],
        )?;
        if queued {
            self.exec(
                "INSERT INTO queued_wakes (thread_id, cause, created_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (thread_id) DO UPDATE SET cause = excluded.cause",
                args![thread.0, cause, self.now],
            )?;
        }
        let mut payload = json!({"check": check, "cause": cause});
        if let Some(call) = call {
            payload["call"] = json!(call);
        }
        self.event(
            if queued {
                "wake_queued"
            } else {
                "wake_refused"
            },
            Some(thread),
            None,
            payload,
        )?;
        Ok(())
    }

    pub fn refusals(&self, thread: ThreadId) -> Result<Vec<RefusalRecord>> {
        self.query_all("SELECT thread_id, check_name, cause, queued, created_at FROM admission_refusals WHERE thread_id = ?1 ORDER BY id", args![thread.0], |r| {
            Ok(RefusalRecord {
                thread_id: ThreadId(r.get(0)?),
                check_name: r.get(1)?,
                cause: r.get(2)?,
                queued: r.get(3)?,
                created_at: r.get(4)?,
            })
        })
    }

    /// Whether any wake is queued (a read, so the common empty case needs no write).
    pub fn has_queued_wakes(&self) -> Result<bool> {
        self.query_one("SELECT EXISTS (SELECT 1 FROM queued_wakes)", args![], |r| {
            r.get(0)
        })
    }

    /// Take every queued wake (they are retried by the caller).
    pub fn take_queued_wakes(&mut self) -> Result<Vec<ThreadId>> {
        let ids = self.query_all(
            "SELECT thread_id FROM queued_wakes ORDER BY created_at, thread_id",
            args![],
            |r| r.get(0).map(ThreadId),
        )?;
        self.exec("DELETE FROM queued_wakes", args![])?;
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        exit: Option<i32>,
        signal: Option<i32>,
        timed_out: bool,
        cancelled: bool,
    ) -> CommandRecord {
        CommandRecord {
            run_id: RunId(1),
            call_id: "c".into(),
            command: "x".into(),
            exit_code: exit,
            signal,
            timed_out,
            cancelled,
            duration_ms: 1,
            output_tail: String::new(),
            success: false,
        }
    }

    #[test]
    fn a_command_succeeds_only_when_it_ran_to_exit_0() {
        assert!(record(Some(0), None, false, false).ran_clean());
        assert!(!record(Some(1), None, false, false).ran_clean());
        assert!(!record(None, Some(9), false, false).ran_clean());
        assert!(!record(Some(0), None, true, false).ran_clean());
        assert!(!record(Some(0), None, false, true).ran_clean());
    }
}
