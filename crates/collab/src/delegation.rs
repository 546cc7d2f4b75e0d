//! Delegation (A §3): `delegate` asks another Bot's work on the same job for a deliverable, a
//! review or an answer. The request is a record and priority-3 waking mail to the recipient's
//! work on the job; the pair's Bot↔Bot direct shows the records and wakes nobody (MSG-4).
//! Without `continue`, the sender's work item waits on it (no due time) and its segment ends
//! `delegated`. Only the recipient's `end_turn({reason:"answered", answer})` answers it: once,
//! as priority-2 mail that voids the wait and wakes the sender, late too (DEL-11, 17, 20).

use crate::desk::{bind, ensure_job_item};
use crate::members::system_line;
use crate::plans::{OpenPlan, open_plan_in};
use crate::routing::{labelled, speaker};
use crate::tools::ToolHost;
use async_trait::async_trait;
use serde::Serialize;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use troupe_core::conversation::Author;
use troupe_core::delegation::{
    DelegateArgs, DelegateCheck, DelegationState, OpenRequest, Target, answered_by_words,
    check_delegate, delegation_reply_text, delegation_request_text, how_to_answer,
    parse_delegate_args,
};
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::message::Origin;
use troupe_core::plan::RevisionCause;
use troupe_core::run::EndReason;
use troupe_core::work_item::{
    PRIORITY_DELEGATION_REPLY, PRIORITY_DELEGATION_REQUEST, WaitingOn, WorkMode, WorkState,
};
use troupe_core::{BotId, DelegationId, PlanId, RunId, SessionId, WorkItemId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolReply};
use troupe_store::{DelegationRecord, NewDelegation, StoreError, Tx, WorkItemRecord};

/// Who is asked: by id (`bot_3`, `3`) or exact name, case aside.
fn target(tx: &Tx<'_>, to: &str, present_in: &[SessionId]) -> Result<Target, StoreError> {
    let to = to.trim().trim_start_matches('@');
    let bots = tx.bots(true)?;
    let by_id = to
        .parse::<BotId>()
        .ok()
        .filter(|_| to.chars().any(|c| c.is_ascii_digit()));
    let found: Vec<_> = bots
        .iter()
        .filter(|b| Some(b.id) == by_id || b.name.eq_ignore_ascii_case(to))
        .collect();
    Ok(match found.as_slice() {
        [] => Target::Unknown(to.to_string()),
        [b] => {
            let mut present = false;
            for s in present_in {
                present |= tx.session(*s)?.bot_ids.contains(&b.id);
            }
            Target::Bot {
                id: b.id,
                name: b.name.clone(),
                archived: b.archived,
                present,
            }
        }
        many => Target::Ambiguous(many.iter().map(|b| b.name.clone()).collect()),
    })
}

enum Sent {
    Refused(String),
    Done {
        text: String,
        ends: Option<EndReason>,
    },
}

/// A desk binds first (its job from its candidates, as its first effect would), then the
/// delegation is the job's.
fn sender_item(
    tx: &mut Tx<'_>,
    workspaces: &Path,
    run: RunId,
    desk: &WorkItemRecord,
    candidates: &[PlanId],
) -> Result<Result<WorkItemRecord, String>, StoreError> {
    let session = desk
        .session_id
        .ok_or_else(|| StoreError::Corrupt(format!("desk {} has no conversation", desk.id)))?;
    let trigger = tx.segment(run)?.and_then(|s| s.trigger_line_id);
    let plan = match candidates {
        [one] => *one,
        [] => match trigger {
            Some(t) if tx.line(t)?.author == Author::User => open_plan_in(
                tx,
                workspaces,
                &OpenPlan {
                    home_session_id: session,
                    opening_line_id: Some(t),
                    title: None,
                    cause: RevisionCause::Turn(run),
                },
            )?,
            _ => {
                return Ok(Err("not_bound: this desk has no job to delegate from; \
                    call work_on({\"new\":{\"title\":\"<the goal>\"}}) first"
                    .into()));
            }
        },
        _ => {
            return Ok(Err(
                "not_bound: this conversation has several jobs; choose one \
                with work_on first, then delegate from it"
                    .into(),
            ));
        }
    };
    ensure_job_item(tx, plan, desk.bot_id).map(Ok)
}

