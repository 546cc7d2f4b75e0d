//! Checks from the user's words (digest 003-C §16): as soon as a person's line is filed under
//! a job, its numbers are read by core's fixed rules (`read_numbers`, no model), each
//! dimension's offer is settled from everything said (core's `Book`), and every offer and
//! check in force is bound to the job's final cut (core's `final_cut` over the files Bots'
//! lines delivered) and measured at once through the `MediaProbe`. An offer is never a gate
//! (CW-15, CW-22); only the user's confirmation makes it one (CW-16), and then it is measured
//! again at once (CW-17).
//!
//! What is stored: a row per offer (a new number is a new row, so confirming one later words
//! withdrew is refused) and per check in force. From when words count again (CW-10) is read
//! from the rows: the time a check in force was confirmed (its `updated_at`) and the removal
//! time of what the user removed (a withdrawal by words is told apart by its said count 0).

use super::run::Outcome;
use super::{Checks, lexical, plan_workspace};
use crate::CollabError;
use std::path::{Path, PathBuf};
use troupe_core::submission::CheckSource;
use troupe_core::words_check::final_cut::{Delivery, Filing, final_cut, rank};
use troupe_core::words_check::numbers::read_numbers;
use troupe_core::words_check::offers::{Book, Said, Standing};
use troupe_core::words_check::probe::{MediaFacts, measure};
use troupe_core::words_check::{Dimension, LinePlace, Number, Value};
use troupe_core::{CheckId, PlanId, TicketId};
use troupe_store::{
    CheckKind, CheckRecord, CheckRunRecord, NewCheck, PlanRecord, RunOutcome, StoreError,
    TicketRecord, Tx, WordsStatus,
};

/// A ticket whose name names a shot, another version or format, titles, a preview or a proxy
/// is a part's: neither the user's numbers said under it nor the files delivered under it are
/// the film's (CW-3, CW-12). The ticket named after the job is the job's.
fn is_part_ticket(t: &TicketRecord, plan: &PlanRecord) -> bool {
    let title = t.title.trim();
    let name = plan.name.trim();
    if title == name || name.starts_with(title) || title.starts_with(name) {
        return false;
    }
    rank(&format!("{title}.mp4"), &[]).is_err()
}

fn ticket_is_part(ticket: Option<TicketId>, tickets: &[TicketRecord], plan: &PlanRecord) -> bool {
    ticket
        .and_then(|id| tickets.iter().find(|t| t.id == id))
        .is_some_and(|t| is_part_ticket(t, plan))
}

/// A stored check from words as core's number.
pub fn number_of(c: &CheckRecord) -> Option<Number> {
    Some(Number {
        value: c.value?,
        bound: c.bound?,
        min: c.min,
        max: c.max,
    })
}

/// The figure a measurement compares: seconds, short side, width/height or fps.
fn measured(number: &Number, facts: &MediaFacts) -> Option<f64> {
    let size = facts.width.zip(facts.height);
    match number.value {
        Value::Seconds { .. } => facts.duration_secs,
        Value::ShortSide { .. } => size.map(|(w, h)| f64::from(w.min(h))),
        Value::Ratio { .. } | Value::Orientation { .. } => {
            size.map(|(w, h)| f64::from(w) / f64::from(h))
        }
        Value::FramesPerSecond { .. } => facts.fps,
    }
}

