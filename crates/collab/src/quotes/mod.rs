//! User quotes (C §5) in the conversation layer: editing a sent line and the situation
//! section of the person's words in a job. The quotes themselves are written by the store in
//! the transaction that writes their words (`troupe_store::quotes`).

pub(crate) mod board;
mod edit;
mod situation;

pub use edit::EditRequest;
pub use situation::{QuoteSituation, quote_section};

use troupe_core::SessionMessageId;
use troupe_core::conversation::SessionMessage;
use troupe_core::quote::QuoteSource;
use troupe_store::{NewQuote, QuoteFiling, StoreError, Tx};

/// The job (and ticket) of the segment that asked: an answer is filed there.
fn asking_job(tx: &Tx<'_>, ask: &SessionMessage) -> Result<Vec<QuoteFiling>, StoreError> {
    let Some(run) = ask.turn_id else {
        return Ok(Vec::new());
    };
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(Vec::new());
    };
    let item = tx.work_item(seg.work_item_id)?;
    Ok(item
        .plan_id
        .map(|plan_id| QuoteFiling {
            plan_id,
            ticket_id: item.ticket_id,
        })
        .into_iter()
        .collect())
}

/// An answer to a Bot's question (options picked and own words), kept in the answer's write.
pub(crate) fn keep_answer(
    tx: &mut Tx<'_>,
    ask: SessionMessageId,
    words: &str,
) -> Result<(), StoreError> {
    let line = tx.line(ask)?;
    let filings = asking_job(tx, &line)?;
    tx.insert_quote(&NewQuote {
        body: words.to_string(),
        message_id: Some(ask),
        session_id: Some(line.session_id),
        source: QuoteSource::Answer,
        first_quote_id: None,
        filings,
    })?;
    Ok(())
}

/// A plain line taken as the answer (ASK-4): its quote is an answer's, filed where the
/// question was asked too.
pub(crate) fn typed_answer(
    tx: &mut Tx<'_>,
    line: SessionMessageId,
    ask: SessionMessageId,
) -> Result<(), StoreError> {
    tx.mark_line_quote_answer(line)?;
    let filings = asking_job(tx, &tx.line(ask)?)?;
    for q in tx.quotes_of_line(line)? {
        for f in &filings {
            tx.file_quote(q.id, *f)?;
        }
    }
    Ok(())
}