fn send(
    tx: &mut Tx<'_>,
    workspaces: &Path,
    run: RunId,
    args: &DelegateArgs,
) -> Result<Sent, StoreError> {
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(Sent::Refused(
            "not_bound: this turn is not a Bot's work in a conversation".into(),
        ));
    };
    let item = tx.work_item(seg.work_item_id)?;
    let speaks_in = tx
        .segment(run)?
        .map(|s| s.session_id)
        .ok_or_else(|| StoreError::Corrupt(format!("run {run} has no segment")))?;
    let from_desk = seg.mode == WorkMode::Desk;
    let sender = if from_desk {
        match sender_item(tx, workspaces, run, &item, &seg.candidates)? {
            Ok(s) => s,
            Err(refusal) => return Ok(Sent::Refused(refusal)),
        }
    } else {
        item.clone()
    };
    let plan_id = sender
        .plan_id
        .ok_or_else(|| StoreError::Corrupt(format!("work item {} has no job", sender.id)))?;
    let plan = tx.plan(plan_id)?;
    let mut present_in = vec![speaks_in];
    present_in.extend(plan.home_session_id);
    let target = target(tx, &args.to, &present_in)?;
    if let Err(r) = check_delegate(&DelegateCheck {
        caller_bound: true,
        caller: sender.bot_id,
        target: target.clone(),
    }) {
        return Ok(Sent::Refused(format!("{}: {}", r.code, r.text)));
    }
    // DEL-3's ticket, parts and requirements, read against the job's (DEL-4: after `to`).
    let scope = match crate::delegation_scope::scope_of(tx, plan_id, &sender, args)? {
        Ok(s) => s,
        Err(refusal) => return Ok(Sent::Refused(refusal)),
    };
    let Target::Bot { id: to, name, .. } = target else {
        return Ok(Sent::Refused(format!(
            "unknown_bot: no Bot is called '{}'",
            args.to
        )));
    };
    let me = tx.bot(sender.bot_id)?.name;
    // DEL-7: the recipient's work on the job, or on the ticket the request is about (its
    // thread then works in the ticket's folder).
    let recipient = match scope.ticket {
        Some(t) => crate::tickets::work::ensure_ticket_item(tx, plan_id, to, t)?,
        None => ensure_job_item(tx, plan_id, to)?,
    };
    let pair = tx.open_bot_direct(
        sender.bot_id,
        to,
        plan.home_session_id.or(Some(speaks_in)),
        "delegation",
        &format!("{me} ↔ {name}"),
    )?;
    let rec = tx.create_delegation(&NewDelegation {
        plan_id,
        ticket_id: scope.ticket.map(|t| t.0),
        part_ids: scope.part_ids,
        requirement_ids: scope.requirement_ids,
        sender_work_item: sender.id,
        recipient_work_item: recipient.id,
        originating_run_id: Some(run),
        pair_session_id: pair.id,
        ask: args.ask.clone(),
        expects: args.expects,
        continue_working: args.continue_working,
    })?;
    let request = format!(
        "{}\n(Job: \"{}\".)",
        delegation_request_text(&me, &args.ask, args.expects, rec.id),
        plan.name
    );
    mail(
        tx,
        &recipient,
        pair.id,
        PRIORITY_DELEGATION_REQUEST,
        &format!("delegation:{}", rec.id.0),
        request,
    )?;
    system_line(
        tx,
        pair.id,
        format!(
            "Request {}: {me} asked {name} for {} — {}",
            rec.id,
            args.expects.as_str(),
            args.ask
        ),
    )?;
    let wait = WaitingOn::Delegation {
        delegation_id: rec.id,
    };
    if from_desk {
        if args.continue_working {
            let trigger = tx.segment(run)?.and_then(|s| s.trigger_line_id);
            bind(tx, item.bot_id, speaks_in, trigger, plan_id)?;
            return Ok(Sent::Done {
                text: format!(
                    "Asked {name} ({}). Your work on \"{}\" goes on in its own turn.",
                    rec.id, plan.name
                ),
                ends: Some(consumer("moved", rec.id)),
            });
        }
        // The job waits on the answer; the line that woke the desk is in its history then.
        if let Some(t) = tx.segment(run)?.and_then(|s| s.trigger_line_id) {
            let line = tx.line(t)?;
            let s = tx.session(speaks_in)?;
            let text = labelled(&s, &speaker(tx, &line)?, &line.body);
            tx.deliver(
                sender.thread_id,
                &Delivery::user_task(text)
                    .with_mode(InboxMode::Context)
                    .with_key(format!("job:{}:line:{}", plan_id.0, t.0)),
            )?;
        }
        tx.set_work_mail(sender.id, speaks_in, sender.priority)?;
        tx.set_work_state(sender.id, WorkState::Waiting, Some(&wait))?;
    } else if !args.continue_working {
        tx.set_work_state(sender.id, sender.state, Some(&wait))?;
    }
    Ok(Sent::Done {
        text: if args.continue_working {
            format!(
                "Asked {name} ({}); you go on. Its answer comes to you as a message.",
                rec.id
            )
        } else {
            format!(
                "Asked {name} ({}). Your turn ends here; you are woken with the answer.",
                rec.id
            )
        },
        ends: (!args.continue_working).then(|| consumer("delegated", rec.id)),
    })
}

