//! The user's word on hand-overs waiting for it (digest 003-B §4.9, §5.4 UW1–UW6, C LR-8).
//! There is no card: the reader of a person's line is shown the hand-overs waiting where the
//! person speaks, numbered, and names those the line lets through and those its objections
//! are about. Those objected to go back at once, as a complaint does (even if also let
//! through); the rest let through rerun their gates and are approved `by: user` with the line.
//! Nothing is posted under the line. Only a model's reading acts (UW5).

use super::{Hooks, SubmissionPass};
use crate::Collab;
use serde_json::Value;
use std::sync::Arc;
use troupe_core::conversation::{Author, SessionKind, SessionMessage};
use troupe_core::reading::user::{ShownHandOver, SpokenIn, UserReading};
use troupe_core::submission::SubmissionState;
use troupe_core::{SessionMessageId, SubmissionId};
use troupe_store::{StoreError, SubmissionRecord, Tx};

/// UW1: at most the latest six are shown.
pub const SHOWN_AT_MOST: u32 = 6;

/// What the reader of `line` is shown: where the person speaks, and the hand-overs waiting on
/// their word there, oldest first, numbered from 1.
pub(crate) fn shown_for(
    tx: &Tx<'_>,
    line: &SessionMessage,
) -> Result<(SpokenIn, Vec<(SubmissionId, ShownHandOver)>), StoreError> {
    let session = tx.session(line.session_id)?;
    let (spoken_in, maker) = match session.kind {
        SessionKind::Direct => match session.bot_ids.first() {
            Some(b) => (SpokenIn::Direct(tx.bot(*b)?.name), Some(*b)),
            None => return Ok((SpokenIn::Group, Vec::new())),
        },
        SessionKind::Group => (SpokenIn::Group, None),
        // The person does not speak in a Bot↔Bot direct.
        SessionKind::BotDirect => return Ok((SpokenIn::Group, Vec::new())),
    };
    let mut waiting = tx.awaiting_word_in(line.session_id, maker, SHOWN_AT_MOST)?;
    waiting.reverse();
    let mut out = Vec::with_capacity(waiting.len());
    for s in waiting {
        if remade_on_new_words(tx, &s)? {
            continue;
        }
        let ticket = tx.ticket(s.ticket_id)?;
        let maker = match s.producer_bot_id {
            Some(b) => tx.bot(b)?.name,
            None => "the app".to_string(),
        };
        let number = out.len() as u32 + 1;
        out.push((
            s.id,
            ShownHandOver {
                number,
                maker,
                ticket: format!("#{:02} {}", ticket.number, ticket.title),
                what: what_of(&s),
            },
        ));
    }
    Ok((spoken_in, out))
}

/// WU4: while its maker works on the job again from the user's newer words, this version is
/// not judged by words (what it hands over next supersedes it).
fn remade_on_new_words(tx: &Tx<'_>, s: &SubmissionRecord) -> Result<bool, StoreError> {
    let Some(item) = s.work_item_id else {
        return Ok(false);
    };
    let Some(run) = tx.live_segment_of(item)? else {
        return Ok(false);
    };
    if s.run_id.is_some_and(|r| r >= run) {
        return Ok(false);
    }
    let Some(trigger) = tx.segment(run)?.and_then(|g| g.trigger_line_id) else {
        return Ok(false);
    };
    Ok(tx.line(trigger)?.author == Author::User)
}

/// Its files (the first five, then how many more), or the start of its words.
fn what_of(s: &SubmissionRecord) -> String {
    if let Some(words) = &s.content {
        let cut: String = words.chars().take(160).collect();
        return if cut.len() < words.len() {
            format!("words: \"{cut}…\"")
        } else {
            format!("words: \"{cut}\"")
        };
    }
    let mut names: Vec<&str> = s.files.iter().take(5).map(|f| f.path.as_str()).collect();
    let more = s.files.len().saturating_sub(names.len());
    let more = (more > 0).then(|| format!("and {more} more"));
    names.extend(more.as_deref());
    if names.is_empty() {
        "no files".into()
    } else {
        names.join(", ")
    }
}

/// The stored user reading of `line` made by a model, with the hand-overs it was shown.
fn model_reading(
    tx: &Tx<'_>,
    line: SessionMessageId,
) -> Result<Option<(UserReading, Vec<SubmissionId>)>, StoreError> {
    let Some(r) = tx
        .line_readings(line)?
        .into_iter()
        .find(|r| r.kind == "user" && r.failure.is_none())
    else {
        return Ok(None);
    };
    let Ok(reading) = serde_json::from_value::<UserReading>(r.reading.clone()) else {
        return Ok(None);
    };
    let shown = r.reading["shown"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_i64)
                .map(SubmissionId)
                .collect()
        })
        .unwrap_or_default();
    Ok(Some((reading, shown)))
}

fn by_number(shown: &[SubmissionId], numbers: &[u32]) -> Vec<SubmissionId> {
    numbers
        .iter()
        .filter_map(|n| shown.get((*n as usize).checked_sub(1)?).copied())
        .collect()
}

/// UW3, LR-8, in the routing write: each shown hand-over the line objects to and that still
/// waits on the word goes back as a complaint sends it. Answers those sent back.
pub(crate) fn objected_on_routed(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
) -> Result<Vec<SubmissionId>, StoreError> {
    if line.author != Author::User {
        return Ok(Vec::new());
    }
    let Some((reading, shown)) = model_reading(tx, line.id)? else {
        return Ok(Vec::new());
    };
    let mut sent = Vec::new();
    for id in by_number(&shown, &reading.objected_to) {
        let s = tx.submission(id)?;
        if s.state != SubmissionState::AwaitingUser {
            continue;
        }
        crate::quality::complain_about(tx, line, &s, &[])?;
        sent.push(id);
    }
    Ok(sent)
}

impl Collab {
    /// UW2, WU2: after a person's line is routed, the shown hand-overs it lets through (and
    /// does not object to) rerun their gates and are approved by the user's word with the line;
    /// a failing gate sends one back instead. A failure is logged: the line has landed.
    pub(crate) async fn let_through_by_line(&self, line: SessionMessageId) {
        let passes = match self.store().read(|tx| {
            Ok(model_reading(tx, line)?
                .map(|(r, shown)| by_number(&shown, &r.passes()))
                .unwrap_or_default())
        }) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(%line, error = %e, "reading what the line let through failed");
                return;
            }
        };
        if passes.is_empty() {
            return;
        }
        let pass = SubmissionPass::new(Hooks {
            checks: Arc::new(self.checks()),
            ..Hooks::default()
        });
        for sub in passes {
            match pass.let_through(self.store(), sub, line).await {
                Ok(moved) => tracing::info!(%line, %sub, ?moved, "the user's word on a hand-over"),
                Err(e) => {
                    tracing::warn!(%line, %sub, error = %e, "letting a hand-over through failed")
                }
            }
        }
    }
}
