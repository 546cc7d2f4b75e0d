//! The closing check (C §14, ADR 0037) on a Bot's message to a conversation the user is in,
//! while it works on a job: the rules are `troupe_core::closing_check`'s; this module gathers
//! their evidence and sends the note back, once per segment (CC-4), with no model call.
//!
//! - a reply (a prose ending, or the words of the message that calls `end_turn`) has gone out
//!   already: the note comes back as a loop line — an ending hook's bounce, or the `end_turn`
//!   result — and the turn goes on;
//! - a `send_message` does not run: the call returns the note, not as a tool error (CC-5).
//!
//! CC-1's evidence is taken now: file checks run again through the checks runner (recorded
//! like any run), a confirmed check from words bound to a file is measured again; a command
//! check reads its latest run unless this segment ran the same command cleanly.

use crate::checks::{Checks, lexical, plan_workspace};
use crate::tools::{ToolHost, in_conversation};
use serde_json::json;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use troupe_core::closing_check::{
    ClosingNote, Facts, FailingCheck, Via, applies, decide, path_candidates,
};
use troupe_core::conversation::SessionKind;
use troupe_core::thread::Thread;
use troupe_core::work_item::WorkMode;
use troupe_core::{CheckId, RunId, SessionId, TicketId};
use troupe_engine::extension::{
    EndingContext, EndingHook, EndingVerdict, ToolCallContext, ToolReply,
};
use troupe_store::{
    CheckKind, CheckRecord, CheckRunRecord, RunOutcome, Store, StoreError, Tx, WorkItemRecord,
    WorkRef,
};

/// How long re-running the checks may hold one message back; past it, the latest runs stand.
const RERUN_WAIT: Duration = Duration::from_secs(20);

/// A message about to be checked, with what the store says about it.
struct Pending {
    run: RunId,
    session: SessionId,
    item: WorkItemRecord,
    facts: Facts,
    /// The job's checks that may fail, with the run to judge each by, in the note's order.
    checks: Vec<(CheckRecord, Option<CheckRunRecord>)>,
    /// Of those, the ones to run again now.
    rerun: Vec<CheckId>,
}

/// What the check needs and the store cannot say: the runner, and where paths resolve.
struct Place<'a> {
    thread: &'a Thread,
    run: RunId,
    text: &'a str,
    target: Option<SessionId>,
    via: Via,
}

/// Everything up to the checks' runs, from one read. `None` when the check does not apply.
fn prepare(tx: &Tx<'_>, p: &Place<'_>) -> Result<Option<Pending>, StoreError> {
    let (Some(seg), Some(row)) = (tx.segment_work(p.run)?, tx.segment(p.run)?) else {
        return Ok(None);
    };
    // A desk has no job yet; a read-only turn under a hold can change no deliverable.
    if seg.mode != WorkMode::Work || seg.readonly {
        return Ok(None);
    }
    let item = tx.work_item(seg.work_item_id)?;
    let Some(plan_id) = item.plan_id else {
        return Ok(None);
    };
    let session = p.target.unwrap_or(row.session_id);
    let Ok(conversation) = tx.session(session) else {
        return Ok(None);
    };
    if !conversation.bot_ids.contains(&item.bot_id) {
        return Ok(None);
    }
    let plan = tx.plan(plan_id)?;
    let root = lexical(&plan_workspace(&plan.folder));
    let here = lexical(Path::new(&p.thread.workspace));
    let cited = cited_files(p.text, &[Path::new(&p.thread.workspace), &root], &root);
    let mut facts = Facts {
        text: p.text.to_string(),
        via: p.via,
        cited_files: cited.iter().map(|(said, _)| said.clone()).collect(),
        user_in_conversation: conversation.kind != SessionKind::BotDirect,
        in_job: true,
        sent_back_before: tx.closing_check_sent(p.run)?,
        failing_checks: Vec::new(),
        check_back_booked: false,
        delegated: false,
        other_bots: Vec::new(),
        commands_run: 0,
    };
    if !applies(&facts) {
        return Ok(None);
    }
    let commands = tx.commands(p.run)?;
    facts.commands_run = commands.len();
    facts.check_back_booked = tx.check_back_booked_in(item.id, p.run)?;
    facts.delegated = tx.delegated_in(p.run)?;
    facts.other_bots = tx
        .bots(false)?
        .into_iter()
        .filter(|b| b.id != item.bot_id)
        .map(|b| b.name)
        .collect();
    let mut checks = Vec::new();
    let mut rerun = Vec::new();
    if !cited.is_empty() {
        for c in tx.checks_of_plan(plan_id, false)? {
            let again = match c.kind {
                CheckKind::Standard => continue,
                // CC-1: an offer, or one bound to no file yet, is no evidence either way.
                CheckKind::Words if !c.confirmed || c.path.is_none() => continue,
                CheckKind::Command
                    if commands
                        .iter()
                        .any(|r| r.ran_clean() && same_command(&r.command, &c, &root, &here)) =>
                {
                    continue;
                }
                CheckKind::Command => false,
                // A seams check is a model's call: its latest run stands (the closing check
                // makes none); one judged on pictures is for reference only.
                CheckKind::Seams if c.runs.first().is_some_and(|r| r.for_reference) => continue,
                CheckKind::Seams => false,
                _ => true,
            };
            if again {
                rerun.push(c.id);
            }
            let latest = c.runs.first().cloned();
            checks.push((c, latest));
        }
        // The checks about the files it cites come first in the note.
        let cited_paths: Vec<&PathBuf> = cited.iter().map(|(_, real)| real).collect();
        checks.sort_by_key(|(c, _)| {
            !c.path
                .as_deref()
                .is_some_and(|path| cited_paths.contains(&&lexical(&root.join(path))))
        });
    }
    Ok(Some(Pending {
        run: p.run,
        session,
        item,
        facts,
        checks,
        rerun,
    }))
}

