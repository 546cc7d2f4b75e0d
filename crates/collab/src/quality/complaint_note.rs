//! What the turn a complaint woke reads (digest 003-B §5.5 CP5): the line is a complaint, the
//! ticket went back to its maker in the user's words, and the fix stays with that maker — so a
//! lead does not hand it to someone else.

use troupe_core::SessionMessageId;
use troupe_core::thread::Thread;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{Store, StoreError, Tx, quality_cause};

pub struct ComplaintNote;

impl ContextContributor for ComplaintNote {
    fn name(&self) -> &str {
        "complaint"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        let Some(run) = thread.lease.holder else {
            return;
        };
        let note = store.read(|tx| {
            let Some(line) = tx.segment(run)?.and_then(|s| s.trigger_line_id) else {
                return Ok(None);
            };
            complaint_note(tx, line)
        });
        match note {
            Ok(Some(text)) => out.situation.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "the complaint note could not be read")
            }
        }
    }
}

/// The note for a turn woken by `line`, when the line sent work back.
pub fn complaint_note(tx: &Tx<'_>, line: SessionMessageId) -> Result<Option<String>, StoreError> {
    let sent = tx.quality_events_of_source("line", line.0)?;
    let mut parts = Vec::new();
    for e in sent.iter().filter(|e| e.cause == quality_cause::COMPLAINT) {
        let Some(ticket) = e
            .ticket_id
            .map(|t| tx.find_ticket(t))
            .transpose()?
            .flatten()
        else {
            continue;
        };
        let maker = match e.bot_id {
            Some(b) => tx.bot(b)?.name,
            None => "its maker".into(),
        };
        parts.push(format!(
            "#{:02} \"{}\" went back to {maker}",
            ticket.number, ticket.title
        ));
    }
    if parts.is_empty() {
        return Ok(None);
    }
    let words = tx.line(line)?.body;
    Ok(Some(format!(
        "The user's line is a complaint: {}, in their words: \"{}\". The fix stays with that \
         maker: do not hand it to anyone else.",
        parts.join("; "),
        words.trim()
    )))
}