/// Settle every dimension's offer from the words filed under the job (CW-7…CW-10). Answers
/// nothing; the rows are the result.
fn settle(tx: &mut Tx<'_>, plan: &PlanRecord) -> Result<(), StoreError> {
    let tickets = tx.tickets_of_plan(plan.id)?;
    let mut said: Vec<Said<i64>> = Vec::new();
    for line in tx.user_lines_filed_under(plan.id)? {
        let place = if ticket_is_part(line.ticket_id, &tickets, plan) {
            LinePlace::PartTicket
        } else {
            LinePlace::Job
        };
        for reading in read_numbers(&line.body, place) {
            said.push(Said {
                quote: line.line_id.0,
                said_at: line.created_at,
                reading,
            });
        }
    }
    let rows: Vec<CheckRecord> = tx
        .checks_of_plan(plan.id, true)?
        .into_iter()
        .filter(|c| c.kind == CheckKind::Words)
        .collect();
    for dimension in Dimension::ALL {
        let mine: Vec<&CheckRecord> = rows
            .iter()
            .filter(|c| c.dimension == Some(dimension))
            .collect();
        let live = |s: WordsStatus| {
            mine.iter()
                .find(|c| c.removed_at.is_none() && c.status == Some(s))
                .copied()
        };
        let in_force = live(WordsStatus::InForce);
        let offer_row = live(WordsStatus::Offer);
        let counts_after = mine
            .iter()
            .filter_map(|c| match (c.removed_at, c.status) {
                (None, Some(WordsStatus::InForce)) => Some(c.updated_at),
                (Some(at), _) if c.said_count > 0 || c.status == Some(WordsStatus::InForce) => {
                    Some(at)
                }
                _ => None,
            })
            .max();
        let book = Book {
            dimension,
            in_force: in_force.and_then(|c| {
                Some(Standing {
                    number: number_of(c)?,
                    quote: c.quote_id,
                    said_count: c.said_count as u32,
                })
            }),
            counts_after,
            // CW-20: a confirmed check whose words were erased is an offer on no words; it
            // stays one until the person confirms or removes it, or a new target replaces it.
            reverted: offer_row.filter(|c| c.quote_id.is_none()).and_then(|c| {
                Some(Standing {
                    number: number_of(c)?,
                    quote: None,
                    said_count: c.said_count as u32,
                })
            }),
        };
        let offer = book.settle(&said).offer;
        match (offer, offer_row) {
            (None, None) => {}
            (None, Some(row)) => {
                tx.withdraw_words_offer(row.id)?;
            }
            (Some(o), Some(row)) if number_of(row).is_some_and(|n| n.same_as(&o.number)) => {
                if row.said_count != i64::from(o.said_count) || row.quote_id != o.quote {
                    tx.set_words_reading(
                        row.id,
                        o.number.value,
                        o.number.bound,
                        o.number.min,
                        o.number.max,
                        o.quote,
                        i64::from(o.said_count),
                        WordsStatus::Offer,
                    )?;
                }
            }
            (Some(o), row) => {
                if let Some(row) = row {
                    tx.withdraw_words_offer(row.id)?;
                }
                tx.create_check(&NewCheck {
                    dimension: Some(dimension),
                    value: Some(o.number.value),
                    bound: Some(o.number.bound),
                    min: o.number.min,
                    max: o.number.max,
                    quote_id: o.quote,
                    status: Some(WordsStatus::Offer),
                    said_count: i64::from(o.said_count),
                    path: in_force.and_then(|c| c.path.clone()),
                    ..NewCheck::new(plan.id, CheckKind::Words, CheckSource::Words)
                })?;
            }
        }
    }
    Ok(())
}

/// The job's final cut, workspace-relative where it is in the workspace (CW-12…CW-14).
fn find_final_cut(
    tx: &Tx<'_>,
    plan: &PlanRecord,
    workspace: &Path,
) -> Result<Option<String>, StoreError> {
    let tickets = tx.tickets_of_plan(plan.id)?;
    let job = Path::new(&plan.folder);
    let relative = |abs: &Path| -> String {
        abs.strip_prefix(workspace)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| abs.to_string_lossy().into_owned())
    };
    let mut deliveries = Vec::new();
    for f in tx.files_cited_under_plan(plan.id)? {
        let ticket = tx.line_ticket_in_plan(f.line_id, plan.id)?;
        let p = Path::new(&f.path);
        let abs = lexical(&if p.is_absolute() {
            p.to_path_buf()
        } else {
            job.join(p)
        });
        deliveries.push(Delivery {
            path: relative(&abs),
            delivered_at: f.first_cited_at,
            filing: if ticket_is_part(ticket, &tickets, plan) {
                Filing::PartOrVersionTicket
            } else {
                Filing::Job
            },
            exists: abs.is_file(),
        });
    }
    let mut folders: Vec<String> = vec![relative(job)];
    for t in &tickets {
        let f = Path::new(&t.folder);
        folders.push(relative(&lexical(&if f.is_absolute() {
            f.to_path_buf()
        } else {
            job.join(f)
        })));
    }
    let folders: Vec<&str> = folders.iter().map(String::as_str).collect();
    Ok(final_cut(&deliveries, &folders).map(|c| c.path))
}

impl Checks {
    /// Read the user's words filed under the job again, settle the offers, bind every offer
    /// and check in force to the final cut, and measure at once those whose number or file
    /// changed or that were never measured. Answers the runs made.
    pub async fn sync_words(&self, plan: PlanId) -> Result<Vec<CheckRunRecord>, CollabError> {
        let to_measure: Vec<CheckId> = self.store().write(|tx| {
            let p = tx.plan(plan)?;
            settle(tx, &p)?;
            super::replacement::sync_cards(tx, &p)?;
            let cut = find_final_cut(tx, &p, &plan_workspace(&p.folder))?;
            let mut out = Vec::new();
            for c in tx.checks_of_plan(plan, false)? {
                if c.kind != CheckKind::Words {
                    continue;
                }
                let moved = c.path != cut;
                if moved {
                    tx.set_words_check_file(c.id, cut.as_deref())?;
                }
                let stale = c.runs.first().is_none_or(|r| r.started_at < c.updated_at);
                if moved || stale {
                    out.push(c.id);
                }
            }
            Ok(out)
        })?;
        if to_measure.is_empty() {
            return Ok(Vec::new());
        }
        self.run_plan(plan, Some(&to_measure), None).await
    }

