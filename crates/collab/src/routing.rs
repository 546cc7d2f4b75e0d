//! Who hears a line, decided and delivered in one transaction: mentions and pull-in
//! (MEN-1…6, PULL-1…3), the lead or the judgements for a person's unaddressed group line
//! (PAR-1…4), only the named Bots for a Bot's line, the other side of a pair direct (MEN-12),
//! and the nod to a nod that wakes nobody (MEN-7/8). Members a line does not wake still read
//! it, speaker-labelled, with their next model call. Delivery keys (`line:<id>:to:<bot>`) make
//! a repeat deliver nothing.

use crate::members::system_line;
use crate::threads::ensure_thread;
use serde_json::json;
use std::path::Path;
use troupe_core::conversation::{Author, Bot, Session, SessionKind, SessionMessage};
use troupe_core::inbox::{Delivery, InboxMode};
use troupe_core::mention::{Mentions, RosterBot, parse_mentions};
use troupe_core::message::Origin;
use troupe_core::nod::{NodContext, NodVerdict, nod_verdict, suppresses_wake};
use troupe_core::participation::{
    How, Member, UserLineInput, UserRoute, route_bot_line, route_user_group_line,
};
use troupe_core::{BotId, SessionId, ThreadId};
use troupe_store::{StoreError, Tx};

/// The inbox key of a person's line delivered to a Bot: a line reaches each Bot once, and
/// whether the Bot has read it is whether this key was consumed.
pub(crate) fn line_key(line: troupe_core::SessionMessageId, bot: troupe_core::BotId) -> String {
    format!("line:{}:to:{}", line.0, bot.0)
}

/// How a direct's one Bot hears its person (not a participation rule: there is no choice).
pub(crate) const DIRECT: &str = "direct";

/// What routing a person's line decided.
#[derive(Debug, Default)]
pub(crate) struct Routed {
    /// Threads given the line as work: the caller drives them after commit.
    pub woke: Vec<ThreadId>,
    /// No lead and nobody named: ask these Bots whether they join (after commit).
    pub judge: Vec<BotId>,
    /// Stopped work the line's lift reopened on a note: driven as the person's own act
    /// (past a call whose outcome the stop left unknown).
    pub reopened: Vec<ThreadId>,
}

/// Every live Bot, marked present when it is a member here.
pub(crate) fn roster(tx: &Tx<'_>, session: &Session) -> Result<Vec<RosterBot>, StoreError> {
    Ok(tx
        .live_bot_names()?
        .into_iter()
        .map(|(id, name)| RosterBot {
            present: session.bot_ids.contains(&id),
            id,
            name,
        })
        .collect())
}

/// The present members as participation sees them, in three queries whatever the group's
/// size: the rows, the open asks, and the roster already read (a member missing from it is
/// archived, as the roster holds every live Bot).
fn members(
    tx: &Tx<'_>,
    session: &Session,
    roster: &[RosterBot],
) -> Result<Vec<Member>, StoreError> {
    // Its desk's ask or its job's asked here: the next plain line answers it either way.
    let asking = tx.bots_with_open_asks_in(session.id)?;
    Ok(tx
        .members(session.id)?
        .into_iter()
        .filter(|row| row.left_at.is_none())
        .map(|row| Member {
            id: row.bot_id,
            archived: !roster.iter().any(|r| r.id == row.bot_id),
            is_lead: row.is_lead,
            waiting_ask: asking.contains(&row.bot_id),
        })
        .collect())
}

/// The text a Bot reads for a line: who said it, where.
pub(crate) fn labelled(session: &Session, speaker: &str, body: &str) -> String {
    match session.kind {
        SessionKind::Direct => body.to_string(),
        SessionKind::Group => format!("[{speaker} in group \"{}\"] {body}", session.title),
        SessionKind::BotDirect => format!("[{speaker}, in your direct] {body}"),
    }
}

/// Who said a line, as Bots read it.
pub(crate) fn speaker(tx: &Tx<'_>, line: &SessionMessage) -> Result<String, StoreError> {
    Ok(match (line.author, line.bot_id) {
        (Author::Bot, Some(b)) => tx.bot(b)?.name,
        (Author::System, _) => "Troupe".into(),
        _ => "User".into(),
    })
}

