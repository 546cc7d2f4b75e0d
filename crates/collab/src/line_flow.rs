//! A line's own flow (AT-8): what the app made of one line — how it was read, where it was
//! filed (named as `troupe_core::line_flow` says), whom it woke, and what became of it in each
//! turn that read it (its disposition, END-3/END-6). Read-only; the person
//! corrects filing only in words (AT-9), so nothing here changes anything.

use crate::{Collab, CollabError};
use serde::Serialize;
use troupe_core::line_flow::{Filed, Ticket, filed_under};
use troupe_core::{BotId, PlanId, SessionId, SessionMessageId, TicketId};
use troupe_store::{FilingSource, LineDispositionRecord, LineReading, StoreError};

/// One line's flow.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct LineFlow {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub line_id: SessionMessageId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub session_id: SessionId,
    /// user, bot or system.
    pub author: String,
    /// A person's line: reading, queued, routed or withdrawn.
    pub routing: Option<String>,
    /// Where it was filed, by the names as they are now: "Filed under: Promo › Cut"; none for a
    /// line filed nowhere.
    pub filed_under: Option<String>,
    /// Whether filing was a step of its own (a reading, a desk's or work_on's choice): a line
    /// filed only by locked signals (a quoted line, a path, the work's own binding) goes
    /// straight into its job's flow.
    pub filing_step: bool,
    pub filings: Vec<FlowFiling>,
    /// What the line readers made of it (its meaning, its filing), with their raw answers.
    pub readings: Vec<LineReading>,
    /// The Bots it woke, and why.
    pub woke: Vec<FlowWake>,
    /// What became of it: each turn that read it and how that turn's ending left it
    /// (END-3, END-6), oldest first.
    pub dispositions: Vec<FlowDisposition>,
}

/// How one turn that read the line left it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct FlowDisposition {
    #[serde(flatten)]
    pub disposition: LineDispositionRecord,
    pub bot_name: String,
}

/// One job (and ticket) the line was filed under.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct FlowFiling {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub task_id: PlanId,
    pub task_name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub ticket_id: Option<TicketId>,
    pub ticket_number: Option<i64>,
    pub ticket_title: Option<String>,
    /// quoted_reply, path, binding, reader, work_on or desk.
    pub source: String,
    pub locked: bool,
    pub primary: bool,
}

/// A Bot the line woke.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct FlowWake {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub bot_id: BotId,
    pub bot_name: String,
    /// Why: direct (the person's direct with it), mention, everyone, lead, job_lead,
    /// judgement, ask_answer, pair_direct or only_member.
    pub how: String,
}

impl Collab {
    /// The flow of line `id`.
    pub fn line_flow(&self, id: SessionMessageId) -> Result<LineFlow, CollabError> {
        Ok(self.store().read(|tx| {
            let line = tx.line(id)?;
            let mut filings = Vec::new();
            for f in tx.filings_of_line(id)? {
                let task_name = tx.find_plan(f.plan_id)?.map(|p| p.name);
                let ticket = match f.ticket_id.map(TicketId) {
                    Some(t) => match tx.ticket(t) {
                        Ok(rec) => Some((t, Some((rec.number, rec.title)))),
                        Err(StoreError::NotFound { .. }) => Some((t, None)),
                        Err(e) => return Err(e),
                    },
                    None => None,
                };
                filings.push(FlowFiling {
                    task_id: f.plan_id,
                    task_name,
                    ticket_id: ticket.as_ref().map(|(t, _)| *t),
                    ticket_number: ticket.as_ref().and_then(|(_, n)| n.as_ref().map(|n| n.0)),
                    ticket_title: ticket.and_then(|(_, n)| n.map(|n| n.1)),
                    source: f.source.as_str().to_string(),
                    locked: f.locked,
                    primary: f.primary,
                });
            }
            let named: Vec<Filed<'_>> = filings
                .iter()
                .map(|f| Filed {
                    job_id: f.task_id.0,
                    job: f.task_name.as_deref(),
                    ticket: match (f.ticket_id, &f.ticket_title) {
                        (None, _) => Ticket::None,
                        (Some(_), Some(title)) => Ticket::Named(title),
                        (Some(_), None) => Ticket::Unknown,
                    },
                })
                .collect();
            let mut woke = Vec::new();
            for d in tx.line_deliveries(id)? {
                woke.push(FlowWake {
                    bot_id: d.bot_id,
                    bot_name: tx.bot(d.bot_id)?.name,
                    how: d.how,
                });
            }
            let mut dispositions = Vec::new();
            for d in tx.line_dispositions(id)? {
                dispositions.push(FlowDisposition {
                    bot_name: tx.bot(d.bot_id)?.name,
                    disposition: d,
                });
            }
            Ok(LineFlow {
                dispositions,
                line_id: id,
                session_id: line.session_id,
                author: line.author.as_str().to_string(),
                routing: line.routing.clone(),
                filed_under: filed_under(&named),
                filing_step: filings.iter().any(|f| !is_locked_signal(&f.source)),
                filings,
                readings: tx.line_readings(id)?,
                woke,
            })
        })?)
    }
}

/// AT-8: a quote, a path or the work's binding files a line with no step of its own.
fn is_locked_signal(source: &str) -> bool {
    [
        FilingSource::QuotedReply,
        FilingSource::Path,
        FilingSource::Binding,
    ]
    .iter()
    .any(|s| s.as_str() == source)
}
