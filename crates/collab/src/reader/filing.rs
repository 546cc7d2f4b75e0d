//! Reading where a person's line belongs (C §3, §8) in a group, when no locked reference
//! (a quoted line's jobs) filed it: the reader is shown the conversation's jobs that are not
//! dormant and those of the lines before it, and says which the line is about. No word lists:
//! without a usable answer the line is unread and goes to the Bot's desk unplaced (LR-10).

use crate::{Collab, CollabError};
use troupe_core::conversation::SessionKind;
use troupe_core::mention::parse_mentions;
use troupe_core::reading::filing::{
    Candidate, FILING_LINES_BEFORE, Filing, ShownPart, filing_prompt, parse_filing_with_parts,
};
use troupe_core::ticket::TicketStage;
use troupe_core::{PlanId, SessionMessageId};
use troupe_store::{FilingReadingRecord, StoreError, Tx};

/// How far back a called Bot's segments bring their jobs in (C §3).
const BOT_WORK_WINDOW_MS: i64 = 24 * 60 * 60 * 1000;

/// The jobs a line may be filed under (C §3's candidate set): the conversation's jobs that are
/// not dormant; the jobs of the called Bots' open work and of their segments in the last 24 h
/// (the Bots the line names, else the conversation's Bots) — so a Bot working on a job from
/// another conversation can be told about it here (S-WI-1); and the jobs of the lines before
/// it.
pub(crate) fn line_candidates(
    tx: &Tx<'_>,
    line: SessionMessageId,
) -> Result<Vec<PlanId>, StoreError> {
    let l = tx.line(line)?;
    let mut out: Vec<PlanId> = tx
        .plans_of_session(l.session_id, false)?
        .into_iter()
        .map(|p| p.id)
        .collect();
    let session = tx.session(l.session_id)?;
    let roster = crate::routing::roster(tx, &session)?;
    let named: Vec<_> = parse_mentions(&l.body, &roster)
        .named
        .into_iter()
        .filter(|b| session.bot_ids.contains(b))
        .collect();
    let called = if named.is_empty() {
        session.bot_ids.clone()
    } else {
        named
    };
    let since = tx.now() - BOT_WORK_WINDOW_MS;
    for (_, p) in tx.jobs_of_bots_work(&called, since)? {
        if !out.contains(&p) && tx.find_plan(p)?.is_some_and(|plan| !plan.is_dormant()) {
            out.push(p);
        }
    }
    for before in tx.lines_before(l.session_id, line, FILING_LINES_BEFORE as u32)? {
        for f in tx.filings_of_line(before.id)? {
            if !out.contains(&f.plan_id) {
                out.push(f.plan_id);
            }
        }
    }
    Ok(out)
}

/// How long ago, said briefly.
fn ago(now: i64, at: i64) -> String {
    let mins = ((now - at).max(0) / 60_000) as u64;
    match mins {
        0 => "just now".into(),
        m if m < 120 => format!("{m} min ago"),
        m => format!("{} h ago", m / 60),
    }
}

/// A filing reading made but not yet stored (see `UnsavedUserReading`).
#[derive(Clone, Debug)]
pub(crate) struct UnsavedFiling {
    line: SessionMessageId,
    record: FilingReadingRecord,
    raw: Option<String>,
}

impl UnsavedFiling {
    /// Store it; a reading stored first (two readers racing) is kept.
    pub fn save(&self, tx: &mut Tx<'_>) -> Result<(), StoreError> {
        tx.save_filing_reading(self.line, &self.record, self.raw.as_deref())
            .map(drop)
    }
}

impl Collab {
    /// The line's filing reading, the stored one or a new one, and what to store (`None` when
    /// it was stored already). No reading when it needs none: the line is in neither a group
    /// nor the person's direct, a quoted line's jobs already filed it (locked), or — in a
    /// direct, where the Bot's desk does the work itself — no job is there to file it under.
    pub(crate) async fn read_filing_unsaved(
        &self,
        id: SessionMessageId,
    ) -> Result<(Option<FilingReadingRecord>, Option<UnsavedFiling>), CollabError> {
        let prepared = self.store().read(|tx| {
            if let Some(stored) = tx.filing_reading(id)? {
                return Ok(Err(stored));
            }
            let line = tx.line(id)?;
            let session = tx.session(line.session_id)?;
            if !matches!(session.kind, SessionKind::Group | SessionKind::Direct) {
                return Ok(Ok(None));
            }
            if let Some(p) = line.parent_id
                && !tx.filings_of_line(p)?.is_empty()
            {
                return Ok(Ok(None));
            }
            let ids = line_candidates(tx, id)?;
            if ids.is_empty() && session.kind == SessionKind::Direct {
                return Ok(Ok(None));
            }
            let now = tx.now();
            let mut shown = Vec::new();
            let mut shown_parts = Vec::new();
            for p in &ids {
                let plan = tx.plan(*p)?;
                let mut parts = Vec::new();
                // AT-5: the parts laid out or added on the board, of tickets still open.
                for t in tx.tickets_of_plan(*p)? {
                    if matches!(t.stage, TicketStage::Dropped) {
                        continue;
                    }
                    for part in tx.parts_of_ticket(t.id)? {
                        parts.push(ShownPart {
                            ticket_number: u32::try_from(t.number).unwrap_or(u32::MAX),
                            ticket_title: t.title.clone(),
                            ticket_id: t.id.0,
                            label: part.label.clone(),
                            part_id: part.id.0,
                        });
                    }
                }
                shown_parts.extend(parts.iter().map(|s| (plan.id, s.clone())));
                shown.push(Candidate {
                    id: plan.id,
                    name: plan.name,
                    goal: plan.spec.goal,
                    last_move: ago(now, plan.updated_at),
                    parts,
                });
            }
            let mut before = Vec::new();
            for l in tx.lines_before(line.session_id, id, FILING_LINES_BEFORE as u32)? {
                before.push((crate::routing::speaker(tx, &l)?, l.body));
            }
            let where_said = match session.kind {
                SessionKind::Direct => format!("the person's direct with \"{}\"", session.title),
                _ => format!("group \"{}\"", session.title),
            };
            Ok(Ok(Some((
                filing_prompt(&line.body, &where_said, &before, &shown),
                ids,
                shown_parts,
            ))))
        })?;
        let (prompt, ids, shown_parts) = match prepared {
            Err(stored) => return Ok((Some(stored), None)),
            Ok(None) => return Ok((None, None)),
            Ok(Some(p)) => p,
        };
        let answer = self.reader().ask(self.roles(), prompt).await;
        let parsed: Result<Filing, String> = match (&answer.raw, &answer.failure) {
            (Some(raw), None) => parse_filing_with_parts(raw, &ids, &shown_parts)
                .map_err(|e| format!("unreadable answer: {e}")),
            (_, Some(f)) => Err(f.clone()),
            (None, None) => Err("no answer".into()),
        };
        if let Err(why) = &parsed {
            tracing::info!(line = %id, reason = %why, "no filing reading: the line goes to the desk");
        }
        let record = FilingReadingRecord {
            candidates: ids,
            filing: parsed.as_ref().ok().cloned(),
            model: answer.model.clone(),
            failure: parsed.err(),
        };
        let unsaved = UnsavedFiling {
            line: id,
            record: record.clone(),
            raw: answer.raw,
        };
        Ok((Some(record), Some(unsaved)))
    }
}
