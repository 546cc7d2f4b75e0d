//! The ticket guards over effects (run before the effect ledger records a start):
//! - S-T4: inside a job, `write_file` into a folder shaped like a ticket folder (`NN-…`
//!   directly under the job's folder) that is no ticket's and does not exist yet is refused
//!   `not_a_ticket_folder`, listing the job's real ticket folders;
//! - LJ4 (S-LJ3): until a large job is laid out, `submit` and the tools marked generating are
//!   refused, "lay it out first";
//! - T6/B §1.2: a turn on a ticket still to do that starts writing files or running commands
//!   moves it to in_progress (source `app_started`), once.

use super::delivery::after_stage_change;
use super::folders::folder_name;
use super::work::ticket_list;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use troupe_core::large_job::{LAY_IT_OUT_FIRST, NOT_LAID_OUT, generation_allowed};
use troupe_core::ticket::{StageSource, TicketStage, looks_like_ticket_folder};
use troupe_core::work_item::WorkMode;
use troupe_core::{PlanId, RunId, TicketId};
use troupe_engine::extension::{EffectGuard, GuardContext, Refusal};
use troupe_store::{StoreError, Tx};

/// The job and ticket a segment works on (none at a desk or outside a Bot's work).
fn segment_job(tx: &Tx<'_>, run: RunId) -> Result<Option<(PlanId, Option<TicketId>)>, StoreError> {
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(None);
    };
    let item = tx.work_item(seg.work_item_id)?;
    Ok(match (item.mode, item.plan_id) {
        (WorkMode::Work, Some(plan)) => Some((plan, item.ticket_id.map(TicketId))),
        _ => None,
    })
}

/// `path` made absolute against `base`, `.` and `..` applied by their words.
fn lexical(base: &Path, path: &str) -> PathBuf {
    troupe_tools::lexical(&base.join(path))
}

/// S-T4's decision for a write to `target` in the job whose folder is `plan_folder`: the
/// refusal, or none.
pub fn invented_folder(
    tx: &Tx<'_>,
    plan: PlanId,
    target: &Path,
) -> Result<Option<String>, StoreError> {
    let plan_folder = PathBuf::from(tx.plan(plan)?.folder);
    let Ok(rel) = target.strip_prefix(&plan_folder) else {
        return Ok(None);
    };
    let mut parts = rel.components();
    let (Some(Component::Normal(first)), Some(_)) = (parts.next(), parts.next()) else {
        return Ok(None);
    };
    let first = first.to_string_lossy();
    if looks_like_ticket_folder(&first).is_none() || plan_folder.join(&*first).exists() {
        return Ok(None);
    }
    let tickets = tx.tickets_of_plan(plan)?;
    if tickets.iter().any(|t| folder_name(t) == first) {
        return Ok(None);
    }
    let real: BTreeSet<String> = tickets
        .iter()
        .map(|t| format!("{}/", folder_name(t)))
        .collect();
    let list = if real.is_empty() {
        "this job has no tickets yet (the lead lays them out with plan_items)".to_string()
    } else {
        format!(
            "the job's ticket folders are: {}",
            real.into_iter().collect::<Vec<_>>().join(", ")
        )
    };
    Ok(Some(format!(
        "not_a_ticket_folder: {first}/ looks like a ticket's folder but no ticket has it; {list}. \
         Write into one of those, or elsewhere in the job's folder. ({})",
        ticket_list(&tickets)
    )))
}

/// S-T4 over `write_file`.
pub struct TicketFolderGuard;

impl EffectGuard for TicketFolderGuard {
    fn name(&self) -> &str {
        "ticket_folders"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        if ctx.tool != "write_file" || !crate::tools::in_conversation(ctx.thread) {
            return Ok(());
        }
        let Some(path) = serde_json::from_str::<serde_json::Value>(ctx.arguments)
            .ok()
            .and_then(|v| v.get("path").and_then(|p| p.as_str()).map(String::from))
        else {
            return Ok(());
        };
        let target = lexical(Path::new(&ctx.thread.workspace), &path);
        let verdict = ctx.store.read(|tx| match segment_job(tx, ctx.run_id)? {
            Some((plan, _)) => invented_folder(tx, plan, &target),
            None => Ok(None),
        });
        match verdict {
            Ok(None) => Ok(()),
            Ok(Some(text)) => Err(Refusal::from(text)),
            Err(e) => Err(Refusal::from(format!(
                "the job's ticket folders could not be read ({e}); nothing was written"
            ))),
        }
    }
}

/// LJ4 over `submit` and the tools marked generating (image, video, audio generation).
pub struct LargeJobGuard {
    gated: BTreeSet<String>,
}

impl Default for LargeJobGuard {
    /// `submit` only: this build registers no generating tool of its own.
    fn default() -> Self {
        LargeJobGuard::with_generating(std::iter::empty::<String>())
    }
}

impl LargeJobGuard {
    /// `submit` and these generating tools.
    pub fn with_generating(generating: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let mut gated: BTreeSet<String> = generating.into_iter().map(Into::into).collect();
        gated.insert("submit".into());
        LargeJobGuard { gated }
    }
}

/// LJ4: the refusal for generating or handing over on `plan` now, or none.
pub fn not_laid_out(tx: &Tx<'_>, plan: PlanId) -> Result<Option<String>, StoreError> {
    let d = tx.plan_deliverables(plan)?;
    Ok((!generation_allowed(d.large_state, d.laid_out))
        .then(|| format!("{NOT_LAID_OUT}: {LAY_IT_OUT_FIRST}")))
}

impl EffectGuard for LargeJobGuard {
    fn name(&self) -> &str {
        "large_job"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        if !self.gated.contains(ctx.tool) || !crate::tools::in_conversation(ctx.thread) {
            return Ok(());
        }
        let verdict = ctx.store.read(|tx| match segment_job(tx, ctx.run_id)? {
            Some((plan, _)) => not_laid_out(tx, plan),
            None => Ok(None),
        });
        match verdict {
            Ok(None) => Ok(()),
            Ok(Some(text)) => Err(Refusal::from(text)),
            Err(e) => Err(Refusal::from(format!(
                "whether the job is laid out could not be read ({e}); nothing was run"
            ))),
        }
    }
}

/// B §1.2's first arrow: work starting on a ticket still to do moves it to in_progress. It
/// passes every call; registered after the guards that may refuse, so a refused call moves
/// nothing.
pub struct WorkStarted;

impl EffectGuard for WorkStarted {
    fn name(&self) -> &str {
        "work_started"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        let writes_or_runs = matches!(
            ctx.tool,
            "write_file" | "edit_file" | "delete_file" | "shell"
        );
        if !writes_or_runs || !crate::tools::in_conversation(ctx.thread) {
            return Ok(());
        }
        let to_do = ctx.store.read(|tx| {
            Ok(match segment_job(tx, ctx.run_id)? {
                Some((_, Some(t))) => (tx.ticket(t)?.stage == TicketStage::ToDo).then_some(t),
                _ => None,
            })
        });
        let Ok(Some(ticket)) = to_do else {
            return Ok(());
        };
        let moved = ctx.store.write(|tx| {
            if tx.ticket(ticket)?.stage != TicketStage::ToDo {
                return Ok(());
            }
            tx.set_ticket_stage(ticket, TicketStage::InProgress, StageSource::AppStarted)?;
            after_stage_change(tx, ticket)?;
            Ok(())
        });
        if let Err(e) = moved {
            // The work goes on; the board shows the ticket to do until a later move.
            tracing::warn!(run = %ctx.run_id, %ticket, error = %e, "could not move the ticket to in_progress");
        }
        Ok(())
    }
}