fn consumer(code: &str, id: DelegationId) -> EndReason {
    EndReason::Consumer {
        code: code.into(),
        detail: Some(id.to_string()),
    }
}

/// Mail for a work item's thread: a task (the item queues and its thread is woken) or, while
/// it runs, a steer it reads at its next step.
fn mail(
    tx: &mut Tx<'_>,
    item: &WorkItemRecord,
    speaks_in: SessionId,
    priority: u8,
    key: &str,
    text: String,
) -> Result<(), StoreError> {
    let origin = Origin::Delegation(key.to_string());
    mail_work(tx, item, speaks_in, priority, origin, key, text)
}

/// Mail for a Bot's work item: a steer while its segment runs, else a task after the lines it
/// only read meanwhile, which queues the item and wakes it; `key` makes a repeat harmless.
pub(crate) fn mail_work(
    tx: &mut Tx<'_>,
    item: &WorkItemRecord,
    speaks_in: SessionId,
    priority: u8,
    origin: Origin,
    key: &str,
    text: String,
) -> Result<(), StoreError> {
    let live = tx.live_segment_of(item.id)?.is_some();
    let mode = if live {
        InboxMode::Steer
    } else {
        InboxMode::Task
    };
    // A task comes last in what the Bot reads, after the lines it only read meanwhile.
    let text = if live {
        text
    } else {
        crate::routing::with_lines_read_before(tx, item.thread_id, text)?
    };
    tx.deliver(
        item.thread_id,
        &Delivery {
            origin,
            ..Delivery::user_task(text).with_mode(mode).with_key(key)
        },
    )?;
    tx.set_work_mail(item.id, speaks_in, priority)?;
    // Work a cut or failed turn left needing attention keeps that state: its thread is paused,
    // so a wake would be refused; the supervisor's pick-up (or the person's Continue) runs it,
    // and that segment reads the mail (S-SV-3).
    if !live && item.state != WorkState::NeedsAttention {
        let waiting = item.waiting_on.clone();
        tx.set_work_state(item.id, WorkState::Queued, waiting.as_ref())?;
        tx.wake_after_commit(item.thread_id);
    }
    Ok(())
}

/// Requests to `item` this segment would leave unanswered by ending `answered` without an
/// answer: those it read that expect one (DEL-22).
pub(crate) fn unanswered_requests(
    tx: &Tx<'_>,
    item: &WorkItemRecord,
) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    for d in tx.open_delegations_to(item.id)? {
        let read = tx.delivery_consumed(item.thread_id, &format!("delegation:{}", d.id.0))?;
        if read && d.expects != troupe_core::delegation::Expects::Deliverable {
            let from = sender_name(tx, &d)?;
            out.push(format!("{} from {from}: {}", d.id, d.ask));
        }
    }
    Ok(out)
}

fn sender_name(tx: &Tx<'_>, d: &DelegationRecord) -> Result<String, StoreError> {
    Ok(tx.bot(tx.work_item(d.sender_work_item)?.bot_id)?.name)
}

/// What `item` still owes other Bots (END-10): every open request made to it, but one its
/// hand-over is with the checks, a reviewer or the user for (DEL-16).
pub(crate) fn owed(tx: &Tx<'_>, item: &WorkItemRecord) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    for d in tx.open_delegations_to(item.id)? {
        if crate::delegation_scope::handed_in(tx, &d, item.bot_id)? {
            continue;
        }
        out.push(format!(
            "request {} from {} ({}): {} — {}",
            d.id,
            sender_name(tx, &d)?,
            d.expects.as_str(),
            d.ask,
            how_to_answer(d.expects)
        ));
    }
    Ok(out)
}

