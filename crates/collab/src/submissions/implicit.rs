//! What a segment leaves at its ending (§4.4 IS1–IS6, T12): files it wrote into an approved
//! ticket's folder without `submit` send its ending back once (what the user approved is the
//! old version); the producer's new files in its ticket's folder are handed over implicitly;
//! a non-owner's files in an owned ticket's folder are pointed out once (IS5).

use super::files::{in_folder, sha256_file, ticket_dir, ticket_folder_name};
use super::handover::{HandOver, held_back, record};
use super::pass::{Moved, SubmissionPass};
use super::{Hooks, mail};
use std::path::{Path, PathBuf};
use troupe_core::delegation::Expects;
use troupe_core::submission::SubmissionOrigin;
use troupe_core::ticket::{AppPass, TicketStage};
use troupe_core::work_item::WorkMode;
use troupe_core::{RunId, SubmissionId};
use troupe_engine::extension::{EndingContext, EndingHook, EndingVerdict};
use troupe_store::{StoreError, SubmittedFile, TicketRecord, Tx, WorkItemRecord};

/// What a segment did with files, as its ending is judged.
pub(crate) struct SegmentFiles {
    pub item: WorkItemRecord,
    pub plan_folder: String,
    pub tickets: Vec<TicketRecord>,
    /// Paths it wrote or deleted (recorded form, relative to the job's folder), in order.
    pub written: Vec<String>,
    /// Paths its lines cite.
    pub cited: Vec<String>,
    pub called_submit: bool,
}

fn call_path(arguments: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()?
        .get("path")?
        .as_str()
        .map(str::to_string)
}

/// The path a segment's file call names, relative to the job's folder (None: outside it).
fn recorded_path(workdir: &str, plan_folder: &str, raw: &str) -> Option<String> {
    let p = Path::new(raw);
    let abs: PathBuf = if p.is_absolute() {
        p.to_path_buf()
    } else {
        Path::new(workdir).join(p)
    };
    let mut clean = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                clean.pop();
            }
            std::path::Component::CurDir => {}
            other => clean.push(other),
        }
    }
    clean
        .strip_prefix(plan_folder)
        .ok()
        .map(|r| r.to_string_lossy().into_owned())
}

pub(crate) fn segment_files(tx: &Tx<'_>, run: RunId) -> Result<Option<SegmentFiles>, StoreError> {
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(None);
    };
    if seg.mode != WorkMode::Work || seg.readonly {
        return Ok(None);
    }
    let item = tx.work_item(seg.work_item_id)?;
    let Some(plan) = item.plan_id else {
        return Ok(None);
    };
    let plan = tx.plan(plan)?;
    let workdir = tx.thread(item.thread_id)?.workspace;
    let mut written = Vec::new();
    let mut called_submit = false;
    for c in tx.timed_tool_calls(run)? {
        if c.status != "ok" {
            continue;
        }
        match c.name.as_str() {
            "write_file" | "edit_file" | "delete_file" => {
                if let Some(p) = call_path(&c.arguments)
                    .and_then(|raw| recorded_path(&workdir, &plan.folder, &raw))
                    && !written.contains(&p)
                {
                    written.push(p);
                }
            }
            "submit" => called_submit = true,
            _ => {}
        }
    }
    let cited = tx
        .files_cited_in_turn(run)?
        .into_iter()
        .map(|f| f.path)
        .collect();
    Ok(Some(SegmentFiles {
        tickets: tx.tickets_of_plan(plan.id)?,
        plan_folder: plan.folder,
        item,
        written,
        cited,
        called_submit,
    }))
}

/// T12 (S-T1): the words sending back a segment that changed approved work without `submit`,
/// listing every path it wrote.
pub(crate) fn approved_change(f: &SegmentFiles) -> Option<String> {
    if f.called_submit || f.written.is_empty() {
        return None;
    }
    let touched: Vec<&TicketRecord> = f
        .tickets
        .iter()
        .filter(|t| t.stage == TicketStage::Approved)
        .filter(|t| {
            let name = ticket_folder_name(&f.plan_folder, t);
            f.written.iter().any(|p| in_folder(p, &name))
        })
        .collect();
    if touched.is_empty() {
        return None;
    }
    let which: Vec<String> = touched
        .iter()
        .map(|t| format!("#{:02} {}", t.number, t.title))
        .collect();
    Some(format!(
        "You changed files of approved work ({}) without handing the change over. What the user \
         approved is the old version; it stays approved until you hand the change over with \
         submit. Files you wrote: {}.",
        which.join(", "),
        f.written.join(", ")
    ))
}

