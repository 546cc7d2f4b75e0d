//! The scribe (digest 003-C §7): a background, tool-free call on the `scribe` role (falling
//! back to `default`) that reads one queued user line against the job's ledger and proposes a
//! patch; core's `scribe_patch` checks each item, the rest lands. It never speaks and never
//! holds a segment up (SC-3): lines wait in a durable queue and are read one at a time, in
//! order, each once (SC-2). When nothing lands, fallback capture reads the line (RL-6). Every
//! raw answer is in the work log as `scribe_answer {raw, landed, dropped}`.

mod call;
mod prompt;

use crate::ledger::capture::fallback_capture;
use crate::{Collab, CollabError};
use serde_json::json;
use std::time::Duration;
use troupe_core::conversation::Author;
use troupe_core::requirement::{SourceKind, State};
use troupe_core::scribe_patch::{self, Checked, Context, Landed, NewEntry, Shown};
use troupe_core::{PlanId, SessionMessageId, TicketId};
use troupe_store::{NewRequirement, ScribeItem, StoreError, Tx, WorkRef};

/// SC: ≤800 output tokens, 60 s.
pub const MAX_TOKENS: u32 = 800;
pub const TIMEOUT: Duration = Duration::from_secs(60);
/// Entries in force shown to it, at most.
pub const MAX_SHOWN: usize = 60;

/// One line at a time, in order, across every job of the process.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What one queued line came to.
#[derive(Clone, Debug, PartialEq)]
pub struct ScribeOutcome {
    pub item: i64,
    /// Items that landed, and those dropped with their reasons.
    pub checked: Checked,
    /// Why nothing was read (no model, failed call, not a patch), if so.
    pub failure: Option<String>,
    /// Fallback capture kept the line whole (nothing landed).
    pub captured: bool,
}

/// What the prompt and the checks read.
pub(crate) struct Inputs {
    pub line: String,
    pub question: Option<String>,
    /// An edited line's words before the edit.
    pub before: Option<String>,
    /// On an edit: the job's live entries standing on this line alone and not yet marked as
    /// taken out — what the scribe may name as taken back (UQ-12).
    pub standing: Vec<Shown>,
    pub goal: String,
    pub tickets: Vec<(i64, u32, String)>,
    pub filed_ticket: Option<i64>,
    pub shown: Vec<Shown>,
    pub session: troupe_core::SessionId,
    pub said_at: i64,
    pub kind: SourceKind,
}

fn inputs(tx: &Tx<'_>, it: &ScribeItem) -> Result<Inputs, StoreError> {
    let line = tx.line(it.message_id)?;
    let plan = tx.plan(it.plan_id)?;
    let question = match line.parent_id {
        Some(p) if it.kind == "answer" => Some(tx.line(p)?.body),
        _ => None,
    };
    let before = match it.kind.as_str() {
        "edit" => tx.line_versions(it.message_id)?.pop().map(|v| v.body),
        _ => None,
    };
    let mut standing = Vec::new();
    if before.is_some() {
        for r in tx.requirements_on_line(it.message_id)? {
            let live = matches!(r.state, State::InForce | State::ToConfirm);
            if r.plan_id != it.plan_id || !live || r.taken_out_at.is_some() {
                continue;
            }
            if tx.requirement_said_elsewhere(r.id, it.message_id)? {
                continue;
            }
            standing.push(shown_of(r));
        }
    }
    let tickets = tx
        .tickets_of_plan(it.plan_id)?
        .into_iter()
        .map(|t| (t.id.0, t.number as u32, t.title))
        .collect();
    // Set aside for this job still shown: the same words again re-apply it (SC-11, RL-13).
    let mut shown: Vec<Shown> = tx
        .requirements_of_plan(it.plan_id)?
        .into_iter()
        .filter(|r| r.state == State::InForce && !r.quote.is_empty())
        .map(shown_of)
        .collect();
    // The newest 60 when there are more.
    if shown.len() > MAX_SHOWN {
        shown.drain(..shown.len() - MAX_SHOWN);
    }
    Ok(Inputs {
        line: line.body,
        question,
        before,
        standing,
        goal: plan.spec.goal,
        tickets,
        filed_ticket: tx
            .line_ticket_in_plan(it.message_id, it.plan_id)?
            .map(|t| t.0),
        shown,
        session: line.session_id,
        said_at: line.created_at,
        kind: if it.kind == "answer" {
            SourceKind::YourAnswer
        } else {
            SourceKind::YouSaid
        },
    })
}

fn shown_of(r: troupe_store::RequirementRecord) -> Shown {
    Shown {
        id: r.id.0,
        quote: r.quote,
        category: r.category,
        number: r.number,
        scope: r.scope,
        ticket: r.ticket_id.map(|t| t.0),
        state: r.state,
    }
}

fn new_requirement(
    plan: PlanId,
    line: SessionMessageId,
    cx: &Inputs,
    e: &NewEntry,
    state: State,
    replaces: Option<i64>,
) -> NewRequirement {
    NewRequirement {
        plan_id: plan,
        ticket_id: e.ticket.map(TicketId),
        session_id: Some(cx.session),
        scope: e.scope,
        quote: e.quote.clone(),
        source_kind: cx.kind,
        source_message_id: Some(line),
        source_quote_id: None,
        restatement: e.restatement.clone(),
        category: e.category.clone(),
        nature: e.nature,
        polarity: e.polarity,
        number: e.number,
        state,
        replaces_id: replaces.map(troupe_core::ids::RequirementId),
        said_at: cx.said_at,
    }
}

