//! Recording a hand-over (§4.3 steps 1–2, §4.4, §4.5): refused when nothing may be handed
//! over yet (`not_laid_out`, `waits_for_dependency`, `ceiling_reached`) or nothing changed
//! (`unchanged`); recorded at `checking`, with the files its segment had not cited yet posted
//! on a line of the producer's, filed under the job and its ticket.

use super::Hooks;
use std::fmt;
use troupe_core::conversation::Author;
use troupe_core::large_job::{LAY_IT_OUT_FIRST, NOT_LAID_OUT, generation_allowed};
use troupe_core::submission::SubmissionOrigin;
use troupe_core::ticket::{TicketNode, TicketStage, waits_for};
use troupe_core::{BotId, PartId, RunId, SessionId, TicketId, WorkItemId};
use troupe_store::{
    FilingSource, NewFiling, NewLine, NewSubmission, StoreError, SubmissionRecord, SubmittedFile,
    TicketRecord, Tx,
};

/// A hand-over to record.
#[derive(Clone, Debug)]
pub struct HandOver {
    pub ticket: TicketId,
    pub origin: SubmissionOrigin,
    pub producer: BotId,
    pub run: Option<RunId>,
    pub work_item: Option<WorkItemId>,
    pub files: Vec<SubmittedFile>,
    pub content: Option<String>,
    pub parts: Vec<PartId>,
    pub note: String,
    pub claims: Vec<String>,
    /// Where files its segment had not cited yet are posted, on a line of the producer's.
    pub post_in: Option<SessionId>,
}

/// Why a hand-over was not recorded, as the Bot reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub text: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.text)
    }
}

fn refuse(
    code: &'static str,
    text: impl Into<String>,
) -> Result<Result<SubmissionRecord, Refusal>, StoreError> {
    Ok(Err(Refusal {
        code,
        text: text.into(),
    }))
}

/// The job's tickets as the dependency rules see them.
pub fn graph(tickets: &[TicketRecord]) -> Vec<TicketNode> {
    tickets
        .iter()
        .map(|t| TicketNode {
            id: t.id,
            plan_id: t.plan_id,
            number: u32::try_from(t.number).unwrap_or(u32::MAX),
            stage: t.stage,
            handed_over_once: t.handed_over_once,
            depends_on: t.depends_on.clone(),
        })
        .collect()
}

/// What holds any hand-over on `ticket` back: a large job not laid out (LJ4, IS6), a
/// dependency or the sample not yet through (T17), a dropped ticket.
pub fn held_back(tx: &Tx<'_>, ticket: &TicketRecord) -> Result<Option<Refusal>, StoreError> {
    if ticket.stage == TicketStage::Dropped {
        return Ok(Some(Refusal {
            code: "ticket_dropped",
            text: format!(
                "ticket #{:02} is dropped; nothing is handed over on it",
                ticket.number
            ),
        }));
    }
    let d = tx.plan_deliverables(ticket.plan_id)?;
    if !generation_allowed(d.large_state, d.laid_out) {
        return Ok(Some(Refusal {
            code: NOT_LAID_OUT,
            text: LAY_IT_OUT_FIRST.into(),
        }));
    }
    let all = tx.tickets_of_plan(ticket.plan_id)?;
    let waits = waits_for(&graph(&all), d.sample_ticket_id, ticket.id);
    if !waits.is_empty() {
        let said: Vec<String> = waits.iter().map(|w| w.text()).collect();
        return Ok(Some(Refusal {
            code: "waits_for_dependency",
            text: format!(
                "ticket #{:02} cannot be handed over yet: {}",
                ticket.number,
                said.join("; ")
            ),
        }));
    }
    Ok(None)
}

