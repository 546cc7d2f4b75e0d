//! Where a person's line filed under a job goes (SC-1, SC-5, SC-6): to the scribe's queue when
//! the conversation's engine has the scribe on, else straight to fallback capture (RL-6),
//! which keeps a complaint about delivered work whole, waiting for the user — never a gate.

use crate::{Collab, CollabError};
use troupe_core::PlanId;
use troupe_core::SessionMessageId;
use troupe_core::conversation::Author;
use troupe_core::reading::user::UserReading;
use troupe_core::requirement::{self, Polarity, Scope, SourceKind, State};
use troupe_store::{NewRequirement, RequirementRecord, StoreError, Tx};

/// What became of a filed line.
#[derive(Clone, Debug, PartialEq)]
pub enum Noted {
    /// Queued for the scribe (false: it was queued before, SC-2).
    Queued(bool),
    /// Read by fallback capture: the entry it kept, if any.
    Captured(Option<Box<RequirementRecord>>),
    /// Not the user's words to note: a Bot's line, a status question, only a stop or go-on.
    Skipped,
}

/// The line's stored reading, and whether a model made it.
fn reading(tx: &Tx<'_>, line: SessionMessageId) -> Result<Option<(UserReading, bool)>, StoreError> {
    let Some(r) = tx
        .line_readings(line)?
        .into_iter()
        .find(|r| r.kind == "user")
    else {
        return Ok(None);
    };
    Ok(serde_json::from_value::<UserReading>(r.reading)
        .ok()
        .map(|u| (u, r.failure.is_none())))
}

/// RL-6: when the scribe noted nothing. The line must be said after the job delivered
/// something and object to it — by the reading's objecting clauses, or, with no model
/// reading, by the fault words. Kept whole (cut at 300 code points) under the line's ticket,
/// else the job, to confirm.
pub fn fallback_capture(
    tx: &mut Tx<'_>,
    plan: PlanId,
    line: SessionMessageId,
) -> Result<Option<RequirementRecord>, StoreError> {
    let l = tx.line(line)?;
    if l.author != Author::User || l.body.trim().is_empty() {
        return Ok(None);
    }
    let kept_before = tx
        .requirements_on_line(line)?
        .iter()
        .any(|r| r.source_kind == SourceKind::ComplaintWhole && r.plan_id == plan);
    if kept_before || !tx.plan_delivered_by(plan, l.created_at)? {
        return Ok(None);
    }
    let complaint = match reading(tx, line)? {
        Some((r, true)) => !r.objections.is_empty(),
        _ => requirement::has_fault_word(&l.body),
    };
    if !complaint {
        return Ok(None);
    }
    let ticket = tx.line_ticket_in_plan(line, plan)?;
    let entry = tx.add_requirement(&NewRequirement {
        plan_id: plan,
        ticket_id: ticket,
        session_id: Some(l.session_id),
        scope: if ticket.is_some() {
            Scope::Ticket
        } else {
            Scope::Job
        },
        quote: requirement::cut_quote(&l.body),
        source_kind: SourceKind::ComplaintWhole,
        source_message_id: Some(line),
        source_quote_id: None,
        restatement: String::new(),
        category: None,
        nature: None,
        polarity: Polarity::Must,
        number: None,
        state: State::ToConfirm,
        replaces_id: None,
        said_at: l.created_at,
    })?;
    Ok(Some(entry))
}

impl Collab {
    /// A person's line was filed under a job: queue it for the scribe, or read it by fallback
    /// capture when the scribe is off for the conversation's engine. Refiling a line queues
    /// nothing new.
    pub fn ledger_line_filed(
        &self,
        plan: PlanId,
        line: SessionMessageId,
    ) -> Result<Noted, CollabError> {
        Ok(self.store().write(|tx| {
            let l = tx.line(line)?;
            if l.author != Author::User || l.body.trim().is_empty() {
                return Ok(Noted::Skipped);
            }
            // SC-5: status questions and lines that are only a stop or go-on are not wishes.
            if let Some((r, _)) = reading(tx, line)?
                && (r.status_question || r.only_control)
            {
                return Ok(Noted::Skipped);
            }
            // A reply to a Bot's question is the user's answer (read with the question).
            let kind = if l.parent_id.is_some_and(|p| is_ask(tx, p)) {
                "answer"
            } else {
                "line"
            };
            if tx.engine_step_on(l.session_id, "scribe")? {
                return Ok(Noted::Queued(tx.enqueue_scribe(plan, line, kind, 0)?));
            }
            Ok(Noted::Captured(
                fallback_capture(tx, plan, line)?.map(Box::new),
            ))
        })?)
    }

    /// Listen for lines filed under jobs (`plan_changed {change: filed}`) and board edits
    /// (`{change: edited}` of Rules or Done when) and note each; the scribe is woken for what
    /// it queued. Lines left unread by the last run are dropped first (SC-2).
    pub fn listen_for_ledger_lines(&self) -> tokio::task::JoinHandle<()> {
        let mut rx = self.store().subscribe();
        if let Err(e) = self.drop_unread_scribe_lines() {
            tracing::warn!(error = %e, "the scribe's unread lines could not be dropped");
        }
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                let ev = match rx.recv().await {
                    Ok(ev) => ev,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "the ledger missed filing events");
                        continue;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                if ev.kind == "session_message_edited" {
                    let Some(line) = ev.payload["message"]["id"].as_i64() else {
                        continue;
                    };
                    match me.ledger_line_edited(SessionMessageId(line)) {
                        Ok(_) => me.wake_scribe(),
                        Err(e) => {
                            tracing::warn!(line, error = %e, "an edited line could not be noted")
                        }
                    }
                    continue;
                }
                if ev.kind != "plan_changed" {
                    continue;
                }
                if ev.payload["change"] == "edited" {
                    let fields = ev.payload["fields"].as_array().cloned().unwrap_or_default();
                    let board = fields.iter().any(|f| f == "rules" || f == "done_when");
                    if let (true, Some(plan), Some(version)) = (
                        board,
                        ev.payload["plan_id"].as_i64(),
                        ev.payload["version"].as_i64(),
                    ) && let Err(e) = me.ledger_board_edited(PlanId(plan), version)
                    {
                        tracing::warn!(plan, error = %e, "a board edit could not be noted");
                    }
                    continue;
                }
                if ev.payload["change"] != "filed" {
                    continue;
                }
                let (Some(plan), Some(line)) = (
                    ev.payload["plan_id"].as_i64(),
                    ev.payload["message_id"].as_i64(),
                ) else {
                    continue;
                };
                match me.ledger_line_filed(PlanId(plan), SessionMessageId(line)) {
                    Ok(Noted::Queued(true)) => me.wake_scribe(),
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(plan, line, error = %e, "a filed line could not be noted")
                    }
                }
            }
        })
    }
}

/// Whether a line is a Bot's question (its answer is the user's answer).
fn is_ask(tx: &Tx<'_>, line: SessionMessageId) -> bool {
    tx.line(line).is_ok_and(|l| l.ask.is_some())
}
