//! Desk segments (C §2): a Bot woken by a line that no locked reference filed reads, replies
//! and asks at its desk, and binds to a job before any side effect — with `work_on`, or on its
//! first effect by the candidates frozen at admission (DS-5: none → a person's line opens a
//! job, one → that job, several → refused with the choices). Binding hands the line that woke
//! the desk, verbatim, to the Bot's thread on that job and ends the desk `moved` (the job's
//! segment starts), `merged` (it was live: WI-15) or `queued` (no free work slot: DS-14). Desk
//! refusals spend the segment's budget of two; the second ends it needing attention (DS-13).

use crate::bots::binding_for;
use crate::plans::{OpenPlan, open_plan_in};
use crate::routing::{labelled, speaker};
use crate::tools::ToolHost;
use crate::work_items::queue_position;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use troupe_core::conversation::{Author, SessionKind};
use troupe_core::ending::{BOUNCE_BUDGET, NEEDS_JOB_TEXT};
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::message::Origin;
use troupe_core::plan::RevisionCause;
use troupe_core::run::EndReason;
use troupe_core::thread::Interaction;
use troupe_core::work_item::{PRIORITY_USER, WorkMode, WorkState};
use troupe_core::{BotId, PlanId, RunId, SessionId, SessionMessageId, TicketId};
use troupe_engine::extension::{
    EffectGuard, GuardContext, Refusal, ToolCallContext, ToolHandler, ToolReply,
};
use troupe_store::{
    FilingSource, NewFiling, NewThread, NewWorkItem, StoreError, Tx, WorkItemRecord,
};

/// How a desk ended by binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    Moved,
    Merged,
    Queued(usize),
}

fn consumer(code: &str, plan: PlanId) -> EndReason {
    EndReason::Consumer {
        code: code.into(),
        detail: Some(plan.to_string()),
    }
}

fn needs_attention() -> EndReason {
    EndReason::Consumer {
        code: "needs_attention".into(),
        detail: Some(NEEDS_JOB_TEXT.into()),
    }
}

/// The Bot's job-level work item on `plan`, with its thread in the job's folder, made if new.
pub(crate) fn ensure_job_item(
    tx: &mut Tx<'_>,
    plan: PlanId,
    bot: BotId,
) -> Result<WorkItemRecord, StoreError> {
    if let Some(item) = tx.job_item(bot, plan)? {
        return Ok(item);
    }
    let record = tx.plan(plan)?;
    std::fs::create_dir_all(&record.folder).map_err(|e| {
        StoreError::Invalid(format!(
            "cannot create the job folder {}: {e}",
            record.folder
        ))
    })?;
    let thread = tx.create_thread(&NewThread {
        parent_id: None,
        title: record.name.clone(),
        agent: binding_for(&tx.bot(bot)?),
        workspace: record.folder.clone(),
        workspace_root: job_root(&record.folder),
        interaction: Interaction::Interactive,
    })?;
    tx.create_work_item(&NewWorkItem {
        bot_id: bot,
        mode: WorkMode::Work,
        plan_id: Some(plan),
        session_id: None,
        thread_id: thread.id,
        speaks_in: record.home_session_id,
    })
}

/// What a job's (or one of its tickets') thread may reach besides its own folder: the
/// conversation's folder the job folder `<folder>/jobs/<id>-<slug>` sits in, so work on a job
/// in a person's project can read and change the project (T24: the job's folder is only where
/// its turns start).
pub(crate) fn job_root(plan_folder: &str) -> Option<String> {
    let root = crate::checks::plan_workspace(plan_folder);
    (root != std::path::Path::new(plan_folder)).then(|| root.display().to_string())
}

/// Hand the desk's trigger to the Bot's work on `plan` and say how the desk ends.
pub(crate) fn bind(
    tx: &mut Tx<'_>,
    bot: BotId,
    session: SessionId,
    trigger: Option<SessionMessageId>,
    plan: PlanId,
) -> Result<Bound, StoreError> {
    bind_to(tx, bot, session, trigger, plan, None)
}