/// Give `line` to `bot` in this conversation: as work (`how` is recorded and its thread is
/// woken after commit) or, with `how` None, as context for its next model call.
pub(crate) fn deliver(
    tx: &mut Tx<'_>,
    workspace: &Path,
    session: &Session,
    line: &SessionMessage,
    bot: &Bot,
    how: Option<&str>,
) -> Result<ThreadId, StoreError> {
    let Some(how) = how else {
        return hear(tx, workspace, session, line, &speaker(tx, line)?, bot.id);
    };
    let thread = ensure_thread(tx, workspace, session, bot, Some(workspace))?;
    let mut text = labelled(session, &speaker(tx, line)?, &line.body);
    let mode = if tx.thread(thread)?.lease.holder.is_some() {
        InboxMode::Steer
    } else {
        InboxMode::Task
    };
    if mode == InboxMode::Task {
        text = with_lines_read_before(tx, thread, text)?;
    }
    // Mail a working Bot reads between steps carries its short id, so its ending can say what
    // it did with it (END-3).
    if mode == InboxMode::Steer {
        text = format!("#{} {text}", line.id.0);
    }
    let origin = origin_of(line);
    // A person's line heard by a working Bot defers the calls its hop has not run yet, unless
    // it only asks something (TURN-4, LR-14: a rule, not a reading).
    let defers =
        line.author == Author::User && mode == InboxMode::Steer && !is_question(&line.body);
    let d = Delivery {
        origin,
        ..Delivery::user_task(text)
            .with_mode(mode)
            .with_key(line_key(line.id, bot.id))
            .deferring_calls(defers)
    };
    tx.deliver(thread, &d)?;
    tx.record_line_delivery(line.id, bot.id, how, thread)?;
    tx.wake_after_commit(thread);
    Ok(thread)
}

/// Give `line` to a member as context for its next model call, without waking it. `said_by`
/// is the line's speaker, worked out once for all the members; the Bot's row is read only
/// when it has no thread here yet.
pub(crate) fn hear(
    tx: &mut Tx<'_>,
    workspace: &Path,
    session: &Session,
    line: &SessionMessage,
    said_by: &str,
    bot: BotId,
) -> Result<ThreadId, StoreError> {
    let thread = match tx.session_thread(session.id, bot, troupe_store::CONVERSATION)? {
        Some(t) => t,
        None => {
            let b = tx.bot(bot)?;
            ensure_thread(tx, workspace, session, &b, Some(workspace))?
        }
    };
    tx.deliver(
        thread,
        &Delivery {
            origin: origin_of(line),
            ..Delivery::user_task(labelled(session, said_by, &line.body))
                .with_mode(InboxMode::Context)
                .with_key(line_key(line.id, bot))
        },
    )?;
    Ok(thread)
}

/// `hear` for several members at once: one statement gives the line to all that have a
/// thread here (the usual case), looked up together; one without a thread yet gets it
/// through `hear`, which opens one.
fn hear_all(
    tx: &mut Tx<'_>,
    workspace: &Path,
    session: &Session,
    line: &SessionMessage,
    bots: &[BotId],
) -> Result<(), StoreError> {
    if bots.is_empty() {
        return Ok(());
    }
    let said_by = speaker(tx, line)?;
    let threads = tx.session_threads_by_bot(session.id, troupe_store::CONVERSATION)?;
    let mut to = Vec::with_capacity(bots.len());
    for &b in bots {
        match threads.get(&b) {
            Some(t) => to.push((*t, line_key(line.id, b))),
            None => {
                hear(tx, workspace, session, line, &said_by, b)?;
            }
        }
    }
    let d = Delivery {
        origin: origin_of(line),
        ..Delivery::user_task(labelled(session, &said_by, &line.body)).with_mode(InboxMode::Context)
    };
    tx.deliver_context_many(&d, &to)?;
    Ok(())
}

/// Whose words a delivered line carries: the person's, or a Bot's (or the app's) passed on.
fn origin_of(line: &SessionMessage) -> Origin {
    match line.author {
        Author::User => Origin::User,
        _ => Origin::Delegation(format!("line:{}", line.id.0)),
    }
}

