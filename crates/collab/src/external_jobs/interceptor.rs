//! The interceptor around paired `submit_<x>` / `check_<x>` tools, from any source (an MCP
//! server's included): a submit is deduped (EJ2) or refused `job_pending` (EJ3) before it
//! reaches the server, and registered when its answer names an id (EJ1); a check on a
//! registered job reads the cached state and makes the caller a waiter (EJ4).

use async_trait::async_trait;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::Mutex;
use troupe_core::ThreadId;
use troupe_core::external_job::{
    DEDUPE_WINDOW_MS, Earlier, JobView, Paired, cached_text, canonical_arguments, check_submit,
    dedupes, job_ids_named, next_poll_at, pair, parse_submit_answer, part_numbers_named,
    payload_without_reason, submitted_text,
};
use troupe_engine::extension::{BeforeCall, InterceptedCall, ToolInterceptor, ToolReply};
use troupe_store::{ExternalJobRecord, NewExternalJob, StoreError, Tx, WorkItemRecord};

/// Registered with the engine by [`crate::extend`].
#[derive(Default)]
pub struct ExternalJobs {
    /// Calls `before` answered itself (thread, call id): their `after` registers nothing.
    answered: Mutex<HashSet<(ThreadId, String)>>,
}

/// EJ2's "same arguments": SHA-256 of the arguments without `resubmit_reason`, key order aside.
pub(crate) fn fingerprint(payload: &Value) -> String {
    let digest = Sha256::digest(canonical_arguments(payload).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The job as the Bots read it.
pub(crate) fn view<'a>(
    job: &'a ExternalJobRecord,
    id: &'a str,
    answer: Option<&'a troupe_core::external_job::CheckAnswer>,
) -> JobView<'a> {
    JobView {
        id,
        remote_id: &job.remote_id,
        status: job.status,
        answer,
    }
}

/// The last answer kept on the job, read back.
pub(crate) fn stored_answer(
    job: &ExternalJobRecord,
) -> Option<troupe_core::external_job::CheckAnswer> {
    let r = job.result.as_ref()?;
    let text = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
    Some(troupe_core::external_job::CheckAnswer {
        status: Default::default(),
        url: text("url"),
        duration: text("duration"),
        cost: text("cost"),
        error: text("error"),
        raw_lines: text("raw_lines"),
    })
}

/// Who is calling: the thread's work item (its job and ticket) and its Bot.
fn caller(
    tx: &Tx<'_>,
    thread: ThreadId,
) -> Result<(Option<WorkItemRecord>, Option<troupe_core::BotId>), StoreError> {
    let item = tx.work_item_of_thread(thread)?;
    let bot = match &item {
        Some(i) => Some(i.bot_id),
        None => tx.thread_session(thread)?.map(|(_, b)| b),
    };
    Ok((item, bot))
}

impl ExternalJobs {
    fn remember(&self, call: &InterceptedCall<'_>) {
        let mut a = self.answered.lock().unwrap_or_else(|p| p.into_inner());
        a.insert((call.ctx.thread.id, call.ctx.call_id.clone()));
    }

    fn answered_itself(&self, call: &InterceptedCall<'_>) -> bool {
        let mut a = self.answered.lock().unwrap_or_else(|p| p.into_inner());
        a.remove(&(call.ctx.thread.id, call.ctx.call_id.clone()))
    }

    fn before_submit(&self, call: &InterceptedCall<'_>, args: &Value) -> BeforeCall {
        let (payload, reason) = payload_without_reason(args);
        let fp = fingerprint(&payload);
        let thread = call.ctx.thread.id;
        let found = call.ctx.store.write(|tx| {
            let now = tx.now();
            if let Some(job) =
                tx.same_external_job(call.owner, call.tool, &fp, now - DEDUPE_WINDOW_MS)?
                && dedupes(
                    &Earlier {
                        status: job.status,
                        created_at: job.created_at,
                    },
                    now,
                )
            {
                // Another Bot sending the same request waits on the job like a checker.
                if job.submitter_thread_id != thread {
                    let (item, bot) = caller(tx, thread)?;
                    tx.add_external_job_waiter(job.id, thread, bot, item.map(|i| i.id))?;
                }
                return Ok(Ok(job));
            }
            let (item, _) = caller(tx, thread)?;
            let Some(plan) = item.as_ref().and_then(|i| i.plan_id) else {
                return Ok(Err(None));
            };
            let ticket = item.and_then(|i| i.ticket_id).map(troupe_core::TicketId);
            let parts = part_numbers_named(&payload);
            let part_job = match parts.as_slice() {
                [n] => tx.part_job(plan, ticket, *n)?,
                _ => None,
            };
            Ok(Err(check_submit(&parts, part_job, reason.as_deref()).err()))
        });
        match found {
            Ok(Ok(job)) => {
                self.remember(call);
                let id = job.id.to_string();
                let answer = stored_answer(&job);
                BeforeCall::Answer(ToolReply::ok(submitted_text(
                    &view(&job, &id, answer.as_ref()),
                    true,
                    "",
                )))
            }
            Ok(Err(Some(refusal))) => BeforeCall::Answer(ToolReply::error(refusal.text)),
            Ok(Err(None)) if reason.is_some() => BeforeCall::Rewrite(payload.to_string()),
            Ok(Err(None)) => BeforeCall::Proceed,
            Err(e) => {
                tracing::warn!(tool = call.tool, error = %e, "could not look for an earlier external job; the submit goes on");
                BeforeCall::Proceed
            }
        }
    }

