//! The ending contract (A §4): `end_turn({reason, answer?, note?, needs_from_user?, inbox?})`
//! ends a segment with its reason once the contract lets it — user mail it read acknowledged,
//! requests it read answered in `answer`, what it owes said, and (outside a group) no promise
//! of later work left hanging or a person's direct left without a reply. A refused ending is a
//! bounce the Bot reads; bounces share the segment's budget of two with desk refusals, after
//! which it ends needing attention. A prose ending in work that still owes is bounced once too,
//! then ends `nothing_new` (END-10).

use crate::delegation::{answer_requests, owed, unanswered_requests};
use crate::members::system_line;
use crate::tools::ToolHost;
use async_trait::async_trait;
use serde_json::json;
use std::sync::Arc;
use troupe_core::conversation::{Author, SessionKind};
use troupe_core::ending::{
    BOUNCE_BUDGET, BounceKind, EndKind, EndTurnArgs, EndingFacts, EndingVerdict, evaluate,
    line_dispositions, parse_end_turn_args, prose_reason, unacknowledged,
};
use troupe_core::message::Origin;
use troupe_core::run::EndReason;
use troupe_core::work_item::{WaitingOn, WorkMode, after_ending};
use troupe_core::{RunId, SessionId};
use troupe_engine::extension::{
    EndingContext, EndingHook, EndingVerdict as KernelVerdict, ToolCallContext, ToolHandler,
    ToolReply,
};
use troupe_store::{NewLineDisposition, SegmentWork, StoreError, Tx, WorkItemRecord};

fn consumer(code: &str, detail: Option<String>) -> EndReason {
    EndReason::Consumer {
        code: code.into(),
        detail,
    }
}

/// User mail the segment read after the line that woke it, by the short ids it was shown.
fn read_user_mail(tx: &Tx<'_>, run: RunId) -> Result<Vec<String>, StoreError> {
    Ok(tx
        .person_mail_read_in(run)?
        .iter()
        .filter_map(|k| line_of_key(k))
        .map(|id| format!("#{id}"))
        .collect())
}

/// END-3, END-6: keep what became of each of the person's lines the segment read.
fn record_dispositions(
    tx: &mut Tx<'_>,
    run: RunId,
    bot: troupe_core::BotId,
    read: &[String],
    args: Option<&EndTurnArgs>,
) -> Result<(), StoreError> {
    let given = args.map(|a| a.inbox.as_slice()).unwrap_or_default();
    for d in line_dispositions(read, given, args.is_none()) {
        tx.record_line_disposition(&NewLineDisposition {
            message_id: troupe_core::SessionMessageId(d.line),
            run_id: run,
            bot_id: bot,
            disposition: d.disposition,
            why: d.why,
            by_prose: d.by_prose,
        })?;
    }
    Ok(())
}

/// `line:<id>:to:<bot>` (or `job:<plan>:line:<id>`) → the line id.
fn line_of_key(key: &str) -> Option<i64> {
    let mut parts = key.split(':');
    while let Some(p) = parts.next() {
        if p == "line" {
            return parts.next()?.parse().ok();
        }
    }
    None
}

/// Everything about the segment the contract reads, except the reading of its last words.
struct Segment {
    seg: SegmentWork,
    item: WorkItemRecord,
    session: SessionId,
    kind: SessionKind,
    opened_by_person: bool,
    bot_name: String,
    /// Its newest words in the conversation it speaks in.
    last_words: Option<String>,
    answered: String,
    /// The person's mail it read while working, by the short ids it was shown.
    read: Vec<String>,
}

fn segment(tx: &Tx<'_>, run: RunId) -> Result<Option<Segment>, StoreError> {
    let Some(seg) = tx.segment_work(run)? else {
        return Ok(None);
    };
    let Some(row) = tx.segment(run)? else {
        return Ok(None);
    };
    let item = tx.work_item(seg.work_item_id)?;
    let session = tx.session(row.session_id)?;
    let trigger = row.trigger_line_id.map(|t| tx.line(t)).transpose()?;
    // END-15: only a turn a person's line woke owes them a reply — not a read-only answer, nor
    // one a check-back, a routine or another Bot woke (its trigger is then just the newest line
    // the thread was ever given).
    let woken_by_person = !seg.readonly
        && match tx.run(run)?.root_id {
            Some(root) => tx.message(root)?.origin == Origin::User,
            None => false,
        };
    let last_words = tx
        .lines_of_turn(run)?
        .into_iter()
        .rfind(|l| l.session_id == session.id && !l.body.trim().is_empty())
        .map(|l| l.body);
    Ok(Some(Segment {
        bot_name: tx.bot(item.bot_id)?.name,
        opened_by_person: woken_by_person
            && trigger.as_ref().is_some_and(|t| t.author == Author::User),
        answered: trigger.map(|t| t.body).unwrap_or_default(),
        read: read_user_mail(tx, run)?,
        seg,
        item,
        session: session.id,
        kind: session.kind,
        last_words,
    }))
}

