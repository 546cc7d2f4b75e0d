//! "What the user said in this job" (UQ-4…UQ-6, UQ-15): every segment working in a job reads
//! the person's own words filed under it, from the quotes (never the transcript), except the
//! job's first segment, whose trigger is the request itself. Under a hold it reads them as
//! they stood when the stop was made: quotes kept later appear after the lift.

use troupe_core::PlanId;
use troupe_core::quote::{QuoteSource, SaidWhere, ShownQuote, situation_section};
use troupe_core::thread::Thread;
use troupe_core::work_item::WorkMode;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{Store, StoreError, Tx, UserQuote};

/// The times are shown in UTC: the daemon knows no time zone of the person's.
const OFFSET_MINUTES: i32 = 0;

pub struct QuoteSituation;

fn said_where(tx: &Tx<'_>, q: &UserQuote) -> Result<SaidWhere, StoreError> {
    if q.source.is_board() {
        return Ok(SaidWhere::Board);
    }
    if matches!(
        q.source,
        QuoteSource::Annotation | QuoteSource::AnnotationBatchLine
    ) {
        return Ok(SaidWhere::Annotation);
    }
    let Some(session) = q.session_id else {
        return Ok(SaidWhere::Gone);
    };
    let session = tx.session(session)?;
    if q.source == QuoteSource::Answer {
        // The ask line names the Bot that asked; after a clear only the conversation is left.
        let asker = match q.message_id {
            Some(m) => tx.line(m)?.bot_id,
            None => None,
        };
        if let Some(b) = asker.or_else(|| session.bot_ids.first().copied()) {
            return Ok(SaidWhere::Answer {
                bot: tx.bot(b)?.name,
            });
        }
    }
    Ok(match session.kind {
        troupe_core::conversation::SessionKind::Direct => match session.bot_ids.first() {
            Some(b) => SaidWhere::Direct {
                bot: tx.bot(*b)?.name,
            },
            None => SaidWhere::Group {
                title: session.title,
            },
        },
        _ => SaidWhere::Group {
            title: session.title,
        },
    })
}

/// The section for a segment working in `plan`, with quotes kept up to `until` (a hold's
/// making) when given.
pub fn quote_section(
    tx: &Tx<'_>,
    plan: PlanId,
    first_segment: bool,
    until: Option<i64>,
) -> Result<Option<String>, StoreError> {
    let mut shown = Vec::new();
    for q in tx.quotes_of_plan(plan)? {
        if q.erased || until.is_some_and(|t| q.created_at > t) {
            continue;
        }
        shown.push(ShownQuote {
            at: q.created_at,
            said: said_where(tx, &q)?,
            edit: q.first_quote_id.is_some(),
            body: q.body,
        });
    }
    Ok(situation_section(&shown, first_segment, OFFSET_MINUTES))
}

fn situation(thread: &Thread, store: &Store) -> Result<Option<String>, StoreError> {
    if !crate::tools::in_conversation(thread) {
        return Ok(None);
    }
    let Some(run) = thread.lease.holder else {
        return Ok(None);
    };
    store.read(|tx| {
        let Some(seg) = tx.segment_work(run)? else {
            return Ok(None);
        };
        if seg.mode != WorkMode::Work {
            return Ok(None);
        }
        let Some(plan) = tx.work_item(seg.work_item_id)?.plan_id else {
            return Ok(None);
        };
        // Under a hold: as they stood when the first hold still in force was made.
        let mut until = None;
        for h in crate::holds::holds_over(tx, thread.id)? {
            let at = tx.hold(h)?.created_at;
            until = Some(until.map_or(at, |u: i64| u.min(at)));
        }
        quote_section(tx, plan, tx.first_segment_of_plan(plan, run)?, until)
    })
}

impl ContextContributor for QuoteSituation {
    fn name(&self) -> &str {
        "user_quotes"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match situation(thread, store) {
            Ok(Some(text)) => out.situation.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "the person's words in the job could not be read")
            }
        }
    }
}
