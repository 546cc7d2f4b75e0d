//! `submit({artifacts, parts?, claims?, note?, continue?, ticket?})` (§4.3): the producer hands a
//! ticket's files over. The files are resolved and allowed, hashed (streamed), recorded with
//! the ones not yet cited posted on a line of the Bot's, checked, and the ticket moves by the
//! pass. The segment ends with it unless it still owes someone words or waits on something.

use super::files::{Allowed, sha256_file};
use super::handover::{HandOver, record};
use super::pass::{Moved, SubmissionPass, part_ids};
use super::{Hooks, ticket_of_work};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use troupe_core::RunId;
use troupe_core::conversation::Author;
use troupe_core::message::{Origin, Role};
use troupe_core::run::EndReason;
use troupe_core::submission::SubmissionOrigin;
use troupe_core::ticket::AppPass;
use troupe_core::work_item::WorkMode;
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolReply};
use troupe_store::{StoreError, SubmittedFile, TicketRecord, Tx, WorkItemRecord};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubmitArgs {
    artifacts: Vec<String>,
    #[serde(default)]
    parts: Vec<serde_json::Value>,
    #[serde(default)]
    claims: Vec<String>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default, rename = "continue")]
    continue_working: bool,
    /// The ticket the Bot means, by number: never chooses one (the work's binding and the
    /// files' folder do), only checked, since models name it unasked.
    #[serde(default)]
    ticket: Option<serde_json::Value>,
}

pub(crate) struct Submit {
    pub(crate) hooks: Hooks,
}

/// What the call resolved before hashing.
struct Prepared {
    item: WorkItemRecord,
    ticket: troupe_core::TicketId,
    ticket_number: i64,
    named: Vec<(String, std::path::PathBuf)>,
    parts: Vec<troupe_core::PartId>,
    session: troupe_core::SessionId,
}

fn prepare(
    tx: &Tx<'_>,
    run: RunId,
    workdir: &str,
    args: &SubmitArgs,
) -> Result<Result<Prepared, String>, StoreError> {
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(Err(
            "not_bound: this turn is not a Bot's work on a job".into()
        ));
    };
    if seg.mode != WorkMode::Work {
        // Say what the desk's own rule is: where no job is needed first, a Bot sent to
        // work_on spends its refusals there instead of doing the work.
        use crate::segment_situation::{DeskRule, desk_rule_of_run};
        let item = tx.work_item(seg.work_item_id)?;
        return Ok(Err(match desk_rule_of_run(tx, run, &item)? {
            DeskRule::JobFirst => {
                "not_bound: choose the job first with work_on; a hand-over is a job's".into()
            }
            DeskRule::Direct => "not_bound: a hand-over is a job's, and this line has none. \
                 In this direct, do the work right here (read the files, change them, run the \
                 checks), then reply to the person with what you did; nothing needs handing \
                 over."
                .into(),
            DeskRule::Workflow => "not_bound: a hand-over is a job's; this conversation's \
                 workflow is your work: do it right here and end as the workflow says."
                .into(),
        }));
    }
    let item = tx.work_item(seg.work_item_id)?;
    let Some(plan_id) = item.plan_id else {
        return Ok(Err("not_bound: this work has no job".into()));
    };
    let plan = tx.plan(plan_id)?;
    let tickets = tx.tickets_of_plan(plan_id)?;
    if tickets.is_empty() {
        return Ok(Err(
            "no_ticket: this job has no tickets yet; the lead lays them out with plan_items".into(),
        ));
    }
    // Resolve against the job first to find the ticket; the allowed check follows per ticket.
    let probe = Allowed::new(&plan.folder, workdir, &tickets[0], &[]);
    let mut recorded = Vec::new();
    for a in &args.artifacts {
        match probe.resolve(a) {
            Ok(n) => recorded.push(n.recorded),
            Err(m) => return Ok(Err(m)),
        }
    }
    let ticket = match ticket_of_work(tx, &item, &plan.folder, &tickets, &recorded)? {
        Ok(t) => t,
        Err(m) => return Ok(Err(m)),
    };
    if let Some(raw) = &args.ticket
        && let Err(m) = named_ticket_matches(raw, &ticket)
    {
        return Ok(Err(m));
    }
    if ticket.reviewer_bot_id == Some(item.bot_id) {
        return Ok(Err(format!(
            "reviewer_notes: you review ticket #{:02}; what a reviewer writes are notes, never a \
             hand-over. Give your verdict with review.",
            ticket.number
        )));
    }
    let allowed = Allowed::new(&plan.folder, workdir, &ticket, &tickets);
    let mut named = Vec::new();
    for a in &args.artifacts {
        match allowed.resolve(a) {
            Ok(n) if !named.iter().any(|(r, _)| *r == n.recorded) => {
                named.push((n.recorded, n.real))
            }
            Ok(_) => {}
            Err(m) => return Ok(Err(m)),
        }
    }
    let names: Vec<String> = args
        .parts
        .iter()
        .map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let parts = match part_ids(&tx.parts_of_ticket(ticket.id)?, &names) {
        Ok(p) => p,
        Err(m) => return Ok(Err(m)),
    };
    let session = tx
        .segment(run)?
        .map(|s| s.session_id)
        .ok_or_else(|| StoreError::Corrupt(format!("run {run} has no segment")))?;
    Ok(Ok(Prepared {
        item,
        ticket: ticket.id,
        ticket_number: ticket.number,
        named,
        parts,
        session,
    }))
}

