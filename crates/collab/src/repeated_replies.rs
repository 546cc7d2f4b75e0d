//! AC-12 in the conversation: a Bot's words that nobody's line asked for — a turn a check-back,
//! a call-back or another timer started — are not posted when they say again what the Bot
//! said in the same conversation and job among its last replies (`troupe_core::repeated_reply`).
//! A reply to a line (a person's or another Bot's) or to handed work always goes out, and so
//! does anything said in a Bot↔Bot direct, where work is handed on and answered.

use serde_json::json;
use troupe_core::conversation::SessionKind;
use troupe_core::message::Origin;
use troupe_core::repeated_reply;
use troupe_core::routine::is_run_key;
use troupe_core::{BotId, RunId, SessionId, SessionMessageId, ThreadId, TicketId};
use troupe_store::{StoreError, Tx, WorkRef};

/// Whether a timer started `run` (a check-back, the supervisor's call-back or pick-up, an
/// external job's or the Agenda's wake; not a routine's run): only such a turn was asked for
/// by nobody. The app's
/// own notes often carry a person's words (a lifted stop, a desk's hand-off), and a Bot's line
/// or handed work is answered. (The projector knows this from the task's message as it writes
/// it; a tool call reads it.)
pub(crate) fn started_by_timer(tx: &Tx<'_>, run: RunId) -> Result<bool, StoreError> {
    Ok(match tx.run_root_origin(run)? {
        Some((kind, detail)) => kind == "timer" && !detail.as_deref().is_some_and(is_run_key),
        None => false,
    })
}

/// Whether a task of this origin was asked for by nobody: a timer's, except a routine's run,
/// which the person scheduled (yesterday's brief said again is still today's brief).
pub(crate) fn asked_by_nobody(origin: &Origin) -> bool {
    matches!(origin, Origin::Timer(key) if !is_run_key(key))
}

/// The earlier reply `text` repeats, for a turn a timer started (the caller knows), outside a
/// Bot↔Bot direct; a repeat on a job is noted in its work log.
pub(crate) fn said_before(
    tx: &mut Tx<'_>,
    run: RunId,
    thread: ThreadId,
    session: SessionId,
    bot: BotId,
    text: &str,
) -> Result<Option<SessionMessageId>, StoreError> {
    if tx.session(session)?.kind == SessionKind::BotDirect {
        return Ok(None);
    }
    let item = tx.work_item_of_thread(thread)?;
    let plan = item.as_ref().and_then(|i| i.plan_id);
    let earlier = tx.bot_replies_in(session, bot, plan, repeated_reply::WINDOW)?;
    let Some(i) = repeated_reply::find(text, earlier.iter().map(|(_, b)| b.as_str())) else {
        return Ok(None);
    };
    let repeats = earlier[i].0;
    // The job's work log says why nothing was posted, for whoever wonders what the turn did.
    if let Some(item) = item
        && let Some(plan) = item.plan_id
    {
        tx.log_work(
            WorkRef {
                plan,
                ticket: item.ticket_id.map(TicketId),
                work_item: Some(item.id),
            },
            "reply_withheld",
            json!({"run_id": run, "session_id": session, "repeats": repeats}),
        )?;
    }
    Ok(Some(repeats))
}