fn facts(
    tx: &Tx<'_>,
    s: &Segment,
    args: Option<&EndTurnArgs>,
    promised_later: Option<String>,
    bounced_once: Vec<BounceKind>,
) -> Result<EndingFacts, StoreError> {
    let reason = args
        .map(|a| a.reason)
        .unwrap_or(prose_reason(s.seg.mode == WorkMode::Desk));
    let answer_given =
        args.is_some_and(|a| a.answer.as_deref().is_some_and(|t| !t.trim().is_empty()));
    let read = &s.read;
    let in_user_direct = s.kind == SessionKind::Direct;
    Ok(EndingFacts {
        reason,
        prose: args.is_none(),
        desk: s.seg.mode == WorkMode::Desk,
        answer_given,
        unacknowledged: match args {
            Some(a) => unacknowledged(read, &a.inbox),
            None => Vec::new(),
        },
        obligations: owed(tx, &s.item)?,
        has_valid_wait: matches!(s.item.waiting_on, Some(WaitingOn::Delegation { .. })),
        unanswered_requests: if reason == EndKind::Answered && !answer_given {
            unanswered_requests(tx, &s.item)?
        } else {
            Vec::new()
        },
        promised_later,
        // END-13: a person's line in their direct, and no words of this turn reached them.
        said_nothing: in_user_direct && s.opened_by_person && s.last_words.is_none(),
        budget_used: s.seg.bounces,
        bounced_once,
        reply_already_out: s.last_words.is_some(),
        bot_name: s.bot_name.clone(),
        in_user_direct,
    })
}

/// What the segment's ending comes to.
enum Decided {
    Bounce(String),
    End(String, EndReason),
}

/// Apply an ending the contract let through: answers, the app's lines, END-11's count.
fn end(
    tx: &mut Tx<'_>,
    s: &Segment,
    run: RunId,
    args: Option<&EndTurnArgs>,
    code: String,
    app_line: Option<String>,
) -> Result<Decided, StoreError> {
    let mut code = code;
    record_dispositions(tx, run, s.item.bot_id, &s.read, args)?;
    let mut answered = Vec::new();
    if let Some(a) = args
        && a.reason == EndKind::Answered
        && let Some(answer) = a.answer.as_deref().filter(|t| !t.trim().is_empty())
    {
        answered = answer_requests(tx, &s.item, answer, run)?;
    }
    let mut detail = args.and_then(|a| a.note.clone());
    match args.map(|a| a.reason) {
        Some(EndKind::Blocked) => {
            let needs = args
                .and_then(|a| a.needs_from_user.clone())
                .unwrap_or_default();
            crate::work_questions::post(tx, &s.item, s.session, run, &needs)?;
            tx.set_work_state(s.item.id, s.item.state, Some(&WaitingOn::User))?;
            detail = Some(needs);
        }
        Some(EndKind::GaveUp) => {
            let note = detail.clone().unwrap_or_default();
            system_line(tx, s.session, format!("{} gave up: {note}", s.bot_name))?;
        }
        _ => {}
    }
    if s.seg.mode == WorkMode::Work {
        // END-11: quiet endings while something is still owed block the work.
        let made_progress = !answered.is_empty()
            || tx
                .effects_for_run(run)?
                .iter()
                .any(|e| e.outcome == troupe_core::effect::EffectOutcome::Succeeded)
            || tx.delegated_in(run)?;
        let still_owed = owed(tx, &tx.work_item(s.item.id)?)?;
        let np = after_ending(
            s.item.no_progress_endings,
            made_progress,
            !still_owed.is_empty(),
        );
        tx.set_no_progress_endings(s.item.id, np.count)?;
        if np.block && code != "blocked" {
            code = "blocked".into();
            let job = match s.item.plan_id {
                Some(p) => tx.plan(p)?.name,
                None => String::new(),
            };
            system_line(
                tx,
                s.session,
                format!(
                    "{} ended twice without progress on \"{job}\" while it still owes: {}. \
                     It waits for you now.",
                    s.bot_name,
                    still_owed.join("; ")
                ),
            )?;
            let item = tx.work_item(s.item.id)?;
            tx.set_work_state(item.id, item.state, Some(&WaitingOn::User))?;
            let kind = troupe_core::notification::NotificationKind::Blocked;
            tx.notify(&troupe_store::NewNotification {
                kind,
                title: &kind.title(&s.bot_name, Some(&job)),
                body: &format!("It still owes: {}.", still_owed.join("; ")),
                session_id: Some(s.session),
                plan_id: item.plan_id,
                ticket_id: item.ticket_id,
                work_item_id: Some(item.id),
                message_id: None,
            })?;
        }
    }
    if let Some(line) = app_line {
        system_line(tx, s.session, line)?;
    }
    let text = match answered.len() {
        0 => format!("Ended: {code}."),
        n => format!("Ended: {code}; your answer went to {n} request(s)."),
    };
    Ok(Decided::End(text, consumer(&code, detail)))
}