/// [`bind`], to the Bot's work on one ticket of the job when `ticket` is given (T21, T24).
/// Work of the Bot's already live on the job (the whole job or another ticket) takes the line
/// instead: one segment per Bot and job (WI-2, WI-8).
pub(crate) fn bind_to(
    tx: &mut Tx<'_>,
    bot: BotId,
    session: SessionId,
    trigger: Option<SessionMessageId>,
    plan: PlanId,
    ticket: Option<TicketId>,
) -> Result<Bound, StoreError> {
    let mut job = match ticket {
        Some(t) => crate::tickets::work::ensure_ticket_item(tx, plan, bot, t)?,
        None => ensure_job_item(tx, plan, bot)?,
    };
    if tx.live_segment_of(job.id)?.is_none() {
        for other in tx.work_items_of_plan(plan)? {
            if other.bot_id == bot && other.id != job.id && tx.live_segment_of(other.id)?.is_some()
            {
                job = other;
                break;
            }
        }
    }
    if let Some(id) = trigger {
        tx.file_line(&NewFiling {
            message_id: id,
            plan_id: plan,
            ticket_id: ticket.map(|t| t.0),
            part_id: None,
            source: FilingSource::WorkOn,
            filed_by: bot.to_string(),
            locked: false,
            primary: true,
        })?;
        // Filed now, the person's line in a direct is carried out for this job (CL-4).
        let line = tx.line(id)?;
        crate::holds::lines::lift_by_filing(tx, &line, bot, plan, ticket)?;
    }
    hand_to(tx, &job, session, trigger, plan, None)
}

/// Give the line that woke a segment (or, with none, a note that the work was taken on) to
/// `job`: a steer to its live segment, else a task that queues it and wakes its thread. `moved`
/// says where the work came from when not from a desk; it goes before the line.
pub(crate) fn hand_to(
    tx: &mut Tx<'_>,
    job: &WorkItemRecord,
    session: SessionId,
    trigger: Option<SessionMessageId>,
    plan: PlanId,
    moved: Option<String>,
) -> Result<Bound, StoreError> {
    let s = tx.session(session)?;
    let (text, origin) = match trigger {
        Some(id) => {
            let line = tx.line(id)?;
            let origin = match line.author {
                Author::User => Origin::User,
                _ => Origin::Delegation(format!("line:{}", id.0)),
            };
            (labelled(&s, &speaker(tx, &line)?, &line.body), origin)
        }
        None => (
            format!("You took this job on from your desk in \"{}\".", s.title),
            Origin::System("work_on".into()),
        ),
    };
    let (text, origin) = match (moved, trigger) {
        (None, _) => (text, origin),
        (Some(note), Some(_)) => (format!("{note}\n{text}"), origin),
        (Some(note), None) => (note, Origin::System("work_on".into())),
    };
    let live = tx.live_segment_of(job.id)?;
    let mode = if live.is_some() {
        InboxMode::Steer
    } else {
        InboxMode::Task
    };
    // Mail a working segment reads between steps carries its short id, so its ending can say
    // what it did with it (END-3), as every other line handed to live work does.
    let text = match (trigger, live) {
        (Some(id), Some(_)) => format!("#{} {text}", id.0),
        _ => text,
    };
    let key = match trigger {
        Some(id) => format!("job:{}:line:{}", plan.0, id.0),
        None => format!("job:{}:desk:{}", plan.0, session.0),
    };
    tx.deliver(
        job.thread_id,
        &Delivery {
            origin,
            ..Delivery::user_task(text).with_mode(mode).with_key(key)
        },
    )?;
    tx.set_work_mail(job.id, session, PRIORITY_USER)?;
    if live.is_some() {
        return Ok(Bound::Merged);
    }
    // The job's segment starts on the line the desk handed over.
    if let Some(id) = trigger {
        tx.set_work_trigger_line(job.id, id)?;
    }
    let job = tx.set_work_state(job.id, WorkState::Queued, None)?;
    tx.wake_after_commit(job.thread_id);
    Ok(match queue_position(tx, &job)? {
        Some(position) => Bound::Queued(position),
        None => Bound::Moved,
    })
}

fn bound_text(tx: &Tx<'_>, plan: PlanId, how: Bound) -> Result<String, StoreError> {
    let name = tx.plan(plan)?.name;
    Ok(match how {
        Bound::Moved => format!(
            "This line now belongs to the job \"{name}\" ({plan}). Your desk turn ends here; \
             your work on the job starts at once with the same line, in the job's folder — do \
             the work there."
        ),
        Bound::Merged => format!(
            "You are already working on the job \"{name}\" ({plan}); the line went to that \
             work, which hears it at its next step. Your desk turn ends here."
        ),
        Bound::Queued(n) => format!(
            "This line now belongs to the job \"{name}\" ({plan}), but your work slots are \
             full: it is queued, at position {n}, and starts when a slot frees up. Nothing was \
             run. Your desk turn ends here."
        ),
    })
}

fn code_of(how: Bound) -> &'static str {
    match how {
        Bound::Moved => "moved",
        Bound::Merged => "merged",
        Bound::Queued(_) => "queued",
    }
}

