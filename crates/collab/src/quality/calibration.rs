//! The reviewer's calibration record (digest 003-B §5.6, §6 RM4): the approvals of its the
//! user overturned in the conversation it works in, newest 5, with the user's words and when
//! — so it judges harder, never as a score (RM5).

use troupe_core::thread::Thread;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{ReviewMissRecord, Store, StoreError};

/// How many misses the record lists.
pub const LISTED: u32 = 5;

pub struct Calibration;

impl ContextContributor for Calibration {
    fn name(&self) -> &str {
        "calibration"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match record(thread, store) {
            Ok(Some(text)) => out.situation.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "the calibration record could not be read")
            }
        }
    }
}

fn record(thread: &Thread, store: &Store) -> Result<Option<String>, StoreError> {
    let Some(run) = thread.lease.holder else {
        return Ok(None);
    };
    store.read(|tx| {
        let Some(seg) = tx.segment(run)? else {
            return Ok(None);
        };
        let misses = tx.review_misses_of(seg.bot_id, seg.session_id, LISTED)?;
        if misses.is_empty() {
            return Ok(None);
        }
        let mut lines = Vec::new();
        for m in &misses {
            let t = tx.find_ticket(m.ticket_id)?;
            lines.push(line(m, t.as_ref().map(|t| (t.number, t.title.as_str()))));
        }
        Ok(Some(format!(
            "Approvals of yours the user overturned here (newest first) — judge the next \
             hand-overs against what they found:\n{}",
            lines.join("\n")
        )))
    })
}

fn line(m: &ReviewMissRecord, ticket: Option<(i64, &str)>) -> String {
    let what = match ticket {
        Some((n, title)) => format!("#{n:02} \"{title}\", hand-over {}", m.submission_id),
        None => format!("hand-over {}", m.submission_id),
    };
    format!(
        "- {} {what}: the user said \"{}\"",
        troupe_core::time::iso_utc(m.at),
        m.words.trim()
    )
}