/// The check's command, as the segment's shell ran it: the same words in the folder the check
/// runs in (its cwd under the workspace root), which is where the segment's shell starts.
fn same_command(ran: &str, c: &CheckRecord, root: &Path, here: &Path) -> bool {
    lexical(&root.join(c.cwd.as_deref().unwrap_or("."))) == here
        && c.command
            .as_deref()
            .is_some_and(|cmd| cmd.trim() == ran.trim())
}

/// The paths the text names that are files inside `root`, each with where it is; a relative
/// path is looked for under each of `bases` in turn.
fn cited_files(text: &str, bases: &[&Path], root: &Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    for said in path_candidates(text) {
        let p = Path::new(&said);
        let found = if p.is_absolute() {
            vec![lexical(p)]
        } else {
            bases.iter().map(|b| lexical(&b.join(p))).collect()
        }
        .into_iter()
        .find(|real| real.starts_with(root) && real.is_file());
        if let Some(real) = found
            && !out.iter().any(|(_, r)| *r == real)
        {
            out.push((said, real));
        }
    }
    out
}

/// Run the file checks and bound checks from words again; a run that fails or does not finish
/// in time (another run of the job's checks holds them) leaves the latest one standing.
async fn rerun(runner: &Checks, pending: &mut Pending) {
    let deadline = tokio::time::Instant::now() + RERUN_WAIT;
    for id in std::mem::take(&mut pending.rerun) {
        match tokio::time::timeout_at(deadline, runner.run_check(id, None)).await {
            Ok(Ok(run)) => {
                if let Some((_, latest)) = pending.checks.iter_mut().find(|(c, _)| c.id == id) {
                    *latest = Some(run);
                }
            }
            Ok(Err(e)) => {
                tracing::warn!(check = %id, error = %e, "closing check: a check did not run")
            }
            Err(_) => {
                tracing::warn!(run = %pending.run, "closing check: the checks took too long; their latest runs stand");
                return;
            }
        }
    }
}

/// Decide, and record a send-back with its work-log entry in one write.
fn finish(store: &Store, mut pending: Pending) -> Option<ClosingNote> {
    pending.facts.failing_checks = pending
        .checks
        .iter()
        .filter(|(_, run)| run.as_ref().is_none_or(|r| r.outcome != RunOutcome::Passed))
        .map(|(c, run)| FailingCheck {
            label: label(c),
            detail: run.as_ref().map_or_else(
                || "not run yet".to_string(),
                |r| format!("{} — {}", r.outcome.as_str(), r.detail),
            ),
        })
        .collect();
    let note = decide(&pending.facts)?;
    let codes: Vec<&str> = note.rules.iter().map(|r| r.code()).collect();
    let via = match pending.facts.via {
        Via::Reply => "reply",
        Via::SendMessage => "send_message",
    };
    let written = store.write(|tx| {
        if !tx.record_closing_check(pending.run, pending.session, via, &codes)? {
            return Ok(false);
        }
        let Some(plan) = pending.item.plan_id else {
            return Ok(true);
        };
        tx.log_work(
            WorkRef {
                plan,
                ticket: pending.item.ticket_id.map(TicketId),
                work_item: Some(pending.item.id),
            },
            "closing_check_sent_back",
            json!({"rules": codes, "run_id": pending.run, "via": via,
                   "session_id": pending.session}),
        )?;
        Ok(true)
    });
    match written {
        Ok(true) => Some(note),
        Ok(false) => None,
        Err(e) => {
            tracing::warn!(run = %pending.run, error = %e, "closing check: the send-back could not be recorded; the message passes");
            None
        }
    }
}

/// What the check checks, in the words the note uses.
fn label(c: &CheckRecord) -> String {
    let path = c.path.as_deref().unwrap_or_default();
    let pattern = c.pattern.as_deref().unwrap_or_default();
    let what = match c.kind {
        CheckKind::FileExists => format!("file {path} exists"),
        CheckKind::FileContains if c.negate => {
            format!("file {path} does not contain \"{pattern}\"")
        }
        CheckKind::FileContains => format!("file {path} contains \"{pattern}\""),
        CheckKind::FileMatchesRegex if c.negate => {
            format!("file {path} does not match /{pattern}/")
        }
        CheckKind::FileMatchesRegex => format!("file {path} matches /{pattern}/"),
        CheckKind::Command => format!("command `{}`", c.command.as_deref().unwrap_or_default()),
        CheckKind::Words => format!(
            "{} of {path}, from the user's words",
            c.dimension.map_or("", |d| d.as_str()).replace('_', " ")
        ),
        CheckKind::Standard => "the sample's standard".to_string(),
        CheckKind::Seams => match c.command.as_deref() {
            Some(cmd) => format!("the seams of the parts `{cmd}` lists"),
            None => format!("the seams of {path}"),
        },
    };
    match &c.done_when_line {
        Some(line) => format!("{what} (for \"{line}\")"),
        None => what,
    }
}

