//! Attribution (C §3): which jobs a person's line is for. Locked signals decide first and
//! accumulate (AT-1): a quoted line's jobs, all of them. Otherwise the reader's filing, when it
//! named jobs. Anything else leaves the line unplaced: each recipient's desk hears it. A filed
//! line goes to each recipient's work on each job (a steer when that work is live: WI-8),
//! marked "said to you" when that work speaks in another conversation (WI-9); several jobs
//! never make two live segments of one Bot on one job (AT-4).

use crate::desk::ensure_job_item;
use crate::routing::{labelled, speaker, with_lines_read_before};
use troupe_core::conversation::{Author, SessionMessage};
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::message::Origin;
use troupe_core::reading::filing::Filing;
use troupe_core::work_item::{PRIORITY_USER, WorkState};
use troupe_core::{BotId, PlanId, ThreadId};
use troupe_store::{FilingSource, NewFiling, StoreError, Tx};

/// File a person's line: under its quoted line's jobs (locked), else the reader's. Answers
/// the jobs it is filed under now.
pub(crate) fn file_person_line(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
) -> Result<Vec<PlanId>, StoreError> {
    let mut filed: Vec<(PlanId, FilingSource, bool)> = Vec::new();
    let mut parts = Vec::new();
    if let Some(parent) = line.parent_id {
        for f in tx.filings_of_line(parent)? {
            if !filed.iter().any(|(p, ..)| *p == f.plan_id) {
                filed.push((f.plan_id, FilingSource::QuotedReply, true));
            }
        }
    }
    if filed.is_empty()
        && let Some(reading) = tx.filing_reading(line.id)?
        && let Some(Filing::Jobs { jobs, parts: named }) = reading.filing
    {
        parts = named;
        for p in jobs {
            // A plan gone dormant since the reading takes nothing (PLAN-D8).
            if tx.find_plan(p)?.is_some_and(|plan| !plan.is_dormant()) {
                filed.push((p, FilingSource::Reader, false));
            }
        }
    }
    let mut out = Vec::new();
    for (i, (plan, source, locked)) in filed.into_iter().enumerate() {
        tx.file_line(&NewFiling {
            message_id: line.id,
            plan_id: plan,
            ticket_id: None,
            part_id: None,
            source,
            filed_by: if locked {
                "quote".into()
            } else {
                "reader".into()
            },
            locked,
            primary: i == 0,
        })?;
        // A person's line filed under a job is their activity there, and wakes it (PLAN-D9).
        if line.author == Author::User {
            tx.touch_plan_user_activity(plan)?;
            tx.wake_plan(plan)?;
        }
        out.push(plan);
    }
    // AT-5: the parts the reader named, each under its ticket (identity only, no approval).
    for p in parts.into_iter().filter(|p| out.contains(&p.plan_id)) {
        tx.file_line(&NewFiling {
            message_id: line.id,
            plan_id: p.plan_id,
            ticket_id: Some(p.ticket_id),
            part_id: Some(p.part_id.to_string()),
            source: FilingSource::Reader,
            filed_by: "reader".into(),
            locked: false,
            primary: false,
        })?;
    }
    Ok(out)
}

/// Give a filed line to `bot`'s work on `plan`; answers the thread, woken after commit unless
/// its work is live (then it hears the line at its next step).
pub(crate) fn deliver_to_job(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
    bot: BotId,
    plan: PlanId,
    how: &str,
) -> Result<ThreadId, StoreError> {
    let job = ensure_job_item(tx, plan, bot)?;
    let session = tx.session(line.session_id)?;
    let mut text = labelled(&session, &speaker(tx, line)?, &line.body);
    let live = tx.live_segment_of(job.id)?;
    // WI-9: said to the Bot here while its live work speaks elsewhere.
    let mut reply_in = None;
    let mode = if live.is_some() {
        InboxMode::Steer
    } else {
        InboxMode::Task
    };
    match live {
        Some(run) => {
            let speaking = tx.segment(run)?.map(|s| s.session_id);
            if speaking != Some(session.id) {
                reply_in = Some(session.id);
                text = format!(
                    "{text}\n(Said to you in \"{}\": answer there with send_message and \
                     session_id {} or parent_id {}.)",
                    session.title, session.id.0, line.id.0
                );
            }
            text = format!("#{} {text}", line.id.0);
        }
        None => text = with_lines_read_before(tx, job.thread_id, text)?,
    }
    let origin = match line.author {
        Author::User => Origin::User,
        _ => Origin::Delegation(format!("line:{}", line.id.0)),
    };
    tx.deliver(
        job.thread_id,
        &Delivery {
            origin,
            ..Delivery::user_task(text)
                .with_mode(mode)
                .with_key(crate::routing::line_key(line.id, bot))
        },
    )?;
    tx.record_line_delivery(line.id, bot, how, job.thread_id)?;
    if let Some(there) = reply_in {
        tx.mark_reply_in(line.id, bot, there)?;
    }
    if live.is_none() {
        tx.set_work_mail(job.id, session.id, PRIORITY_USER)?;
        let waiting = job.waiting_on.clone();
        tx.set_work_state(job.id, WorkState::Queued, waiting.as_ref())?;
        tx.wake_after_commit(job.thread_id);
    }
    Ok(job.thread_id)
}