/// IS2: whether the segment's Bot is the ticket's producer — its owner, a Bot asked for a
/// deliverable on it, or anyone on an ownerless one — and not its reviewer, a Bot asked to
/// review, or a segment woken by a review request.
pub(crate) fn is_producer(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
    ticket: &TicketRecord,
    run: RunId,
) -> Result<bool, StoreError> {
    let bot = item.bot_id;
    if ticket.reviewer_bot_id == Some(bot) {
        return Ok(false);
    }
    let asked = tx.open_delegations_to(item.id)?;
    if asked.iter().any(|d| d.expects == Expects::Review) {
        return Ok(false);
    }
    let woken_to_review = tx
        .messages(item.thread_id, None, u32::MAX)?
        .iter()
        .any(|m| {
            m.run_id == Some(run)
                && m.delivery_key
                    .as_deref()
                    .is_some_and(|k| k.starts_with("review:"))
        });
    if woken_to_review {
        return Ok(false);
    }
    Ok(match ticket.owner_bot_id {
        None => true,
        Some(o) if o == bot => true,
        Some(_) => asked.iter().any(|d| {
            d.expects == Expects::Deliverable && d.ticket_id.is_none_or(|t| t == ticket.id.0)
        }),
    })
}

/// The ticket a segment's files are for: its work's ticket, else the one ticket whose folder
/// holds them, else the job's only ticket.
pub(crate) fn files_ticket(f: &SegmentFiles, paths: &[String]) -> Option<TicketRecord> {
    if let Some(t) = f.item.ticket_id {
        return f.tickets.iter().find(|x| x.id.0 == t).cloned();
    }
    let holding: Vec<&TicketRecord> = f
        .tickets
        .iter()
        .filter(|t| {
            let name = ticket_folder_name(&f.plan_folder, t);
            paths.iter().any(|p| in_folder(p, &name))
        })
        .collect();
    match holding.as_slice() {
        [one] => Some((*one).clone()),
        [] => {
            let live: Vec<&TicketRecord> = f
                .tickets
                .iter()
                .filter(|t| t.stage != TicketStage::Dropped)
                .collect();
            (live.len() == 1).then(|| live[0].clone())
        }
        _ => None,
    }
}

/// What the ending leaves to hand over, hashed: the producer's files cited or written by the
/// segment inside its ticket's folder, whose hash is new since the ticket's last submission
/// (IS1, IS4). None when nothing is to be handed over (IS2, IS4, IS6).
pub(crate) fn implicit_hand_over(
    tx: &Tx<'_>,
    f: &SegmentFiles,
    run: RunId,
) -> Result<Option<HandOver>, StoreError> {
    if f.called_submit {
        return Ok(None);
    }
    let mut paths: Vec<String> = f.written.clone();
    for c in &f.cited {
        if !paths.contains(c) {
            paths.push(c.clone());
        }
    }
    let Some(ticket) = files_ticket(f, &paths) else {
        return Ok(None);
    };
    if matches!(ticket.stage, TicketStage::Approved | TicketStage::Dropped)
        || held_back(tx, &ticket)?.is_some()
        || !is_producer(tx, &f.item, &ticket, run)?
    {
        return Ok(None);
    }
    let name = ticket_folder_name(&f.plan_folder, &ticket);
    let dir = ticket_dir(&f.plan_folder, &ticket);
    let last = tx
        .submissions_of_ticket(ticket.id)?
        .into_iter()
        .next()
        .map(|s| s.files)
        .unwrap_or_default();
    let mut files = Vec::new();
    for p in paths.iter().filter(|p| in_folder(p, &name)) {
        let real = Path::new(&f.plan_folder).join(p);
        if !real.is_file() || !real.starts_with(&dir) {
            continue;
        }
        let Ok((sha256, size)) = sha256_file(&real) else {
            continue;
        };
        if last.iter().any(|l| l.path == *p && l.sha256 == sha256) {
            continue;
        }
        files.push(SubmittedFile {
            path: p.clone(),
            sha256,
            size: i64::try_from(size).unwrap_or(i64::MAX),
        });
    }
    if files.is_empty() {
        return Ok(None);
    }
    let session = tx.segment(run)?.map(|s| s.session_id);
    Ok(Some(HandOver {
        ticket: ticket.id,
        origin: SubmissionOrigin::Implicit,
        producer: f.item.bot_id,
        run: Some(run),
        work_item: Some(f.item.id),
        files,
        content: None,
        parts: Vec::new(),
        note: String::new(),
        claims: Vec::new(),
        post_in: session,
    }))
}