/// DEL-17/20: the recipient's word answer resolves the open requests it settles, once each,
/// as priority-2 mail to each sender that voids its wait and wakes it. Answers the ids.
pub(crate) fn answer_requests(
    tx: &mut Tx<'_>,
    item: &WorkItemRecord,
    answer: &str,
    run: RunId,
) -> Result<Vec<DelegationId>, StoreError> {
    let open = tx.open_delegations_to(item.id)?;
    let mut requests = Vec::new();
    for d in &open {
        requests.push(OpenRequest {
            id: d.id,
            expects: d.expects,
            read_by_segment: tx
                .delivery_consumed(item.thread_id, &format!("delegation:{}", d.id.0))?,
            review_in_flight: crate::delegation_scope::review_in_flight(tx, d)?,
        });
    }
    let ids = answered_by_words(&requests);
    let me = tx.bot(item.bot_id)?.name;
    for id in &ids {
        let result = json!({"text": answer, "by_turn": run});
        if !tx.settle_delegation(*id, DelegationState::Replied, &result)? {
            continue;
        }
        let d = tx.delegation(*id)?;
        let sender = tx.work_item(d.sender_work_item)?;
        if sender.waiting_on == Some(WaitingOn::Delegation { delegation_id: *id }) {
            let state = if tx.live_segment_of(sender.id)?.is_some() {
                WorkState::Running
            } else {
                sender.state
            };
            tx.set_work_state(sender.id, state, None)?;
        }
        let sender = tx.work_item(sender.id)?;
        let speaks = match sender.speaks_in {
            Some(s) => s,
            None => d.pair_session_id,
        };
        mail(
            tx,
            &sender,
            speaks,
            PRIORITY_DELEGATION_REPLY,
            &format!("delegation_reply:{}", id.0),
            delegation_reply_text(&me, *id, answer),
        )?;
        system_line(
            tx,
            d.pair_session_id,
            format!("Answer to {id} from {me}: {answer}"),
        )?;
    }
    Ok(ids)
}

/// DEL-33/34: cancel the open delegations of an archived Bot. Its senders (still live) each
/// hear one waking cancellation; when it was the sender, nobody is woken.
pub(crate) fn cancel_for_archived(tx: &mut Tx<'_>, bot: BotId) -> Result<(), StoreError> {
    for item in tx.work_items_of_bot(bot)? {
        let name = tx.bot(bot)?.name;
        for d in tx.open_delegations_to(item.id)? {
            let reason = format!("{name} was archived");
            tx.settle_delegation(d.id, DelegationState::Cancelled, &json!({"reason": reason}))?;
            system_line(
                tx,
                d.pair_session_id,
                format!("Request {} cancelled: {reason}", d.id),
            )?;
            let sender = tx.work_item(d.sender_work_item)?;
            if tx.bot(sender.bot_id)?.archived {
                continue;
            }
            if sender.waiting_on
                == Some(WaitingOn::Delegation {
                    delegation_id: d.id,
                })
            {
                tx.set_work_state(sender.id, sender.state, None)?;
            }
            let sender = tx.work_item(sender.id)?;
            let speaks = sender.speaks_in.unwrap_or(d.pair_session_id);
            mail(
                tx,
                &sender,
                speaks,
                PRIORITY_DELEGATION_REPLY,
                &format!("delegation_cancelled:{}", d.id.0),
                troupe_core::delegation::cancellation_text(&name, d.id, &reason),
            )?;
        }
        for d in tx.open_delegations_from(item.id)? {
            let reason = format!("{name}, who asked, was archived");
            tx.settle_delegation(d.id, DelegationState::Cancelled, &json!({"reason": reason}))?;
            system_line(
                tx,
                d.pair_session_id,
                format!("Request {} cancelled: {reason}", d.id),
            )?;
        }
    }
    Ok(())
}

/// `delegate`: ask another Bot's work on this job. Refusals are ordinary failed calls (END-19).
pub(crate) struct Delegate {
    pub(crate) host: Arc<ToolHost>,
}