/// A new task carries the lines the Bot only read since its last turn, in order, ahead of the
/// line it is to answer (as context items they would join the task after it, so the line to
/// answer would not come last).
pub(crate) fn with_lines_read_before(
    tx: &mut Tx<'_>,
    thread: ThreadId,
    text: String,
) -> Result<String, StoreError> {
    let earlier: Vec<_> = tx
        .inbox(thread)?
        .into_iter()
        .filter(|i| i.mode == InboxMode::Context && i.failed.is_none())
        .collect();
    if earlier.is_empty() {
        return Ok(text);
    }
    let ids: Vec<_> = earlier.iter().map(|i| i.id).collect();
    tx.drop_inbox_items(thread, &ids)?;
    let mut out = String::from("Said here since your last turn:\n");
    for i in &earlier {
        out.push_str(&i.text);
        out.push('\n');
    }
    out.push_str("\nFor you now:\n");
    out.push_str(&text);
    Ok(out)
}

/// A line that ends in a question mark asks rather than changes.
fn is_question(body: &str) -> bool {
    body.trim_end().ends_with(['?', '？'])
}

/// Named roster Bots not in the group join before the line is delivered (PULL-1); a system
/// line says so.
fn pull_in(
    tx: &mut Tx<'_>,
    workspace: &Path,
    session: &mut Session,
    mentions: &Mentions,
) -> Result<Vec<BotId>, StoreError> {
    let mut pulled = Vec::new();
    for id in &mentions.named {
        if session.bot_ids.contains(id) {
            continue;
        }
        let bot = tx.bot(*id)?;
        if bot.archived {
            continue;
        }
        tx.add_member(session.id, *id, "pull_in")?;
        session.bot_ids.push(*id);
        ensure_thread(tx, workspace, session, &bot, Some(workspace))?;
        system_line(tx, session.id, format!("{} joined", bot.name))?;
        pulled.push(*id);
    }
    Ok(pulled)
}

pub(crate) fn routed_event(
    tx: &mut Tx<'_>,
    session: SessionId,
    line: &SessionMessage,
    recipients: &[(BotId, &str)],
) -> Result<(), StoreError> {
    let list: Vec<_> = recipients
        .iter()
        .map(|(b, how)| json!({"bot_id": b, "how": how}))
        .collect();
    tx.session_event(
        "line_routed",
        session,
        line.turn_id,
        json!({"message_id": line.id, "recipients": list}),
    )
}

