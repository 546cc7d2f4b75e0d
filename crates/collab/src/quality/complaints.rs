//! A complaint sends the work back at once (digest 003-B §5.5 CP1–CP4) and marks the reviews
//! that approved it (§6 RM1). Run where a person's line is routed, in that transaction, once
//! the model's reading of the line is stored: only a model's reading that quotes objecting
//! clauses counts (CP2; a line read by the word lists sends nothing back), and only on a
//! ticket the line is filed under by the rows, not by a Bot's pick (CP1).

use crate::submissions::pass::send_back_parts;
use troupe_core::conversation::{Author, SessionMessage};
use troupe_core::submission::SubmissionState;
use troupe_core::ticket::{SendBack, TicketStage};
use troupe_core::{PartId, PlanId, TicketId};
use troupe_store::{FilingSource, StoreError, SubmissionRecord, Tx};

/// The objecting clauses the model read in a person's line, if any.
fn objections(tx: &Tx<'_>, line: &SessionMessage) -> Result<Vec<String>, StoreError> {
    let Some(r) = tx
        .line_readings(line.id)?
        .into_iter()
        .find(|r| r.kind == "user")
    else {
        return Ok(Vec::new());
    };
    if r.failure.is_some() {
        return Ok(Vec::new());
    }
    Ok(r.reading["objections"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str())
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default())
}

/// Whether work on the ticket was handed over and not yet sent back (CP1).
fn complainable(stage: TicketStage) -> bool {
    matches!(
        stage,
        TicketStage::Submitted | TicketStage::InReview | TicketStage::Approved
    )
}

/// A Bot's pick (its `work_on`, its desk) files nothing a complaint acts on.
fn by_rows(source: FilingSource) -> bool {
    !matches!(source, FilingSource::WorkOn | FilingSource::Desk)
}

/// The tickets the line is under, each with the parts it is filed under (none: the whole
/// ticket): its own ticket filings, else those of the line it answers (a reply to a
/// hand-over's line), else — filed under a job only — the job's one ticket with handed-over
/// work whose maker is still here; several such tickets move nothing.
fn targets(tx: &Tx<'_>, line: &SessionMessage) -> Result<Vec<(TicketId, Vec<PartId>)>, StoreError> {
    let filings: Vec<_> = tx
        .filings_of_line(line.id)?
        .into_iter()
        .filter(|f| by_rows(f.source))
        .collect();
    let parts_of = |t: TicketId| -> Vec<PartId> {
        filings
            .iter()
            .filter(|f| f.ticket_id == Some(t.0))
            .filter_map(|f| f.part_id.as_deref()?.parse().ok().map(PartId))
            .collect()
    };
    let mut out: Vec<TicketId> = filings
        .iter()
        .filter_map(|f| f.ticket_id.map(TicketId))
        .collect();
    if out.is_empty()
        && let Some(parent) = line.parent_id
    {
        out = tx
            .filings_of_line(parent)?
            .into_iter()
            .filter_map(|f| f.ticket_id.map(TicketId))
            .collect();
    }
    if out.is_empty() {
        let mut plans: Vec<PlanId> = filings.iter().map(|f| f.plan_id).collect();
        plans.dedup();
        for plan in plans {
            let mut open = Vec::new();
            for t in tx.tickets_of_plan(plan)? {
                if !complainable(t.stage) {
                    continue;
                }
                let maker = t.approved_by_bot_id.or(t.owner_bot_id);
                let here = match maker {
                    Some(b) => !tx.bot(b)?.archived,
                    None => false,
                };
                if here {
                    open.push(t.id);
                }
            }
            if open.len() == 1 {
                out.extend(open);
            }
        }
    }
    out.sort_by_key(|t| t.0);
    out.dedup();
    Ok(out.into_iter().map(|t| (t, parts_of(t))).collect())
}

/// The ticket's current hand-over: the newest one handed over and not sent back or replaced.
fn current(tx: &Tx<'_>, ticket: TicketId) -> Result<Option<SubmissionRecord>, StoreError> {
    Ok(tx
        .submissions_of_ticket(ticket)?
        .into_iter()
        .filter(|s| {
            matches!(
                s.state,
                SubmissionState::Submitted
                    | SubmissionState::InReview
                    | SubmissionState::AwaitingUser
                    | SubmissionState::Approved
            )
        })
        .max_by_key(|s| s.id.0))
}

/// CP3 for a routed person's line: each ticket it complains about goes to rework with its
/// current hand-over, each review that approved that hand-over gets its miss, and the maker is
/// woken with the user's words, its Stop there lifted. No undo (CP4). Answers the tickets
/// sent back.
pub(crate) fn on_routed(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
) -> Result<Vec<TicketId>, StoreError> {
    if line.author != Author::User || objections(tx, line)?.is_empty() {
        return Ok(Vec::new());
    }
    let mut sent = Vec::new();
    for (ticket, parts) in targets(tx, line)? {
        let t = tx.ticket(ticket)?;
        if !complainable(t.stage) {
            continue;
        }
        let Some(sub) = current(tx, ticket)? else {
            continue;
        };
        complain_about(tx, line, &sub, &parts)?;
        sent.push(ticket);
    }
    Ok(sent)
}

/// CP3 on one hand-over: it goes to rework with its ticket — of its parts, those the line is
/// filed under (`parts`), else all it covers — each review that approved it gets its miss,
/// and the maker is woken with the user's words, its Stop there lifted.
pub(crate) fn complain_about(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
    sub: &SubmissionRecord,
    parts: &[PartId],
) -> Result<(), StoreError> {
    let t = tx.ticket(sub.ticket_id)?;
    let mut named = Vec::new();
    for p in parts {
        let part = tx.part(*p)?;
        if part.ticket_id == sub.ticket_id {
            named.push(part);
        }
    }
    tx.record_review_misses(sub.id, Some(line.id), Some(line.session_id), &line.body)?;
    let which = if named.is_empty() {
        String::new()
    } else {
        let labels: Vec<String> = named.iter().map(|p| format!("\"{}\"", p.label)).collect();
        let s = if named.len() > 1 { "s" } else { "" };
        format!(" (the part{s} {})", labels.join(", "))
    };
    let text = format!(
        "The user found fault with your hand-over {} of #{:02} \"{}\"{which}, so it is back in \
         rework. Their words: \"{}\". Fix it yourself and hand it over again with submit.",
        sub.id,
        t.number,
        t.title,
        line.body.trim()
    );
    let only: Vec<PartId> = named.iter().map(|p| p.id).collect();
    send_back_parts(
        tx,
        sub,
        SendBack::UserFault,
        Some(("complaint", text)),
        &only,
    )?;
    super::writers::complained(tx, sub, line)?;
    // The user's word on the maker's work there lifts their Stop on it, even said to
    // another Bot; what the lift frees runs once this commits.
    if let Some(item) = sub.work_item_id {
        let thread = tx.work_item(item)?.thread_id;
        let (after, _) = crate::holds::lines::lift_by_person_act(tx, thread)?;
        for t in after.drive.iter().chain(&after.reopened) {
            tx.wake_after_commit(*t);
        }
    }
    Ok(())
}
