//! The hand-over at `end_turn` (§4.4 IS3, §4.5 W1–W5, T12): `end_turn({reason: "done",
//! answer})` by the producer of a ticket with no file ever handed over hands the words over
//! (origin `answer`; refused `answer_not_deliverable` when they are not the work); a done or
//! quiet ending first hands over the producer's new files and answers a failing check as the
//! reply; a change to approved work, a non-owner's files and a non-producer's words are each
//! pointed out once. A prose closing never hands words over (W2).

use super::handover::{HandOver, record};
use super::implicit::{
    approved_change, files_ticket, implicit_hand_over, is_producer, left_in_owned, segment_files,
};
use super::pass::{Moved, SubmissionPass};
use crate::tools::ToolHost;
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use troupe_core::RunId;
use troupe_core::ending::{EndKind, EndTurnArgs};
use troupe_core::submission::{SubmissionOrigin, answer_filter};
use troupe_core::ticket::AppPass;
use troupe_engine::extension::{ToolCallContext, ToolReply};

/// The notices each segment has had once: (run, kind).
fn told() -> &'static Mutex<HashSet<(RunId, &'static str)>> {
    static TOLD: OnceLock<Mutex<HashSet<(RunId, &'static str)>>> = OnceLock::new();
    TOLD.get_or_init(Mutex::default)
}

/// True the first time `kind` is told to `run`.
fn first_time(run: RunId, kind: &'static str) -> bool {
    told()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert((run, kind))
}

enum Plan {
    Nothing,
    Reply(String),
    Words(HandOver),
    Files(HandOver),
}

/// Run before the ending contract: Some(reply) when the `end_turn` does not end the turn.
pub(crate) async fn at_end_turn(
    host: &ToolHost,
    ctx: &ToolCallContext,
    parsed: &Result<EndTurnArgs, String>,
) -> Option<ToolReply> {
    let args = parsed.as_ref().ok()?;
    if matches!(args.reason, EndKind::Blocked | EndKind::GaveUp) {
        return None;
    }
    let hooks = host.deliverable_hooks();
    let run = ctx.run_id;
    let answer = args
        .answer
        .as_deref()
        .filter(|a| args.reason == EndKind::Done && !a.trim().is_empty());
    let planned = ctx.store.read(|tx| {
        let Some(f) = segment_files(tx, run)? else {
            return Ok(Plan::Nothing);
        };
        if let Some(text) = approved_change(&f)
            && first_time(run, "approved_change")
        {
            return Ok(Plan::Reply(text));
        }
        if let Some(words) = answer {
            // W1: only a ticket with no file ever handed over takes words.
            if let Some(ticket) = files_ticket(&f, &[])
                && !tx
                    .submissions_of_ticket(ticket.id)?
                    .iter()
                    .any(|s| !s.files.is_empty())
            {
                if !is_producer(tx, &f.item, &ticket, run)? {
                    if first_time(run, "words_not_producer") {
                        return Ok(Plan::Reply(format!(
                            "Only the owner of ticket #{:02} hands its words over; your answer \
                             was not handed over. End again if you are done.",
                            ticket.number
                        )));
                    }
                    return Ok(Plan::Nothing);
                }
                if let Err(r) = answer_filter(words) {
                    return Ok(Plan::Reply(format!("{}: {}", r.code(), r.message())));
                }
                let session = tx.segment(run)?.map(|s| s.session_id);
                return Ok(Plan::Words(HandOver {
                    ticket: ticket.id,
                    origin: SubmissionOrigin::Answer,
                    producer: f.item.bot_id,
                    run: Some(run),
                    work_item: Some(f.item.id),
                    files: Vec::new(),
                    content: Some(words.trim().to_string()),
                    parts: Vec::new(),
                    note: args.note.clone().unwrap_or_default(),
                    claims: Vec::new(),
                    post_in: session,
                }));
            }
        }
        if let Some(h) = implicit_hand_over(tx, &f, run)? {
            return Ok(Plan::Files(h));
        }
        if let Some(text) = left_in_owned(tx, &f, run)?
            && first_time(run, "left_in_owned")
        {
            return Ok(Plan::Reply(text));
        }
        Ok(Plan::Nothing)
    });
    let h = match planned {
        Ok(Plan::Nothing) => return None,
        Ok(Plan::Reply(text)) => return Some(ToolReply::error(text)),
        Ok(Plan::Words(h)) | Ok(Plan::Files(h)) => h,
        Err(e) => {
            tracing::warn!(run = %run, error = %e, "the ending's hand-over could not be read");
            return None;
        }
    };
    let sub = match ctx.store.write(|tx| record(tx, &hooks, &h)) {
        Ok(Ok(s)) => s,
        // The same words again (W4), or nothing new to hand over: the ending goes on.
        Ok(Err(r)) if h.origin == SubmissionOrigin::Answer => {
            return Some(ToolReply::error(format!("end_turn: {r}")));
        }
        Ok(Err(_)) => return None,
        Err(e) => return Some(ToolReply::error(format!("end_turn: {e}; the turn goes on"))),
    };
    let pass = SubmissionPass::new(hooks);
    match pass.run(&ctx.store, sub.id, AppPass::Checks).await {
        // IS3: a failing check is the reply to this end_turn.
        Ok(Moved::FailedChecks { text }) => Some(ToolReply::error(text)),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!(%run, error = %e, "a hand-over's checks could not run");
            None
        }
    }
}