/// Deliver a person's line to whoever it is for, and everyone else as context.
pub(crate) fn route_person_line(
    tx: &mut Tx<'_>,
    workspace: &Path,
    line: &SessionMessage,
) -> Result<Routed, StoreError> {
    let mut session = tx.session(line.session_id)?;
    let mut out = Routed::default();
    let mut recipients: Vec<(BotId, &str)> = Vec::new();
    // Whether a group line names anyone: pull-in only adds the Bots it named, so a second
    // reading after it would find the same.
    let mut names_anyone = false;
    match session.kind {
        SessionKind::Direct | SessionKind::BotDirect => {
            for b in session.bot_ids.clone() {
                recipients.push((b, DIRECT));
            }
        }
        SessionKind::Group => {
            let roster = roster(tx, &session)?;
            let mentions = parse_mentions(&line.body, &roster);
            names_anyone = !mentions.is_empty();
            let pulled = pull_in(tx, workspace, &mut session, &mentions)?;
            let members = members(tx, &session, &roster)?;
            let route = route_user_group_line(&UserLineInput {
                members: &members,
                mentions: &mentions,
                pulled_in: &pulled,
                job_lead: None,
            });
            match route {
                UserRoute::Deliver(list) => {
                    for (b, how) in list {
                        recipients.push((b, how.as_str()));
                    }
                }
                UserRoute::Judge(bots) => out.judge = bots,
                UserRoute::ArchivedLead(lead) => {
                    let name = tx.bot(lead)?.name;
                    system_line(
                        tx,
                        session.id,
                        format!(
                            "{name} leads this group but is archived, so nobody was asked; \
                             name a Bot with @ or choose another lead."
                        ),
                    )?;
                }
                UserRoute::Nobody => {}
            }
        }
    }
    // Jobs decide which work hears the line (C §3); desks hear what no job claims.
    let filed = match session.kind {
        SessionKind::Group | SessionKind::Direct => crate::attribution::file_person_line(tx, line)?,
        _ => Vec::new(),
    };
    for &(b, how) in &recipients {
        let bot = tx.bot(b)?;
        if how == How::AskAnswer.as_str() {
            let asked = crate::asks::take_as_answer(tx, &session, line, &bot)?;
            let desk = crate::threads::thread_of(tx, session.id, b)?;
            match asked {
                // A job's ask: the answer goes to that work; the desk reads it as context.
                Some(job) if Some(job) != desk => {
                    out.woke.push(crate::asks::answer_to_work(
                        tx, &session, line, &bot, job, how,
                    )?);
                    deliver(tx, workspace, &session, line, &bot, None)?;
                }
                _ => out
                    .woke
                    .push(deliver(tx, workspace, &session, line, &bot, Some(how))?),
            }
            continue;
        }
        if filed.is_empty() {
            out.woke
                .push(deliver(tx, workspace, &session, line, &bot, Some(how))?);
            continue;
        }
        for plan in &filed {
            out.woke
                .push(crate::attribution::deliver_to_job(tx, line, b, *plan, how)?);
        }
        // Its desk still reads the line, as every member does.
        deliver(tx, workspace, &session, line, &bot, None)?;
    }
    // Judged Bots hear the line once they have answered; the rest read it as context.
    let rest: Vec<BotId> = session
        .bot_ids
        .iter()
        .copied()
        .filter(|b| !recipients.iter().any(|(r, _)| r == b) && !out.judge.contains(b))
        .collect();
    hear_all(tx, workspace, &session, line, &rest)?;
    // Whom the line is said to, for the holds it lifts: in a group naming nobody, everyone.
    let said_to: Vec<BotId> = match session.kind {
        SessionKind::Group if names_anyone => recipients.iter().map(|(b, _)| *b).collect(),
        _ => session.bot_ids.clone(),
    };
    let lifted = crate::holds::lines::lift_by_person_line(tx, line, &said_to, &filed, &out.woke)?;
    for t in lifted.drive {
        if !out.woke.contains(&t) && !lifted.reopened.contains(&t) {
            out.woke.push(t);
        }
    }
    out.reopened = lifted.reopened;
    // A held Bot is not asked to judge a line (HOLD-W7): what the line did not lift stands.
    let mut judge = Vec::with_capacity(out.judge.len());
    for b in std::mem::take(&mut out.judge) {
        let held = match tx.session_thread(session.id, b, troupe_store::CONVERSATION)? {
            Some(t) => !crate::holds::holds_over(tx, t)?.is_empty(),
            None => false,
        };
        if !held {
            judge.push(b);
        }
    }
    out.judge = judge;
    routed_event(tx, session.id, line, &recipients)?;
    tx.set_line_routing(line.id, "routed")?;
    Ok(out)
}

/// The Bot that woke this turn with a bare nod, when that turn and this one ran no command.
fn nod_context(
    tx: &Tx<'_>,
    line: &SessionMessage,
    roster: &[RosterBot],
) -> Result<NodContext, StoreError> {
    let mut ctx = NodContext {
        woken_by_nod_from: None,
        this_turn_ran_command: false,
        that_turn_ran_command: false,
    };
    let Some(run) = line.turn_id else {
        return Ok(ctx);
    };
    ctx.this_turn_ran_command = !tx.commands(run)?.is_empty();
    let Some(trigger) = tx.segment(run)?.and_then(|s| s.trigger_line_id) else {
        return Ok(ctx);
    };
    let trigger = tx.line(trigger)?;
    if trigger.author == Author::Bot && nod_verdict(&trigger.body, roster) == NodVerdict::Bare {
        ctx.woken_by_nod_from = trigger.bot_id;
        if let Some(t) = trigger.turn_id {
            ctx.that_turn_ran_command = !tx.commands(t)?.is_empty();
        }
    }
    Ok(ctx)
}