/// §4.3's exceptions: why the segment may not end with the hand-over yet, if it may not.
pub(crate) fn must_go_on(
    tx: &Tx<'_>,
    run: RunId,
    item: &WorkItemRecord,
) -> Result<Option<String>, StoreError> {
    if super::mail::person_unanswered(tx, run)? {
        return Ok(Some(
            "the person who wrote to you has had no reply yet: reply to them now (the files \
             are on the hand-over's line already; do not attach them again), then end"
                .into(),
        ));
    }
    let read_user = tx
        .messages(item.thread_id, None, u32::MAX)?
        .iter()
        .any(|m| m.run_id == Some(run) && m.role == Role::User && m.origin == Origin::User);
    let spoke = tx
        .lines_of_turn(run)?
        .iter()
        .any(|l| l.author == Author::Bot && !l.body.starts_with("Handed over for #"));
    if read_user && !spoke {
        return Ok(Some(
            "a person's line you read has no answer yet: answer it, then end".into(),
        ));
    }
    let open = tx.open_delegations_from(item.id)?;
    if let Some(d) = open.first() {
        return Ok(Some(format!(
            "your request {} is still open: you are woken with its answer",
            d.id
        )));
    }
    if let Some(w) = &item.waiting_on {
        return Ok(Some(format!("your work is waiting on something ({w:?})")));
    }
    Ok(None)
}

/// A `ticket` the Bot named must be the one its hand-over goes to.
fn named_ticket_matches(raw: &serde_json::Value, ticket: &TicketRecord) -> Result<(), String> {
    let number = match raw {
        serde_json::Value::Number(n) => n.as_i64(),
        serde_json::Value::String(s) => s.trim().trim_start_matches('#').parse().ok(),
        _ => None,
    };
    match number {
        Some(n) if n == ticket.number => Ok(()),
        Some(n) => Err(format!(
            "ticket: these files go to ticket #{:02} \"{}\", the one your work is on, not \
             #{n:02}; to hand over #{n:02}'s work, choose it with work_on({{\"ticket\": {n}}}) \
             first, or leave `ticket` out",
            ticket.number, ticket.title
        )),
        None => Err(format!(
            "ticket: give the ticket's number (e.g. {} or \"#{:02}\"), not {raw}, or leave it \
             out: the ticket your work is on is taken",
            ticket.number, ticket.number
        )),
    }
}

/// What the Bot reads after a hand-over that got through its gates.
pub(crate) fn outcome_text(moved: &Moved, sub: troupe_core::SubmissionId, number: i64) -> String {
    match moved {
        Moved::ToReviewer { .. } | Moved::InReview => {
            format!("Handed over #{number:02} ({sub}); its reviewer has it now.")
        }
        Moved::Approved(by) => format!("Handed over #{number:02} ({sub}); approved ({by})."),
        Moved::AwaitingUser { reasons } => format!(
            "Handed over #{number:02} ({sub}); it waits on the user's word ({}).",
            reasons.join("; ")
        ),
        Moved::WaitingOnChecks => {
            format!("Handed over #{number:02} ({sub}); its checks are still running.")
        }
        Moved::Rework { text } | Moved::FailedChecks { text } => text.clone(),
        Moved::Decided(state) => format!("Handed over #{number:02} ({sub}); it is {state}."),
    }
}