    fn before_check(&self, call: &InterceptedCall<'_>, args: &Value) -> BeforeCall {
        let names = job_ids_named(args);
        let thread = call.ctx.thread.id;
        let found = call.ctx.store.write(|tx| {
            let Some(job) = tx.external_job_named(call.owner, call.tool, &names)? else {
                return Ok(None);
            };
            if job.submitter_thread_id != thread {
                let (item, bot) = caller(tx, thread)?;
                tx.add_external_job_waiter(job.id, thread, bot, item.map(|i| i.id))?;
            }
            Ok(Some(job))
        });
        match found {
            Ok(Some(job)) => {
                let id = job.id.to_string();
                let answer = stored_answer(&job);
                BeforeCall::Answer(ToolReply::ok(cached_text(&view(
                    &job,
                    &id,
                    answer.as_ref(),
                ))))
            }
            // Not a job the app registered: the server is asked as usual.
            Ok(None) => BeforeCall::Proceed,
            Err(e) => {
                tracing::warn!(tool = call.tool, error = %e, "could not read external jobs; the check goes to the server");
                BeforeCall::Proceed
            }
        }
    }

    /// EJ1: the submit's answer names an id: register the job, and tell the Bot the app polls.
    async fn register(
        &self,
        call: &InterceptedCall<'_>,
        check: String,
        arguments: &str,
        reply: ToolReply,
    ) -> ToolReply {
        let Some(answer) = parse_submit_answer(&reply.content) else {
            return reply;
        };
        let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let (payload, reason) = payload_without_reason(&args);
        let parts = part_numbers_named(&payload);
        let ctx = call.ctx;
        let (thread, run, message) = (ctx.thread.id, ctx.run_id, ctx.message_id);
        let (server, tool) = (call.owner.to_string(), call.tool.to_string());
        let written = ctx
            .store
            .write_async(move |tx| {
                let (item, bot) = caller(tx, thread)?;
                let now = tx.now();
                tx.insert_external_job(&NewExternalJob {
                    server: server.clone(),
                    tool: tool.clone(),
                    check_tool: check.clone(),
                    args_fingerprint: fingerprint(&payload),
                    arguments: payload.to_string(),
                    submitter_bot_id: bot,
                    submitter_thread_id: thread,
                    submitter_work_item_id: item.as_ref().map(|i| i.id),
                    run_id: run,
                    message_id: message,
                    plan_id: item.as_ref().and_then(|i| i.plan_id),
                    ticket_id: item
                        .as_ref()
                        .and_then(|i| i.ticket_id)
                        .map(troupe_core::TicketId),
                    part_number: match parts.as_slice() {
                        [n] => Some(*n),
                        _ => None,
                    },
                    remote_id: answer.remote_id.clone(),
                    remote_key: answer.key.clone(),
                    resubmit_reason: reason.clone(),
                    next_poll_at: next_poll_at(now, now, 0),
                })
            })
            .await;
        match written {
            Ok(job) => {
                let id = job.id.to_string();
                ToolReply {
                    content: submitted_text(&view(&job, &id, None), false, &reply.content),
                    ..reply
                }
            }
            Err(e) => {
                tracing::warn!(tool = call.tool, error = %e, "an accepted external job could not be registered");
                ToolReply {
                    content: format!(
                        "{}\n(The app could not register this job, so it will not poll it: \
                         check on it yourself.)",
                        reply.content
                    ),
                    ..reply
                }
            }
        }
    }
}

#[async_trait]
impl ToolInterceptor for ExternalJobs {
    fn name(&self) -> &str {
        "external_jobs"
    }

    fn claims(&self, tool: &str) -> bool {
        pair(tool).is_some()
    }

    async fn before(&self, call: &InterceptedCall<'_>, arguments: &str) -> BeforeCall {
        let Ok(args @ Value::Object(_)) = serde_json::from_str::<Value>(arguments) else {
            return BeforeCall::Proceed;
        };
        match pair(call.tool) {
            Some(Paired::Submit { .. }) => self.before_submit(call, &args),
            Some(Paired::Check { .. }) => self.before_check(call, &args),
            None => BeforeCall::Proceed,
        }
    }

    async fn after(
        &self,
        call: &InterceptedCall<'_>,
        arguments: &str,
        reply: ToolReply,
    ) -> ToolReply {
        if self.answered_itself(call) || reply.is_error {
            return reply;
        }
        match pair(call.tool) {
            Some(Paired::Submit { check }) => self.register(call, check, arguments, reply).await,
            _ => reply,
        }
    }
}
