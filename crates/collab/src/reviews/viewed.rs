//! What a reviewing segment looked at (§5.3 1c): each job file it read with `read_file` is
//! recorded `artifact.viewed` once per path and segment — apart from its command record, and
//! not counted as a command. A picture item passes only after an image of the job was read
//! after the hand-over.

use crate::submissions::hooks::is_image;
use std::path::{Path, PathBuf};
use troupe_core::delegation::{DelegationState, Expects};
use troupe_core::{PlanId, RunId};
use troupe_engine::extension::RunObserver;
use troupe_store::{RunRecord, StoreError, Tx};

/// The file a read names, made absolute against the segment's work folder.
fn absolute(workdir: &str, raw: &str) -> PathBuf {
    troupe_tools::lexical(&Path::new(workdir).join(raw))
}

/// Job files a segment read: path relative to the job's folder, and when.
type Reads = Vec<(String, i64)>;

/// The job files a segment read, in order, with its job.
fn reads(tx: &Tx<'_>, run: RunId) -> Result<Option<(PlanId, Reads)>, StoreError> {
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(None);
    };
    let item = tx.work_item(seg.work_item_id)?;
    let Some(plan) = item.plan_id else {
        return Ok(None);
    };
    let folder = tx.plan(plan)?.folder;
    let workdir = tx.thread(item.thread_id)?.workspace;
    let mut out = Vec::new();
    for c in tx.timed_tool_calls(run)? {
        if c.name != "read_file" || c.status != "ok" {
            continue;
        }
        let Some(raw) = serde_json::from_str::<serde_json::Value>(&c.arguments)
            .ok()
            .and_then(|v| v.get("path")?.as_str().map(str::to_string))
        else {
            continue;
        };
        if let Ok(rel) = absolute(&workdir, &raw).strip_prefix(&folder) {
            out.push((rel.to_string_lossy().into_owned(), c.at));
        }
    }
    Ok(Some((plan, out)))
}

/// Whether the segment's Bot reviews on its job: a ticket's reviewer, or asked to review.
fn reviews_on_job(tx: &Tx<'_>, run: RunId) -> Result<bool, StoreError> {
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(false);
    };
    let item = tx.work_item(seg.work_item_id)?;
    let Some(plan) = item.plan_id else {
        return Ok(false);
    };
    if tx
        .tickets_of_plan(plan)?
        .iter()
        .any(|t| t.reviewer_bot_id == Some(item.bot_id))
    {
        return Ok(true);
    }
    Ok(tx
        .open_delegations_to(item.id)?
        .iter()
        .any(|d| d.expects == Expects::Review && d.state == DelegationState::Open))
}

/// Record the job files a reviewing segment read, once per path.
pub(crate) fn record_views(tx: &mut Tx<'_>, run: RunId) -> Result<(), StoreError> {
    if !reviews_on_job(tx, run)? {
        return Ok(());
    }
    if let Some((_, read)) = reads(tx, run)? {
        for (path, _) in read {
            tx.record_artifact_view(run, &path)?;
        }
    }
    Ok(())
}

/// §5.3 1c: the segment read an image of `plan`'s folder at or after `since`.
pub(crate) fn read_images_since(
    tx: &Tx<'_>,
    run: RunId,
    plan: PlanId,
    since: i64,
) -> Result<bool, StoreError> {
    Ok(match reads(tx, run)? {
        Some((p, read)) if p == plan => read
            .iter()
            .any(|(path, at)| *at >= since && is_image(Path::new(path))),
        _ => false,
    })
}

/// Records a reviewing segment's reads when it ends, whatever way it ends.
pub struct ViewedImages;

impl RunObserver for ViewedImages {
    fn on_run_ended(&self, tx: &mut Tx<'_>, run: &RunRecord) -> Result<(), StoreError> {
        record_views(tx, run.id)
    }
}