#[async_trait]
impl ToolHandler for Delegate {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args = match parse_delegate_args(arguments) {
            Ok(a) => a,
            Err(m) => return ToolReply::error(format!("delegate: {m}")),
        };
        let Some(workspaces) = self.host.workspaces() else {
            return ToolReply::error("delegate: the conversation layer is not ready yet");
        };
        let run = ctx.run_id;
        // A refusal keeps nothing: the job a desk opened on its way to the refusal goes back
        // with the transaction (a model repeating a refused call opened a job each time).
        let mut refusal = None;
        let sent = ctx
            .store
            .write(|tx| match send(tx, &workspaces, run, &args)? {
                Sent::Refused(text) => {
                    refusal = Some(text);
                    Err(StoreError::Conflict("refused".into()))
                }
                Sent::Done { text, ends } => Ok((text, ends)),
            });
        if let Some(text) = refusal {
            return ToolReply::error(format!("delegate refused — {text}"));
        }
        match sent {
            Ok((text, Some(r))) => ToolReply::ending(text, false, r),
            Ok((text, None)) => ToolReply::ok(text),
            Err(e) => ToolReply::error(format!("delegate: {e}; nothing was sent")),
        }
    }
}

pub(crate) fn delegate_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "to": {"type": "string", "description": "The Bot to ask: its name (or id)."},
            "ask": {"type": "string", "description": "What you ask of it, in full: it reads only this."},
            "expects": {"type": "string", "enum": ["deliverable", "review", "answer"], "description": "What you expect back."},
            "ticket": {"type": "integer"},
            "parts": {"type": "array", "items": {"type": "string"}},
            "requirement_ids": {"type": "array", "items": {"type": "integer"}},
            "continue": {"type": "boolean", "description": "Keep working instead of waiting for the answer (default false: your turn ends and you are woken with it)."}
        },
        "required": ["to", "ask", "expects"],
        "additionalProperties": false
    })
}

/// A delegation as the API and the pair direct show it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Serialize)]
pub struct DelegationView {
    pub id: DelegationId,
    pub plan_id: PlanId,
    pub from_bot_id: BotId,
    pub to_bot_id: BotId,
    pub sender_work_item: WorkItemId,
    pub recipient_work_item: WorkItemId,
    pub pair_session_id: SessionId,
    pub ask: String,
    /// deliverable | review | answer
    pub expects: String,
    /// open | replied | cancelled
    pub state: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<serde_json::Value>,
    /// The sender waits on it now.
    pub waiting: bool,
    /// Always null: a delegation wait has no due time (DEL-28).
    pub due_at: Option<i64>,
    pub created_at: i64,
    pub replied_at: Option<i64>,
    pub cancelled_at: Option<i64>,
}

fn view(tx: &Tx<'_>, d: &DelegationRecord) -> Result<DelegationView, StoreError> {
    let sender = tx.work_item(d.sender_work_item)?;
    let recipient = tx.work_item(d.recipient_work_item)?;
    Ok(DelegationView {
        id: d.id,
        plan_id: d.plan_id,
        from_bot_id: sender.bot_id,
        to_bot_id: recipient.bot_id,
        sender_work_item: d.sender_work_item,
        recipient_work_item: d.recipient_work_item,
        pair_session_id: d.pair_session_id,
        ask: d.ask.clone(),
        expects: d.expects.as_str().into(),
        state: d.state.as_str().into(),
        result: d.result.clone(),
        waiting: sender.waiting_on
            == Some(WaitingOn::Delegation {
                delegation_id: d.id,
            }),
        due_at: None,
        created_at: d.created_at,
        replied_at: d.replied_at,
        cancelled_at: d.cancelled_at,
    })
}

impl crate::Collab {
    pub fn plan_delegations(
        &self,
        plan: PlanId,
    ) -> Result<Vec<DelegationView>, crate::CollabError> {
        Ok(self.store().read(|tx| {
            tx.plan(plan)?;
            tx.delegations_of_plan(plan)?
                .iter()
                .map(|d| view(tx, d))
                .collect()
        })?)
    }

    pub fn session_delegations(
        &self,
        session: SessionId,
    ) -> Result<Vec<DelegationView>, crate::CollabError> {
        Ok(self.store().read(|tx| {
            tx.session(session)?;
            tx.delegations_of_session(session)?
                .iter()
                .map(|d| view(tx, d))
                .collect()
        })?)
    }
}