/// What a desk's refusal leaves: the text, or the end of the segment once two are spent. The
/// last refusal still says what was wrong with the call, before DS-13's fixed words: the work
/// picked up later reads it.
fn spend(tx: &mut Tx<'_>, run: RunId, text: String) -> Result<Result<String, String>, StoreError> {
    let used = tx.bump_segment_bounces(run)?;
    if used >= BOUNCE_BUDGET {
        return Ok(Err(format!(
            "{text}\nThat was this turn's last refusal ({used} of {BOUNCE_BUDGET}): \
             {NEEDS_JOB_TEXT}"
        )));
    }
    Ok(Ok(format!("{text} (refusal {used} of {BOUNCE_BUDGET})")))
}

/// The choices a desk with several candidates is offered (DS-5e).
fn choices(tx: &Tx<'_>, candidates: &[PlanId]) -> Result<String, StoreError> {
    let mut out = String::from(
        "This needs a job before it can run, and this conversation has several. Choose with \
         work_on, then call it again:\n",
    );
    for p in candidates {
        let plan = tx.plan(*p)?;
        let mark = if plan.is_dormant() { " (dormant)" } else { "" };
        out.push_str(&format!(
            "- work_on({{\"plan\":\"{p}\"}}) for \"{}\"{mark}\n",
            plan.name
        ));
    }
    out.push_str("- work_on({\"new\":{\"title\":\"<the goal>\"}}) for a new job for this line");
    Ok(out)
}

/// DS-4/5: before a desk is bound, its first side effect resolves which job it is for.
pub struct DeskGuard {
    pub(crate) host: Arc<ToolHost>,
}

impl DeskGuard {
    pub fn new(host: Arc<ToolHost>) -> Self {
        DeskGuard { host }
    }
}

impl EffectGuard for DeskGuard {
    fn name(&self) -> &str {
        "desk"
    }

