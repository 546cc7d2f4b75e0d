//! PLAN-O7: a job's last change, as its view's head says it — "Last change 3 min ago (ticket 02
//! "Rough cut": review)": the newest of the job's own edit, a ticket's stage, a check's run, a
//! turn on it and a step of what the person asked for.

use serde::Serialize;
use troupe_store::{PlanRecord, StoreError, Tx};

/// When the job last changed, and what changed.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LastChange {
    pub at: i64,
    /// `the job's plan`, `ticket 02 "Rough cut": review`, `check ck_3: passed`, `Alpha's turn`
    /// or `what you asked for`.
    pub what: String,
}

/// A stage as the head says it.
fn stage_words(stage: &str) -> String {
    match stage {
        "in_review" => "review".into(),
        other => other.replace('_', " "),
    }
}

pub(crate) fn last_change(tx: &Tx<'_>, p: &PlanRecord) -> Result<LastChange, StoreError> {
    let mut newest = LastChange {
        at: p.updated_at,
        what: "the job's plan".into(),
    };
    let mut take = |at: i64, what: String| {
        // Later wins; at the same moment the more particular change is named.
        if at >= newest.at {
            newest = LastChange { at, what };
        }
    };
    if let Some(at) = tx.newest_requirement_step_of_plan(p.id)? {
        take(at, "what you asked for".into());
    }
    if let Some((at, bot)) = tx.newest_turn_on_plan(p.id)? {
        take(at, format!("{bot}'s turn"));
    }
    if let Some((at, check, outcome)) = tx.newest_check_run_of_plan(p.id)? {
        take(
            at,
            format!("check {}: {outcome}", troupe_core::CheckId(check)),
        );
    }
    if let Some(c) = tx.newest_stage_change_of_plan(p.id)? {
        take(
            c.at,
            format!(
                "ticket {:02} \"{}\": {}",
                c.number,
                c.title,
                stage_words(&c.to)
            ),
        );
    }
    Ok(newest)
}

#[cfg(test)]
mod tests {
    use super::stage_words;

    #[test]
    fn stages_read_as_the_board_says_them() {
        assert_eq!(stage_words("in_review"), "review");
        assert_eq!(stage_words("in_progress"), "in progress");
        assert_eq!(stage_words("approved"), "approved");
    }
}