/// Write what landed; raises of a line already counted land as nothing new.
fn land(
    tx: &mut Tx<'_>,
    it: &ScribeItem,
    cx: &Inputs,
    landed: &[Landed],
) -> Result<usize, StoreError> {
    let mut wrote = 0;
    for l in landed {
        match l {
            Landed::Add(e) => {
                let n = new_requirement(it.plan_id, it.message_id, cx, e, State::InForce, None);
                tx.add_requirement(&n)?;
                wrote += 1;
            }
            Landed::Raise { id, .. } => {
                let id = troupe_core::ids::RequirementId(*id);
                if tx.raise_requirement(id, it.plan_id, Some(it.message_id), cx.said_at)? {
                    wrote += 1;
                }
            }
            Landed::Replace { replaces, entry } => {
                let n = new_requirement(
                    it.plan_id,
                    it.message_id,
                    cx,
                    entry,
                    State::ToConfirm,
                    Some(*replaces),
                );
                tx.add_requirement(&n)?;
                wrote += 1;
            }
            Landed::TakeBack { id } => {
                let id = troupe_core::ids::RequirementId(*id);
                if tx.mark_requirement_taken_out(id, it.plan_id)? {
                    wrote += 1;
                }
            }
        }
    }
    Ok(wrote)
}

impl Collab {
    /// Wake the scribe: read every queued line, in order, in the background.
    pub fn wake_scribe(&self) {
        let me = self.clone();
        tokio::spawn(async move {
            if let Err(e) = me.drain_scribe().await {
                tracing::warn!(error = %e, "the scribe stopped on an error");
            }
        });
    }

    /// Read every queued line, one at a time, oldest first; what each came to.
    pub async fn drain_scribe(&self) -> Result<Vec<ScribeOutcome>, CollabError> {
        let _one = ONE_AT_A_TIME.lock().await;
        let mut out = Vec::new();
        while let Some(it) = self.store().read(|tx| tx.next_scribe_item())? {
            out.push(self.scribe_one(&it).await?);
        }
        Ok(out)
    }

    /// SC-2: lines left unread when the app stopped are dropped; how many.
    pub fn drop_unread_scribe_lines(&self) -> Result<usize, CollabError> {
        Ok(self
            .store()
            .write(|tx| tx.drop_waiting_scribe_items("dropped_at_start"))?)
    }

    async fn scribe_one(&self, it: &ScribeItem) -> Result<ScribeOutcome, CollabError> {
        let read = self.store().read(|tx| {
            let l = tx.line(it.message_id)?;
            if l.author != Author::User || l.body.is_empty() {
                return Ok(None);
            }
            inputs(tx, it).map(Some)
        })?;
        let Some(cx) = read else {
            self.store()
                .write(|tx| tx.settle_scribe_item(it.id, "dropped", "no words to read"))?;
            return Ok(ScribeOutcome {
                item: it.id,
                checked: Checked::default(),
                failure: Some("no words to read".into()),
                captured: false,
            });
        };
        let answer = call::ask(self.roles(), prompt::prompt(&cx), MAX_TOKENS, TIMEOUT).await;
        let (checked, failure) = match &answer {
            Ok((raw, _)) => match scribe_patch::parse(raw) {
                Ok(items) => {
                    let tickets: Vec<(i64, u32)> =
                        cx.tickets.iter().map(|(id, n, _)| (*id, *n)).collect();
                    let standing: Vec<i64> = cx.standing.iter().map(|s| s.id).collect();
                    let checked = scribe_patch::check(
                        &items,
                        &Context {
                            line: &cx.line,
                            shown: &cx.shown,
                            tickets: &tickets,
                            filed_ticket: cx.filed_ticket,
                            standing_on_earlier: &standing,
                        },
                    );
                    (checked, None)
                }
                Err(e) => (Checked::default(), Some(format!("not a patch: {e}"))),
            },
            Err(e) => (Checked::default(), Some(e.clone())),
        };
        let (raw, model) = match &answer {
            Ok((raw, model)) => (Some(raw.clone()), Some(model.clone())),
            Err(_) => (None, None),
        };
        let written = self.store().write(|tx| {
            let wrote = land(tx, it, &cx, &checked.landed)?;
            // SC-6 / RL-6: nothing noted → fallback capture reads the line.
            let captured = if wrote == 0 {
                fallback_capture(tx, it.plan_id, it.message_id)?.is_some()
            } else {
                false
            };
            let ticket = cx.filed_ticket.map(TicketId);
            tx.log_work(
                WorkRef {
                    ticket,
                    ..WorkRef::plan(it.plan_id)
                },
                "scribe_answer",
                json!({
                    "message_id": it.message_id, "model": model, "raw": raw,
                    "failure": failure, "landed": checked.landed, "dropped": checked.dropped,
                    "fallback_captured": captured,
                }),
            )?;
            let note = match (&failure, wrote, captured) {
                (Some(f), _, _) => f.clone(),
                (None, 0, true) => "nothing landed; kept whole by fallback capture".into(),
                (None, 0, false) => "nothing landed".into(),
                (None, n, _) => format!("{n} landed"),
            };
            tx.settle_scribe_item(it.id, "done", &note)?;
            Ok(captured)
        });
        // A line whose answer cannot be written is dropped, so the queue moves on.
        let (captured, failure) = match written {
            Ok(c) => (c, failure),
            Err(e) => {
                let why = format!("not written: {e}");
                self.store()
                    .write(|tx| tx.settle_scribe_item(it.id, "dropped", &why))?;
                (false, Some(why))
            }
        };
        Ok(ScribeOutcome {
            item: it.id,
            checked,
            failure,
            captured,
        })
    }
}