#[async_trait]
impl ToolHandler for Submit {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: SubmitArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => return ToolReply::error(crate::tools::bad_arguments("submit", &e, &spec())),
        };
        if args.artifacts.is_empty() {
            return ToolReply::error(
                "submit: artifacts: name the files you hand over (words go through \
                 end_turn({\"reason\":\"done\",\"answer\":…}))",
            );
        }
        let run = ctx.run_id;
        let workdir = ctx.thread.workspace.clone();
        let p = match ctx.store.read(|tx| prepare(tx, run, &workdir, &args)) {
            Ok(Ok(p)) => p,
            Ok(Err(m)) => return ToolReply::error(format!("submit refused — {m}")),
            Err(e) => return ToolReply::error(format!("submit: {e}; nothing was handed over")),
        };
        let named = p.named.clone();
        let hashed = tokio::task::spawn_blocking(move || {
            named
                .into_iter()
                .map(|(recorded, real)| {
                    sha256_file(&real)
                        .map(|(sha256, size)| SubmittedFile {
                            path: recorded.clone(),
                            sha256,
                            size: i64::try_from(size).unwrap_or(i64::MAX),
                        })
                        .map_err(|e| format!("{recorded}: cannot be read: {e}"))
                })
                .collect::<Result<Vec<_>, String>>()
        })
        .await;
        let files = match hashed {
            Ok(Ok(f)) => f,
            Ok(Err(m)) => return ToolReply::error(format!("submit refused — {m}")),
            Err(e) => return ToolReply::error(format!("submit: hashing failed: {e}")),
        };
        let h = HandOver {
            ticket: p.ticket,
            origin: SubmissionOrigin::Explicit,
            producer: p.item.bot_id,
            run: Some(run),
            work_item: Some(p.item.id),
            files,
            content: None,
            parts: p.parts.clone(),
            note: args.note.clone().unwrap_or_default(),
            claims: troupe_core::review::clean(args.claims.clone()),
            post_in: Some(p.session),
        };
        let sub = match ctx.store.write(|tx| record(tx, &self.hooks, &h)) {
            Ok(Ok(s)) => s,
            Ok(Err(r)) => return ToolReply::error(format!("submit refused — {r}")),
            Err(e) => return ToolReply::error(format!("submit: {e}; nothing was handed over")),
        };
        let pass = SubmissionPass::new(self.hooks.clone());
        let moved = match pass.run(&ctx.store, sub.id, AppPass::Checks).await {
            Ok(m) => m,
            Err(e) => {
                return ToolReply::error(format!(
                    "submit: {} was recorded but its checks could not run: {e}",
                    sub.id
                ));
            }
        };
        if let Moved::FailedChecks { text } = &moved {
            return ToolReply::error(text.clone());
        }
        let text = outcome_text(&moved, sub.id, p.ticket_number);
        if args.continue_working {
            return ToolReply::ok(json!({"submission_id": sub.id, "note": text}).to_string());
        }
        match ctx.store.read(|tx| must_go_on(tx, run, &p.item)) {
            Ok(Some(why)) => ToolReply::ok(
                json!({"submission_id": sub.id,
                       "note": format!("{text} Your turn goes on: {why}.")})
                .to_string(),
            ),
            Ok(None) => ToolReply::ending(
                json!({"submission_id": sub.id, "note": text}).to_string(),
                false,
                EndReason::Consumer {
                    code: "submitted".into(),
                    detail: Some(sub.id.to_string()),
                },
            ),
            Err(e) => ToolReply::ok(
                json!({"submission_id": sub.id,
                       "note": format!("{text} (whether to end could not be read: {e})")})
                .to_string(),
            ),
        }
    }
}

pub(crate) fn spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "artifacts": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                          "description": "The files you hand over: paths in your work folder or the workspace (this job's folder and the shared assets/ only)."},
            "parts": {"type": "array", "items": {"type": ["string", "integer"]},
                      "description": "The ticket's parts this covers (label, number or id); none: the whole ticket."},
            "claims": {"type": "array", "items": {"type": "string"}, "description": "What you claim the work does."},
            "note": {"type": "string", "description": "A note for whoever judges it."},
            "continue": {"type": "boolean", "description": "Keep working after handing over (other parts). Default: your turn ends."},
            "ticket": {"type": ["integer", "string"], "description": "Optional: the ticket's number, checked against the ticket your work is on (it is taken without it)."}
        },
        "required": ["artifacts"],
        "additionalProperties": false
    })
}
