//! The Agenda: scheduled deliveries into the thread that created them. Triggers are pure
//! ([`trigger`]); the deadline is stored on the item and a timer only reads it
//! ([`crate::Workflows::agenda_tick`]). A one-shot watch (`auto_done`) is a continuation wait
//! ([`wait::AgendaWaits`]) until it is delivered, cancelled, paused, made silent or non-waking.

pub mod service;
pub mod tools;
pub mod trigger;
pub mod wait;
pub mod wake;

use troupe_store::{AgendaItem, AgendaStatus};

/// Cancel commands listed in a refusal, at most this many (then a hint to list the rest).
pub const MAX_LISTED_BLOCKERS: usize = 100;

/// The blocker predicate (§1.10): auto-done, active, waking, not silent. The deadline is not
/// looked at, so an overdue or just-fired watch still holds.
pub fn is_blocker(item: &AgendaItem) -> bool {
    item.auto_done && item.status == AgendaStatus::Active && item.wake && !item.silent
}

/// One `agenda_cancel(id="…")` per blocker (the first hundred), plus an `agenda_list` hint when
/// there are more.
pub fn cancel_commands(blockers: &[AgendaItem]) -> Vec<String> {
    let mut out: Vec<String> = blockers
        .iter()
        .take(MAX_LISTED_BLOCKERS)
        .map(|i| format!("agenda_cancel(id=\"{}\")", i.id))
        .collect();
    if blockers.len() > MAX_LISTED_BLOCKERS {
        out.push(format!(
            "…and {} more one-shot watches: call agenda_list to see them all",
            blockers.len() - MAX_LISTED_BLOCKERS
        ));
    }
    out
}