fn decide(
    tx: &mut Tx<'_>,
    run: RunId,
    parsed: &Result<EndTurnArgs, String>,
    promised_later: Option<String>,
    bounced_once: Vec<BounceKind>,
) -> Result<(Decided, Option<BounceKind>), StoreError> {
    let Some(s) = segment(tx, run)? else {
        return Ok((
            Decided::Bounce("end_turn: this turn is not a Bot's work in a conversation".into()),
            None,
        ));
    };
    let args = match parsed {
        Ok(a) => a,
        Err(m) if s.seg.mode == WorkMode::Desk => {
            // END-18: malformed arguments at a desk spend its budget.
            let used = tx.bump_segment_bounces(run)?;
            if used >= BOUNCE_BUDGET {
                // Say what was wrong with the call: the job text (DS-13) speaks of choosing a
                // job, which is not what was refused, and where a workflow carries the thread
                // no job can be chosen at all.
                let text = format!(
                    "end_turn: {m}\nThat was this turn's last refusal: it ends here, waiting \
                     for the person's attention."
                );
                // The detail is what the supervisor's pick-up and its spent-budget line say
                // of how this ended.
                let detail = format!("its end_turn arguments were refused twice, last: {m}");
                return Ok((
                    Decided::End(text, consumer("needs_attention", Some(detail))),
                    None,
                ));
            }
            return Ok((Decided::Bounce(format!("end_turn: {m}")), None));
        }
        Err(m) => return Ok((Decided::Bounce(format!("end_turn: {m}")), None)),
    };
    let f = facts(tx, &s, Some(args), promised_later, bounced_once)?;
    Ok(match evaluate(&f) {
        EndingVerdict::Bounce { kind, text, counts } => {
            if counts {
                tx.bump_segment_bounces(run)?;
            }
            (Decided::Bounce(text), Some(kind))
        }
        EndingVerdict::NeedsAttention { text } => (
            Decided::End(text.clone(), consumer("needs_attention", Some(text))),
            None,
        ),
        EndingVerdict::End { code, app_line } => {
            (end(tx, &s, run, Some(args), code, app_line)?, None)
        }
    })
}

/// `end_turn`: the Bot ends its segment with a reason.
pub(crate) struct EndTurn {
    pub(crate) host: Arc<ToolHost>,
}

#[async_trait]
impl ToolHandler for EndTurn {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let run = ctx.run_id;
        let parsed = parse_end_turn_args(arguments);
        // CC-4: the closing check reads the words this ending sends first; sent back, it goes on.
        if parsed
            .as_ref()
            .is_ok_and(|a| !matches!(a.reason, EndKind::Blocked | EndKind::GaveUp))
            && let Some(reply) = crate::closing_check::at_end_turn(&self.host, ctx).await
        {
            return reply;
        }
        // IS3, W1–W5, T12: the hand-over an ending makes comes first; a failing check, words
        // that are not the work, or a change to approved work are the reply instead.
        if let Some(reply) = crate::submissions::words::at_end_turn(&self.host, ctx, &parsed).await
        {
            return reply;
        }
        // ASK-6: a blocked ending whose needs only ask leave to go on is sent back (once).
        if let Ok(a) = &parsed
            && a.reason == EndKind::Blocked
            && let Some(needs) = a
                .needs_from_user
                .as_deref()
                .filter(|n| !n.trim().is_empty())
            && let Some(why) = self.host.go_ahead_sent_back(ctx, needs).await
        {
            self.host.record_bounce(run, BounceKind::AsksGoAhead);
            return ToolReply::error(format!("asks_go_ahead: {why}"));
        }
        let bounced = self.host.bounced(run);
        // END-12: outside a group, its last words are read for a promise of later work when it
        // owes nothing and waits on nothing.
        let promised = match self.host.collab() {
            Some(collab) if parsed.is_ok() => {
                let s = ctx.store.read(|tx| {
                    let Some(s) = segment(tx, run)? else {
                        return Ok(None);
                    };
                    let quiet = owed(tx, &s.item)?.is_empty() && s.item.waiting_on.is_none();
                    Ok((quiet && s.kind != SessionKind::Group).then_some(s))
                });
                match s {
                    Ok(Some(s)) => match &s.last_words {
                        Some(words) => collab
                            .read_bot_text(run, words, &s.answered)
                            .await
                            .ok()
                            .and_then(|r| r.reading.still_going),
                        None => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        };
        match ctx
            .store
            .write(|tx| decide(tx, run, &parsed, promised.clone(), bounced.clone()))
        {
            Ok((Decided::Bounce(text), kind)) => {
                if let Some(k) = kind {
                    self.host.record_bounce(run, k);
                }
                ToolReply::error(text)
            }
            Ok((Decided::End(text, reason), _)) => {
                let failed = reason.code() == "needs_attention";
                ToolReply::ending(text, failed, reason)
            }
            Err(e) => ToolReply::error(format!("end_turn: {e}; the turn goes on")),
        }
    }
}

pub(crate) fn end_turn_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "reason": {"type": "string", "enum": ["done", "answered", "nothing_new", "blocked", "gave_up"],
                       "description": "done: the work is finished; answered: you answered (a request's answer goes in `answer`); nothing_new: nothing more to do now; blocked: only the user can give what you need (say it in needs_from_user) — waiting on a Bot is `delegate` or nothing_new; gave_up: say why in `note`."},
            "answer": {"type": "string", "description": "Your answer to a request another Bot made of you."},
            "note": {"type": "string"},
            "needs_from_user": {"type": "string"},
            "inbox": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string", "description": "A message's short id, e.g. #12."},
                "disposition": {"type": "string", "enum": ["adopted", "answered", "declined", "deferred"]},
                "why": {"type": "string"}
            }, "required": ["id", "disposition"], "additionalProperties": false}}
        },
        "required": ["reason"],
        "additionalProperties": false
    })
}

