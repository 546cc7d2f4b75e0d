//! §5.2: the requirements a review must pass are the ledger's entries in force on the
//! hand-over's job (those set aside there and other tickets' aside). One is backed by the user
//! when they wrote it on the board or confirmed it, or a confirmed check from their words on
//! the same number last passed. A check from words said twice that no entry carries (its
//! number said where the scribe was off) is still required, as before the ledger.

use crate::submissions::{RequiredItems, SaidTwice};
use troupe_core::requirement::{Scope, SourceKind, State};
use troupe_core::review::Requirement;
use troupe_store::{CheckKind, RunOutcome, StoreError, SubmissionRecord, Tx};

/// Categories about the picture: required on their first saying (§5.2).
const PICTURE: &[&str] = &[
    "picture",
    "shot",
    "character",
    "colour",
    "color",
    "look",
    "grade",
    "framing",
    "image",
    "visual",
    "style",
];

pub struct LedgerItems;

impl RequiredItems for LedgerItems {
    fn requirements(
        &self,
        tx: &Tx<'_>,
        sub: &SubmissionRecord,
    ) -> Result<Vec<Requirement>, StoreError> {
        let excluded = tx.requirements_excluded_in(sub.plan_id)?;
        let passing: Vec<_> = tx
            .checks_of_plan(sub.plan_id, false)?
            .into_iter()
            .filter(|c| c.kind == CheckKind::Words && c.confirmed)
            .filter(|c| {
                c.runs
                    .first()
                    .is_some_and(|r| r.outcome == RunOutcome::Passed)
            })
            .filter_map(|c| crate::checks::words::number_of(&c))
            .collect();
        let mut out = Vec::new();
        let mut numbers = Vec::new();
        for r in tx.requirements_of_plan(sub.plan_id)? {
            if r.state != State::InForce || excluded.contains(&r.id) || r.quote.is_empty() {
                continue;
            }
            if r.scope == Scope::Ticket && r.ticket_id != Some(sub.ticket_id) {
                continue;
            }
            let confirmed = tx
                .requirement_steps(r.id)?
                .iter()
                .any(|(step, _, _)| step == "confirmed" || step == "taken_up");
            if let Some(n) = r.number {
                numbers.push(n);
            }
            let checked = r
                .number
                .as_ref()
                .is_some_and(|n| passing.iter().any(|p| p.same_as(n)));
            let about_picture = r
                .category
                .as_deref()
                .is_some_and(|c| PICTURE.contains(&c.to_lowercase().as_str()));
            out.push(Requirement {
                id: r.id.to_string(),
                said_count: u32::try_from(r.said_count).unwrap_or(u32::MAX),
                about_picture,
                user_backed: r.source_kind == SourceKind::Board || confirmed || checked,
            });
        }
        // Checks said twice whose number no entry in force carries.
        let checks = tx.checks_of_plan(sub.plan_id, false)?;
        for item in SaidTwice.requirements(tx, sub)? {
            let number = checks
                .iter()
                .find(|c| c.id.to_string() == item.id)
                .and_then(crate::checks::words::number_of);
            if !number.is_some_and(|n| numbers.iter().any(|m| m.same_as(&n))) {
                out.push(item);
            }
        }
        Ok(out)
    }
}
