//! What a hold's cover is judged on, read from the records: a thread's Bot, the conversation
//! its next turn speaks in, its job and that job's home.

use troupe_core::hold::TurnFacts;
use troupe_core::work_item::WorkMode;
use troupe_core::{HoldId, ThreadId, TicketId};
use troupe_store::{CheckBackRecord, StoreError, Tx, WorkItemRecord};

fn item_facts(tx: &Tx<'_>, item: &WorkItemRecord) -> Result<Option<TurnFacts>, StoreError> {
    let home = match item.plan_id {
        Some(p) => tx.plan(p)?.home_session_id,
        None => None,
    };
    let session = match item.mode {
        WorkMode::Desk => item.session_id,
        WorkMode::Work => item.speaks_in.or(home),
    };
    Ok(session.map(|session_id| TurnFacts {
        bot_id: item.bot_id,
        session_id,
        thread_id: item.thread_id,
        plan_id: item.plan_id,
        plan_home: home,
        ticket_id: item.ticket_id.map(TicketId),
    }))
}

/// The facts of the next turn on `thread`; `None` for threads that are no Bot's own.
pub(crate) fn thread_facts(tx: &Tx<'_>, thread: ThreadId) -> Result<Option<TurnFacts>, StoreError> {
    if let Some(item) = tx.work_item_of_thread(thread)?
        && item.mode == WorkMode::Work
    {
        return item_facts(tx, &item);
    }
    // A conversation thread (a person's direct, a desk): its conversation, and the job its
    // last segment worked on there, if it bound one.
    let Some((session, bot)) = tx.thread_session(thread)? else {
        return Ok(None);
    };
    let mut facts = TurnFacts {
        bot_id: bot,
        session_id: session,
        thread_id: thread,
        plan_id: None,
        plan_home: None,
        ticket_id: None,
    };
    if let Some(run) = tx.thread(thread)?.lease.holder.or(last_run(tx, thread)?)
        && let Some(seg) = tx.segment_work(run)?
    {
        let item = tx.work_item(seg.work_item_id)?;
        if let Some(p) = item.plan_id {
            facts.plan_id = Some(p);
            facts.plan_home = tx.plan(p)?.home_session_id;
            facts.ticket_id = item.ticket_id.map(TicketId);
        }
    }
    Ok(Some(facts))
}

fn last_run(tx: &Tx<'_>, thread: ThreadId) -> Result<Option<troupe_core::RunId>, StoreError> {
    Ok(tx.runs_for_thread(thread, 1)?.first().map(|r| r.id))
}

/// The facts a check-back's wake is judged on: its work item's.
pub(crate) fn check_back_facts(
    tx: &Tx<'_>,
    cb: &CheckBackRecord,
) -> Result<Option<TurnFacts>, StoreError> {
    let item = tx.work_item(cb.work_item_id)?;
    Ok(item_facts(tx, &item)?.map(|mut f| {
        f.session_id = cb.session_id;
        f
    }))
}

/// The holds in force over the next turn on `thread`.
pub(crate) fn holds_over_thread(tx: &Tx<'_>, thread: ThreadId) -> Result<Vec<HoldId>, StoreError> {
    match thread_facts(tx, thread)? {
        Some(f) => tx.covering_holds(&f),
        None => Ok(Vec::new()),
    }
}
