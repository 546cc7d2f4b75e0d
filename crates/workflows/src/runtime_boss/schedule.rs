//! The periodic refresh (digest §8.2): with `boss_briefing_interval_days = N`, one Agenda item
//! `every N days` on the runtime boss session asks it to re-enumerate the world with its own
//! tools. The overview itself is not rebuilt on a schedule. Unset interval or Boss Mode off:
//! the item is cancelled. The item is recognised by its title.

use super::ensure::boss_thread;
use crate::agenda::service::{self, AgendaPatchRequest, NewAgendaRequest};
use crate::{WorkflowError, Workflows};
use serde_json::json;
use troupe_core::SessionId;
use troupe_store::{AgendaItem, AgendaStatus};

/// The title that marks a session's refresh item.
pub const TITLE: &str = "boss-briefing";

/// What the refresh delivers.
pub const GUIDANCE: &str = "[Runtime Boss] Time to refresh your picture of the world. \
Re-enumerate the sessions (session_list), the projects and scopes (scope_list), the agenda \
(agenda_list) and your memory (memory_search); keep what is new or changed with memory_write \
or memory_edit.";

const SECONDS_PER_DAY: u64 = 24 * 3600;

fn items(wf: &Workflows, session: SessionId) -> Result<Vec<AgendaItem>, WorkflowError> {
    let thread = wf.store().read(|tx| boss_thread(tx, session))?;
    let live: Vec<AgendaItem> = wf
        .store()
        .read(|tx| tx.agenda_items(Some(thread), None, 10_000))?
        .into_iter()
        .filter(|i| {
            i.title == TITLE && matches!(i.status, AgendaStatus::Active | AgendaStatus::Paused)
        })
        .collect();
    Ok(live)
}

/// Make the session's refresh item match the interval: made, re-timed, or cancelled.
pub fn set(wf: &Workflows, session: SessionId, days: Option<u32>) -> Result<(), WorkflowError> {
    let Some(days) = days else {
        return clear(wf, session);
    };
    let trigger = json!({"kind": "every", "seconds": u64::from(days) * SECONDS_PER_DAY});
    let mut live = items(wf, session)?.into_iter();
    match live.next() {
        None => {
            wf.create_agenda_item(NewAgendaRequest {
                session_id: Some(session),
                title: Some(TITLE.into()),
                trigger,
                payload: GUIDANCE.into(),
                auto_done: false,
                wake: None,
                silent: None,
            })?;
        }
        Some(item) if item.trigger != trigger => {
            service::update(
                wf.store(),
                None,
                item.id,
                &AgendaPatchRequest {
                    trigger: Some(trigger),
                    ..AgendaPatchRequest::default()
                },
            )?;
        }
        Some(_) => {}
    }
    // One item per session: a duplicate (two processes at once) is cancelled.
    for extra in live {
        service::cancel(wf.store(), None, extra.id)?;
    }
    Ok(())
}

/// Cancel the session's refresh item, if it has one.
pub fn clear(wf: &Workflows, session: SessionId) -> Result<(), WorkflowError> {
    for item in items(wf, session)? {
        service::cancel(wf.store(), None, item.id)?;
    }
    Ok(())
}

/// The session's refresh item, if one is live.
pub fn current(wf: &Workflows, session: SessionId) -> Result<Option<AgendaItem>, WorkflowError> {
    Ok(items(wf, session)?.into_iter().next())
}
