//! EJ6: a settled job wakes its submitter and every waiter, each on its own thread (its work
//! item's, so it speaks in its own conversation), with the result; logged on the job's work log.

use super::interceptor::{stored_answer, view};
use serde_json::json;
use troupe_core::external_job::{finished_text, wake_key};
use troupe_core::inbox::{Delivery, InboxMode, Priority};
use troupe_core::message::Origin;
use troupe_core::work_item::PRIORITY_CHECK_BACK;
use troupe_core::{BotId, ThreadId, WorkItemId};
use troupe_store::{ExternalJobRecord, StoreError, Tx, WorkRef};

/// Wake everyone the job concerns, once each (a thread both submitted and waited is woken
/// once), and log `external_job_finished {status}`.
pub(super) fn wake_all(tx: &mut Tx<'_>, job: &ExternalJobRecord) -> Result<(), StoreError> {
    let mut woken: Vec<(ThreadId, Option<BotId>, Option<WorkItemId>)> = vec![(
        job.submitter_thread_id,
        job.submitter_bot_id,
        job.submitter_work_item_id,
    )];
    for w in tx.external_job_waiters(job.id)? {
        if !woken.iter().any(|(t, ..)| *t == w.thread_id) {
            woken.push((w.thread_id, w.bot_id, w.work_item_id));
        }
    }
    let id = job.id.to_string();
    let answer = stored_answer(job);
    let text = finished_text(&view(job, &id, answer.as_ref()));
    for (thread, _, item) in &woken {
        wake(tx, job, *thread, *item, &text)?;
    }
    let payload = json!({
        "status": job.status.as_str(), "external_job_id": job.id, "remote_id": job.remote_id,
        "tool": job.tool, "woken_bot_ids": woken.iter().filter_map(|(_, b, _)| *b).collect::<Vec<_>>(),
    });
    match job.plan_id {
        Some(plan) => {
            tx.log_work(
                WorkRef {
                    plan,
                    ticket: job.ticket_id,
                    work_item: job.submitter_work_item_id,
                },
                "external_job_finished",
                payload,
            )?;
        }
        None => tx.event(
            "external_job_finished",
            Some(job.submitter_thread_id),
            Some(job.run_id),
            payload,
        )?,
    }
    Ok(())
}

/// A hidden line on the thread (a steer when it runs, else a task that starts it), queued as
/// mail on its work item where it speaks, like a check-back's wake.
fn wake(
    tx: &mut Tx<'_>,
    job: &ExternalJobRecord,
    thread: ThreadId,
    item: Option<WorkItemId>,
    text: &str,
) -> Result<(), StoreError> {
    let key = wake_key(job.id.0, thread.0);
    let running = tx.thread(thread)?.lease.holder.is_some();
    let d = Delivery {
        origin: Origin::Timer(key.clone()),
        visible: false,
        ..Delivery::user_task(text)
            .with_mode(if running {
                InboxMode::Steer
            } else {
                InboxMode::Task
            })
            .with_priority(Priority::OWN_TIMER)
            .with_key(key)
    };
    tx.deliver(thread, &d)?;
    if let Some(item) = item {
        let w = tx.work_item(item)?;
        let speaks = match w.speaks_in.or(w.session_id) {
            Some(s) => Some(s),
            None => tx.thread_session(thread)?.map(|(s, _)| s),
        };
        if let Some(session) = speaks {
            tx.set_work_mail(item, session, PRIORITY_CHECK_BACK)?;
        }
    }
    tx.wake_after_commit(thread);
    Ok(())
}
