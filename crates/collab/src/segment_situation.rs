//! What a segment reads about its work with every model call (PLAN-O6, C §2, CB-6): at a
//! desk, the jobs it may choose among and what the reader made of its line; in work on a job,
//! the job's record, its folder, the requests open between it and other Bots, and its own
//! pending check-back.

use crate::check_backs::pending_note;
use crate::plans::plan_situation;
use troupe_core::conversation::Author;
use troupe_core::thread::Thread;
use troupe_core::work_item::WorkMode;
use troupe_engine::extension::{ContextContributor, ContextParts};
use troupe_store::{Store, StoreError, Tx};

pub struct SegmentSituation;

/// Where effects at a desk need no job first: the desk guard lets them run in a person's
/// direct and in a workflow's thread (both still carry the work themselves), so the desk's
/// words must not send the Bot to `work_on` there.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeskRule {
    JobFirst,
    Direct,
    Workflow,
}

fn desk(
    tx: &Tx<'_>,
    candidates: &[troupe_core::PlanId],
    verdict: Option<&str>,
    rule: DeskRule,
    by_person: bool,
) -> Result<String, StoreError> {
    let mut out = String::from(
        "You are at your desk in this conversation: you have not yet chosen which job the \
         line that woke you is for. ",
    );
    out.push_str(match rule {
        DeskRule::JobFirst => {
            "Replies, questions to the person (ask_user), reading files and end_turn need no \
             job. "
        }
        DeskRule::Direct => {
            "In a direct conversation with the person you may do the work right here: your \
             tools act in this conversation's folder without a job chosen first. Choose or \
             open a job with work_on only for work worth keeping as a job of its own."
        }
        DeskRule::Workflow => {
            "This conversation's workflow is your work: do it right here, no job needs \
             choosing first."
        }
    });
    if rule == DeskRule::Workflow {
        return Ok(out);
    }
    if rule == DeskRule::JobFirst {
        // What the desk guard does with this desk's first effect, in its order (the reader's
        // verdict, then the candidates): the words must not send the Bot to work_on where the
        // effect would simply run.
        out.push_str(match (verdict, candidates.len()) {
            (Some("done_in_place"), _) => {
                "The line was read as something to do here and now: do it right here, your \
                 tools act in this conversation's folder and no job opens for it."
            }
            (Some("new"), _) => {
                "The line was read as new work: your first action with an effect opens a job \
                 for it (to title the job yourself, call work_on with \"new\" first)."
            }
            (_, 1) => {
                "The one job listed below is the default: your first action with an effect \
                 works on it."
            }
            (_, 0) if by_person => {
                "Your first action with an effect opens a job for this line (to title the job \
                 yourself, call work_on with \"new\" first)."
            }
            _ => "Before anything with an effect, choose a job with work_on.",
        });
    }
    if candidates.is_empty() {
        out.push_str("\nNo job is open here.");
        if verdict != Some("done_in_place") {
            out.push_str(
                " To open one for the line: work_on({\"new\":{\"title\":\"<the goal>\"}}).",
            );
        }
        return Ok(out);
    }
    out.push_str("\nJobs you may choose:");
    for p in candidates {
        match tx.find_plan(*p)? {
            Some(plan) => {
                let dormant = if plan.is_dormant() { " (dormant)" } else { "" };
                out.push_str(&format!(
                    "\n- work_on({{\"plan\":\"{p}\"}}): \"{}\"{dormant}",
                    plan.name
                ));
                if !plan.spec.goal.trim().is_empty() {
                    out.push_str(&format!(" — goal: {}", plan.spec.goal.trim()));
                }
            }
            None => out.push_str(&format!("\n- {p}: unavailable")),
        }
    }
    out.push_str("\nOr a new job: work_on({\"new\":{\"title\":\"<the goal>\"}}).");
    Ok(out)
}

fn work(tx: &Tx<'_>, item: &troupe_store::WorkItemRecord) -> Result<Option<String>, StoreError> {
    let Some(plan) = item.plan_id else {
        return Ok(None);
    };
    let mut out = plan_situation(tx, plan)?;
    let folder = tx.plan(plan)?.folder;
    out.push_str(&format!("\nYou work on this job in its folder: {folder}"));
    if let Some(root) = crate::desk::job_root(&folder) {
        // The job's folder is where relative paths start; the person's files are above it.
        out.push_str(&format!(
            ". The conversation's folder {root} holds it, and your tools reach it too: \
             with ../ paths up to it, or absolute paths inside it."
        ));
    }
    for d in tx.open_delegations_from(item.id)? {
        let to = tx.bot(tx.work_item(d.recipient_work_item)?.bot_id)?.name;
        out.push_str(&format!(
            "\nYou asked {to} ({}): {} — not answered yet.",
            d.id, d.ask
        ));
    }
    for d in tx.open_delegations_to(item.id)? {
        let from = tx.bot(tx.work_item(d.sender_work_item)?.bot_id)?.name;
        out.push_str(&format!(
            "\n{from} asked you ({}, expects {}): {} — {}.",
            d.id,
            d.expects.as_str(),
            d.ask,
            troupe_core::delegation::how_to_answer(d.expects)
        ));
    }
    if let Some(note) = pending_note(tx, item.id)? {
        out.push('\n');
        out.push_str(&note);
    }
    Ok(Some(out))
}

/// Which rule a desk on `item`, in `thread`, works by: as the desk guard lets effects run.
pub(crate) fn desk_rule(
    tx: &Tx<'_>,
    thread: &Thread,
    item: &troupe_store::WorkItemRecord,
) -> Result<DeskRule, StoreError> {
    Ok(if crate::tools::carried_by_workflow(thread) {
        DeskRule::Workflow
    } else if let Some(s) = item.session_id
        && tx.session(s)?.kind == troupe_core::conversation::SessionKind::Direct
    {
        DeskRule::Direct
    } else {
        DeskRule::JobFirst
    })
}

/// [`desk_rule`] for the desk a run of `item` is: its thread read first.
pub(crate) fn desk_rule_of_run(
    tx: &Tx<'_>,
    run: troupe_core::RunId,
    item: &troupe_store::WorkItemRecord,
) -> Result<DeskRule, StoreError> {
    desk_rule(tx, &tx.thread(tx.run(run)?.thread_id)?, item)
}

fn situation(thread: &Thread, store: &Store) -> Result<Option<String>, StoreError> {
    // Only a Bot's own threads have segments (a child task's or an operator's never does).
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
        match seg.mode {
            WorkMode::Desk => {
                let verdict = tx.segment_verdict(run)?;
                let rule = desk_rule(tx, thread, &tx.work_item(seg.work_item_id)?)?;
                let by_person = match tx.segment(run)?.and_then(|s| s.trigger_line_id) {
                    Some(line) => tx.line(line)?.author == Author::User,
                    None => false,
                };
                desk(tx, &seg.candidates, verdict.as_deref(), rule, by_person).map(Some)
            }
            WorkMode::Work => work(tx, &tx.work_item(seg.work_item_id)?),
        }
    })
}

impl ContextContributor for SegmentSituation {
    fn name(&self) -> &str {
        "segment"
    }

    fn contribute(&self, thread: &Thread, store: &Store, out: &mut ContextParts) {
        match situation(thread, store) {
            Ok(Some(text)) => out.situation.push(text),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(thread = %thread.id, error = %e, "the segment's situation could not be read")
            }
        }
    }
}