    fn check(&self, ctx: &GuardContext<'_>) -> Result<(), Refusal> {
        let run = ctx.run_id;
        let Some(workspaces) = self.host.workspaces() else {
            return Ok(());
        };
        if crate::tools::carried_by_workflow(ctx.thread)
            || !crate::tools::in_conversation(ctx.thread)
        {
            return Ok(());
        }
        // Most effects are not a desk's: decide that from a read, and write only at a desk.
        let at_desk = ctx.store.read(|tx| {
            Ok(tx
                .segment_work(run)?
                .is_some_and(|seg| seg.mode == WorkMode::Desk))
        });
        if !matches!(at_desk, Ok(true)) {
            return Ok(());
        }
        let decided = ctx.store.write(|tx| {
            let Some(seg) = tx.segment_work(run)? else {
                return Ok(None);
            };
            if seg.mode != WorkMode::Desk {
                return Ok(None);
            }
            let item = tx.work_item(seg.work_item_id)?;
            let session = item.session_id.ok_or_else(|| {
                StoreError::Corrupt(format!("desk {} has no conversation", item.id))
            })?;
            // Interim: in a person's direct the Bot's thread there still carries the work
            // itself (as do workflows, bound to that thread); desks resolve jobs in groups and
            // Bot↔Bot directs, and `work_on` is offered everywhere.
            if tx.session(session)?.kind == SessionKind::Direct {
                return Ok(None);
            }
            let trigger = tx.segment(run)?.and_then(|s| s.trigger_line_id);
            let verdict = tx.segment_verdict(run)?;
            // DS-5a: done in place runs as it is and opens no job.
            if verdict.as_deref() == Some("done_in_place") {
                return Ok(None);
            }
            // DS-5b: read as new, the first effect opens a job for the line, whatever the count.
            let candidates: &[PlanId] = if verdict.as_deref() == Some("new") {
                &[]
            } else {
                &seg.candidates
            };
            let plan = match candidates {
                [one] => *one,
                [] => {
                    let by_person = match trigger {
                        Some(t) => tx.line(t)?.author == Author::User,
                        None => false,
                    };
                    if !by_person {
                        let text = "A Bot's or the app's line cannot open a job by itself: \
                            call work_on({\"new\":{\"title\":\"<the goal>\"}}) to open one, then \
                            call this again."
                            .to_string();
                        return Ok(Some(spend(tx, run, text)?.map_err(|t| (t, None))));
                    }
                    open_plan_in(
                        tx,
                        &workspaces,
                        &OpenPlan {
                            home_session_id: session,
                            opening_line_id: trigger,
                            title: None,
                            cause: RevisionCause::Turn(run),
                        },
                    )?
                }
                several => {
                    let text = choices(tx, several)?;
                    return Ok(Some(spend(tx, run, text)?.map_err(|t| (t, None))));
                }
            };
            let how = bind(tx, item.bot_id, session, trigger, plan)?;
            Ok(Some(Err((bound_text(tx, plan, how)?, Some((how, plan))))))
        });
        match decided {
            Ok(None) => Ok(()),
            Ok(Some(Ok(text))) => Err(Refusal::from(text)),
            Ok(Some(Err((text, None)))) => Err(Refusal::ending(text, needs_attention())),
            Ok(Some(Err((text, Some((how, plan)))))) => {
                Err(Refusal::ending(text, consumer(code_of(how), plan)))
            }
            Err(e) => Err(Refusal::from(format!(
                "the desk could not file this call's job ({e}); nothing was run"
            ))),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewJob {
    title: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkOnArgs {
    #[serde(default)]
    plan: Option<String>,
    #[serde(default)]
    new: Option<NewJob>,
    #[serde(default)]
    quote_message_id: Option<i64>,
    /// A ticket of the chosen job, by number (T21).
    #[serde(default)]
    ticket: Option<serde_json::Value>,
}

/// `work_on`: bind this desk to a candidate job, or open a new one quoting a person's line.
pub(crate) struct WorkOn {
    pub(crate) host: Arc<ToolHost>,
}

#[async_trait]
impl ToolHandler for WorkOn {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let run = ctx.run_id;
        let parsed: Result<WorkOnArgs, String> = serde_json::from_str(arguments)
            .map_err(|e| crate::tools::bad_arguments("work_on", &e, &work_on_spec()))
            .and_then(|a: WorkOnArgs| match (&a.plan, &a.new, &a.ticket) {
                // A ticket alone is one of the job the segment is on (DS-10).
                (Some(_), None, _) | (None, Some(_), _) | (None, None, Some(_)) => Ok(a),
                _ => Err("work_on: give exactly one of `plan` (a job's id) or `new` \
                          ({\"title\": \"<the goal>\"})"
                    .into()),
            });
        let Some(workspaces) = self.host.workspaces() else {
            return ToolReply::error("work_on: the conversation layer is not ready yet");
        };
        let out = ctx.store.write(|tx| work_on(tx, &workspaces, run, &parsed));
        match out {
            Ok(Outcome::Bound(text, how, plan)) => {
                ToolReply::ending(text, false, consumer(code_of(how), plan))
            }
            Ok(Outcome::Refused(text)) => ToolReply::error(text),
            Ok(Outcome::Spent(text)) => ToolReply::ending(text, true, needs_attention()),
            Err(e) => ToolReply::error(format!("work_on: {e}; nothing was changed")),
        }
    }
}

enum Outcome {
    Bound(String, Bound, PlanId),
    /// An ordinary failed call (a bound segment) or a desk refusal with budget left.
    Refused(String),
    /// The desk's last refusal: what was wrong, and that the segment ends.
    Spent(String),
}

fn work_on(
    tx: &mut Tx<'_>,
    workspaces: &Path,
    run: RunId,
    parsed: &Result<WorkOnArgs, String>,
) -> Result<Outcome, StoreError> {
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(Outcome::Refused(
            "work_on: this turn is not a Bot's work in a conversation".into(),
        ));
    };
    // END-19: once bound, a refused work_on is an ordinary failed call.
    if seg.mode != WorkMode::Desk {
        let item = tx.work_item(seg.work_item_id)?;
        // DS-10, DS-15: down to a ticket of the same job.
        if let (Ok(args), Some(plan)) = (parsed, item.plan_id)
            && args.new.is_none()
            && let Some(raw) = &args.ticket
            && args
                .plan
                .as_deref()
                .is_none_or(|p| p.trim() == plan.to_string())
        {
            return Ok(
                match crate::tickets::descend::descend(tx, run, &item, plan, raw)? {
                    Ok((text, how)) => Outcome::Bound(text, how, plan),
                    Err(text) => Outcome::Refused(text),
                },
            );
        }
        let name = match item.plan_id {
            Some(p) => tx.plan(p)?.name,
            None => "this job".into(),
        };
        return Ok(Outcome::Refused(format!(
            "work_on: you are already working on \"{name}\"; a segment keeps its job (it may \
             only move to one of this job's tickets, with {{\"ticket\": NN}}). Finish here and \
             end your turn; other work starts in its own segment."
        )));
    }
    // Where the desk needs no job first (a person's direct, a workflow's thread), choosing
    // one is optional: a refused choice is an ordinary failed call and spends no budget, since
    // spending it would end the turn saying the line needs a job, which it does not there.
    let job_first =
        crate::segment_situation::desk_rule_of_run(tx, run, &tx.work_item(seg.work_item_id)?)?
            == crate::segment_situation::DeskRule::JobFirst;
    let refuse = |tx: &mut Tx<'_>, text: String| -> Result<Outcome, StoreError> {
        if !job_first {
            return Ok(Outcome::Refused(text));
        }
        Ok(match spend(tx, run, text)? {
            Ok(t) => Outcome::Refused(t),
            Err(t) => Outcome::Spent(t),
        })
    };
    let args = match parsed {
        Ok(a) => a,
        // END-18: malformed desk arguments count against the budget.
        Err(m) => return refuse(tx, m.clone()),
    };
    if args.plan.is_none() && args.new.is_none() {
        return refuse(
            tx,
            "work_on: at your desk, name the job too: {\"plan\": \"<its id>\", \"ticket\": NN}"
                .into(),
        );
    }
    let item = tx.work_item(seg.work_item_id)?;
    let session = item
        .session_id
        .ok_or_else(|| StoreError::Corrupt(format!("desk {} has no conversation", item.id)))?;
    let trigger = tx.segment(run)?.and_then(|s| s.trigger_line_id);
    let plan = if let Some(raw) = &args.plan {
        let id: PlanId = match raw.trim().parse() {
            Ok(id) => id,
            Err(m) => return refuse(tx, format!("work_on: plan: {m}")),
        };
        if !seg.candidates.contains(&id) {
            return refuse(
                tx,
                format!(
                    "work_on: {id} is not one of the jobs you may choose here; choose one \
                     listed for this desk, or open a new one with {{\"new\":{{\"title\":…}}}}"
                ),
            );
        }
        id
    } else {
        if let Some(t) = args.ticket.as_ref().filter(|t| t.get("new").is_none()) {
            return refuse(
                tx,
                format!(
                    "work_on: not_in_plan: ticket {t} cannot be of a new job, which has no \
                     tickets yet; open the job without `ticket`"
                ),
            );
        }
        let title = args
            .new
            .as_ref()
            .map(|n| n.title.trim())
            .unwrap_or_default();
        if title.is_empty() {
            return refuse(tx, "work_on: new.title must say the job's goal".into());
        }
        let quote = match args.quote_message_id {
            Some(q) => {
                let ok = match tx.line(SessionMessageId(q)) {
                    Ok(l) => l.session_id == session && l.author == Author::User,
                    Err(StoreError::NotFound { .. }) => false,
                    Err(e) => return Err(e),
                };
                if !ok {
                    return refuse(
                        tx,
                        format!(
                            "work_on: quote_message_id {q} is not a person's line in this \
                             conversation; leave it out to quote the line that woke you"
                        ),
                    );
                }
                Some(SessionMessageId(q))
            }
            // The line that woke the desk, when a person said it (a Bot's line names no job).
            None => match trigger {
                Some(t) if tx.line(t)?.author == Author::User => Some(t),
                _ => None,
            },
        };
        open_plan_in(
            tx,
            workspaces,
            &OpenPlan {
                home_session_id: session,
                opening_line_id: quote,
                title: Some(title.to_string()),
                cause: RevisionCause::Turn(run),
            },
        )?
    };
    let ticket = match &args.ticket {
        Some(raw) => match crate::tickets::work::ticket_to_work_on(tx, plan, item.bot_id, raw)? {
            Ok(t) => Some(t.id),
            Err(text) => return refuse(tx, text),
        },
        None => None,
    };
    let how = bind_to(tx, item.bot_id, session, trigger, plan, ticket)?;
    Ok(Outcome::Bound(bound_text(tx, plan, how)?, how, plan))
}

pub(crate) fn work_on_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "plan": {"type": "string", "description": "The id of a job listed for this desk, e.g. \"plan_3\"."},
            "new": {
                "type": "object",
                "properties": {"title": {"type": "string", "description": "The new job's goal."}},
                "required": ["title"],
                "additionalProperties": false
            },
            "quote_message_id": {"type": "integer", "description": "The person's line the new job is for (default: the line that woke you)."},
            "ticket": {"type": ["integer", "string", "object"], "description": "One ticket of the chosen job to work on, by number (e.g. 2), or {\"new\": {\"title\": \"…\"}} to open one for yourself: your work then runs in its folder. Working on the whole job already, give `ticket` alone to move to one of its tickets."}
        },
        "additionalProperties": false
    })
}