    /// Measure a check from words against its file.
    pub(crate) async fn measure_words(
        &self,
        c: &CheckRecord,
        plan: &PlanRecord,
    ) -> Result<Outcome, CollabError> {
        let Some(number) = number_of(c) else {
            return Ok(Outcome::new(
                RunOutcome::Error,
                "the number said is not stored",
            ));
        };
        let Some(path) = c.path.as_deref() else {
            return Ok(Outcome::new(
                RunOutcome::Error,
                format!(
                    "no delivered video to measure yet, asked {}",
                    number.asked()
                ),
            ));
        };
        let file: PathBuf = {
            let p = Path::new(path);
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                plan_workspace(&plan.folder).join(p)
            }
        };
        let facts = match self.probe().probe(&file).await {
            Ok(f) => f,
            Err(e) => {
                return Ok(Outcome::new(
                    RunOutcome::Error,
                    format!("{path}: {e}; asked {}", number.asked()),
                ));
            }
        };
        let m = measure(&number, &facts);
        let outcome = match m.outcome {
            troupe_core::words_check::probe::Outcome::Passed => RunOutcome::Passed,
            troupe_core::words_check::probe::Outcome::Failed => RunOutcome::Failed,
            troupe_core::words_check::probe::Outcome::Error => RunOutcome::Error,
        };
        Ok(Outcome {
            outcome,
            detail: format!("{path}: {}", m.detail),
            output_tail: String::new(),
            measured: measured(&number, &facts),
            for_reference: false,
        })
    }

    /// CW-16: the user confirms an offer: it is in force and a gate from now on, and it is
    /// measured again at once (CW-17). The words are read again first, so an offer later
    /// words replaced is refused (409 `withdrawn`). Confirming a replacement of a check in
    /// force ("Use the new one") removes the old one.
    pub async fn confirm(&self, id: CheckId) -> Result<CheckRecord, CollabError> {
        let c = self.store().read(|tx| tx.check(id))?;
        if c.kind != CheckKind::Words {
            return Err(CollabError::invalid(format!(
                "check {id} is not a check from your words; only those are confirmed"
            )));
        }
        self.sync_words(c.plan_id).await?;
        self.store().write(|tx| {
            let c = tx.check(id)?;
            if c.removed_at.is_some() {
                return Ok(Err(CollabError::conflict(
                    "withdrawn",
                    format!("withdrawn: later words replaced or withdrew check {id}"),
                )));
            }
            if c.status == Some(WordsStatus::InForce) {
                return Ok(Ok(()));
            }
            for old in tx.checks_of_plan(c.plan_id, false)? {
                if old.kind == CheckKind::Words
                    && old.dimension == c.dimension
                    && old.status == Some(WordsStatus::InForce)
                {
                    tx.remove_check(old.id)?;
                }
            }
            tx.confirm_check(id)?;
            let p = tx.plan(c.plan_id)?;
            super::replacement::sync_cards(tx, &p)?;
            Ok(Ok(()))
        })??;
        self.run_check(id, None).await?;
        Ok(self.store().read(|tx| tx.check(id))?)
    }

    /// Reads the words of every person's line as it is filed under a job (all the ways a line
    /// is filed append `plan_changed` {change: filed}).
    pub fn listen_for_filed_lines(&self) -> tokio::task::JoinHandle<()> {
        let mut rx = self.store().subscribe();
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                let ev = match rx.recv().await {
                    Ok(ev) => ev,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "checks from words missed filing events");
                        continue;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                if ev.kind != "plan_changed" || ev.payload["change"] != "filed" {
                    continue;
                }
                let (Some(plan), Some(line)) = (
                    ev.payload["plan_id"].as_i64(),
                    ev.payload["message_id"].as_i64(),
                ) else {
                    continue;
                };
                // A person's words, or a Bot's line delivering files (a new cut to bind).
                let id = troupe_core::SessionMessageId(line);
                let relevant = me
                    .store()
                    .read(|tx| {
                        let l = tx.line(id)?;
                        Ok(l.author == troupe_core::conversation::Author::User
                            || !tx.line_files(id)?.is_empty())
                    })
                    .unwrap_or(false);
                if relevant && let Err(e) = me.sync_words(PlanId(plan)).await {
                    tracing::warn!(plan, error = %e, "the user's words could not be read for checks");
                }
            }
        })
    }
}
