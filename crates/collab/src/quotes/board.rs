//! The person's writing on the flow board, kept as quotes in the board edit's write (C §5
//! "What is kept"): the clauses of a goal or ticket description they changed (kept-only text
//! is not new words of theirs), and each Done when line and rule they added. No conversation;
//! filed under the job (and ticket). A status change is not writing.

use troupe_core::PlanId;
use troupe_core::quote::{QuoteSource, added_lines, changed_clauses};
use troupe_store::{NewQuote, QuoteFiling, StoreError, Tx};

fn keep(
    tx: &mut Tx<'_>,
    words: String,
    source: QuoteSource,
    filing: QuoteFiling,
) -> Result<(), StoreError> {
    tx.insert_quote(&NewQuote {
        body: words,
        message_id: None,
        session_id: None,
        source,
        first_quote_id: None,
        filings: vec![filing],
    })?;
    Ok(())
}

/// A changed prose field: its changed clauses, one quote.
fn prose(
    tx: &mut Tx<'_>,
    old: &str,
    new: Option<&str>,
    source: QuoteSource,
    filing: QuoteFiling,
) -> Result<(), StoreError> {
    if let Some(words) = new.and_then(|n| changed_clauses(old, n)) {
        keep(tx, words, source, filing)?;
    }
    Ok(())
}

/// A changed list field: one quote per added line.
fn lines(
    tx: &mut Tx<'_>,
    old: &str,
    new: Option<&str>,
    source: QuoteSource,
    filing: QuoteFiling,
) -> Result<(), StoreError> {
    for line in new.map(|n| added_lines(old, n)).unwrap_or_default() {
        keep(tx, line, source, filing)?;
    }
    Ok(())
}

/// The person's edit of a job's spec: `old` its spec before, the new values given.
pub(crate) fn spec_edit(
    tx: &mut Tx<'_>,
    plan: PlanId,
    old: &troupe_core::plan::PlanSpec,
    goal: Option<&str>,
    done_when: Option<&str>,
    rules: Option<&str>,
) -> Result<(), StoreError> {
    let filing = QuoteFiling {
        plan_id: plan,
        ticket_id: None,
    };
    prose(tx, &old.goal, goal, QuoteSource::BoardGoalClause, filing)?;
    lines(
        tx,
        &old.done_when,
        done_when,
        QuoteSource::BoardDoneWhenLine,
        filing,
    )?;
    lines(tx, &old.rules, rules, QuoteSource::BoardRule, filing)
}

/// The person's edit of a ticket on the board.
pub(crate) fn ticket_edit(
    tx: &mut Tx<'_>,
    old: &troupe_store::TicketRecord,
    description: Option<&str>,
    done_when: Option<&str>,
) -> Result<(), StoreError> {
    let filing = QuoteFiling {
        plan_id: old.plan_id,
        ticket_id: Some(old.id.0),
    };
    prose(
        tx,
        &old.description,
        description,
        QuoteSource::BoardTicketDescriptionClause,
        filing,
    )?;
    lines(
        tx,
        &old.done_when,
        done_when,
        QuoteSource::BoardDoneWhenLine,
        filing,
    )
}
