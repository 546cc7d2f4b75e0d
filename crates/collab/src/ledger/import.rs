//! RL-15: the one-time import of the Rules and Done when lines jobs had before the ledger. A
//! line the user typed on the board is in force on the board's words; one found (folded) in
//! the user's own words filed under the job is in force on those words; the rest are "Old
//! rules (source unverified)", for reference only and never a gate. A line several jobs of one
//! conversation share is imported once, for the conversation. Nothing is imported afterwards:
//! the setting `ledger.imported` records that it ran.

use crate::{Collab, CollabError};
use std::collections::HashMap;
use troupe_core::requirement::{
    Polarity, Scope, SourceKind, State, board_lines_changed, db_fold, quote_in_line,
};
use troupe_core::{PlanId, SessionId};
use troupe_store::{NewRequirement, StoreError, Tx};

const DONE: &str = "ledger.imported";

/// Whether the user typed `line` into `field` on the board (a revision of theirs added it).
fn board_typed(tx: &Tx<'_>, plan: PlanId, field: &str, line: &str) -> Result<bool, StoreError> {
    Ok(tx.plan_revisions(plan)?.iter().any(|r| {
        r.cause.is_user()
            && r.changes[field]["new"]
                .as_str()
                .is_some_and(|new| new.lines().any(|l| db_fold(l).contains(&db_fold(line))))
    }))
}

/// Import every job's lines; how many entries were written (0 once it ran).
pub fn import_old_rules(tx: &mut Tx<'_>) -> Result<usize, StoreError> {
    if tx.setting(DONE)?.is_some() {
        return Ok(0);
    }
    let mut written = 0;
    // (home conversation, folded line) → the entry imported for it.
    let mut shared: HashMap<(SessionId, String), troupe_core::ids::RequirementId> = HashMap::new();
    for plan in tx.plans_with_board_lines()? {
        let p = tx.plan(plan)?;
        let said = tx.user_lines_filed_under(plan)?;
        for (field, text) in [("rules", &p.spec.rules), ("done_when", &p.spec.done_when)] {
            let (lines, _) = board_lines_changed("", text);
            for line in lines {
                let key = p.home_session_id.map(|s| (s, db_fold(&line)));
                if let Some(id) = key.as_ref().and_then(|k| shared.get(k)).copied() {
                    tx.raise_requirement(id, plan, None, tx.now())?;
                    tx.set_requirement_scope_session(id)?;
                    continue;
                }
                let quote: String = line
                    .chars()
                    .take(troupe_core::requirement::QUOTE_LIMIT)
                    .collect();
                let found = said.iter().find(|l| quote_in_line(&l.body, &quote));
                let (kind, source, state) = if board_typed(tx, plan, field, &line)? {
                    (SourceKind::Board, None, State::InForce)
                } else if let Some(l) = found {
                    (SourceKind::YouSaid, Some(l.line_id), State::InForce)
                } else {
                    (SourceKind::OldRule, None, State::OldRuleUnverified)
                };
                let e = tx.add_requirement(&NewRequirement {
                    plan_id: plan,
                    ticket_id: None,
                    session_id: p.home_session_id,
                    scope: Scope::Job,
                    quote,
                    source_kind: kind,
                    source_message_id: source,
                    source_quote_id: None,
                    restatement: String::new(),
                    category: None,
                    nature: None,
                    polarity: Polarity::Must,
                    number: None,
                    state,
                    replaces_id: None,
                    said_at: found.map_or(p.created_at, |l| l.created_at),
                })?;
                if let Some(k) = key {
                    shared.insert(k, e.id);
                }
                written += 1;
            }
        }
    }
    tx.set_setting(DONE, &tx.now().to_string())?;
    Ok(written)
}

impl Collab {
    /// RL-15 at start: once per database.
    pub fn import_old_rules(&self) -> Result<usize, CollabError> {
        Ok(self.store().write(import_old_rules)?)
    }
}