/// IS5: files a non-owner left in an owned ticket's folder, with the words it is told.
pub(crate) fn left_in_owned(
    tx: &Tx<'_>,
    f: &SegmentFiles,
    run: RunId,
) -> Result<Option<String>, StoreError> {
    if f.called_submit {
        return Ok(None);
    }
    let mut told = Vec::new();
    for t in &f.tickets {
        let Some(owner) = t.owner_bot_id else {
            continue;
        };
        if owner == f.item.bot_id || is_producer(tx, &f.item, t, run)? {
            continue;
        }
        if t.reviewer_bot_id == Some(f.item.bot_id) {
            continue;
        }
        let name = ticket_folder_name(&f.plan_folder, t);
        let left: Vec<&String> = f.written.iter().filter(|p| in_folder(p, &name)).collect();
        if !left.is_empty() {
            told.push(format!(
                "#{:02} ({})",
                t.number,
                left.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok((!told.is_empty()).then(|| {
        format!(
            "The files you left in another Bot's ticket folder were not handed over: {}. If \
             they are that ticket's work, hand them over with submit.",
            told.join("; ")
        )
    }))
}

/// Record an implicit hand-over now and settle it in the background: a failing check queues
/// a line that wakes the producer (IS3, any other normal ending).
pub(crate) fn hand_over_in_background(store: &troupe_store::Store, hooks: &Hooks, h: HandOver) {
    let recorded = store.write(|tx| record(tx, hooks, &h));
    let sub = match recorded {
        Ok(Ok(s)) => s.id,
        Ok(Err(r)) => {
            tracing::info!(refusal = %r, "an implicit hand-over was not recorded");
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "an implicit hand-over could not be recorded");
            return;
        }
    };
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        tracing::warn!(%sub, "no runtime to check an implicit hand-over on; it waits for the next pass");
        return;
    };
    let store = store.clone();
    let pass = SubmissionPass::new(hooks.clone());
    rt.spawn(async move {
        settle_and_tell(&store, &pass, sub).await;
    });
}

/// Settle a hand-over's checks; a failure goes back to its producer as a waking line.
pub(crate) async fn settle_and_tell(
    store: &troupe_store::Store,
    pass: &SubmissionPass,
    sub: SubmissionId,
) {
    match pass.run(store, sub, AppPass::Checks).await {
        Ok(Moved::FailedChecks { text }) => {
            let told = store.write(|tx| {
                let s = tx.submission(sub)?;
                mail::to_producer(tx, &s, "check", text.clone())
            });
            if let Err(e) = told {
                tracing::warn!(%sub, error = %e, "the producer could not be told of a failing check");
            }
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(%sub, error = %e, "a hand-over's checks could not run"),
    }
}

/// T12 at a prose ending: sent back once.
pub struct ApprovedChangeEnding;

pub(crate) const APPROVED_CHANGE: &str = "approved_change";

impl EndingHook for ApprovedChangeEnding {
    fn name(&self) -> &str {
        APPROVED_CHANGE
    }

    fn check(&self, ctx: &EndingContext<'_>) -> EndingVerdict {
        if !crate::tools::in_conversation(ctx.thread)
            || ctx.bounced.iter().any(|h| h == APPROVED_CHANGE)
        {
            return EndingVerdict::Pass;
        }
        match ctx.store.read(|tx| segment_files(tx, ctx.run_id)) {
            Ok(Some(f)) => match approved_change(&f) {
                Some(text) => EndingVerdict::Bounce(text),
                None => EndingVerdict::Pass,
            },
            Ok(None) => EndingVerdict::Pass,
            Err(e) => {
                tracing::warn!(run = %ctx.run_id, error = %e, "approved-change check could not read the segment");
                EndingVerdict::Pass
            }
        }
    }
}

/// IS1–IS6 at a prose ending: the producer's new files are handed over; a non-owner's files in
/// an owned ticket's folder are pointed out once.
pub struct HandOverEnding {
    pub(crate) hooks: Hooks,
}

pub(crate) const HAND_OVER: &str = "hand_over";

impl EndingHook for HandOverEnding {
    fn name(&self) -> &str {
        HAND_OVER
    }

    fn check(&self, ctx: &EndingContext<'_>) -> EndingVerdict {
        if !crate::tools::in_conversation(ctx.thread) {
            return EndingVerdict::Pass;
        }
        let run = ctx.run_id;
        let read = ctx.store.read(|tx| {
            let Some(f) = segment_files(tx, run)? else {
                return Ok((None, None));
            };
            let h = implicit_hand_over(tx, &f, run)?;
            let told = if h.is_none() {
                left_in_owned(tx, &f, run)?
            } else {
                None
            };
            Ok((h, told))
        });
        match read {
            Ok((Some(h), _)) => {
                hand_over_in_background(ctx.store, &self.hooks, h);
                EndingVerdict::Pass
            }
            Ok((None, Some(text))) if !ctx.bounced.iter().any(|b| b == HAND_OVER) => {
                EndingVerdict::Bounce(text)
            }
            Ok(_) => EndingVerdict::Pass,
            Err(e) => {
                tracing::warn!(run = %run, error = %e, "the ending's hand-over could not be read");
                EndingVerdict::Pass
            }
        }
    }
}
