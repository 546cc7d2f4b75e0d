//! AC-10, CW-15: every segment working on a job reads the job's checks and their latest
//! results — the user's, and the offers from their words marked as not yet confirmed. Bots
//! have no tool for checks (AC-7): this is read-only.

use super::manage::{CheckView, plan_checks};
use troupe_core::PlanId;
use troupe_core::thread::Thread;
use troupe_core::work_item::WorkMode;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{CheckKind, Store, StoreError, Tx};

pub struct ChecksSituation;

fn describe(v: &CheckView) -> String {
    let c = &v.check;
    let what = match c.kind {
        CheckKind::FileExists => format!("{} exists and is not empty", show(&c.path)),
        CheckKind::FileContains => format!(
            "{} {} \"{}\"",
            show(&c.path),
            if c.negate {
                "does not contain"
            } else {
                "contains"
            },
            show(&c.pattern)
        ),
        CheckKind::FileMatchesRegex => format!(
            "{} {} /{}/",
            show(&c.path),
            if c.negate {
                "does not match"
            } else {
                "matches"
            },
            show(&c.pattern)
        ),
        CheckKind::Command => {
            let mut s = format!("`{}` exits {}", show(&c.command), c.expected_exit);
            if c.expected_output.is_some() {
                s.push_str(" with the expected output");
            }
            if let Some(d) = &c.cwd {
                s.push_str(&format!(" (run in {d})"));
            }
            s
        }
        CheckKind::Words => {
            let asked = super::words::number_of(c)
                .map(|n| n.asked())
                .unwrap_or_default();
            let dim = c.dimension.map_or("", |d| d.as_str()).replace('_', " ");
            let file = c
                .path
                .as_deref()
                .map_or(" (no delivered video found yet)".to_string(), |p| {
                    format!(" of {p}")
                });
            if v.to_confirm {
                format!("{dim}{file}: {asked} — from the user's words, to confirm: not a gate")
            } else {
                format!("{dim}{file}: {asked} — from the user's words, confirmed")
            }
        }
        CheckKind::Standard => "holds to the standard of the sample".to_string(),
        CheckKind::Seams => match (&c.command, &c.path) {
            (Some(cmd), _) => format!("the parts `{cmd}` lists fit together at their seams"),
            (None, p) => format!("the parts of {} fit together at their seams", show(p)),
        },
    };
    let mut line = format!("- {}: {what}", c.id);
    if let Some(t) = c.ticket_id {
        line.push_str(&format!(" [ticket {t}]"));
    }
    if let Some(l) = &v.line {
        line.push_str(&format!(" — for \"{l}\""));
        if !v.matches_line {
            line.push_str(" (that line is no longer in Done when; the check still counts)");
        }
    }
    match c.runs.first() {
        Some(r) => line.push_str(&format!(
            "\n  last run: {} — {}{}",
            r.outcome.as_str(),
            r.detail,
            if r.for_reference {
                " (judged by a model looking at pictures: for reference only)"
            } else {
                ""
            }
        )),
        None => line.push_str("\n  not run yet"),
    }
    line
}

fn show(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("")
}

/// The job's checks as a segment reads them; none when the job has none.
pub fn checks_block(tx: &Tx<'_>, plan: PlanId) -> Result<Option<String>, StoreError> {
    let all = plan_checks(tx, plan)?;
    if all.checks.is_empty() {
        return Ok(None);
    }
    let mut out = String::from(
        "Acceptance checks on this job (the app runs them on the user's machine; only the \
         user writes or confirms them, so fix the deliverable, not the check):",
    );
    for v in &all.checks {
        out.push('\n');
        out.push_str(&describe(v));
    }
    Ok(Some(out))
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
        match tx.work_item(seg.work_item_id)?.plan_id {
            Some(plan) => checks_block(tx, plan),
            None => Ok(None),
        }
    })
}

impl ContextContributor for ChecksSituation {
    fn name(&self) -> &str {
        "checks"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match situation(thread, store) {
            Ok(Some(text)) => out.situation.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "the job's checks could not be read")
            }
        }
    }
}