/// A prose ending that passes records the person's lines its segment read as answered.
fn prose_answers(
    store: &troupe_store::Store,
    run: RunId,
    item: troupe_core::WorkItemId,
    read: &[String],
) {
    if read.is_empty() {
        return;
    }
    let wrote = store.write(|tx| {
        let bot = tx.work_item(item)?.bot_id;
        record_dispositions(tx, run, bot, read, None)
    });
    if let Err(e) = wrote {
        tracing::warn!(run = %run, error = %e, "the prose ending's dispositions were not kept");
    }
}

/// A prose ending in work that still owes another Bot is sent back once; the next one ends
/// `nothing_new` (END-10). Other prose endings pass as they are.
pub struct WorkEnding;

const HOOK: &str = "work_ending";

impl EndingHook for WorkEnding {
    fn name(&self) -> &str {
        HOOK
    }

    fn check(&self, ctx: &EndingContext<'_>) -> KernelVerdict {
        let run = ctx.run_id;
        let bounced_once = if ctx.bounced.iter().any(|h| h == HOOK) {
            vec![BounceKind::UnfinishedObligations]
        } else {
            Vec::new()
        };
        if !crate::tools::in_conversation(ctx.thread) {
            return KernelVerdict::Pass;
        }
        // Most endings owe nothing: decide that from a read, and write only to bounce or end
        // (or, END-6, to keep the person's lines it read as answered by the prose).
        let first = ctx.store.read(|tx| {
            let Some(seg) = tx.segment_work(run)? else {
                return Ok(None);
            };
            let read = read_user_mail(tx, run)?;
            // A read-only turn under a hold only answers; it owes nothing (HOLD-R2).
            let owes = seg.mode == WorkMode::Work
                && !seg.readonly
                && !tx.open_delegations_to(seg.work_item_id)?.is_empty();
            Ok(Some((owes, read, seg.work_item_id)))
        });
        let Ok(Some((owes, read, item))) = first else {
            return KernelVerdict::Pass;
        };
        if !owes {
            prose_answers(ctx.store, run, item, &read);
            return KernelVerdict::Pass;
        }
        let decided = ctx.store.write(|tx| {
            let Some(s) = segment(tx, run)? else {
                return Ok(None);
            };
            if s.seg.mode != WorkMode::Work || owed(tx, &s.item)?.is_empty() {
                return Ok(None);
            }
            let f = facts(tx, &s, None, None, bounced_once.clone())?;
            Ok(Some(match evaluate(&f) {
                EndingVerdict::Bounce { text, counts, .. } => {
                    if counts {
                        tx.bump_segment_bounces(run)?;
                    }
                    KernelVerdict::Bounce(text)
                }
                EndingVerdict::NeedsAttention { text } => {
                    KernelVerdict::End(consumer("needs_attention", Some(text)))
                }
                EndingVerdict::End { code, app_line } => {
                    match end(tx, &s, run, None, code, app_line)? {
                        Decided::End(_, reason) => KernelVerdict::End(reason),
                        Decided::Bounce(t) => KernelVerdict::Bounce(t),
                    }
                }
            }))
        });
        match decided {
            Ok(Some(v)) => v,
            Ok(None) => KernelVerdict::Pass,
            Err(e) => {
                tracing::warn!(run = %run, error = %e, "the ending contract could not be read");
                KernelVerdict::Pass
            }
        }
    }
}