/// The whole check of one message, for callers that may await.
async fn check(host: &ToolHost, store: &Store, p: Place<'_>) -> Option<ClosingNote> {
    let mut pending = match store.read(|tx| prepare(tx, &p)) {
        Ok(Some(pending)) => pending,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!(run = %p.run, error = %e, "closing check: could not be read; the message passes");
            return None;
        }
    };
    if let Some(collab) = host.collab() {
        rerun(&collab.checks(), &mut pending).await;
    }
    finish(store, pending)
}

/// CC-4 for `send_message`: Some(reply) when the message is not sent and the call returns the
/// note instead, as a result the Bot reads, not an error (CC-5).
pub(crate) async fn at_send_message(
    host: &ToolHost,
    ctx: &ToolCallContext,
    text: &str,
    target: Option<SessionId>,
) -> Option<ToolReply> {
    let place = Place {
        thread: &ctx.thread,
        run: ctx.run_id,
        text,
        target,
        via: Via::SendMessage,
    };
    let note = check(host, &ctx.store, place).await?;
    Some(ToolReply::ok(
        json!({"posted": false, "closing_check": note.text}).to_string(),
    ))
}

/// For `end_turn`: the words of the message that calls it have gone out; Some(reply) when
/// they are sent back and the turn goes on.
pub(crate) async fn at_end_turn(host: &ToolHost, ctx: &ToolCallContext) -> Option<ToolReply> {
    let message = ctx.message_id?;
    let words = ctx
        .store
        .read(|tx| match tx.line_for_thread_message(message)? {
            Some(line) => Ok(Some(tx.line(line)?.body)),
            None => Ok(None),
        })
        .ok()
        .flatten()?;
    let place = Place {
        thread: &ctx.thread,
        run: ctx.run_id,
        text: &words,
        target: None,
        via: Via::Reply,
    };
    let note = check(host, &ctx.store, place).await?;
    Some(ToolReply::ok(format!(
        "Not ended. {}\nThen end your turn again.",
        note.text
    )))
}

/// CC-4 for a reply that ends the turn in prose: the note is a loop line and the turn goes on.
pub struct ClosingCheck {
    host: Arc<ToolHost>,
}

impl ClosingCheck {
    pub fn new(host: Arc<ToolHost>) -> Self {
        ClosingCheck { host }
    }
}

impl EndingHook for ClosingCheck {
    fn name(&self) -> &str {
        "closing_check"
    }

    fn check(&self, ctx: &EndingContext<'_>) -> EndingVerdict {
        if !in_conversation(ctx.thread) || ctx.final_text.trim().is_empty() {
            return EndingVerdict::Pass;
        }
        let place = Place {
            thread: ctx.thread,
            run: ctx.run_id,
            text: ctx.final_text,
            target: None,
            via: Via::Reply,
        };
        let mut pending = match ctx.store.read(|tx| prepare(tx, &place)) {
            Ok(Some(pending)) => pending,
            Ok(None) => return EndingVerdict::Pass,
            Err(e) => {
                tracing::warn!(run = %ctx.run_id, error = %e, "closing check: could not be read; the reply passes");
                return EndingVerdict::Pass;
            }
        };
        // AC-12: a reply withheld as a repeat reached nobody, so there is nothing to send back.
        let posted = ctx.store.read(|tx| {
            Ok(tx
                .lines_of_turn(ctx.run_id)?
                .last()
                .is_some_and(|l| l.body.trim() == ctx.final_text.trim()))
        });
        if !posted.unwrap_or(true) {
            return EndingVerdict::Pass;
        }
        if !pending.rerun.is_empty()
            && let Some(collab) = self.host.collab()
        {
            let runner = collab.checks();
            if block_on_aside(rerun(&runner, &mut pending)).is_none() {
                tracing::warn!(run = %ctx.run_id, "closing check: the checks could not be run again; their latest runs stand");
            }
        }
        match finish(ctx.store, pending) {
            Some(note) => EndingVerdict::Bounce(note.text),
            None => EndingVerdict::Pass,
        }
    }
}

/// Ending hooks are synchronous and called from the run's task: the checks' runs (async file
/// reads, a probe) go on a runtime of their own on a scoped thread, so neither the caller's
/// runtime flavour nor its workers matter. Only a triggered reply with checks to re-run pays.
fn block_on_aside<F: Future + Send>(fut: F) -> Option<F::Output>
where
    F::Output: Send,
{
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()
                .map(|rt| rt.block_on(fut))
        })
        .join()
        .ok()
        .flatten()
    })
}