/// Deliver a Bot's line in a group or Bot↔Bot direct (never queued, in the transaction that
/// wrote it): the Bots it names (pulled in when absent), the other side of a pair direct.
pub(crate) fn route_bot_line_in(
    tx: &mut Tx<'_>,
    line: &SessionMessage,
    workspace: &Path,
) -> Result<(), StoreError> {
    let Some(author) = line.bot_id else {
        return Ok(());
    };
    // A read-only turn's reply under a hold wakes nobody (HOLD-R3).
    if let Some(run) = line.turn_id
        && crate::holds::readonly::is_readonly(tx, run)?
    {
        return Ok(());
    }
    let mut session = tx.session(line.session_id)?;
    if session.kind == SessionKind::Direct {
        return Ok(());
    }
    let roster = roster(tx, &session)?;
    let mentions = parse_mentions(&line.body, &roster);
    if session.kind == SessionKind::Group {
        pull_in(tx, workspace, &mut session, &mentions)?;
    }
    let members = members(tx, &session, &roster)?;
    // A delegation's direct carries its lines without waking anyone (MSG-4).
    let other = (session.kind == SessionKind::BotDirect
        && session.opened_via.as_deref() == Some("create_direct"))
    .then(|| session.bot_ids.iter().copied().find(|b| *b != author))
    .flatten();
    let mut wake = route_bot_line(author, &members, &mentions, other);
    // The nod rule holds in groups and in Bot↔Bot directs alike (MEN-7).
    if !wake.is_empty() {
        let verdict = nod_verdict(&line.body, &roster);
        let ctx = nod_context(tx, line, &roster)?;
        let (quiet, kept): (Vec<_>, Vec<_>) = wake
            .into_iter()
            .partition(|(b, _)| suppresses_wake(verdict == NodVerdict::Bare, *b, &ctx));
        for (b, _) in quiet {
            tx.session_event(
                "mention_nod_suppressed",
                session.id,
                line.turn_id,
                json!({"message_id": line.id, "bot_id": b}),
            )?;
        }
        // Words the lists cannot call a nod, back to the Bot whose nod woke this turn: the
        // Bot-line reading decides (MEN-8). Until it has, that Bot only hears the line (as
        // every member it does not wake does); the reading wakes it after commit.
        let (undecided, kept): (Vec<_>, Vec<_>) = kept.into_iter().partition(|(b, _)| {
            verdict == NodVerdict::AskReader && suppresses_wake(true, *b, &ctx)
        });
        for (b, how) in undecided {
            tx.session_event(
                crate::nods::NOD_READING,
                session.id,
                line.turn_id,
                json!({"message_id": line.id, "bot_id": b, "how": how.as_str()}),
            )?;
        }
        wake = kept;
    }
    let mut recipients = Vec::new();
    for &(b, how) in &wake {
        let bot = tx.bot(b)?;
        deliver(tx, workspace, &session, line, &bot, Some(how.as_str()))?;
        recipients.push((b, how.as_str()));
    }
    let rest: Vec<BotId> = session
        .bot_ids
        .iter()
        .copied()
        .filter(|b| *b != author && !wake.iter().any(|(r, _)| r == b))
        .collect();
    hear_all(tx, workspace, &session, line, &rest)?;
    if !recipients.is_empty() {
        routed_event(tx, session.id, line, &recipients)?;
    }
    Ok(())
}

/// Deliver a judged line to the Bots that chose to join.
pub(crate) fn deliver_judged(
    tx: &mut Tx<'_>,
    workspace: &Path,
    line: &SessionMessage,
    joined: &[BotId],
    sat_out: &[BotId],
) -> Result<Vec<ThreadId>, StoreError> {
    let session = tx.session(line.session_id)?;
    let mut woke = Vec::new();
    let mut recipients = Vec::new();
    for b in joined {
        let bot = tx.bot(*b)?;
        woke.push(deliver(
            tx,
            workspace,
            &session,
            line,
            &bot,
            Some(How::Judgement.as_str()),
        )?);
        recipients.push((*b, How::Judgement.as_str()));
    }
    hear_all(tx, workspace, &session, line, sat_out)?;
    routed_event(tx, session.id, line, &recipients)?;
    Ok(woke)
}