/// Record the hand-over at `checking`, or say why not.
pub fn record(
    tx: &mut Tx<'_>,
    hooks: &Hooks,
    h: &HandOver,
) -> Result<Result<SubmissionRecord, Refusal>, StoreError> {
    let ticket = tx.ticket(h.ticket)?;
    if let Some(r) = held_back(tx, &ticket)? {
        return Ok(Err(r));
    }
    let stuck = hooks.ceiling.stuck(tx, &ticket, &h.parts)?;
    if !stuck.is_empty() {
        return refuse(
            "ceiling_reached",
            format!(
                "these parts are stuck and wait for the user: {}; hand over other parts",
                stuck.join(", ")
            ),
        );
    }
    if let Some(r) = unchanged(tx, h)? {
        return Ok(Err(r));
    }
    let sub = tx.create_submission(&NewSubmission {
        ticket_id: h.ticket,
        origin: h.origin,
        producer_bot_id: Some(h.producer),
        run_id: h.run,
        work_item_id: h.work_item,
        content: h.content.clone(),
        note: h.note.clone(),
        claims: h.claims.clone(),
        files: h.files.clone(),
        parts: h.parts.clone(),
    })?;
    if let (Some(session), Some(run)) = (h.post_in, h.run) {
        post_uncited(tx, &sub, &ticket, session, run)?;
    }
    Ok(Ok(sub))
}

/// `unchanged` (§4.3, IS4, W4): the same paths and hashes (or the same words) as the
/// ticket's last approved or still-open hand-over.
fn unchanged(tx: &Tx<'_>, h: &HandOver) -> Result<Option<Refusal>, StoreError> {
    if let Some(words) = &h.content {
        let same = tx.submissions_of_ticket(h.ticket)?.into_iter().find(|s| {
            s.origin == SubmissionOrigin::Answer
                && (s.state == troupe_core::submission::SubmissionState::Approved
                    || troupe_core::submission::is_undecided(s.state))
        });
        if let Some(s) = same
            && s.content.as_deref().map(str::trim) == Some(words.trim())
        {
            return Ok(Some(Refusal {
                code: "unchanged",
                text: format!("these words were handed over already ({})", s.id),
            }));
        }
        return Ok(None);
    }
    let Some((id, last)) = tx.last_handover_files(h.ticket)? else {
        return Ok(None);
    };
    let mut now: Vec<(String, String)> = h
        .files
        .iter()
        .map(|f| (f.path.clone(), f.sha256.clone()))
        .collect();
    now.sort();
    if !last.is_empty() && now == last {
        return Ok(Some(Refusal {
            code: "unchanged",
            text: format!(
                "the same files with the same contents were handed over already ({id}); change \
                 them first, or wait for the answer on that hand-over"
            ),
        }));
    }
    Ok(None)
}

/// §4.3 step 2: files the segment had not cited yet go on a line of the producer's, so checks
/// from the user's words can find the master (CW-12).
fn post_uncited(
    tx: &mut Tx<'_>,
    sub: &SubmissionRecord,
    ticket: &TicketRecord,
    session: SessionId,
    run: RunId,
) -> Result<(), StoreError> {
    let cited = tx.files_cited_in_turn(run)?;
    let new: Vec<&SubmittedFile> = sub
        .files
        .iter()
        .filter(|f| {
            !cited
                .iter()
                .any(|c| c.path == f.path && c.sha256.as_deref() == Some(f.sha256.as_str()))
        })
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = new.iter().map(|f| f.path.as_str()).collect();
    let producer = sub.producer_bot_id;
    let line = tx.insert_line(&NewLine {
        bot_id: producer,
        turn_id: Some(run),
        ..NewLine::plain(
            session,
            Author::Bot,
            format!(
                "Handed over for #{:02} {}: {}",
                ticket.number,
                ticket.title,
                names.join(", ")
            ),
        )
    })?;
    tx.file_line(&NewFiling {
        message_id: line.id,
        plan_id: sub.plan_id,
        ticket_id: Some(sub.ticket_id.0),
        part_id: None,
        source: FilingSource::Path,
        filed_by: "submit".into(),
        locked: true,
        primary: true,
    })?;
    let files: Vec<(String, Option<String>)> = new
        .iter()
        .map(|f| (f.path.clone(), Some(f.sha256.clone())))
        .collect();
    tx.record_line_files(line.id, &files)?;
    Ok(())
}
